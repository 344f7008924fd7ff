package docs

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Issue 42, issue 61 #5: the code stays readable in one sitting: no
// non-generated, non-test Go file of the repository over 500 lines and no
// function over 80 lines (it covered orchestrator/ and pkg/rollout only). A function kept longer on purpose is named in longFuncs with
// the reason, said where it lives too.
const (
	maxFileLines = 500
	maxFuncLines = 80
)

// longFuncs are the functions over maxFuncLines kept on purpose, with why
// (file:func); a new long function fails the test, and one that shrank
// must leave the list.
var longFuncs = map[string]string{}

// longFiles are the files over maxFileLines kept on purpose, with why.
var longFiles = map[string]string{}

func TestSizeLimits(t *testing.T) {
	r := root(t)
	var problems []string
	seen := map[string]bool{}
	for _, dir := range []string{"."} {
		err := filepath.WalkDir(filepath.Join(r, dir), func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() && path != r && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir // .cache, .git
			}
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasPrefix(d.Name(), "zz_generated") {
				return err
			}
			rel, _ := filepath.Rel(r, path)
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if _, kept := longFiles[rel]; strings.Count(string(src), "\n") > maxFileLines && !kept {
				n := strings.Count(string(src), "\n")
				problems = append(problems, fmt.Sprintf("%s: %d lines (at most %d)", rel, n, maxFileLines))
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, src, 0)
			if err != nil {
				return err
			}
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
				_, kept := longFuncs[rel+":"+fn.Name.Name]
				if kept && n > maxFuncLines {
					seen[rel+":"+fn.Name.Name] = true
				}
				if n > maxFuncLines && !kept {
					problems = append(problems, fmt.Sprintf("%s: func %s is %s lines (at most %d)", rel, fn.Name.Name, strconv.Itoa(n), maxFuncLines))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for k := range longFuncs {
		if !seen[k] {
			problems = append(problems, fmt.Sprintf("%s is in longFuncs but no longer over %d lines (or gone): take it off the list", k, maxFuncLines))
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
}

// Issue 42 #7, issue 61 #5 (ARCHITECTURE.md: pkg/ is pure: no network,
// no clients, no files, no clocks): no package under pkg/ imports the
// network, processes or internal/ (pkg/ is what anyone may import), opens,
// writes or stats a file, reads the environment, or reads a clock.
func TestPkgIsPure(t *testing.T) {
	r := root(t)
	banned := map[string]bool{"net": true, "net/http": true, "os/exec": true, "io/ioutil": true}
	calls := regexp.MustCompile(`\bos\.(Open|OpenFile|Create|CreateTemp|ReadFile|WriteFile|ReadDir|Mkdir|MkdirAll|MkdirTemp|Remove|RemoveAll|Rename|Stat|Lstat|Chdir|Getwd|Getenv|LookupEnv|Environ|Exit|Executable)\(|filesys\.MakeFsOnDisk\(|\btime\.(Now|Since|Until|After|AfterFunc|Tick|NewTimer|NewTicker|Sleep)\(|context\.With(Timeout|Deadline)\(`)
	err := filepath.WalkDir(filepath.Join(r, "pkg"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, _ := filepath.Rel(r, path)
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if banned[p] || strings.HasPrefix(p, "github.com/pvkit/pvkit/internal/") {
				t.Errorf("%s imports %s: pkg/ is pure (ARCHITECTURE.md); the network, processes and internal/ belong in orchestrator/ or internal/", rel, p)
			}
		}
		for i, line := range strings.Split(string(src), "\n") {
			if code, _, _ := strings.Cut(line, "//"); calls.MatchString(code) {
				t.Errorf("%s:%d: %s: pkg/ reads no file, environment or clock (ARCHITECTURE.md)", rel, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
