package bench

import (
	"fmt"
	"strings"
)

// ResourceList returns a ResourceList as kpt sends it for a package of n
// resources: the Kptfile, package-context.yaml and n-2 Deployments spread
// over files of ten, with kpt's annotations, plus the functionConfig.
func ResourceList(n int, functionConfig string) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	item(&b, "Kptfile", 0, `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: app
  annotations:
%s
info:
  description: benchmark package
pipeline:
  mutators:
  - image: gcr.io/kpt-fn/set-labels:v0.2
    configMap:
      app: web
`)
	item(&b, "package-context.yaml", 0, `apiVersion: v1
kind: ConfigMap
metadata:
  name: kptfile.kpt.dev
  annotations:
%s
data:
  name: app
  old: value
`)
	for i := 0; i < n-2; i++ {
		item(&b, fmt.Sprintf("deployments-%d.yaml", i/10), i%10, fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-%d
  labels:
    app: web
  annotations:
%%s
spec:
  replicas: 3 # default
  selector:
    matchLabels:
      app: web-%d
  template:
    metadata:
      labels:
        app: web-%d
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports:
        - containerPort: 8080
        env:
        - name: MODE
          value: production
`, i, i, i))
	}
	b.WriteString("functionConfig:\n")
	b.WriteString(indent(functionConfig, "  "))
	return []byte(b.String())
}

func item(b *strings.Builder, path string, index int, text string) {
	ann := fmt.Sprintf("    config.kubernetes.io/path: '%s'\n    config.kubernetes.io/index: '%d'\n"+
		"    internal.config.kubernetes.io/path: '%s'\n    internal.config.kubernetes.io/index: '%d'", path, index, path, index)
	text = strings.Replace(text, "%s", ann, 1)
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, l := range lines {
		if i == 0 {
			b.WriteString("- " + l + "\n")
		} else {
			b.WriteString("  " + l + "\n")
		}
	}
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}
