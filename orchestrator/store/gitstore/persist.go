package gitstore

// Persisting: the store's changes written to git (memory.Persister), each
// as a commit and a ref transaction that either happens whole or not at
// all, checked against the refs as the store last read them.

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/tasks"
)

// repoOf is the repository of a revision.
func (s *backend) repoOf(rev store.Revision) (*repo, error) {
	r, ok := s.repos[rev.Repository]
	if !ok || rev.Namespace != s.namespace {
		return nil, fmt.Errorf("repository %s/%s is not a local git repository of this store: %w", rev.Namespace, rev.Repository, store.ErrNotFound)
	}
	if err := validPackage(rev.Package); err != nil {
		return nil, fmt.Errorf("package revision %s: %w", rev.Name, err)
	}
	return r, nil
}

// current reads the repository's refs and checks that the given ones are
// where the store left them.
func (r *repo) current(check ...string) (map[string]string, error) {
	all, err := refs(r.GitDir)
	if err != nil {
		return nil, err
	}
	for _, ref := range check {
		if all[ref] != r.refs[ref] {
			return nil, fmt.Errorf("%s moved outside this store (now %q, was %q): run again to read it: %w",
				strings.TrimPrefix(strings.TrimPrefix(ref, "refs/heads/"), "refs/tags/"), all[ref], r.refs[ref], store.ErrConflict)
		}
	}
	return all, nil
}

// update applies ref changes in one transaction; old values are the ones
// the store knows, so a ref moved elsewhere fails it. Each op is
// {ref, new commit} (create or update) or {ref, ""} (delete).
func (r *repo) update(ops ...[2]string) error {
	var lines []string
	for _, op := range ops {
		ref, sha := op[0], op[1]
		old, had := r.refs[ref]
		switch {
		case sha == "" && had:
			lines = append(lines, "delete "+ref+" "+old)
		case sha != "" && had:
			lines = append(lines, "update "+ref+" "+sha+" "+old)
		case sha != "":
			lines = append(lines, "create "+ref+" "+sha)
		}
	}
	if err := updateRefs(r.GitDir, lines); err != nil {
		return err
	}
	for _, op := range ops {
		if op[1] == "" {
			delete(r.refs, op[0])
		} else {
			r.refs[op[0]] = op[1]
		}
	}
	return nil
}

// commit writes files as rev's package on top of ref's commit (or base's,
// when ref does not exist yet) and moves ref to it.
func (s *backend) commit(r *repo, ref, base string, rev store.Revision, files map[string]string, summary string) (string, error) {
	if _, err := r.current(ref, base); err != nil {
		return "", err
	}
	parent, ok := r.refs[ref]
	if !ok {
		parent = r.refs[base]
	}
	sha, err := s.write(r, parent, rev, files, summary)
	if err != nil {
		return "", err
	}
	if err := setRef(r.GitDir, ref, r.refs[ref], sha); err != nil {
		return "", fmt.Errorf("package revision %s: %w", rev.Name, err)
	}
	r.refs[ref] = sha
	return sha, nil
}

// write commits files as rev's package on top of parent; no ref moves.
func (s *backend) write(r *repo, parent string, rev store.Revision, files map[string]string, summary string) (string, error) {
	if err := checkFiles(files); err != nil { // what is written can be read back (bounds.go)
		return "", fmt.Errorf("package revision %s: %w", rev.Name, err)
	}
	return writeCommit(r.GitDir, parent, r.full(rev.Package), files, message(summary, r.abs(rev)), s.now(), s.sign)
}

// Create implements memory.Persister: a draft branch from the repository's
// branch.
func (s *backend) Create(rev store.Revision, files map[string]string) error {
	r, err := s.repoOf(rev)
	if err != nil {
		return err
	}
	ref := r.refFor(rev)
	if _, exists := r.refs[ref]; exists {
		return fmt.Errorf("package revision %s: branch %s exists: %w", rev.Name, strings.TrimPrefix(ref, "refs/heads/"), store.ErrAlreadyExists)
	}
	if err := r.meta.set(r.GitDir, rev); err != nil {
		return err
	}
	_, err = s.commit(r, ref, branchRef(r.Branch), rev, files, "pvctl: create draft "+rev.Name)
	return err
}

