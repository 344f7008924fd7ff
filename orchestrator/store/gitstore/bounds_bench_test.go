package gitstore

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// The worst repositories docs/security.md names, as make bench-security
// builds them: each benchmark opens the store once per iteration (the
// input is built once, off the clock) and lists every revision, as
// `pvctl get` does.

// benchRepo is an empty bare repository with blueprints/app published.
func benchRepo(b *testing.B) (string, *gogit.Repository) {
	b.Helper()
	dir := blueprintsRepo(b, map[string]string{"Kptfile": kf})
	repo, err := gogit.PlainOpen(dir)
	if err != nil {
		b.Fatal(err)
	}
	return dir, repo
}

// commitRef commits root as a commit and points ref at it.
func commitRef(b testing.TB, repo *gogit.Repository, root plumbing.Hash, ref string) {
	b.Helper()
	sig := object.Signature{Name: "t", Email: "t@t"}
	obj := repo.Storer.NewEncodedObject()
	if err := (&object.Commit{Author: sig, Committer: sig, Message: "x", TreeHash: root}).Encode(obj); err != nil {
		b.Fatal(err)
	}
	h, err := repo.Storer.SetEncodedObject(obj)
	if err != nil {
		b.Fatal(err)
	}
	if err := repo.Storer.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(ref), h)); err != nil {
		b.Fatal(err)
	}
}

func openAndList(b *testing.B, dir string, wantServed int) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := Open(ns, []Repository{{Name: "blueprints", GitDir: dir}})
		if err != nil {
			b.Fatal(err)
		}
		n := len(s.All(ns))
		if wantServed >= 0 && n != wantServed {
			b.Fatalf("served %d revisions, want %d (skipped %v)", n, wantServed, s.Skipped())
		}
		b.ReportMetric(float64(n), "revisions")
	}
}

// A blob whose header says 3 GB (12 bytes of content): refused by its
// header, never inflated.
func BenchmarkHostileBlobHeader(b *testing.B) {
	dir, repo := benchRepo(b)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	fmt.Fprintf(zw, "blob %d\x00not 3 GB", int64(3)<<30)
	zw.Close()
	h := plumbing.NewHash(strings.Repeat("ab", 20))
	p := filepath.Join(dir, "objects", h.String()[:2], h.String()[2:])
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, z.Bytes(), 0o444); err != nil {
		b.Fatal(err)
	}
	kfBlob := repo.Storer.NewEncodedObject()
	kfBlob.SetType(plumbing.BlobObject)
	w, _ := kfBlob.Writer()
	w.Write([]byte(kf))
	w.Close()
	kh, _ := repo.Storer.SetEncodedObject(kfBlob)
	pkg, err := storeTree(repo.Storer, []object.TreeEntry{{Name: "Kptfile", Mode: filemode.Regular, Hash: kh}, {Name: "huge.yaml", Mode: filemode.Regular, Hash: h}})
	if err != nil {
		b.Fatal(err)
	}
	root, _ := storeTree(repo.Storer, []object.TreeEntry{{Name: "app", Mode: filemode.Dir, Hash: pkg}})
	commitRef(b, repo, root, "refs/heads/drafts/app/huge")
	openAndList(b, dir, 2)
}

// One 16 MB blob (the file bound) under 300 tags: opening reads none of it.
func BenchmarkHostileBlobUnderManyTags(b *testing.B) {
	dir, repo := benchRepo(b)
	pkg, err := writeTree(repo.Storer, map[string]string{"Kptfile": kf, "big.yaml": strings.Repeat("a", MaxFileBytes)})
	if err != nil {
		b.Fatal(err)
	}
	root, _ := storeTree(repo.Storer, []object.TreeEntry{{Name: "app", Mode: filemode.Dir, Hash: pkg}})
	for i := 2; i <= 301; i++ {
		commitRef(b, repo, root, fmt.Sprintf("refs/tags/app/v%d", i))
	}
	openAndList(b, dir, 302)
}

// 600 packages nested in each other on the branch, 16 KB each: each tree
// is measured once.
func BenchmarkHostileNestedPackages(b *testing.B) {
	dir, repo := benchRepo(b)
	const depth = 600
	var sub plumbing.Hash
	for i := depth; i >= 1; i-- {
		files := map[string]string{"Kptfile": strings.Replace(kf, "name: app", fmt.Sprintf("name: p%d", i), 1), "data.yaml": fmt.Sprintf("n: %d\nx: %s\n", i, strings.Repeat("x", 16<<10))}
		t, err := writeTree(repo.Storer, files)
		if err != nil {
			b.Fatal(err)
		}
		if i < depth {
			tree, _ := object.GetTree(repo.Storer, t)
			entries := append(tree.Entries, object.TreeEntry{Name: "n", Mode: filemode.Dir, Hash: sub})
			if t, err = storeTree(repo.Storer, entries); err != nil {
				b.Fatal(err)
			}
		}
		sub = t
	}
	main, _ := repo.Reference(plumbing.ReferenceName("refs/heads/main"), true)
	c, _ := repo.CommitObject(main.Hash())
	rootTree, _ := c.Tree()
	entries := append(rootTree.Entries, object.TreeEntry{Name: "nest", Mode: filemode.Dir, Hash: sub})
	root, err := storeTree(repo.Storer, entries)
	if err != nil {
		b.Fatal(err)
	}
	commitRef(b, repo, root, "refs/heads/main")
	openAndList(b, dir, -1) // app v1 and the placeholders of the packages whose path is short enough to be one (1,024 characters)
}
