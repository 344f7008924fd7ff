package remote

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pvkit/pvkit/internal/fntest"
)

// childMemory is the data bound the child runs under (RLIMIT_DATA: the
// heap and anonymous mappings; past it an allocation fails and the Go
// runtime dies "out of memory").
const childMemory = 256 << 20

// The controller's reader under a hard memory bound: a child process
// limited to 256 MiB reads an object the server would stream for 1 GiB,
// and ends with the bound named, alive. (Before the answer bound, the
// read grew until the process died.)
func TestEndlessObjectUnderAMemoryLimit(t *testing.T) {
	if os.Getenv("PVKIT_REMOTE_MEMLIMIT_CHILD") == "1" {
		if err := syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: childMemory, Max: childMemory}); err != nil {
			t.Fatal(err)
		}
		srv := fntest.HostileAPIServer(t, fntest.Endless)
		err := readKustomization(t, srv.URL, Options{Timeout: time.Minute})
		var tooLarge *ResponseTooLargeError
		if !errors.As(err, &tooLarge) {
			t.Fatalf("an endless object under a memory bound: %v", err)
		}
		os.Stdout.WriteString("CHILD: " + err.Error() + "\n")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestEndlessObjectUnderAMemoryLimit$", "-test.v")
	cmd.Env = append(os.Environ(), "PVKIT_REMOTE_MEMLIMIT_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "CHILD: server 127.0.0.1:") || !strings.Contains(string(out), "answered more than 4194304 bytes") {
		t.Fatalf("the child under %d bytes: %v\n%s", childMemory, err, out)
	}
}
