package fntest

import (
	"testing"
	"time"
)

// Returns runs f and returns its error, failing t when f has not
// returned within d: a reconcile that must end at its own deadline does
// not hold the test (or a worker) for good.
func Returns(t testing.TB, d time.Duration, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("still running after %s: the worker is held", d)
		return nil
	}
}
