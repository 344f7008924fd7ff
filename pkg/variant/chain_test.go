package variant

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pvkit/pvkit/internal/fntest"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

var (
	repoRoot string
	binDir   string
)

func TestMain(m *testing.M) {
	repoRoot = fntest.RepoRoot()
	tmp, err := os.MkdirTemp("", "pvkit-chain-")
	if err != nil {
		panic(err)
	}
	binDir = tmp
	if err := fntest.BuildFunctions(binDir, "package-context", "pipeline-prepend", "config-inject"); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(tmp)
	os.Exit(code)
}

const variant = `apiVersion: config.porch.kpt.dev/v1alpha1
kind: PackageVariant
metadata:
  name: app-prod
  namespace: default
spec:
  upstream: {repo: blueprints, package: app, revision: 3}
  downstream: {repo: prod-cluster, package: app}
  packageContext:
    data: {env: prod, region: us-east1}
    removeKeys: [canary]
  pipeline:
    mutators:
    - image: gcr.io/kpt-fn/set-namespace:v0.4.1
      name: set.ns
      configMap: {namespace: web-prod}
  injectors:
  - kind: ConfigMap
    name: us-east1-endpoints
  - group: example.com
    name: web-team
`

func loadVariant(t *testing.T, text string) *pv.PackageVariant {
	v := &pv.PackageVariant{}
	if err := sigsyaml.Unmarshal([]byte(text), v); err != nil {
		t.Fatal(err)
	}
	return v
}

