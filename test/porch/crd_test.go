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
	set := func(targets string) string {
		return "apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata: {name: bad}\nspec:\n  upstream: {repo: blueprints, package: app}\n" + targets
	}
	for name, tc := range map[string]struct{ doc, want string }{
		"a repository name with capitals": {pv("  upstream: {repo: Blue_Prints, package: app}\n", "  downstream: {repo: deploy, package: app}\n"),
			`spec.upstream.repo: Invalid value: "Blue_Prints": spec.upstream.repo in body should match`},
		"an absolute package path": {pv("  upstream: {repo: blueprints, package: app}\n", "  downstream: {repo: deploy, package: /etc/app}\n"),
			`spec.downstream.package: Invalid value: "/etc/app": spec.downstream.package in body should match`},
		"a revision below -1 (-1 is the branch placeholder)": {pv("  upstream: {repo: blueprints, package: app, revision: -2}\n", "  downstream: {repo: deploy, package: app}\n"),
			`spec.upstream.revision: Invalid value: -2: spec.upstream.revision in body should be greater than or equal to -1`},
		"no downstream": {pv("  upstream: {repo: blueprints, package: app}\n", ""),
			`spec.downstream: Required value`},
		"a reserved package-context key": {pv("  upstream: {repo: blueprints, package: app}\n", "  downstream: {repo: deploy, package: app}\n  packageContext:\n    data: {name: other}\n"),
			`spec.packageContext: Invalid value: "object": data must not contain the reserved keys name and package-path (kpt and Porch set them)`},
		"removing a reserved package-context key": {pv("  upstream: {repo: blueprints, package: app}\n", "  downstream: {repo: deploy, package: app}\n  packageContext:\n    removeKeys: [package-path]\n"),
			`spec.packageContext: Invalid value: "object": removeKeys must not contain the reserved keys name and package-path`},
		// Issue 20 #5, the set's templates.
		"a set without targets": {set("  targets: []\n"), `spec.targets: Invalid value: 0: spec.targets in body should have at least 1 items`},
		"a target of two kinds": {set("  targets:\n  - repositories: [{name: r1}]\n    repositorySelector: {matchLabels: {env: prod}}\n"),
			`spec.targets[0]: Invalid value: "object": must specify exactly one of repositories, repositorySelector or objectSelector`},
		"an object selector without a kind": {set("  targets:\n  - objectSelector: {apiVersion: example.com/v1}\n"),
			`spec.targets[0].objectSelector.kind: Required value`},
		"an empty repository name": {set("  targets:\n  - repositories: [{name: \"\"}]\n"),
			`spec.targets[0].repositories[0].name: Invalid value: "": spec.targets[0].repositories[0].name in body should be at least 1 chars long`},
		"a package and a packageExpr": {set("  targets:\n  - repositories: [{name: r1}]\n    template:\n      downstream: {package: a, packageExpr: \"'b'\"}\n"),
			`spec.targets[0].template.downstream: Invalid value: "object": may specify only one of package and packageExpr`},
		"a label key and keyExpr": {set("  targets:\n  - repositories: [{name: r1}]\n    template:\n      labelExprs: [{key: a, keyExpr: \"'b'\", value: c}]\n"),
			`spec.targets[0].template.labelExprs[0]: Invalid value: "object": must specify exactly one of key and keyExpr`},
		"an injector with no name": {set("  targets:\n  - repositories: [{name: r1}]\n    template:\n      injectors: [{kind: ConfigMap}]\n"),
			`spec.targets[0].template.injectors[0]: Invalid value: "object": must specify exactly one of name and nameExpr`},
		"a function with image and exec": {set("  targets:\n  - repositories: [{name: r1}]\n    template:\n      pipeline: {mutators: [{image: a, exec: b}]}\n"),
			`spec.targets[0].template.pipeline.mutators[0]: Invalid value: "object": must specify exactly one of image and exec`},
		"a template setting a reserved context key": {set("  targets:\n  - repositories: [{name: r1}]\n    template:\n      packageContext: {data: {package-path: x}}\n"),
			`spec.targets[0].template.packageContext: Invalid value: "object": data must not contain the reserved keys name and package-path`},
	} {
		_, err := apply(tc.doc)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: accepted or refused otherwise: %v\nwant %q", name, err, tc.want)
		}
	}
	// Issue 29 #2: revision -1, the branch placeholder, is taken, as Porch's
	// own CRD takes it.
	if out, err := apply(pv("  upstream: {repo: blueprints, package: app, revision: -1}\n", "  downstream: {repo: deploy, package: app}\n")); err != nil {
		t.Errorf("revision -1 refused: %v\n%s", err, out)
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
