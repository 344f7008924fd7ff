package gitstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/pvkit/pvkit/orchestrator/store"
	"k8s.io/utils/lru"
)

// Reads go through go-git, in process: opening a store of a thousand
// repositories costs no git process (it cost two each). Objects are written
// in process too (write.go); multi-ref transactions stay with git itself
// (update-ref --stdin), which makes them atomic.

// refs lists a repository's branches and tags: ref name -> commit (an
// annotated tag is peeled to its commit). It reads the ref files as git
// does: packed-refs, then the loose refs under refs/heads and refs/tags,
// which win; lock files (a git process under way, or one that died) are
// skipped, as git skips them, and so is a broken ref (empty, or not a
// hash), which git lists with "ignoring broken ref".
//
// Not go-git's reference storer (measured in
// TestRefsReadAsGitReadsThem): its IterReferences fails the whole listing
// on one empty loose ref, reads a ref file of garbage as a ref to the zero
// hash, lists refs/heads/x.lock as a branch, and walks every ref namespace
// (refs/remotes, refs/notes), so one stray file in a repository a person
// also uses would stop every variant it serves.
//
// A lock file is also a transaction under way: git's update-ref --stdin
// locks every ref it changes, then renames the locks one by one, so a
// read between two renames sees half of it (a proposal's new ref beside
// the draft's old one: one revision twice, listed Unreadable). A read that
// meets a lock, or a ref that goes while it is read, is read again, up to
// refRetries times refRetryPause apart; a lock that stays (a git process
// that died) is then skipped as git skips it.
func refs(gitDir string) (map[string]string, error) {
	for try := 0; ; try++ {
		m, busy, err := readRefs(gitDir)
		if err != nil || !busy || try == refRetries {
			return m, err
		}
		refRereads.Add(1)
		time.Sleep(refRetryPause)
	}
}

// How often, and how far apart, a read of refs that met a transaction
// under way is made again.
const (
	refRetries    = 10
	refRetryPause = 20 * time.Millisecond
)

// refRereads counts the reads made again (the tests read it).
var refRereads atomic.Int64

func readRefs(gitDir string) (map[string]string, bool, error) {
	// In git's order: packed refs, then the loose ones, which win (and drop
	// a packed ref's peeled value), then annotated tags peeled.
	m, peeled, err := packedRefs(gitDir)
	if err != nil {
		return nil, false, err
	}
	_, err = os.Stat(filepath.Join(gitDir, "packed-refs.lock"))
	busy := err == nil
	loose, err := looseRefs(gitDir, m, peeled)
	if err != nil {
		return nil, false, fmt.Errorf("reading the refs of %s: %w", gitDir, err)
	}
	if err := peelTags(gitDir, m, peeled); err != nil {
		return nil, false, err
	}
	return m, busy || loose, nil
}

// packedRefs reads packed-refs: each branch and tag ref's hash, and the
// peeled value git records after an annotated tag ("^<hash>").
func packedRefs(gitDir string) (m, peeled map[string]string, err error) {
	m, peeled = map[string]string{}, map[string]string{}
	b, err := os.ReadFile(filepath.Join(gitDir, "packed-refs"))
	if os.IsNotExist(err) {
		return m, peeled, nil
	} else if err != nil {
		return nil, nil, err
	}
	last := ""
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "^"):
			if p := strings.TrimPrefix(line, "^"); last != "" && store.IsCommit(p) {
				peeled[last] = p
			}
		default:
			sha, name, ok := strings.Cut(line, " ")
			if ok && store.IsCommit(sha) && (strings.HasPrefix(name, "refs/heads/") || strings.HasPrefix(name, "refs/tags/")) {
				m[name], last = sha, name
			} else {
				last = ""
			}
		}
	}
	return m, peeled, nil
}

