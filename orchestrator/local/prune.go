package local

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
)

// Prune says what a run may remove.
type Prune string

const (
	// PruneNone (the default) removes nothing: a variant or set gone from the
	// files, a child a set no longer wants, an owned draft of a previous
	// downstream, a published revision to propose for deletion, all are held
	// back and reported, and the run exits 3 (a set says RemovalHeld).
	PruneNone Prune = ""
	// PruneSafe (--prune) removes them, except a set's removal of more than
	// half of its children (the mass-deletion guard).
	PruneSafe Prune = "true"
	// PruneAll (--prune=all) removes them all, mass deletions included.
	PruneAll Prune = "all"
)

// errHeld marks a removal held back for want of --prune (the reconcilers
// know it: kit.ErrRemovalHeld).
var errHeld = kit.ErrRemovalHeld

// pruner holds removals back unless the run may prune, and lists them.
type pruner struct {
	allow bool
	mu    sync.Mutex
	held  map[string]bool
}

func newPruner(p Prune) *pruner { return &pruner{allow: p != PruneNone, held: map[string]bool{}} }

// hold returns nil when what may be removed, else records it and returns
// an error the reconcilers report.
func (p *pruner) hold(format string, a ...any) error {
	if p.allow {
		return nil
	}
	what := fmt.Sprintf(format, a...)
	p.mu.Lock()
	p.held[what] = true
	p.mu.Unlock()
	return fmt.Errorf("%s: %w", what, errHeld)
}

// guard holds a removal back whatever --prune says (a mass-deletion guard
// that tripped), and records it.
func (p *pruner) guard(format string, a ...any) {
	p.mu.Lock()
	p.held[fmt.Sprintf(format, a...)] = true
	p.mu.Unlock()
}

// Held lists what was held back, sorted.
func (p *pruner) Held() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.held))
	for h := range p.held {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}

// Set implements flag.Value: --prune, --prune=true, --prune=all, --prune=false.
func (p *Prune) Set(v string) error {
	switch strings.ToLower(v) {
	case "", "true":
		*p = PruneSafe
	case "all":
		*p = PruneAll
	case "false":
		*p = PruneNone
	default:
		return fmt.Errorf("--prune takes true, all or false, not %q", v)
	}
	return nil
}

func (p *Prune) String() string {
	if *p == PruneNone {
		return "false"
	}
	return string(*p)
}

// IsBoolFlag lets --prune stand alone.
func (p *Prune) IsBoolFlag() bool { return true }

// Type implements pflag.Value.
func (p *Prune) Type() string { return "" }
