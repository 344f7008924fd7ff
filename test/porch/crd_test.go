package porch

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/config/crd/crdtest"
	sigsyaml "sigs.k8s.io/yaml"
)

// Issue 20 #5: the CRDs refuse at apply time what the reconciler would
// stall on, naming the field (kube-apiserver v1.34.1, server-side dry
// run); Porch's own PackageVariant and PackageVariantSet samples are still
// accepted.
func TestCRDValidatesAtApply(t *testing.T) {
	t.Parallel() // its own namespace and repositories; the stack and the controller are shared (issue 48 #4)
	e := newEnv(t, "crd")
	// A server-side dry run: validated by the apiserver, stored nowhere; a
	// sample's own namespace is left out (it need not exist here).
	ownNamespace := regexp.MustCompile(`(?m)^  namespace: .*\n`)
	apply := func(doc string) (string, error) {
		return kubectl(ownNamespace.ReplaceAllString(doc, ""), "apply", "--dry-run=server", "-n", e.ns, "-f", "-")
	}
	// The table every schema test shares (config/crd/crdtest): what the
	// CRDs refuse, with the apiserver's message, and what they take.
	cases, err := crdtest.Cases()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		doc, err := sigsyaml.JSONToYAML(c.Object)
		if err != nil {
			t.Fatal(err)
		}
		out, err := apply(string(doc))
		switch {
		case c.Refused == "" && err != nil:
			t.Errorf("%s: refused: %v\n%s", c.Name, err, out)
		case c.Refused != "" && (err == nil || !strings.Contains(err.Error(), c.Refused)):
			t.Errorf("%s: accepted or refused otherwise: %v\nwant %q", c.Name, err, c.Refused)
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
