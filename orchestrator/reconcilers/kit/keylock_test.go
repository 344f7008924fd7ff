package kit

import (
	"sync"
	"sync/atomic"
	"testing"
)

// One key at a time per key; other keys run meanwhile; nothing is kept.
func TestKeyLock(t *testing.T) {
	var l KeyLock
	var inA, maxA, total atomic.Int32
	var wg sync.WaitGroup
	unlockB := l.Lock("b") // held throughout: "a" must not wait for it
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock := l.Lock("a")
			n := inA.Add(1)
			for {
				m := maxA.Load()
				if n <= m || maxA.CompareAndSwap(m, n) {
					break
				}
			}
			total.Add(1)
			inA.Add(-1)
			unlock()
		}()
	}
	wg.Wait()
	if maxA.Load() != 1 || total.Load() != 50 {
		t.Fatalf("key a: %d at once at most (want 1), %d done (want 50)", maxA.Load(), total.Load())
	}
	if l.Len() != 1 {
		t.Fatalf("%d keys held, want 1 (b)", l.Len())
	}
	unlockB()
	if l.Len() != 0 {
		t.Fatalf("%d keys held after every unlock, want 0", l.Len())
	}
}
