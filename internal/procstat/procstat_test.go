package procstat

import (
	"os"
	"testing"
)

// This process has a resident set, at most its peak; a process that is
// not there reads as zeros.
func TestMemory(t *testing.T) {
	rss, peak := Memory(0)
	if rss == 0 || peak < rss {
		t.Fatalf("this process: rss %d, peak %d", rss, peak)
	}
	if r, p := Memory(os.Getpid()); r == 0 || p == 0 {
		t.Fatalf("by pid: rss %d, peak %d", r, p)
	}
	if r, p := Memory(1 << 30); r != 0 || p != 0 {
		t.Fatalf("no such process: rss %d, peak %d", r, p)
	}
}
