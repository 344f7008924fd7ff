package gitstore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// writeCommit writes, in process, a commit of files as directory dir on top
// of parent ("" for a root commit), replacing whatever dir held, and returns
// its id. It moves no ref: the caller does (setRef for one branch, an
// update-ref transaction for a publication). A git process per commit cost
// more than the rest of a first run. With sign, the commit is signed as
// git signs one (its gpgsig header).
func writeCommit(gitDir, parent, dir string, files map[string]string, message string, when time.Time, sign CommitSigner) (string, error) {
	repo, err := gogit.PlainOpen(gitDir)
	if err != nil {
		return "", fmt.Errorf("opening %s: %w", gitDir, err)
	}
	st := repo.Storer
	var base *object.Tree
	var parents []plumbing.Hash
	if parent != "" {
		c, err := repo.CommitObject(plumbing.NewHash(parent))
		if err != nil {
			return "", fmt.Errorf("commit %s in %s: %w", parent, gitDir, err)
		}
		if base, err = c.Tree(); err != nil {
			return "", err
		}
		parents = []plumbing.Hash{c.Hash}
	}
	pkg, err := writeTree(st, files)
	if err != nil {
		return "", err
	}
	root, err := replaceAt(repo, st, base, strings.Split(dir, "/"), pkg)
	if err != nil {
		return "", err
	}
	sig := object.Signature{Name: "pvctl", Email: "pvctl@pvkit.dev", When: when.UTC()}
	c := &object.Commit{Author: sig, Committer: sig, Message: message, TreeHash: root, ParentHashes: parents}
	if sign != nil {
		if err := signCommit(st, c, sign); err != nil {
			return "", fmt.Errorf("signing a commit in %s: %w", gitDir, err)
		}
	}
	obj := st.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return "", err
	}
	h, err := st.SetEncodedObject(obj)
	if err != nil {
		return "", fmt.Errorf("writing a commit in %s: %w", gitDir, err)
	}
	return h.String(), nil
}

// signCommit signs c's payload, the commit as git hashes it without the
// signature, and keeps the armored signature in c (gpgsig).
func signCommit(st storer.EncodedObjectStorer, c *object.Commit, sign CommitSigner) error {
	payload := st.NewEncodedObject()
	if err := c.EncodeWithoutSignature(payload); err != nil {
		return err
	}
	r, err := payload.Reader()
	if err != nil {
		return err
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	armored, err := sign(b)
	if err != nil {
		return err
	}
	c.PGPSignature = string(armored)
	return nil
}

// writeTree writes files (path -> content) as a tree; the zero hash for no
// files.
func writeTree(st storer.EncodedObjectStorer, files map[string]string) (plumbing.Hash, error) {
	if len(files) == 0 {
		return plumbing.ZeroHash, nil
	}
	var entries []object.TreeEntry
	sub := map[string]map[string]string{}
	for name, content := range files {
		if d, rest, nested := strings.Cut(name, "/"); nested {
			if sub[d] == nil {
				sub[d] = map[string]string{}
			}
			sub[d][rest] = content
			continue
		}
		obj := st.NewEncodedObject()
		obj.SetType(plumbing.BlobObject)
		w, err := obj.Writer()
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if _, err := w.Write([]byte(content)); err != nil {
			return plumbing.ZeroHash, err
		}
		if err := w.Close(); err != nil {
			return plumbing.ZeroHash, err
		}
		h, err := st.SetEncodedObject(obj)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h})
	}
	for d, fs := range sub {
		h, err := writeTree(st, fs)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries = append(entries, object.TreeEntry{Name: d, Mode: filemode.Dir, Hash: h})
	}
	return storeTree(st, entries)
}

func storeTree(st storer.EncodedObjectStorer, entries []object.TreeEntry) (plumbing.Hash, error) {
	sort.Sort(object.TreeEntrySorter(entries))
	obj := st.NewEncodedObject()
	if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return st.SetEncodedObject(obj)
}

// replaceAt returns base with the directory at path replaced by tree (the
// zero hash removes it), writing the trees along the path.
func replaceAt(repo *gogit.Repository, st storer.EncodedObjectStorer, base *object.Tree, path []string, tree plumbing.Hash) (plumbing.Hash, error) {
	if len(path) == 0 {
		return tree, nil
	}
	var entries []object.TreeEntry
	var child *object.Tree
	if base != nil {
		for _, e := range base.Entries {
			if e.Name != path[0] {
				entries = append(entries, e)
				continue
			}
			if e.Mode == filemode.Dir {
				t, err := repo.TreeObject(e.Hash)
				if err != nil {
					return plumbing.ZeroHash, err
				}
				child = t
			}
		}
	}
	h, err := replaceAt(repo, st, child, path[1:], tree)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if !h.IsZero() {
		entries = append(entries, object.TreeEntry{Name: path[0], Mode: filemode.Dir, Hash: h})
	}
	if len(entries) == 0 && len(path) > 1 {
		return plumbing.ZeroHash, nil // an emptied directory goes, as in git
	}
	return storeTree(st, entries)
}

// errRefLocked: another git process holds the ref's lock.
var errRefLocked = errors.New("is locked by another git process")

// setRef moves one ref from old ("" when it must not exist) to sha with
// git's own protocol: create <ref>.lock exclusively, check the current
// value, write, rename over the ref. A concurrent git sees either value.
func setRef(gitDir, ref, old, sha string) error {
	path := filepath.Join(gitDir, filepath.FromSlash(ref))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	lock := path + ".lock"
	f, err := os.OpenFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		if os.IsExist(err) {
			return fmt.Errorf("%s %w (%s)", ref, errRefLocked, lock)
		}
		return err
	}
	done := false
	defer func() {
		if !done {
			os.Remove(lock)
		}
	}()
	cur, _, err := readRefs(gitDir) // once: the lock it waits on would be its own
	if err != nil {
		f.Close()
		return err
	}
	if cur[ref] != old {
		f.Close()
		return fmt.Errorf("%s moved (now %q, expected %q)", ref, cur[ref], old)
	}
	if _, err := f.WriteString(sha + "\n"); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(lock, path); err != nil {
		return err
	}
	done = true
	return nil
}
