package release

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
	sigsyaml "sigs.k8s.io/yaml"
)

// root copies the repository's config/, VERSION and CHANGELOG.md into a
// temporary directory, so a test can change them.
func root(t *testing.T) string {
	t.Helper()
	src := fntest.RepoRoot()
	dst := t.TempDir()
	for _, f := range []string{"VERSION", "CHANGELOG.md"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.CopyFS(filepath.Join(dst, "config"), os.DirFS(filepath.Join(src, "config"))); err != nil {
		t.Fatal(err)
	}
	return dst
}

func version(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fntest.RepoRoot(), "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// Every refusal names what to fix, and nothing is built.
func TestCheckRefuses(t *testing.T) {
	v := version(t)
	for _, tc := range []struct {
		name    string
		edit    func(dir string)
		opts    func(o *Options)
		message string
	}{
		{"not semver", nil, func(o *Options) { o.Version = "0.2" }, `VERSION="0.2" is not a release version: want vMAJOR.MINOR.PATCH, as v0.2.0 or v0.2.0-rc.1`},
		{"build metadata", nil, func(o *Options) { o.Version = v + "+abc" }, `VERSION="` + v + `+abc" is not a release version`},
		{"empty", nil, func(o *Options) { o.Version = "" }, `VERSION="" is not a release version`},
		{"no v", nil, func(o *Options) { o.Version = "0.2.0" }, `VERSION="0.2.0" is not a release version`},
		{"a leading zero", nil, func(o *Options) { o.Version = "v0.02.0" }, `VERSION="v0.02.0" is not a release version`},
		{"image repo with tag", nil, func(o *Options) { o.ImageRepo = "ghcr.io/pvkit:v1" }, `IMAGE_REPO="ghcr.io/pvkit:v1" is not an image repository (a lower-case registry and path, no tag), as ghcr.io/pvkit`},
		{"image repo upper case", nil, func(o *Options) { o.ImageRepo = "GHCR.io/pvkit" }, `IMAGE_REPO="GHCR.io/pvkit" is not an image repository`},
		{"another version", nil, func(o *Options) { o.Version = "v9.9.9" }, "VERSION says " + v + ", not v9.9.9: to release v9.9.9, write it to VERSION and give it a section in CHANGELOG.md first"},
		{"no changelog section", func(dir string) {
			os.WriteFile(filepath.Join(dir, "VERSION"), []byte("v9.9.9\n"), 0o644)
		}, func(o *Options) { o.Version = "v9.9.9" }, `CHANGELOG.md has no section for v9.9.9: add a line "## v9.9.9" and what it changes`},
		{"a mention is not a section", func(dir string) {
			os.WriteFile(filepath.Join(dir, "VERSION"), []byte("v9.9.9\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "CHANGELOG.md"), []byte("# Changelog\n\nv9.9.9 is next.\n### v9.9.9\n"), 0o644)
		}, func(o *Options) { o.Version = "v9.9.9" }, `CHANGELOG.md has no section for v9.9.9`},
		{"no VERSION", func(dir string) { os.Remove(filepath.Join(dir, "VERSION")) }, nil, "the version source: open "},
		{"no CHANGELOG", func(dir string) { os.Remove(filepath.Join(dir, "CHANGELOG.md")) }, nil, "the changelog: open "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := root(t)
			if tc.edit != nil {
				tc.edit(dir)
			}
			o := Options{Root: dir, Version: v, ImageRepo: "ghcr.io/pvkit"}
			if tc.opts != nil {
				tc.opts(&o)
			}
			arts, err := Manifests(o)
			if err == nil || !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("error %v, want it to contain %q", err, tc.message)
			}
			if arts != nil {
				t.Errorf("built %d artifacts despite the error", len(arts))
			}
		})
	}
}

func TestChangelogHas(t *testing.T) {
	log := []byte("# Changelog\n\n## v0.2.0 (2026-12-01)\n- x\n## [v0.1.0]\n## v0.1.0-rc.1\n")
	for v, want := range map[string]bool{"v0.2.0": true, "v0.1.0": true, "v0.1.0-rc.1": true, "v0.1": false, "v0.3.0": false} {
		if got := ChangelogHas(log, v); got != want {
			t.Errorf("ChangelogHas(%s) = %v, want %v", v, got, want)
		}
	}
}

type doc struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

func split(t *testing.T, b []byte) []doc {
	t.Helper()
	var out []doc
	for _, part := range strings.Split(string(b), "\n---\n") {
		var d doc
		if err := sigsyaml.Unmarshal([]byte(part), &d); err != nil {
			t.Fatalf("%v in\n%s", err, part)
		}
		if d.Kind == "" {
			t.Fatalf("a document with no kind:\n%s", part)
		}
		out = append(out, d)
	}
	return out
}

// The manifests: the image set to the release's, the Namespace and the CRDs
// first, no example kind, the same bytes on every build.
func TestManifests(t *testing.T) {
	v := version(t)
	o := Options{Root: root(t), Version: v, ImageRepo: "ghcr.io/pvkit"}
	arts, err := Manifests(o)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Manifests(o)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string][]byte{}
	var names []string
	for i, a := range arts {
		names = append(names, a.Name)
		byName[a.Name] = a.Data
		if !bytes.Equal(a.Data, again[i].Data) {
			t.Errorf("%s differs from one build to the next", a.Name)
		}
	}
	if got := strings.Join(names, " "); got != "install.yaml install-without-crds.yaml install-namespaced.yaml install-sharded.yaml function-runner-config.yaml" {
		t.Fatalf("artifacts %s", got)
	}
	for _, name := range []string{"install.yaml", "install-without-crds.yaml", "install-namespaced.yaml", "install-sharded.yaml"} {
		b := byName[name]
		if !bytes.Contains(b, []byte("image: ghcr.io/pvkit/controller:"+v+"\n")) || bytes.Contains(b, []byte(":dev")) {
			t.Errorf("%s does not name ghcr.io/pvkit/controller:%s alone", name, v)
		}
		if bytes.Contains(b, []byte("example.com")) && !bytes.Contains(b, []byte("foo.example.com/CamelCase")) {
			t.Errorf("%s names an example kind", name)
		}
		if !bytes.HasPrefix(b, []byte("# pvkit "+v+": ")) {
			t.Errorf("%s has no header naming the release", name)
		}
		docs := split(t, b)
		if docs[0].Kind != "Namespace" || docs[0].Metadata.Name != "pvkit-system" {
			t.Errorf("%s starts with %s/%s, want the Namespace", name, docs[0].Kind, docs[0].Metadata.Name)
		}
		crds, seenOther := 0, false
		for _, d := range docs {
			switch {
			case d.Kind == "CustomResourceDefinition" && seenOther:
				t.Errorf("%s: CRD %s after other objects", name, d.Metadata.Name)
			case d.Kind == "CustomResourceDefinition":
				crds++
			case d.Kind != "Namespace":
				seenOther = true
			}
		}
		if want := map[string]int{"install.yaml": 2, "install-without-crds.yaml": 0, "install-namespaced.yaml": 2, "install-sharded.yaml": 2}[name]; crds != want {
			t.Errorf("%s has %d CRDs, want %d", name, crds, want)
		}
	}
	frc := string(byName["function-runner-config.yaml"])
	for _, fn := range Functions {
		for _, img := range []string{"ghcr.io/pvkit/" + fn + ":" + v, "pvkit/" + fn + ":" + v} {
			if !strings.Contains(frc, "      - "+img+"\n") {
				t.Errorf("function-runner-config.yaml does not map %s", img)
			}
		}
	}
	var cfg struct {
		Functions []struct {
			Function string   `json:"function"`
			Images   []string `json:"images"`
		} `json:"functions"`
	}
	if err := sigsyaml.UnmarshalStrict([]byte(frc), &cfg); err != nil || len(cfg.Functions) != len(Functions) {
		t.Errorf("function-runner-config.yaml is not Porch's config shape (%v): %s", err, frc)
	}
}

// A config/ whose Deployment no longer names pvkit/controller would release
// an install with an image nobody built: refused.
func TestManifestsRefuseAnUnsetImage(t *testing.T) {
	dir := root(t)
	p := filepath.Join(dir, "config/manager/deployment.yaml")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b = regexp.MustCompile(`image: \S+`).ReplaceAll(b, []byte("image: other/controller:v1"))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Manifests(Options{Root: dir, Version: version(t), ImageRepo: "ghcr.io/pvkit"})
	if err == nil || err.Error() != "config/default: the Deployment does not name the image pvkit/controller, so the release's image could not be set" {
		t.Fatalf("error %v", err)
	}
}

// One version source: every file that names the release's images says
// VERSION's version.
func TestVersionAgreesEverywhere(t *testing.T) {
	v := version(t)
	repo := fntest.RepoRoot()
	mention := regexp.MustCompile(`pvkit/(controller|package-context|pipeline-prepend|config-inject|pvs-expand|<function>):(v[0-9][0-9A-Za-z.-]*)`)
	for _, f := range []string{"README.md", "config/manager/deployment.yaml", "deploy/function-runner/config.yaml"} {
		b, err := os.ReadFile(filepath.Join(repo, f))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, m := range mention.FindAllSubmatch(b, -1) {
			n++
			if string(m[2]) != v {
				t.Errorf("%s names %s, but VERSION says %s", f, m[0], v)
			}
		}
		if n == 0 {
			t.Errorf("%s names no pvkit image with a version", f)
		}
	}
	mk, err := os.ReadFile(filepath.Join(repo, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?m)^FUNCTIONS\s*:=\s*(.*)$`).FindSubmatch(mk); m == nil || strings.Join(strings.Fields(string(m[1])), " ") != strings.Join(Functions, " ") {
		t.Errorf("release.Functions %q are not the Makefile's FUNCTIONS", Functions)
	}
	log, err := os.ReadFile(filepath.Join(repo, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !ChangelogHas(log, v) {
		t.Errorf("CHANGELOG.md has no section for VERSION's %s", v)
	}
	lic, err := os.ReadFile(filepath.Join(repo, "LICENSE"))
	if err != nil || !bytes.Contains(lic, []byte("Apache License")) || !bytes.Contains(lic, []byte("Version 2.0, January 2004")) {
		t.Errorf("LICENSE is not the Apache License 2.0 the source headers name (%v)", err)
	}
}

// An OCI archive's image is named for ctr as the kubelet asks for it.
func TestFullyQualified(t *testing.T) {
	for ref, want := range map[string]string{
		"pvkit/controller:v0.1.0":           "docker.io/pvkit/controller:v0.1.0",
		"nginx:1.27":                        "docker.io/library/nginx:1.27",
		"ghcr.io/you/controller:v1":         "ghcr.io/you/controller:v1",
		"localhost/pvkit/controller:v1":     "localhost/pvkit/controller:v1",
		"registry:5000/pvkit/controller:v1": "registry:5000/pvkit/controller:v1",
		"docker.io/pvkit/controller:v1":     "docker.io/pvkit/controller:v1",
	} {
		if got := FullyQualified(ref); got != want {
			t.Errorf("FullyQualified(%q) = %q, want %q", ref, got, want)
		}
	}
}

// Issue 56 #1: install-sharded.yaml (config/sharding) runs the unlabelled
// shard and shards a and b, each its own Deployment with its own pods (no
// Deployment or PodDisruptionBudget selects another's), --shard, and so its
// own Lease; one metrics Service selects them all.
func TestShardedManifest(t *testing.T) {
	arts, err := Manifests(Options{Root: root(t), Version: version(t), ImageRepo: "ghcr.io/pvkit"})
	if err != nil {
		t.Fatal(err)
	}
	var b []byte
	for _, a := range arts {
		if a.Name == "install-sharded.yaml" {
			b = a.Data
		}
	}
	type selector struct {
		MatchLabels map[string]string `json:"matchLabels"`
	}
	type object struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Selector json.RawMessage `json:"selector"`
			Template struct {
				Metadata struct {
					Labels map[string]string `json:"labels"`
				} `json:"metadata"`
				Spec struct {
					Containers []struct {
						Args []string `json:"args"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	matches := func(sel, labels map[string]string) bool {
		for k, v := range sel {
			if labels[k] != v {
				return false
			}
		}
		return true
	}
	pods := map[string]map[string]string{} // Deployment -> its pods' labels
	shardArg := map[string]string{}
	selectors := map[string]map[string]string{} // kind/name -> selector
	services := 0
	for _, part := range strings.Split(string(b), "\n---\n") {
		var o object
		if err := sigsyaml.Unmarshal([]byte(part), &o); err != nil {
			t.Fatal(err)
		}
		switch o.Kind {
		case "Deployment", "PodDisruptionBudget":
			var s selector
			if err := json.Unmarshal(o.Spec.Selector, &s); err != nil {
				t.Fatal(err)
			}
			selectors[o.Kind+"/"+o.Metadata.Name] = s.MatchLabels
			if o.Kind == "Deployment" {
				pods[o.Metadata.Name] = o.Spec.Template.Metadata.Labels
				shardArg[o.Metadata.Name] = "none"
				for _, a := range o.Spec.Template.Spec.Containers[0].Args {
					if v, ok := strings.CutPrefix(a, "--shard="); ok {
						shardArg[o.Metadata.Name] = v
					}
					if strings.HasPrefix(a, "--leader-election-id") {
						t.Errorf("%s names its Lease: each shard's must be its own (--shard's default)", o.Metadata.Name)
					}
				}
			}
		case "Service":
			services++
		}
	}
	if want := map[string]string{"pvkit-controller": "none", "pvkit-controller-a": "a", "pvkit-controller-b": "b"}; !maps.Equal(shardArg, want) {
		t.Fatalf("Deployments and their --shard: %v, want %v", shardArg, want)
	}
	for key, sel := range selectors {
		name := key[strings.Index(key, "/")+1:]
		for d, labels := range pods {
			if got, want := matches(sel, labels), d == name; got != want {
				t.Errorf("%s selects the pods of Deployment %s: %v, want %v (selector %v, labels %v)", key, d, got, want, sel, labels)
			}
		}
	}
	if services != 1 {
		t.Errorf("%d Services, want the one metrics Service", services)
	}
}

// The image check holds with any image repository, pvkit's own name
// included (test/porch releases with ImageRepo "pvkit"), and refuses a
// manifest where one Deployment kept another controller image.
func TestOtherControllerImage(t *testing.T) {
	if _, err := Manifests(Options{Root: root(t), Version: version(t), ImageRepo: "pvkit"}); err != nil {
		t.Fatalf("ImageRepo pvkit: %v", err)
	}
	y := []byte("        image: pvkit/controller:v9\n---\n        image: pvkit/controller:v0.1.0\n")
	if !otherControllerImage(y, "pvkit/controller:v9") || otherControllerImage(y[:35], "pvkit/controller:v9") {
		t.Fatal("otherControllerImage misread the manifest")
	}
}
