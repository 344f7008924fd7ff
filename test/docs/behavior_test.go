package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// Issue 20 #7: the code cites the rules of docs/behavior.md by name, and
// nothing outside the repository. Every `(rule: name)` (or "rule name",
// "rules: a, b") in a Go comment must be a rule of the page; no comment
// cites a requirement ID (F5, A3), or a spec document (contract.md,
// reference-behavior.md) that lives outside the repository, and no
// Markdown page either; and every rule of the page is cited where the code
// keeps it.
func TestBehaviorRulesCited(t *testing.T) {
	r := root(t)
	page, err := os.ReadFile(filepath.Join(r, "docs", "behavior.md"))
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^### ([a-z0-9-]+)$`).FindAllStringSubmatch(string(page), -1) {
		if rules[m[1]] {
			t.Errorf("docs/behavior.md: rule %q is defined twice", m[1])
		}
		rules[m[1]] = true
	}
	if len(rules) < 20 {
		t.Fatalf("docs/behavior.md defines %d rules; the headings are `### name`", len(rules))
	}
	cite := regexp.MustCompile(`\b[Rr]ules?:? ((?:[a-z0-9]+(?:-[a-z0-9]+)+)(?:, [a-z0-9]+(?:-[a-z0-9]+)+)*)`)
	outside := regexp.MustCompile(`\b[FA][0-9]{1,2}\b|contract\.md|reference-behavior|mutation-application|package-variant-design|packagevariant-reconciliation|spec/[a-z-]+\.md`)
	cited := map[string]bool{}
	var bad []string
	err = filepath.WalkDir(r, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".cache" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".md")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(r, path)
		if strings.HasSuffix(path, ".md") { // documentation: no citation of what lives outside
			for i, line := range strings.Split(string(b), "\n") {
				if m := outside.FindString(line); m != "" {
					bad = append(bad, rel+":"+itoa(i+1)+": cites "+m+", which lives outside the repository (name a rule of docs/behavior.md)")
				}
			}
			return nil
		}
		if rel == filepath.Join("test", "docs", "behavior_test.go") { // this test names what it looks for
			return nil
		}
		for i, line := range strings.Split(string(b), "\n") {
			_, comment, ok := strings.Cut(line, "//")
			if !ok {
				continue
			}
			for _, m := range cite.FindAllStringSubmatch(comment, -1) {
				for _, name := range strings.Split(m[1], ", ") {
					cited[name] = true
					if !rules[name] {
						bad = append(bad, rel+":"+itoa(i+1)+": cites rule "+name+", which docs/behavior.md does not define")
					}
				}
			}
			if m := outside.FindString(comment); m != "" {
				bad = append(bad, rel+":"+itoa(i+1)+": cites "+m+", which lives outside the repository (cite a rule of docs/behavior.md)")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b)
	}
	var uncited []string
	for name := range rules {
		if !cited[name] {
			uncited = append(uncited, name)
		}
	}
	sort.Strings(uncited)
	for _, name := range uncited {
		t.Errorf("docs/behavior.md: rule %s is cited nowhere in the code: cite it where the code keeps it", name)
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