// WriteFiles implements memory.Persister: a commit on the revision's branch.
func (s *backend) WriteFiles(rev store.Revision, files map[string]string) error {
	r, err := s.repoOf(rev)
	if err != nil {
		return err
	}
	summary := "pvctl: update " + rev.Name
	if s.edit {
		summary = "pvctl: edit of " + rev.Name + " (pvctl push)"
	}
	_, err = s.commit(r, r.refFor(rev), "", rev, files, summary)
	return err
}

// Update implements memory.Persister: metadata, and a lifecycle move as a
// branch rename (Draft <-> Proposed) or a deletion marker (Published <->
// DeletionProposed).
func (s *backend) Update(old, rev store.Revision) error {
	r, err := s.repoOf(rev)
	if err != nil {
		return err
	}
	if err := r.meta.set(r.GitDir, rev); err != nil {
		return err
	}
	if old.Lifecycle == rev.Lifecycle {
		return nil
	}
	switch {
	case old.Lifecycle.IsPublished() && rev.Lifecycle.IsPublished():
		if _, err = r.current(r.refOf(old), r.deletionRef(rev)); err != nil {
			break
		}
		if rev.Lifecycle == store.DeletionProposed {
			err = r.update([2]string{r.deletionRef(rev), r.refs[r.refOf(old)]})
		} else {
			err = r.update([2]string{r.deletionRef(rev), ""})
		}
	default:
		from := r.refFor(old)
		if _, err = r.current(from, r.refFor(rev)); err == nil {
			err = r.update([2]string{r.refFor(rev), r.refs[from]}, [2]string{from, ""})
		}
	}
	if err != nil {
		_ = r.meta.set(r.GitDir, old)
		return err
	}
	return nil
}

// Delete implements memory.Persister: the revision's branch, or for a
// published revision its tag and deletion marker.
func (s *backend) Delete(rev store.Revision) error {
	r, err := s.repoOf(rev)
	if err != nil {
		return err
	}
	if r.isPlaceholder(rev) {
		return s.deletePlaceholder(r, rev)
	}
	ops := [][2]string{{r.refFor(rev), ""}}
	if rev.Lifecycle == store.DeletionProposed {
		ops = append(ops, [2]string{r.deletionRef(rev), ""})
	}
	if err := r.update(ops...); err != nil {
		return err
	}
	return r.meta.remove(r.GitDir, rev.Name)
}

// deletePlaceholder deletes Porch's branch placeholder as Porch does: a
// commit on the branch removes the package's directory (its tags stay).
func (s *backend) deletePlaceholder(r *repo, rev store.Revision) error {
	branch := branchRef(r.Branch)
	if _, err := r.current(branch, r.deletionRef(rev)); err != nil {
		return err
	}
	sha, err := writeCommit(r.GitDir, r.refs[branch], r.full(rev.Package), nil, message("pvctl: delete "+r.full(rev.Package)+" from "+r.Branch, r.abs(rev)), s.now(), s.sign)
	if err != nil {
		return err
	}
	if err := r.update([2]string{branch, sha}, [2]string{r.deletionRef(rev), ""}); err != nil {
		return err
	}
	return r.meta.remove(r.GitDir, rev.Name)
}

// refOf is the ref that holds a revision: the branch for Porch's branch
// placeholder, else refFor's.
// origin is what Porch records of an upstream revision in a clone's or
// upgrade's lock (memory.Origin): the repository's URL and the revision's
// ref and commit. Called with the engine locked.
func (s *backend) origin(rev store.Revision) (url, ref, commit string) {
	r, ok := s.repos[rev.Repository]
	if !ok {
		return "", "", ""
	}
	full := r.refOf(rev)
	short := strings.TrimPrefix(strings.TrimPrefix(full, "refs/heads/"), "refs/tags/")
	return r.url, short, r.refs[full]
}

// repoURL is a local repository's git URL: file:// and the bare
// repository's absolute path, which git, kpt pkg update and kpt pkg diff
// fetch from.
func repoURL(gitDir string) string {
	abs, err := filepath.Abs(gitDir)
	if err != nil {
		abs = gitDir
	}
	return "file://" + filepath.ToSlash(abs)
}

