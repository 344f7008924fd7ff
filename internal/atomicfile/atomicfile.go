// Package atomicfile writes a file whole or not at all: a temporary file of
// a fresh name beside it (created exclusively, so never opened through a
// link someone left under a name known in advance), then renamed over it.
// A reader sees the old content or the new, never half of it, and a
// symbolic link at the path is replaced, not followed.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces path with data, with mode perm.
func Write(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, perm)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}
