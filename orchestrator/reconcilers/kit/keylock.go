package kit

import "sync"

// KeyLock serialises work per key (a downstream package) while different
// keys run concurrently: with several workers, two variants that write the
// same package take turns, in the order they got there. The zero value is
// ready; entries are dropped when their last holder unlocks, so it holds
// one entry per package being worked on, not per package ever seen.
type KeyLock struct {
	mu    sync.Mutex
	locks map[string]*keyEntry
}

type keyEntry struct {
	mu   sync.Mutex
	refs int
}

// Lock locks key and returns its unlock function.
func (l *KeyLock) Lock(key string) (unlock func()) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]*keyEntry{}
	}
	e := l.locks[key]
	if e == nil {
		e = &keyEntry{}
		l.locks[key] = e
	}
	e.refs++
	l.mu.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		l.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(l.locks, key)
		}
		l.mu.Unlock()
	}
}

// Len is the number of keys held or waited for.
func (l *KeyLock) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.locks)
}
