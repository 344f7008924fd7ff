// Package procstat reads a process's memory from Linux's /proc, for the
// soak, the scale runs and the real-stack benchmarks (one reader, three
// users).
package procstat

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Memory is a process's resident set size and its peak (VmRSS, VmHWM), in
// bytes; pid 0 is this process. Zeros when /proc has no answer.
func Memory(pid int) (rss, peak uint64) {
	path := "/proc/self/status"
	if pid != 0 {
		path = fmt.Sprintf("/proc/%d/status", pid)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		for key, dst := range map[string]*uint64{"VmRSS:": &rss, "VmHWM:": &peak} {
			if v, ok := strings.CutPrefix(l, key); ok {
				kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				*dst = kb << 10
			}
		}
	}
	return rss, peak
}
