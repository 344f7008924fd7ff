package gitstore

// Loading: a repository's refs read as Porch's layout gives them, each
// package revision located and measured (bounds.go), its files read when
// first needed; a bare repository made (Init) or found (Discover).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/pvkit/pvkit/orchestrator/store"
)

// lazyFiles reads a package's files from a commit when first needed.
func (r *repo) lazyFiles(commit, pkg string) func() (map[string]string, error) {
	return func() (map[string]string, error) {
		r.catMu.Lock()
		defer r.catMu.Unlock()
		return r.cat.files(commit, r.full(pkg))
	}
}

// Init creates an empty bare repository whose HEAD is branch.
func Init(gitDir, branch string) error {
	if branch == "" {
		branch = DefaultBranch
	}
	// A link (or anything but a directory) in the repository's place would
	// make git init write wherever it points, outside --repos.
	if fi, err := os.Lstat(gitDir); err == nil && !fi.IsDir() {
		kind := "not a directory"
		if fi.Mode()&os.ModeSymlink != 0 {
			kind = "a symbolic link"
		}
		return fmt.Errorf("%s is %s; pvctl creates repositories only as directories of their own", gitDir, kind)
	}
	if err := os.MkdirAll(gitDir, 0o755); err != nil {
		return err
	}
	// In process (go-git): a first run over a thousand repositories spawns no
	// git init for each.
	_, err := gogit.PlainInitWithOptions(gitDir, &gogit.PlainInitOptions{Bare: true,
		InitOptions: gogit.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName(branch)}})
	if err != nil {
		return fmt.Errorf("git init %s: %w", gitDir, err)
	}
	return nil
}

// IsBare reports whether dir looks like a bare git repository.
func IsBare(dir string) bool {
	for _, p := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			return false
		}
	}
	return true
}

func checkBare(dir string) error {
	if IsBare(dir) {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		return fmt.Errorf("%s is a working tree; pvctl needs a bare repository (git init --bare, or git clone --bare), as Porch's remote is", dir)
	}
	return fmt.Errorf("%s is not a git repository", dir)
}

// Discover lists the bare repositories directly under root, each named
// after its directory without a ".git" suffix. A working tree there is an
// error (pvctl would move its branch under it); other entries are ignored.
func Discover(root string) ([]Repository, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []Repository
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if err := checkBare(dir); err != nil {
			if strings.Contains(err.Error(), "working tree") {
				return nil, err
			}
			continue
		}
		out = append(out, Repository{Name: strings.TrimSuffix(e.Name(), ".git"), GitDir: dir})
	}
	return out, nil
}

// load reads a repository's package revisions, sorted by name, each with
// the function that reads its files when first needed (bounds.go). A ref
// that cannot be read as a revision, or whose package is over the bounds,
// is skipped with its reason, alone: one odd tag must not hide every other
// revision (fault isolation). Only a repository whose refs cannot be
// listed at all is an error.
func (s *backend) load(r *repo) ([]store.Revision, []func() (map[string]string, error), []Skip, error) {
	all, err := refs(r.GitDir)
	if err != nil {
		return nil, nil, nil, err
	}
	r.refs = all
	names := make([]string, 0, len(all))
	for ref := range all {
		names = append(names, ref)
	}
	sort.Strings(names)
	deletion := map[string]bool{} // "<pkg>/<vN or ref>" with a deletionProposed branch
	for _, ref := range names {
		if p, ok := r.parse(ref); ok && p.lifecycle == store.DeletionProposed {
			deletion[p.pkg+"/"+p.publishedRef()] = true
		}
	}
	cat, err := newObjectReader(r.GitDir)
	if err != nil {
		return nil, nil, nil, err
	}
	r.cat = cat
	var revs []store.Revision
	var files []func() (map[string]string, error)
	var skipped []Skip
	seen := map[string]string{} // revision name -> ref
	for _, ref := range names {
		p, ok := r.parse(ref)
		if !ok || p.lifecycle == store.DeletionProposed {
			continue
		}
		rev, err := s.loadRef(r, cat, ref, p, deletion)
		if errors.Is(err, errNoPackage) {
			continue // a tag of no package (a release tag), as Porch skips it
		}
		if err == nil {
			if other, dup := seen[rev.Name]; dup {
				err = fmt.Errorf("%s already is package revision %s", other, rev.Name)
			}
		}
		if err != nil {
			skipped = append(skipped, Skip{Repository: r.Name, Ref: ref, Err: err, Revision: rev})
			continue
		}
		seen[rev.Name] = ref
		revs = append(revs, rev)
		files = append(files, r.lazyFiles(r.refs[ref], p.pkg))
	}
	if head, ok := all[branchRef(r.Branch)]; ok {
		br, bf, bs := s.loadBranch(r, cat, head, deletion, seen)
		revs, files, skipped = append(revs, br...), append(files, bf...), append(skipped, bs...)
	}
	return revs, files, skipped, nil
}

