//go:build !linux

package fnworker

// limitData: only the Go runtime's soft limit bounds a worker here.
func limitData(int64) error { return nil }
