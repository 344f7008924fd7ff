package docs

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The variant reconciler stays the loop the design describes: its package
// is at most variantLines lines of non-test Go, and following one
// reconcile call by call, file by file, comes back to a file it already
// left at most variantRevisits times (each step lives in one place and
// calls down, not back and forth).
const (
	variantPackage  = "orchestrator/reconcilers/packagevariant"
	variantLines    = 3000
	variantRevisits = 40
)

func TestVariantReconcilerIsThin(t *testing.T) {
	dir := filepath.Join(root(t), variantPackage)
	lines, err := packageLines(dir)
	if err != nil {
		t.Fatal(err)
	}
	if lines > variantLines {
		t.Errorf("%s is %d lines of non-test Go (at most %d): move a concern that is not the reconcile loop into a package of its own", variantPackage, lines, variantLines)
	}
	w, err := walkCalls(dir, "Reconciler.Reconcile")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d lines; one reconcile enters %d functions in %d files and comes back to a file it left %d times", variantPackage, lines, w.funcs, len(w.files), w.revisits)
	if w.revisits > variantRevisits {
		t.Errorf("one reconcile of %s comes back to a file it already left %d times (at most %d); the returns into a file left before, most first:\n%s", variantPackage, w.revisits, variantRevisits, w.worst())
	}
}

// TestWalkCountsReturns pins what the walk counts on a package written for
// it: a.go calls b.go, which calls back into a.go, then returns.
func TestWalkCountsReturns(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.go": "package p\ntype R struct{}\nfunc (r *R) Reconcile() { r.one(); r.two(); helper() }\nfunc helper() {}\n",
		"b.go": "package p\nfunc (r *R) one() { helper() }\nfunc (r *R) two() { r.three() }\n",
		"c.go": "package p\nfunc (r *R) three() {}\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, err := walkCalls(dir, "R.Reconcile")
	if err != nil {
		t.Fatal(err)
	}
	// a → b(one) → a(helper) → b → a(return); a → b(two) → c → b → a. The
	// files a, b, c are entered first once each; every other entry is a
	// return to a file left before: helper's a, back to b, back to a, into
	// b again, back to b from c, back to a.
	if w.funcs != 5 || len(w.files) != 3 || w.revisits != 6 {
		t.Fatalf("walk = %d funcs, %d files, %d revisits; want 5, 3, 6", w.funcs, len(w.files), w.revisits)
	}
}

func packageLines(dir string) (int, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return 0, err
		}
		n += strings.Count(string(b), "\n")
	}
	return n, nil
}

type walk struct {
	decls    map[string]*ast.FuncDecl
	fileOf   map[string]string
	methods  map[string][]string // method name → receiver types declaring it
	imports  map[string]bool     // names of imported packages, any file
	seen     map[string]bool
	files    map[string]bool
	cur      string
	funcs    int
	depth    int
	revisits int
	into     map[string]int // file → returns into it after leaving it
}

// walkCalls follows entry's body in source order through every function
// of dir's package it calls (each function once, as a reader reading it
// the first time would), and counts the moves into a file that the walk
// left before, whether by a call or by a return.
func walkCalls(dir, entry string) (*walk, error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		return nil, err
	}
	w := &walk{decls: map[string]*ast.FuncDecl{}, fileOf: map[string]string{}, methods: map[string][]string{},
		imports: map[string]bool{}, seen: map[string]bool{}, files: map[string]bool{}, into: map[string]int{}}
	for _, pkg := range pkgs {
		for path, f := range pkg.Files {
			for _, im := range f.Imports {
				name := strings.Trim(im.Path.Value, `"`)
				name = name[strings.LastIndex(name, "/")+1:]
				if im.Name != nil {
					name = im.Name.Name
				}
				w.imports[name] = true
			}
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				key := fn.Name.Name
				if fn.Recv != nil && len(fn.Recv.List) > 0 {
					recv := recvType(fn.Recv.List[0].Type)
					key = recv + "." + key
					w.methods[fn.Name.Name] = append(w.methods[fn.Name.Name], recv)
				}
				w.decls[key] = fn
				w.fileOf[key] = filepath.Base(path)
			}
		}
	}
	if w.decls[entry] == nil {
		return nil, fmt.Errorf("%s: no function %s", dir, entry)
	}
	w.enter(entry)
	return w, nil
}

func (w *walk) move(file string) {
	if file == w.cur {
		return
	}
	if w.files[file] {
		w.revisits++
		w.into[file]++
	}
	w.files[file] = true
	w.cur = file
}

func (w *walk) enter(key string) {
	w.seen[key] = true
	w.funcs++
	if os.Getenv("PVKIT_WALK_TRACE") != "" {
		fmt.Printf("%*s%s %s\n", 2*w.depth, "", w.fileOf[key], key)
	}
	w.depth++
	defer func() { w.depth-- }()
	back := w.cur
	w.move(w.fileOf[key])
	ast.Inspect(w.decls[key].Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if callee := w.callee(call.Fun); callee != "" && !w.seen[callee] {
			w.enter(callee)
			w.move(w.fileOf[key])
		}
		return true
	})
	if back != "" {
		w.move(back)
	}
}

// callee names the package's function a call expression reaches: a plain
// function, or a method whose name one receiver type of the package
// declares (a name several types declare is not followed).
func (w *walk) callee(fun ast.Expr) string {
	switch f := fun.(type) {
	case *ast.Ident:
		if w.decls[f.Name] != nil {
			return f.Name
		}
	case *ast.SelectorExpr:
		if x, ok := f.X.(*ast.Ident); ok && w.imports[x.Name] && x.Obj == nil {
			return ""
		}
		if recv := w.methods[f.Sel.Name]; len(recv) == 1 {
			return recv[0] + "." + f.Sel.Name
		}
	}
	return ""
}

func (w *walk) worst() string {
	var files []string
	for f := range w.into {
		files = append(files, f)
	}
	sort.Slice(files, func(i, j int) bool {
		if w.into[files[i]] != w.into[files[j]] {
			return w.into[files[i]] > w.into[files[j]]
		}
		return files[i] < files[j]
	})
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "  %s: %d\n", f, w.into[f])
	}
	return b.String()
}

func recvType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvType(t.X)
	case *ast.IndexExpr:
		return recvType(t.X)
	case *ast.Ident:
		return t.Name
	}
	return ""
}
