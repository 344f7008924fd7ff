package porch

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Issue 20 #5: the CRDs refuse at apply time what the reconciler would
// stall on, naming the field (kube-apiserver v1.34.1, server-side dry
// run); Porch's own PackageVariant and PackageVariantSet samples are still
// accepted.
func TestCRDValidatesAtApply(t *testing.T) {
	e := newEnv(t, "crd")
	// A server-side dry run: validated by the apiserver, stored nowhere; a
	// sample's own namespace is left out (it need not exist here).
	ownNamespace := regexp.MustCompile(`(?m)^  namespace: .*\n`)
	apply := func(doc string) (string, error) {
		return kubectl(ownNamespace.ReplaceAllString(doc, ""), "apply", "--dry-run=server", "-n", e.ns, "-f", "-")
	}
	pv := func(upstream, downstream string) string {
		return "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata: {name: bad}\nspec:\n" + upstream + downstream
	}
	for name, tc := range map[string]struct{ doc, want string }{
		"a repository name with capitals": {pv("  upstream: {repo: Blue_Prints, package: app}\n", "  downstream: {repo: deploy, package: app}\n"),
			`spec.upstream.repo: Invalid value: "Blue_Prints": spec.upstream.repo in body should match`},
		"an absolute package path": {pv("  upstream: {repo: blueprints, package: app}\n", "  downstream: {repo: deploy, package: /etc/app}\n"),
			`spec.downstream.package: Invalid value: "/etc/app": spec.downstream.package in body should match`},
		"a negative revision": {pv("  upstream: {repo: blueprints, package: app, revision: -1}\n", "  downstream: {repo: deploy, package: app}\n"),
			`spec.upstream.revision: Invalid value: -1: spec.upstream.revision in body should be greater than or equal to 0`},
		"no downstream": {pv("  upstream: {repo: blueprints, package: app}\n", ""),
			`spec.downstream: Required value`},
		"a reserved package-context key": {pv("  upstream: {repo: blueprints, package: app}\n", "  downstream: {repo: deploy, package: app}\n  packageContext:\n    data: {name: other}\n"),
			`spec.packageContext: Invalid value: "object": data must not contain the reserved keys name and package-path (kpt and Porch set them)`},
		"removing a reserved package-context key": {pv("  upstream: {repo: blueprints, package: app}\n", "  downstream: {repo: deploy, package: app}\n  packageContext:\n    removeKeys: [package-path]\n"),
			`spec.packageContext: Invalid value: "object": removeKeys must not contain the reserved keys name and package-path`},
	} {
		_, err := apply(tc.doc)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: accepted or refused otherwise: %v\nwant %q", name, err, tc.want)
		}
	}
	// Porch's own samples (their `revision: vN` written as the number, as
	// both Porch's types and pvkit's read it) and this repository's examples.
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/nephio-project/porch").Output()
	if err != nil {
		t.Fatal(err)
	}
	porch := strings.TrimSpace(string(out))
	files := []string{
		filepath.Join(porch, "controllers/packagevariants/config/samples/dp.yaml"),
		filepath.Join(porch, "controllers/packagevariantsets/config/samples/pvs-v1alpha2.yaml"),
		filepath.Join(porch, "examples/tutorials/starting-with-porch/name-namespace-variant.yaml"),
		filepath.Join(porch, "examples/tutorials/starting-with-porch/simple-variant.yaml"),
	}
	examples, _ := filepath.Glob(filepath.Join(repoRoot, "examples/*/*.yaml"))
	files = append(files, examples...)
	versioned := regexp.MustCompile(`(?m)^(\s+revision:\s+)v(\d+)\s*$`)
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range bytes.Split(versioned.ReplaceAll(b, []byte("${1}${2}")), []byte("\n---")) {
			if !bytes.Contains(doc, []byte("kind: PackageVariant")) || !bytes.Contains(doc, []byte("apiVersion: config.porch.kpt.dev/")) {
				continue
			}
			n++
			if out, err := apply(string(doc)); err != nil {
				t.Errorf("%s: refused (%v):\n%s\n%s", f, err, out, doc)
			}
		}
	}
	if n < 5 {
		t.Fatalf("only %d samples applied", n)
	}
}