// candidates are the in-cluster objects of examples/app-prod-injection.yaml.
func candidates(t *testing.T) []*yaml.RNode {
	b, err := os.ReadFile(filepath.Join(repoRoot, "examples", "app-prod-injection.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := yaml.MustParse(string(b))
	var out []*yaml.RNode
	for _, n := range krm.Lookup(cfg.YNode(), "spec", "resources").Content {
		out = append(out, yaml.NewRNode(n))
	}
	return out
}

// binaryConfigs are the function configs a kpt user gives the binaries for
// the variant as the cluster serves it (kubectl get -o yaml: fields in the
// API type's order, block style): the PackageVariant itself to
// package-context and pipeline-prepend, and a ConfigInjection of its
// injectors and the candidates to config-inject.
func binaryConfigs(t *testing.T, text string, cands []*yaml.RNode) [][2]any {
	b, err := json.Marshal(loadVariant(t, text))
	if err != nil {
		t.Fatal(err)
	}
	v, err := krm.ParseJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	inj := yaml.MustParse("apiVersion: fn.pvkit.dev/v1alpha1\nkind: ConfigInjection\nmetadata:\n  name: app-prod\n  namespace: default\nspec:\n  injectors: []\n")
	spec := krm.Field(inj.YNode(), "spec")
	if injectors := krm.Lookup(v.YNode(), "spec", "injectors"); injectors != nil {
		krm.SetField(spec, "injectors", injectors)
	}
	if len(cands) > 0 {
		res := &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq}
		for _, c := range cands {
			res.Content = append(res.Content, c.YNode())
		}
		krm.SetField(spec, "resources", res)
	}
	return [][2]any{{"package-context", v}, {"pipeline-prepend", v}, {"config-inject", inj}}
}

// viaBinaries runs the functions' binaries, as kpt would, with the configs
// a user gives them for the variant.
func viaBinaries(t *testing.T, files map[string]string, text string, cands []*yaml.RNode) (map[string]string, string, error) {
	items, err := krm.FilesToItems(files)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range binaryConfigs(t, text, cands) {
		in, err := (&krm.ResourceList{Items: items, FunctionConfig: s[1].(*yaml.RNode)}).Bytes()
		if err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(filepath.Join(binDir, s[0].(string)))
		cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return nil, stderr.String(), err
		}
		rl, err := krm.ParseResourceList(stdout.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		items = rl.Items
	}
	out, err := krm.ItemsToFiles(items, files)
	if err != nil {
		t.Fatal(err)
	}
	return out, "", nil
}

func newChainT(t *testing.T, text string, cands []*yaml.RNode) *Chain {
	t.Helper()
	c, err := NewChain(loadVariant(t, text), cands)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestInProcessEqualsBinaries(t *testing.T) {
	files := fntest.ReadTree(t, filepath.Join(repoRoot, "examples", "app"))
	c := newChainT(t, variant, candidates(t))
	got, err := Run(files, c)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Changed {
		t.Fatal("the first run must change the package")
	}
	want, stderr, err := viaBinaries(t, files, variant, candidates(t))
	if err != nil {
		t.Fatalf("binaries: %v\n%s", err, stderr)
	}
	if diff := cmp.Diff(want, got.Files); diff != "" {
		t.Fatalf("in-process output differs from the binaries' (-binaries +in-process):\n%s", diff)
	}
	for _, wantIn := range []struct{ file, text string }{
		{"package-context.yaml", "region: us-east1"},
		{"Kptfile", "name: PackageVariant.app-prod.set.ns.0"},
		{"Kptfile", "conditionType: config.injection.ConfigMap.endpoints"},
		{"endpoints.yaml", "kpt.dev/injected-resource: us-east1-endpoints"},
		{"team.yaml", "oncall: web-oncall@example.com"},
	} {
		if !strings.Contains(got.Files[wantIn.file], wantIn.text) {
			t.Errorf("%s lacks %q:\n%s", wantIn.file, wantIn.text, got.Files[wantIn.file])
		}
	}
	// rule zero-write-steady-state: the output run again is no change, and keeps its bytes.
	again, err := Run(got.Files, c)
	if err != nil {
		t.Fatal(err)
	}
	if again.Changed || !cmp.Equal(again.Files, got.Files) {
		t.Fatalf("a second run changed the package:\n%s", cmp.Diff(got.Files, again.Files))
	}
}

// rule zero-write-steady-state: a file that differs only in key order or formatting is no change.
func TestKeyOrderIsNoChange(t *testing.T) {
	files := fntest.ReadTree(t, filepath.Join(repoRoot, "examples", "app"))
	c := newChainT(t, variant, candidates(t))
	once, err := Run(files, c)
	if err != nil {
		t.Fatal(err)
	}
	reordered := map[string]string{}
	for k, v := range once.Files {
		reordered[k] = v
	}
	reordered["deployment.yaml"] = "kind: Deployment\napiVersion: apps/v1\nspec:\n  replicas: 1\n  template: {spec: {containers: [{name: web, image: 'nginx:1.27'}], }, metadata: {labels: {app: web}}}\n  selector: {matchLabels: {app: web}}\nmetadata: {name: web, labels: {app: web}}\n"
	r, err := Run(reordered, c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Changed || r.Files["deployment.yaml"] != reordered["deployment.yaml"] {
		t.Fatalf("a reordered, untouched file counted as a change or was rewritten:\n%s", r.Files["deployment.yaml"])
	}
}

// An invalid variant is refused with the same problem in-process (typed,
// with its field path, before anything runs) and through the binaries.
func TestErrorsAgree(t *testing.T) {
	files := fntest.ReadTree(t, filepath.Join(repoRoot, "examples", "app"))
	bad := strings.Replace(variant, "data: {env: prod, region: us-east1}", "data: {name: renamed}", 1)
	_, err := NewChain(loadVariant(t, bad), nil)
	var invalid *krm.Invalid
	if !errors.As(err, &invalid) || len(invalid.Problems) != 1 || invalid.Problems[0].Field != "spec.packageContext.data.name" {
		t.Fatalf("in-process error = %#v, want one problem at spec.packageContext.data.name", err)
	}
	msg := "`spec.packageContext.data` must not contain the reserved key \"name\" (kpt and Porch set it)"
	if err.Error() != msg {
		t.Fatalf("in-process error = %q, want %q", err, msg)
	}
	_, stderr, berr := viaBinaries(t, files, bad, nil)
	if want := "package-context: error: PackageVariant \"app-prod\": " + msg; berr == nil || strings.TrimSpace(stderr) != want {
		t.Fatalf("binaries: %v, stderr %q, want %q", berr, stderr, want)
	}
}

// A function that fails on the package stops the chain with its error, in
// process and through the binaries alike: the package is left as it was.
func TestPackageErrorsAgree(t *testing.T) {
	files := fntest.ReadTree(t, filepath.Join(repoRoot, "examples", "app"))
	delete(files, "package-context.yaml")
	_, err := Run(files, newChainT(t, variant, nil))
	want := "package-context: error: package-context.yaml: file not found; the package context must be ConfigMap \"kptfile.kpt.dev\" in \"package-context.yaml\""
	if err == nil || err.Error() != want {
		t.Fatalf("in-process error = %v, want %q", err, want)
	}
	_, stderr, berr := viaBinaries(t, files, variant, nil)
	if berr == nil || strings.TrimSpace(stderr) != want {
		t.Fatalf("binaries: %v, stderr %q", berr, stderr)
	}
}

func TestInjectionTypes(t *testing.T) {
	p, err := Load(fntest.ReadTree(t, filepath.Join(repoRoot, "examples", "app")))
	if err != nil {
		t.Fatal(err)
	}
	got := p.InjectionTypes()
	want := []krm.GVK{{APIVersion: "v1", Kind: "ConfigMap"}, {APIVersion: "example.com/v1", Kind: "Team"}}
	if !cmp.Equal(got, want) {
		t.Fatalf("InjectionTypes = %v, want %v", got, want)
	}
}

// Fingerprint is by meaning: formatting, key order and comments do not
// change it (Porch rewrites the Kptfile in its own format), content does.
func TestFingerprint(t *testing.T) {
	a := map[string]string{
		"Kptfile":   "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app # the package\ninfo:\n  readinessGates:\n  - conditionType: x\n",
		"cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n",
		"README.md": "# app\n",
	}
	b := map[string]string{
		"Kptfile":   "kind: Kptfile\napiVersion: kpt.dev/v1\nmetadata: {name: app}\ninfo:\n  readinessGates:\n    - conditionType: x\n",
		"cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata: {k: v}\n",
		"README.md": "# app\n",
	}
	if Fingerprint(a) != Fingerprint(b) {
		t.Errorf("the same package, formatted otherwise, has another fingerprint")
	}
	// Not objects: a list and a scalar document are taken as they are.
	odd := map[string]string{"list.yaml": "- group: example.com\n   CCCC\n", "text.yaml": "just text\n"}
	if Fingerprint(odd) == Fingerprint(map[string]string{"list.yaml": "- group: example.com\n", "text.yaml": "just text\n"}) {
		t.Errorf("a list's content is not in the fingerprint")
	}
	for name, change := range map[string]func(map[string]string){
		"a value":         func(f map[string]string) { f["cm.yaml"] = strings.Replace(f["cm.yaml"], "k: v", "k: w", 1) },
		"a file added":    func(f map[string]string) { f["extra.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n" },
		"a non-YAML file": func(f map[string]string) { f["README.md"] = "# app!\n" },
		"a file renamed":  func(f map[string]string) { f["cm2.yaml"] = f["cm.yaml"]; delete(f, "cm.yaml") },
		"a Kptfile gate":  func(f map[string]string) { f["Kptfile"] += "  - conditionType: y\n" },
	} {
		c := maps.Clone(a)
		change(c)
		if Fingerprint(c) == Fingerprint(a) {
			t.Errorf("%s: the fingerprint did not change", name)
		}
	}
}

// The fingerprint's format is fixed: every variant's status records its
// last write by it (status.downstreamTargets[].lastWrite), so a change of
// format would read every draft as a person's edit. The memo of files'
// parts (contributions) changes no digest, the first time or the second.
func TestFingerprintFormat(t *testing.T) {
	files := map[string]string{
		"Kptfile":         "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app # the name\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n",
		"deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  annotations:\n    internal.config.kubernetes.io/path: deployment.yaml\nspec:\n  replicas: 2\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\n",
		"README.md":       "# app\n",
		"bad.yaml":        "a: [\n",
	}
	for i := 0; i < 2; i++ {
		if got := Fingerprint(files); got != "sha256:935fb85039b7786675fcb0965af9aa9b466116f4aa042aca6500b796b30537ba" {
			t.Fatalf("pass %d: %s", i, got)
		}
		if got := FileDigests(files)["deployment.yaml"]; got != "sha256:34fccad7481ab2c5dd56f0df59e492b10ec8dac7fc2da2ba149062ac6cea84aa" {
			t.Fatalf("pass %d: deployment.yaml %s", i, got)
		}
		if got := FileDigests(files)["bad.yaml"]; got != "sha256:9a47c342662729759e0eb658ae48165bd1d3907eac16953405ad2d5b724d1cfc" {
			t.Fatalf("pass %d: bad.yaml %s", i, got)
		}
	}
	// The memo is bounded: filled past its size it starts again.
	m := &memo{m: map[[32]byte][]byte{}}
	part := make([]byte, memoBytes/64)
	for i := 0; i < 70; i++ {
		m.put(memoKey("f", string(rune(i))), part)
	}
	if m.size > memoBytes || len(m.m) > 64 {
		t.Fatalf("the memo holds %d bytes in %d entries, past its bound %d", m.size, len(m.m), memoBytes)
	}
}