// looseRefs reads the loose refs under refs/heads and refs/tags over m
// (they win over packed ones); lock files and broken refs are skipped.
// busy: a lock file was there, or a ref went between the listing and its
// read (a transaction under way).
func looseRefs(gitDir string, m, peeled map[string]string) (busy bool, err error) {
	for _, top := range []string{"refs/heads", "refs/tags"} {
		root := filepath.Join(gitDir, filepath.FromSlash(top))
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) && path == root {
					return nil
				}
				return err
			}
			if d.IsDir() {
				return nil
			}
			if strings.HasSuffix(path, ".lock") {
				busy = true
				return nil
			}
			b, err := os.ReadFile(path)
			if os.IsNotExist(err) {
				busy = true
				return nil
			}
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(gitDir, path)
			if err != nil {
				return err
			}
			sha := strings.TrimSpace(string(b))
			if !store.IsCommit(sha) { // a symbolic ref, or a broken one
				return nil
			}
			name := filepath.ToSlash(rel)
			m[name] = sha
			delete(peeled, name)
			return nil
		})
		if err != nil {
			return busy, err
		}
	}
	return busy, nil
}

// peelTags points each tag ref at its commit: a packed ref's peeled value,
// else the tag object's target (an annotated tag), remembered by object.
func peelTags(gitDir string, m, peeled map[string]string) error {
	var repo *gogit.Repository
	for name, sha := range m {
		if !strings.HasPrefix(name, "refs/tags/") {
			continue
		}
		if p, ok := peeled[name]; ok {
			m[name] = p
			continue
		}
		if t, ok := tagTargets.Get(gitDir + " " + sha); ok { // objects never change
			m[name] = t.(string)
			continue
		}
		if repo == nil {
			r, err := gogit.PlainOpen(gitDir)
			if err != nil {
				return fmt.Errorf("opening %s: %w", gitDir, err)
			}
			repo = r
		}
		if tag, err := repo.TagObject(plumbing.NewHash(sha)); err == nil {
			m[name] = tag.Target.String()
		}
		tagTargets.Add(gitDir+" "+sha, m[name])
	}
	return nil
}

// tagTargets remembers what a tag ref's object peels to ("<gitDir> <sha>"):
// a tag object never changes, so an entry is never stale; the cache is
// bounded (a controller serving thousands of repositories for months must
// not grow with every tag it ever saw) and safe for concurrent use.
var tagTargets = lru.New(tagTargetsMax)

const tagTargetsMax = 1 << 14

// objectReader reads commits and trees of one repository.
type objectReader struct {
	repo  *gogit.Repository
	dir   string
	stats map[plumbing.Hash]stats  // treeStats' memo
	blobs map[plumbing.Hash]string // readBlob's: a blob read once
}

func newObjectReader(gitDir string) (*objectReader, error) {
	repo, err := gogit.PlainOpen(gitDir)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", gitDir, err)
	}
	return &objectReader{repo: repo, dir: gitDir}, nil
}

// message returns a commit's message.
func (c *objectReader) message(commit string) (string, error) {
	co, err := c.repo.CommitObject(plumbing.NewHash(commit))
	if err != nil {
		return "", fmt.Errorf("commit %s in %s: %w", commit, c.dir, err)
	}
	return co.Message, nil
}

// rootTree is a commit's tree.
func (c *objectReader) rootTree(commit string) (*object.Tree, error) {
	co, err := c.repo.CommitObject(plumbing.NewHash(commit))
	if err != nil {
		return nil, fmt.Errorf("commit %s in %s: %w", commit, c.dir, err)
	}
	root, err := co.Tree()
	if err != nil {
		return nil, fmt.Errorf("commit %s in %s: %w", commit, c.dir, err)
	}
	return root, nil
}

// files reads the files below dir in a commit, keyed by their path
// relative to dir, as Porch serves them: a symbolic link is a file holding
// its target (so a link committed into a package shows as a file
// added), a submodule is skipped. A commit without dir has no files.
func (c *objectReader) files(commit, dir string) (map[string]string, error) {
	root, err := c.rootTree(commit)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	tree, err := root.Tree(dir)
	if errors.Is(err, object.ErrDirectoryNotFound) || errors.Is(err, object.ErrEntryNotFound) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s:%s in %s: %w", commit, dir, c.dir, err)
	}
	walker := object.NewTreeWalker(tree, true, nil)
	defer walker.Close()
	var total int64
	for {
		name, entry, err := walker.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%s in %s: %w", commit, dir, c.dir, err)
		}
		if !servedAsFile(entry.Mode) {
			continue
		}
		if err := validFile(name); err != nil {
			return nil, fmt.Errorf("%s:%s in %s: %w", commit, dir, c.dir, err)
		}
		if len(out) == MaxRevisionFiles {
			return nil, fmt.Errorf("%s:%s in %s: it holds more than %d files: %w", commit, dir, c.dir, MaxRevisionFiles, errOverBound)
		}
		b, err := c.readBlob(entry.Hash, name)
		if err != nil {
			return nil, fmt.Errorf("%s:%s in %s: %w", commit, dir, c.dir, err)
		}
		if total += int64(len(b)); total > MaxRevisionBytes {
			return nil, fmt.Errorf("%s:%s in %s: its files hold more than %d bytes: %w", commit, dir, c.dir, MaxRevisionBytes, errOverBound)
		}
		out[name] = b
	}
}