// lockOf reads the lock a package's Kptfile records; a lock that names a
// repository beside this one by its URL (pvctl keeps its repositories in
// one directory) names it by its Repository name too, when a registration
// of that name serves that git directory whole. A git directory served by
// registrations scoped to its directories (Nephio's catalog) is named by
// the one registration whose directory the ref is under
// (scopedRegistration), or not at all.
func (r *repo) lockOf(files map[string]string) (*store.Lock, error) {
	l, err := tasks.LockOf(files)
	if err != nil || l == nil || l.URL == "" {
		return l, err
	}
	dir := strings.TrimSuffix(r.url, path.Base(filepath.ToSlash(r.GitDir)))
	if rest, ok := strings.CutPrefix(l.URL, dir); ok && strings.HasSuffix(rest, ".git") && !strings.Contains(rest, "/") {
		name := strings.TrimSuffix(rest, ".git")
		if o := r.b.repos[name]; (o != nil && o.url == l.URL && o.Directory == "") || (o == nil && name == r.Name) {
			l.Repository = name
		}
	}
	if l.Repository == "" {
		l.Repository = r.b.scopedRegistration(l)
	}
	return l, nil
}

// scopedRegistration is the one registration scoped to a directory of the
// lock's git directory whose packages the lock's ref is under
// (<directory>/<package>/...): Nephio's catalog-workloads-ric for a lock of
// workloads/ric/pkg-example-ric/v3.0.0, so that pvctl names the upstream as
// it is registered. "" when none, or more than one, serves it (the lock is
// then matched by package and ref, as Porch matches it).
func (s *backend) scopedRegistration(l *store.Lock) string {
	found := ""
	for name, o := range s.repos {
		dir := strings.Trim(o.Directory, "/")
		if o.url != l.URL || dir == "" || !strings.HasPrefix(l.Ref, dir+"/"+l.Package+"/") {
			continue
		}
		if found != "" {
			return ""
		}
		found = name
	}
	return found
}

func (r *repo) refOf(rev store.Revision) string {
	if r.isPlaceholder(rev) {
		return branchRef(r.Branch)
	}
	return r.refFor(rev)
}

// Publish implements memory.Persister: the package's files committed on the
// repository's branch, tagged <package>/v<N>; the draft or proposed branch
// goes.
func (s *backend) Publish(old, rev store.Revision, files map[string]string) error {
	r, err := s.repoOf(rev)
	if err != nil {
		return err
	}
	if err := r.checkNesting(rev.Package); err != nil {
		return fmt.Errorf("package revision %s: %w", rev.Name, err)
	}
	if err := r.checkPackages(rev.Package); err != nil {
		return fmt.Errorf("package revision %s: %w", rev.Name, err)
	}
	branch := branchRef(r.Branch)
	if _, err := r.current(branch); err != nil {
		return err
	}
	if err := r.meta.set(r.GitDir, rev); err != nil {
		return err
	}
	// The commit is written first, on no ref; then one ref transaction
	// moves the branch, creates the tag and removes the draft or proposed
	// branch. Killed at any point, the repository shows either the old state
	// or the new one (and perhaps an unreferenced commit git gc removes),
	// never a package on the branch without its tag.
	sha, err := s.write(r, r.refs[branch], rev, files, fmt.Sprintf("pvctl: publish %s as revision %d", rev.Name, rev.Revision))
	if err != nil {
		return err
	}
	ops := [][2]string{{branch, sha}, {r.refFor(rev), sha}}
	if old.Lifecycle != "" {
		ops = append(ops, [2]string{r.refFor(old), ""})
	}
	return r.update(ops...)
}

// checkPackages refuses a new package past MaxPackages published ones:
// the branch could not be served whole.
func (r *repo) checkPackages(pkg string) error {
	pkgs := map[string]bool{pkg: true}
	for ref := range r.refs {
		if p, ok := r.parse(ref); ok && p.lifecycle == store.Published {
			pkgs[p.pkg] = true
		}
	}
	if len(pkgs) > MaxPackages {
		return fmt.Errorf("the repository would hold %d published packages, more than %d: %w", len(pkgs), MaxPackages, errOverBound)
	}
	return nil
}

// checkNesting refuses a package nested in, or containing, another package
// published on the branch: on `main` their directories would overlap, and
// publishing one would rewrite the other.
func (r *repo) checkNesting(pkg string) error {
	for ref := range r.refs {
		p, ok := r.parse(ref)
		if !ok || p.lifecycle != store.Published || p.pkg == pkg {
			continue
		}
		switch {
		case strings.HasPrefix(pkg, p.pkg+"/"):
			return fmt.Errorf("package %q would be nested inside the published package %q", pkg, p.pkg)
		case strings.HasPrefix(p.pkg, pkg+"/"):
			return fmt.Errorf("package %q would contain the published package %q", pkg, p.pkg)
		}
	}
	return nil
}
