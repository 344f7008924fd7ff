package celbound

import (
	"container/list"
	"sync"
)

// Cache is a cache bounded by the bytes its entries are charged, least
// recently used out first. It keeps whatever a key costs to recompute,
// failures included: a refused expression is refused again from memory.
type Cache struct {
	mu     sync.Mutex
	budget int
	used   int
	order  *list.List // front: most recently used
	byKey  map[string]*list.Element
}

type lruEntry struct {
	key   string
	value any
	cost  int
}

// NewCache is a cache of budget bytes.
func NewCache(budget int) *Cache {
	return &Cache{budget: budget, order: list.New(), byKey: map[string]*list.Element{}}
}

// Get is the value stored at key, if any.
func (c *Cache) Get(key string) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*lruEntry).value, true
}

// Put stores value at a cost in bytes; an entry over the whole budget is
// not kept.
func (c *Cache) Put(key string, value any, cost int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.used -= e.Value.(*lruEntry).cost
		c.order.Remove(e)
		delete(c.byKey, key)
	}
	if cost > c.budget {
		return
	}
	for c.used+cost > c.budget {
		last := c.order.Back()
		old := last.Value.(*lruEntry)
		c.order.Remove(last)
		delete(c.byKey, old.key)
		c.used -= old.cost
	}
	c.byKey[key] = c.order.PushFront(&lruEntry{key: key, value: value, cost: cost})
	c.used += cost
}

// Size is the bytes charged and the number of entries.
func (c *Cache) Size() (int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used, len(c.byKey)
}

// What a compiled program costs a Cache: about ProgramBytesPerChar bytes
// per character of its expression over ProgramBaseBytes (measured); a
// refusal, its text.
const (
	ProgramBytesPerChar = 48
	ProgramBaseBytes    = 16 << 10
)

// ProgramCost is what the outcome of compiling expr (a program, or err)
// is charged in a Cache.
func ProgramCost(expr string, err error) int {
	if err != nil {
		return ProgramBaseBytes + len(expr) + len(err.Error())
	}
	return ProgramBaseBytes + ProgramBytesPerChar*len(expr)
}
