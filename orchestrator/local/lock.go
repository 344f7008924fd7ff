package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/pvkit/pvkit/orchestrator/store/gitstore"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
)

// quietControllerRuntime gives controller-runtime a logger that drops what
// the reconcilers log (pvctl reports what a run did itself): without one,
// controller-runtime prints a 36-line stack trace ("log.SetLogger(...) was
// never called") after 30 s. Once per process, and only in pvctl's local
// commands (the controller sets its own).
var quietControllerRuntime = sync.OnceFunc(func() { crlog.SetLogger(logr.Discard()) })

// LockFile is the lock a writer holds on a repositories directory: one
// pvctl run (or publish, push, approve...) at a time per fleet. Two runs 1 s
// apart on the same repositories each took twice as long and failed with
// about a hundred "moved outside this store" conflicts.
const LockFile = ".pvctl.lock"

// holder is who holds the lock, written into the lock file.
type holder struct {
	PID   int       `json:"pid"`
	Host  string    `json:"host"`
	Start time.Time `json:"start"`
	Cmd   string    `json:"command"`
}

// Lock takes the writers' lock of a repositories directory (flock(2) on
// LockFile, released by the kernel when the process ends, however it
// ends), or refuses at once, naming the holder: an input error, nothing
// written. The release func gives it back.
func Lock(dir, command string) (release func(), err error) {
	if err := CheckReposDir(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, LockFile)
	f, err := openLockFile(path)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		var h holder
		b, _ := os.ReadFile(path)
		if json.Unmarshal(b, &h) != nil || h.PID == 0 {
			return nil, &inputError{[]string{fmt.Sprintf("the repositories directory %s is in use by another pvctl (%s is locked); nothing was written", dir, path)}}
		}
		return nil, &inputError{[]string{fmt.Sprintf("the repositories directory %s is in use by pvctl %s (pid %d on %s, since %s); nothing was written: wait for it, or stop it",
			dir, h.Cmd, h.PID, h.Host, h.Start.Format(time.RFC3339))}}
	}
	host, _ := os.Hostname()
	b, _ := json.Marshal(holder{PID: os.Getpid(), Host: host, Start: time.Now().UTC().Truncate(time.Second), Cmd: command})
	_ = f.Truncate(0)
	_, _ = f.WriteAt(append(b, '\n'), 0)
	return func() {
		_ = f.Truncate(0)
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}

// openLockFile opens (or creates) the lock without following a symbolic
// link and without waiting on a FIFO, and refuses anything but a regular
// file, naming it: a link planted as .pvctl.lock used to be followed and
// its target truncated.
func openLockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
	if errors.Is(err, syscall.ELOOP) {
		return nil, &inputError{[]string{fmt.Sprintf("the lock %s is a symbolic link; pvctl writes its lock only as a regular file of its own: remove the link", path)}}
	}
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, err
		}
		return nil, &inputError{[]string{fmt.Sprintf("the lock %s is not a regular file (%v); pvctl writes its lock only as a regular file of its own: remove it", path, st.Mode().Type())}}
	}
	return f, nil
}

// CheckReposDir refuses, as an input error and before anything is written,
// a --repos that is no repositories directory: a git working tree (pvctl
// would write bare repositories and its state into it), a bare repository
// itself (its parent holds it), or a directory that holds something but no
// repository (run from the wrong directory, a second fleet would start
// there). A directory that is not there yet, an empty one, or one that
// holds only pvctl's own files (its state, its lock) is fine.
func CheckReposDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	refuse := func(format string, a ...any) error {
		return &inputError{[]string{fmt.Sprintf("--repos %s: "+format, append([]any{dir}, a...)...)}}
	}
	switch {
	case gitstore.IsBare(dir):
		return refuse("is a bare git repository; --repos names the directory that holds the repositories (%s?)", filepath.Dir(dir))
	case exists(filepath.Join(dir, ".git")):
		return refuse("is a git working tree; --repos names a directory of bare repositories of its own (pvctl publish and run create it)")
	}
	bare, others := 0, 0
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 {
			// A link would lead the writes of a repository, the state or
			// the lock anywhere it points; a repository linked in used to
			// be skipped unsaid ("holds 1 entries and no bare repository").
			return refuse("%s is a symbolic link; pvctl reads and writes repositories, its state and its lock only as entries of their own in the repositories directory: move what it points to there, or remove the link",
				filepath.Join(dir, e.Name()))
		}
		switch e.Name() {
		case state.File, LockFile:
			continue
		}
		if e.IsDir() && gitstore.IsBare(filepath.Join(dir, e.Name())) {
			bare++
			continue
		}
		others++
	}
	if bare == 0 && others > 0 {
		return refuse("holds %d entries and no bare repository: not a repositories directory (--repos or $PVCTL_REPOS name one; a new one is made where nothing is)", others)
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
