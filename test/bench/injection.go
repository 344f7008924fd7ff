package bench

import (
	"fmt"
	"strings"
)

// InjectionName names the config-inject benchmark input.
const InjectionName = "1000pts-10000cands-100inj"

// injectionTypes is how many apiVersion/kind pairs the points and candidates use.
const injectionTypes = 10

// InjectionResourceList returns a package of `points` injection points
// (spread over injectionTypes types, ten per file) and a ConfigInjection with
// `candidates` in-namespace objects (plus one in another namespace per type)
// and `injectors` injectors, of which only the last of each type matches.
func InjectionResourceList(points, candidates, injectors int) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	item(&b, "Kptfile", 0, "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n  annotations:\n%s\ninfo:\n  description: injection benchmark\n")
	for i := 0; i < points; i++ {
		t := i % injectionTypes
		kind, field := typeOf(t)
		item(&b, fmt.Sprintf("points-%d.yaml", i/10), i%10, fmt.Sprintf(
			"apiVersion: %s\nkind: %s\nmetadata:\n  name: point-%d\n  annotations:\n    kpt.dev/config-injection: %s\n%%s\n%s:\n  value: default\n",
			apiVersionOf(t), kind, i, []string{"required", "optional"}[i%2], field))
	}
	b.WriteString("functionConfig:\n  apiVersion: fn.pvkit.dev/v1alpha1\n  kind: ConfigInjection\n  metadata:\n    name: bench\n    namespace: prod\n  spec:\n    injectors:\n")
	for i := 0; i < injectors-injectionTypes; i++ {
		fmt.Fprintf(&b, "    - name: missing-%d\n", i)
	}
	perType := candidates / injectionTypes
	for t := 0; t < injectionTypes; t++ {
		kind, _ := typeOf(t)
		fmt.Fprintf(&b, "    - kind: %s\n      name: cand-%d-%d\n", kind, t, perType-1)
	}
	b.WriteString("    resources:\n")
	for t := 0; t < injectionTypes; t++ {
		kind, field := typeOf(t)
		for j := 0; j < perType; j++ {
			fmt.Fprintf(&b, "    - apiVersion: %s\n      kind: %s\n      metadata:\n        name: cand-%d-%d\n        namespace: prod\n      %s:\n        value: v%d-%d\n        region: us-east1\n",
				apiVersionOf(t), kind, t, j, field, t, j)
		}
		fmt.Fprintf(&b, "    - apiVersion: %s\n      kind: %s\n      metadata:\n        name: cand-%d-%d\n        namespace: elsewhere\n      %s: {}\n", apiVersionOf(t), kind, t, perType-1, field)
	}
	return []byte(b.String())
}

func typeOf(t int) (kind, field string) {
	if t == 0 {
		return "ConfigMap", "data"
	}
	return fmt.Sprintf("Settings%d", t), "spec"
}

func apiVersionOf(t int) string {
	if t == 0 {
		return "v1"
	}
	return "example.com/v1"
}
