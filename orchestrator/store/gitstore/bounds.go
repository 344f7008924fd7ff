package gitstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Opening a store reads what names and locates the revisions (refs,
// commits, trees, and each package's Kptfile), not their files: a
// revision's files are read when first needed (memory.Store.RestoreLazy).
// What a revision holds is bounded, and measured from the trees alone
// (each blob's size from its object header, never inflated; each tree
// measured once, so nested packages are counted once): a revision over a
// bound is skipped with a warning, as any unreadable ref is (fault
// isolation), and a write over a bound is refused.
//
// kpt packages are configuration: Nephio's largest hold a few hundred
// files and a few MB.
const (
	// MaxFileBytes bounds one file of a package.
	MaxFileBytes = 16 << 20
	// MaxRevisionBytes bounds a revision's files together (its
	// subpackages' included).
	MaxRevisionBytes = 64 << 20
	// MaxRevisionFiles bounds how many files a revision holds.
	MaxRevisionFiles = 10_000
	// MaxPackages bounds the packages one commit may hold (Porch's branch
	// placeholders and a publish's check).
	MaxPackages = 1_000
)

// errOverBound is a revision or a write over a bound.
var errOverBound = errors.New("over pvkit's bounds")

// stats are what a tree holds: regular files, and their bytes.
type stats struct{ files, bytes int64 }

// sizer reads object sizes from their headers.
type sizer interface {
	EncodedObjectSize(plumbing.Hash) (int64, error)
}

// treeStats measures a tree: its regular files and their bytes, a file
// over MaxFileBytes or a name no package may hold (validFile) an error
// naming it by its path rel. Trees are measured once each (memo), whatever
// number of packages contain them.
func (c *objectReader) treeStats(h plumbing.Hash, rel string) (stats, error) {
	if st, ok := c.stats[h]; ok {
		return st, nil
	}
	tree, err := c.repo.TreeObject(h)
	if err != nil {
		return stats{}, fmt.Errorf("%s: %w", rel, err)
	}
	sz, _ := c.repo.Storer.(sizer)
	var st stats
	for _, e := range tree.Entries {
		name := path.Join(rel, e.Name)
		// Every name, directories' too: a tree measured once under a good
		// name may stand again under a bad one.
		if e.Mode == filemode.Dir || servedAsFile(e.Mode) {
			if err := validFile(name); err != nil {
				return stats{}, err
			}
		}
		switch e.Mode {
		case filemode.Dir:
			sub, err := c.treeStats(e.Hash, name)
			if err != nil {
				return stats{}, err
			}
			st.files += sub.files
			st.bytes += sub.bytes
		case filemode.Regular, filemode.Executable, filemode.Symlink:
			n, err := c.blobSize(sz, e.Hash, name)
			if err != nil {
				return stats{}, err
			}
			st.files++
			st.bytes += n
		}
		if st.files > MaxRevisionFiles || st.bytes > MaxRevisionBytes { // stop measuring early
			break
		}
	}
	if c.stats == nil {
		c.stats = map[plumbing.Hash]stats{}
	}
	c.stats[h] = st
	return st, nil
}

// blobSize is a blob's size from its header, refused over MaxFileBytes.
func (c *objectReader) blobSize(sz sizer, h plumbing.Hash, name string) (int64, error) {
	n, loose, err := looseSize(c.dir, h)
	switch {
	case loose || err != nil:
	case sz != nil:
		n, err = sz.EncodedObjectSize(h)
	default:
		var b *object.Blob
		if b, err = c.repo.BlobObject(h); err == nil {
			n = b.Size
		}
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	if n > MaxFileBytes {
		return 0, fmt.Errorf("file %s has %d bytes, more than %d: %w", name, n, MaxFileBytes, errOverBound)
	}
	return n, nil
}

// looseSize is a loose object's size from its header (loose: it is one),
// the file closed at once. go-git v5.13.1's EncodedObjectSize leaves a
// loose object's file open for the garbage collector to close: a no-op
// pvctl run over 10,000 repositories held thousands of them at once and
// failed, "too many open files" (docs/scale.md).
func looseSize(gitDir string, h plumbing.Hash) (n int64, loose bool, err error) {
	hex := h.String()
	f, err := os.Open(filepath.Join(gitDir, "objects", hex[:2], hex[2:]))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil // packed, or not there: the storer says
	}
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	r, err := objfile.NewReader(f)
	if err != nil {
		return 0, true, fmt.Errorf("object %s: %w", hex, err)
	}
	defer r.Close()
	_, n, err = r.Header()
	return n, true, err
}

// checkStats refuses a revision over the bounds.
func checkStats(st stats) error {
	switch {
	case st.files > MaxRevisionFiles:
		return fmt.Errorf("it holds more than %d files: %w", MaxRevisionFiles, errOverBound)
	case st.bytes > MaxRevisionBytes:
		return fmt.Errorf("its files hold more than %d bytes: %w", MaxRevisionBytes, errOverBound)
	}
	return nil
}

// checkFiles refuses a package's files over the bounds, before they are
// written: what a store writes, it can read back.
func checkFiles(files map[string]string) error {
	var total int64
	if len(files) > MaxRevisionFiles {
		return fmt.Errorf("the package holds %d files, more than %d: %w", len(files), MaxRevisionFiles, errOverBound)
	}
	for name, f := range files {
		if err := validFile(name); err != nil {
			return err
		}
		if len(f) > MaxFileBytes {
			return fmt.Errorf("file %s has %d bytes, more than %d: %w", name, len(f), MaxFileBytes, errOverBound)
		}
		total += int64(len(f))
	}
	if total > MaxRevisionBytes {
		return fmt.Errorf("the package's files hold %d bytes, more than %d: %w", total, MaxRevisionBytes, errOverBound)
	}
	return nil
}

// readBlob reads a blob whose size was checked.
func (c *objectReader) readBlob(h plumbing.Hash, name string) (string, error) {
	if s, ok := c.blobs[h]; ok { // the same blob in many revisions is one string
		return s, nil
	}
	sz, _ := c.repo.Storer.(sizer)
	size, err := c.blobSize(sz, h, name)
	if err != nil {
		return "", err
	}
	blob, err := c.repo.BlobObject(h)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	r, err := blob.Reader()
	if err != nil {
		return "", err
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(b)) != size {
		return "", fmt.Errorf("%s: object %s holds %d bytes where its header says %d", name, h, len(b), size)
	}
	if c.blobs == nil {
		c.blobs = map[plumbing.Hash]string{}
	}
	c.blobs[h] = string(b)
	return c.blobs[h], nil
}

// servedAsFile reports whether a tree entry of that mode is one of a
// package's files, as Porch serves them (go-git's tree.Files): regular
// and executable files, and symbolic links (their target as content);
// not directories and submodules.
func servedAsFile(m filemode.FileMode) bool {
	return m == filemode.Regular || m == filemode.Executable || m == filemode.Symlink
}
