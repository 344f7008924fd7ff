package gitstore

import (
	"os"
	"testing"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// A loose object's size is read with its file closed at once (go-git's
// EncodedObjectSize leaves it to the garbage collector: a no-op pvctl run
// over 10,000 repositories ran out of file descriptors); a hash with no
// loose object is not loose.
func TestLooseSizeClosesItsFile(t *testing.T) {
	dir := t.TempDir()
	repo, err := gogit.PlainInit(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	obj := repo.Storer.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, err := obj.Writer()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("hello, pvkit\n")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	h, err := repo.Storer.SetEncodedObject(obj)
	if err != nil {
		t.Fatal(err)
	}
	fds := func() int {
		e, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd")
		}
		return len(e)
	}
	before := fds()
	for i := 0; i < 2000; i++ {
		n, loose, err := looseSize(dir, h)
		if err != nil || !loose || n != 13 {
			t.Fatalf("looseSize: %d, %v, %v", n, loose, err)
		}
	}
	if after := fds(); after > before+5 {
		t.Fatalf("2,000 reads left %d descriptors open", after-before)
	}
	if _, loose, err := looseSize(dir, plumbing.NewHash("0123456789012345678901234567890123456789")); loose || err != nil {
		t.Fatalf("a missing object: loose %v, %v", loose, err)
	}
}