// loadBranch lists Porch's branch placeholders: every package on the
// branch (its head), numbered -1 in the workspace named after the branch;
// seen are the revision names listed so far (ref by name), which it adds
// to.
func (s *backend) loadBranch(r *repo, cat *objectReader, head string, deletion map[string]bool, seen map[string]string) (revs []store.Revision, files []func() (map[string]string, error), skipped []Skip) {
	paths, trees, err := cat.packages(head)
	if err != nil {
		skipped = append(skipped, Skip{Repository: r.Name, Ref: branchRef(r.Branch), Err: err})
	}
	for _, path := range paths {
		pkg, under := r.rel(path)
		if !under {
			continue // outside the repository's directory
		}
		rev := store.Revision{Namespace: s.namespace, Repository: r.Name, Package: pkg, Workspace: r.Branch,
			Lifecycle: store.Published, Revision: -1, Name: store.RevisionName(r.Name, pkg, r.Branch),
			Placeholder: true, Content: trees[path].String(), Commit: head, Branch: r.Branch}
		if deletion[pkg+"/"+r.Branch] {
			rev.Lifecycle = store.DeletionProposed
		}
		if m, ok := r.meta.Revisions[rev.Name]; ok {
			rev.Owners, rev.Labels, rev.Annotations = m.owners(), m.Labels, m.Annotations
		}
		tree, _, err := cat.measured(trees[path], path)
		var kf map[string]string
		if err == nil {
			kf, err = cat.kptfile(tree, path)
		}
		if err == nil {
			rev.Lock, err = r.lockOf(kf)
		}
		if err == nil && seen[rev.Name] != "" {
			err = fmt.Errorf("%s already is package revision %s", seen[rev.Name], rev.Name)
		}
		if err != nil {
			skipped = append(skipped, Skip{Repository: r.Name, Ref: branchRef(r.Branch) + ":" + path, Err: err, Revision: rev})
			continue
		}
		seen[rev.Name] = branchRef(r.Branch)
		revs = append(revs, rev)
		files = append(files, r.lazyFiles(head, pkg))
	}
	return revs, files, skipped
}

// errNoPackage: a tag whose commit has no package (no Kptfile) at its path.
var errNoPackage = errors.New("no package at the tag's path")

// isPlaceholder reports whether rev is Porch's branch placeholder of r.
func (r *repo) isPlaceholder(rev store.Revision) bool {
	return rev.Lifecycle.IsPublished() && rev.Revision < 0 && rev.Workspace == r.Branch
}

// loadRef reads the revision a ref of Porch's layout holds: its Kptfile,
// and what its package holds, measured (its files are read later).
func (s *backend) loadRef(r *repo, cat *objectReader, ref string, p parsedRef, deletion map[string]bool) (store.Revision, error) {
	commit := r.refs[ref]
	rev := store.Revision{Namespace: s.namespace, Repository: r.Name, Package: p.pkg, Workspace: p.workspace,
		Lifecycle: p.lifecycle, Revision: p.revision}
	if p.lifecycle == store.Published {
		rev.Workspace = p.publishedRef()
		rev.Branch = r.Branch
		if p.revision > 0 {
			rev.Commit = commit // its tag's: the commit that published it
		}
	}
	rev.Name = store.RevisionName(r.Name, rev.Package, rev.Workspace)
	if p.lifecycle == store.Published && p.revision > 0 {
		msg, err := cat.message(commit)
		if err != nil {
			return rev, err
		}
		// The workspace a published revision was approved from, as its
		// commit records it; only for the revision the commit was published
		// as (another tag on the same commit is its own revision, vN).
		if a := annotationOf([]byte("\n\n" + msg)); a.Package == r.full(p.pkg) && a.Workspace != "" && a.revisionIs(p.revision) {
			rev.Workspace = a.Workspace
		}
	}
	if p.lifecycle == store.Published && deletion[p.pkg+"/"+p.publishedRef()] {
		rev.Lifecycle = store.DeletionProposed
	}
	rev.Name = store.RevisionName(r.Name, rev.Package, rev.Workspace)
	tree, _, found, err := cat.pkgTree(commit, r.full(p.pkg))
	if err != nil {
		return rev, err
	}
	f := map[string]string{}
	if found {
		rev.Content = tree.Hash.String()
		if f, err = cat.kptfile(tree, r.full(p.pkg)); err != nil {
			return rev, err
		}
	}
	if _, ok := f["Kptfile"]; !ok && p.lifecycle == store.Published {
		return rev, errNoPackage
	}
	if rev.Lock, err = r.lockOf(f); err != nil {
		return rev, err
	}
	if m, ok := r.meta.Revisions[rev.Name]; ok {
		rev.Owners, rev.Labels, rev.Annotations = m.owners(), m.Labels, m.Annotations
		rev.Created, rev.PublishedBy, rev.Tasks = m.created(), m.PublishedBy, m.tasks()
	}
	return rev, nil
}
