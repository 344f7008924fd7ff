package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The functions build on the maintained SDK (kptdev/krm-functions-sdk), not
// its old home, and the README's Development section names the SDK and
// kyaml at the versions go.mod requires.
func TestReadmeNamesTheSDK(t *testing.T) {
	r := root(t)
	mod, err := os.ReadFile(filepath.Join(r, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mod), "GoogleContainerTools/kpt-functions-sdk") {
		t.Error("go.mod still requires github.com/GoogleContainerTools/kpt-functions-sdk: the functions build on github.com/kptdev/krm-functions-sdk/go/fn")
	}
	readme, err := os.ReadFile(filepath.Join(r, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, dev, ok := strings.Cut(string(readme), "## Development\n")
	if !ok {
		t.Fatal("README.md has no Development section")
	}
	dev, _, _ = strings.Cut(dev, "\n| command |")
	for _, m := range []string{"github.com/kptdev/krm-functions-sdk/go/fn", "sigs.k8s.io/kustomize/kyaml"} {
		v := regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(m) + ` (v\S+)`).FindSubmatch(mod)
		if v == nil {
			t.Errorf("go.mod does not require %s", m)
			continue
		}
		if !strings.Contains(dev, "`"+m+"` "+string(v[1])) {
			t.Errorf("README.md's Development section does not name `%s` %s, the version go.mod requires", m, v[1])
		}
	}
	var old []string
	filepath.WalkDir(r, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(r, p)
		if d.IsDir() && (rel == "hack" || rel == ".cache" || rel == ".git" || rel == "bin") {
			return filepath.SkipDir // hack/catalog: the catalog's own modules at their own versions
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), `"github.com/`+`GoogleContainerTools/kpt-functions-sdk`) {
				old = append(old, rel)
			}
		}
		return nil
	})
	if len(old) > 0 {
		t.Errorf("these files import the old SDK path: %v", old)
	}
}
