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

// Issue 42 #9: the README's layout table names every Go package a
// newcomer meets (a package under pkg/ by name in the pkg/ row; a package
// under orchestrator/ in orchestrator/README.md's table, which the README
// points to; every other one by its path, or by a directory row that holds
// it), so that no package is found only by reading the tree.
func TestLayoutTablesNameEveryPackage(t *testing.T) {
	r := root(t)
	readme := layoutTable(t, filepath.Join(r, "README.md"), "## Architecture and layout")
	orch := layoutTable(t, filepath.Join(r, "orchestrator", "README.md"), "")
	tick := regexp.MustCompile("`([^`]+)`")
	named := func(table string) map[string]bool {
		out := map[string]bool{}
		for _, m := range tick.FindAllStringSubmatch(table, -1) {
			out[strings.TrimSuffix(m[1], "/")] = true
		}
		return out
	}
	top, inOrch := named(readme), named(orch)
	pkgRow := ""
	for _, l := range strings.Split(readme, "\n") {
		if strings.HasPrefix(l, "| `pkg/` |") {
			pkgRow = l
		}
	}
	inPkg := named(pkgRow)
	var missing []string
	for _, p := range goPackages(t, r) {
		switch first, rest, _ := strings.Cut(p, "/"); {
		case first == "pkg":
			if name, _, _ := strings.Cut(rest, "/"); !inPkg[name] {
				missing = append(missing, p+" (README.md, the pkg/ row)")
			}
		case first == "orchestrator":
			if !inOrch[rest] && !inOrch[parentOf(rest)] {
				missing = append(missing, p+" (orchestrator/README.md)")
			}
		case first == "functions":
			if !top[p] && !top["functions/<name>"] {
				missing = append(missing, p+" (README.md)")
			}
		default:
			if !top[p] && !heldBy(top, p) {
				missing = append(missing, p+" (README.md)")
			}
		}
	}
	for _, m := range missing {
		t.Errorf("no layout table names %s", m)
	}
}

// heldBy reports whether a directory row of the table names an ancestor
// of package p.
func heldBy(rows map[string]bool, p string) bool {
	for q := parentOf(p); q != ""; q = parentOf(q) {
		if rows[q] {
			return true
		}
	}
	return false
}

func parentOf(p string) string {
	if i := strings.LastIndex(p, "/"); i > 0 {
		return p[:i]
	}
	return ""
}

// layoutTable is the first Markdown table after heading (the file's first
// table when heading is "").
func layoutTable(t *testing.T, path, heading string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if heading != "" {
		i := strings.Index(s, heading)
		if i < 0 {
			t.Fatalf("%s: no %q", path, heading)
		}
		s = s[i:]
	}
	var rows []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "|") {
			rows = append(rows, l)
		} else if len(rows) > 0 {
			break
		}
	}
	if len(rows) < 3 {
		t.Fatalf("%s: no layout table", path)
	}
	return strings.Join(rows, "\n")
}

// goPackages are the repository's directories holding non-test Go files,
// outside testdata, the tools modules and hidden directories, sorted.
func goPackages(t *testing.T, r string) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(r, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && p != r && (strings.HasPrefix(name, ".") || name == "testdata" || name == "tools" || name == "bin" || name == "hack") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			rel, _ := filepath.Rel(r, filepath.Dir(p))
			if rel != "." {
				seen[filepath.ToSlash(rel)] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
