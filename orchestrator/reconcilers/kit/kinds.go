package kit

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/pvkit/pvkit/pkg/krm"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// DefaultReadableKinds are the kinds the controller (and pvctl run) may read
// for injection and objectSelector unless the operator says otherwise:
// ConfigMaps. A kind only the examples use is not a default:
// the examples name theirs (pvctl reads the kinds of its files' objects).
var DefaultReadableKinds = []string{"ConfigMap"}

// controllerHint is how an operator allows more kinds to the controller.
const controllerHint = "an operator allows more with --readable-kinds and a matching RBAC rule"

// ReadableKinds (rule: readable-kinds) is the operator-set list of kinds
// pvkit may read on a
// user's behalf: the types of a package's injection points, the kinds an
// injector or an objectSelector names. Anyone who may create a
// PackageVariant can make the controller read these kinds in their namespace
// and copy them into git, with the controller's rights; so the list is
// explicit (no wildcards), and a Secret is readable only when "Secret" is
// listed. Entries are written as kubectl names kinds: "Kind" for the core
// group, "Kind.group" otherwise, any version. The zero value is the default
// list.
type ReadableKinds struct {
	s    *kindSet
	hint string
}

// kindSet is the list, shared by the copies of a ReadableKinds: pvctl adds
// the kinds that arrive by --sync between passes (Allow).
type kindSet struct {
	mu sync.RWMutex
	m  map[schema.GroupKind]bool
}

// ParseReadableKinds reads a list of "Kind" and "Kind.group" entries.
func ParseReadableKinds(entries []string) (ReadableKinds, error) {
	k := ReadableKinds{s: &kindSet{m: map[schema.GroupKind]bool{}}}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		kind, group, _ := strings.Cut(e, ".")
		if kind == "" || strings.ContainsAny(e, "*/ ") || kind[0] < 'A' || kind[0] > 'Z' {
			return ReadableKinds{}, fmt.Errorf("readable kind %q must be Kind or Kind.group (a kind starts with a capital letter; no wildcards)", e)
		}
		k.s.m[schema.GroupKind{Group: group, Kind: kind}] = true
	}
	return k, nil
}

// WithHint says, in a refusal, how its host allows more kinds (pvctl names
// its own flag; the controller's is the operator's flag and RBAC).
func (k ReadableKinds) WithHint(hint string) ReadableKinds {
	k.hint = hint
	return k
}

// Allow adds a kind (never a Secret: that stays the operator's choice).
func (k ReadableKinds) Allow(gk schema.GroupKind) {
	if k.s == nil || (gk.Group == "" && gk.Kind == "Secret") {
		return
	}
	k.s.mu.Lock()
	defer k.s.mu.Unlock()
	k.s.m[gk] = true
}

// set is a copy of the list.
func (k ReadableKinds) set() map[schema.GroupKind]bool {
	if k.s == nil {
		d, _ := ParseReadableKinds(DefaultReadableKinds)
		return d.s.m
	}
	k.s.mu.RLock()
	defer k.s.mu.RUnlock()
	out := make(map[schema.GroupKind]bool, len(k.s.m))
	for gk := range k.s.m {
		out[gk] = true
	}
	return out
}

// Allows reports whether objects of g may be read.
func (k ReadableKinds) Allows(g krm.GVK) bool {
	gk := schema.GroupKind{Group: krm.Group(g.APIVersion), Kind: g.Kind}
	if k.s == nil {
		return k.set()[gk]
	}
	k.s.mu.RLock()
	defer k.s.mu.RUnlock()
	return k.s.m[gk]
}

// AllowsKind reports whether some group's kind may be read: an injector
// that names a kind and no group matches it in any group.
func (k ReadableKinds) AllowsKind(group *string, kind string) bool {
	for gk := range k.set() {
		if gk.Kind == kind && (group == nil || *group == gk.Group) {
			return true
		}
	}
	return false
}

// List returns the kinds, sorted by group and kind.
func (k ReadableKinds) List() []schema.GroupKind {
	var out []schema.GroupKind
	for gk := range k.set() {
		out = append(out, gk)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}

// String lists the kinds, sorted, as they are written.
func (k ReadableKinds) String() string {
	var out []string
	for gk := range k.set() {
		if gk.Group == "" {
			out = append(out, gk.Kind)
		} else {
			out = append(out, gk.Kind+"."+gk.Group)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// Refuse is the stalling error for a kind outside the list.
func (k ReadableKinds) Refuse(reason, what string) *Stalling {
	return Stallf(reason, "%s", k.Refusal(what))
}

// Refusal says that what names a kind outside the list, the kinds that
// are readable and how its host allows more.
func (k ReadableKinds) Refusal(what string) string {
	hint := k.hint
	if hint == "" {
		hint = controllerHint
	}
	return fmt.Sprintf("%s, a kind pvkit may not read (allowed: %s); %s", what, k, hint)
}
