package fnworker

import "syscall"

func limitData(bytes int64) error {
	lim := &syscall.Rlimit{Cur: uint64(bytes), Max: uint64(bytes)}
	var cur syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_DATA, &cur); err == nil && cur.Max < lim.Max {
		lim.Cur, lim.Max = min(lim.Cur, cur.Max), cur.Max // never above the hard limit it has
	}
	return syscall.Setrlimit(syscall.RLIMIT_DATA, lim)
}
