package pipelineprepend

import (
	"fmt"

	"github.com/pvkit/pvkit/pkg/kptfile"
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

var lists = []string{kptfile.Mutators, kptfile.Validators}

// Summary says what Apply did to each list.
type Summary struct {
	Owner           string
	Prepended, Kept map[string]int
	Removed         int
	// Changed is set when the Kptfile was edited.
	Changed bool
	// NoKptfile is set when there was no Kptfile and nothing to prepend.
	NoKptfile bool
}

func (s Summary) String() string {
	if s.NoKptfile {
		return fmt.Sprintf("nothing to do: no functions to prepend for %q and the package has no Kptfile", s.Owner)
	}
	if !s.Changed {
		return fmt.Sprintf("Kptfile pipeline already up to date for owner %q: %d mutator(s) and %d validator(s) first, %d other mutator(s) and %d other validator(s) after them",
			s.Owner, s.Prepended[kptfile.Mutators], s.Prepended[kptfile.Validators], s.Kept[kptfile.Mutators], s.Kept[kptfile.Validators])
	}
	return fmt.Sprintf("Kptfile pipeline updated for owner %q: %d mutator(s) and %d validator(s) prepended, %d earlier one(s) of that owner dropped, %d other mutator(s) and %d other validator(s) kept",
		s.Owner, s.Prepended[kptfile.Mutators], s.Prepended[kptfile.Validators], s.Removed, s.Kept[kptfile.Mutators], s.Kept[kptfile.Validators])
}

// Apply prepends the owner's functions to the root Kptfile among items. On
// any problem it changes nothing.
func Apply(items []*yaml.RNode, cfg *Config) (Summary, []krm.Problem) {
	s := Summary{Owner: cfg.Owner, Prepended: map[string]int{}, Kept: map[string]int{}}
	kf, err := kptfile.Find(items)
	if err != nil {
		return s, []krm.Problem{krm.Errorf(nil, "", "%s", err).InFile(kptfile.FileName)}
	}
	if kf == nil {
		if len(cfg.Mutators)+len(cfg.Validators) == 0 {
			s.NoKptfile = true
			return s, nil
		}
		return s, []krm.Problem{krm.Errorf(nil, "", "file not found; the package needs a root Kptfile to prepend %d function(s) of owner %q",
			len(cfg.Mutators)+len(cfg.Validators), cfg.Owner).InFile(kptfile.FileName)}
	}
	desired := map[string][]*yaml.Node{}
	for _, list := range lists {
		current, err := kf.Pipeline(list)
		if err != nil {
			return s, []krm.Problem{kf.Problem(err)}
		}
		var kept []*yaml.Node
		for _, e := range current {
			name, _ := krm.ScalarAt(e, "name")
			if Owns(cfg.Owner, name) {
				s.Removed++
			} else {
				kept = append(kept, e)
			}
		}
		want := owned(cfg.Owner, cfg.List(list))
		s.Prepended[list], s.Kept[list] = len(want), len(kept)
		want = append(want, kept...)
		if !sameEntries(current, want) {
			desired[list] = want
		}
	}
	for _, list := range lists {
		if want, ok := desired[list]; ok {
			kf.SetPipeline(list, want)
			s.Changed = true
		}
	}
	warnings, err := overrides(items, kf, cfg.Owner)
	if err != nil {
		return s, []krm.Problem{kf.Problem(err)}
	}
	return s, warnings
}

// owned builds the owner's entries: copies of the config functions, without
// the config's comments, named after their owner and position.
func owned(owner string, fns []*yaml.Node) []*yaml.Node {
	out := make([]*yaml.Node, 0, len(fns))
	for i, f := range fns {
		e := yaml.CopyYNode(f)
		clearComments(e)
		fnName, _ := krm.ScalarAt(e, "name")
		krm.SetField(e, "name", krm.StringNode(FunctionName(owner, fnName, i)))
		out = append(out, e)
	}
	return out
}

// sameEntries reports whether two lists hold the same functions in order
// (by value, so formatting alone is no change).
func sameEntries(a, b []*yaml.Node) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !krm.SemanticEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

func clearComments(n *yaml.Node) {
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	for _, c := range n.Content {
		clearComments(c)
	}
}