// pkgTree is the tree of a package directory in a commit, and what it
// holds (treeStats); found false when the commit has no such directory.
func (c *objectReader) pkgTree(commit, dir string) (tree *object.Tree, st stats, found bool, err error) {
	root, err := c.rootTree(commit)
	if err != nil {
		return nil, stats{}, false, err
	}
	tree, err = root.Tree(dir)
	if errors.Is(err, object.ErrDirectoryNotFound) || errors.Is(err, object.ErrEntryNotFound) {
		return nil, stats{}, false, nil
	}
	if err != nil {
		return nil, stats{}, false, fmt.Errorf("%s:%s in %s: %w", commit, dir, c.dir, err)
	}
	tree, st, err = c.measured(tree.Hash, dir)
	return tree, st, err == nil, err
}

// measured is a package's tree, found by its hash, and what it holds,
// refused over the bounds.
func (c *objectReader) measured(h plumbing.Hash, dir string) (*object.Tree, stats, error) {
	st, err := c.treeStats(h, "")
	if err == nil {
		err = checkStats(st)
	}
	if err != nil {
		return nil, stats{}, fmt.Errorf("package %s: %w", dir, err)
	}
	tree, err := c.repo.TreeObject(h)
	if err != nil {
		return nil, stats{}, fmt.Errorf("package %s: %w", dir, err)
	}
	return tree, st, nil
}

// kptfile reads the Kptfile of a package tree alone ("" when it has none).
func (c *objectReader) kptfile(tree *object.Tree, dir string) (map[string]string, error) {
	for _, e := range tree.Entries {
		if e.Name == "Kptfile" && (e.Mode == filemode.Regular || e.Mode == filemode.Executable) {
			b, err := c.readBlob(e.Hash, path.Join(dir, e.Name))
			if err != nil {
				return nil, err
			}
			return map[string]string{"Kptfile": b}, nil
		}
	}
	return map[string]string{}, nil
}

// packages lists the packages of a commit, as Porch discovers them: every
// directory, at any depth, that holds a regular file named Kptfile, sorted,
// and the tree of each (one walk of the commit's tree: a package's tree is
// not looked up from the root again). A directory whose path is no valid
// package path (the root, an upper-case name) is not a package of pvkit's.
func (c *objectReader) packages(commit string) ([]string, map[string]plumbing.Hash, error) {
	root, err := c.rootTree(commit)
	if err != nil {
		return nil, nil, err
	}
	var out []string
	dirs := map[string]plumbing.Hash{}
	walker := object.NewTreeWalker(root, true, nil)
	defer walker.Close()
	for {
		name, entry, err := walker.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return out, dirs, fmt.Errorf("commit %s in %s: %w", commit, c.dir, err)
		}
		if entry.Mode == filemode.Dir {
			dirs[name] = entry.Hash
			continue
		}
		if (entry.Mode == filemode.Regular || entry.Mode == filemode.Executable) && path.Base(name) == "Kptfile" {
			if dir := path.Dir(name); dir != "." && validPackage(dir) == nil {
				if len(out) == MaxPackages {
					return out, dirs, fmt.Errorf("commit %s in %s holds more than %d packages: the first %d are served: %w", commit, c.dir, MaxPackages, MaxPackages, errOverBound)
				}
				out = append(out, dir)
			}
		}
	}
	sort.Strings(out)
	return out, dirs, nil
}
