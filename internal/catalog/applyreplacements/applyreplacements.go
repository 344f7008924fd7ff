// Package applyreplacements is apply-replacements of the kpt function
// catalog: kustomize's `replacements` as a KRM function, written from the
// function's README, kustomize's documentation of replacements and the
// catalog's example (`examples/apply-replacements-simple` of
// github.com/kptdev/krm-functions-catalog), and checked against the
// released v0.1.1 executable the module proxy serves (TestAgainstV011).
//
// The function config is an `ApplyReplacements` (fn.kpt.dev/v1alpha1) whose
// `replacements` are kustomize's. Each replacement reads one value from one
// source object and writes it to
// the target fields of every object its targets select; every object is
// written back, in its order.
//
// Two behaviours, because the releases carry two generations of kustomize:
//
//   - V01 (v0.1.0, v0.1.1; kustomize api v0.10): a target field that is
//     missing is skipped (with `options.create` it is created); a scalar
//     target takes the source node whole (its tag and style too, so a
//     number written into a string field becomes a number); `sourceValue`
//     (kustomize's literal source, added later) is not known.
//   - V012 (v0.1.2 and the catalog's main branch; kustomize api v0.19):
//     kustomize's own filter, sigs.k8s.io/kustomize/api v0.20.1, whose only
//     change to replacements since v0.19 is `sourceValue`, which pvkit
//     ignores here as v0.19 does: a missing target field without `create`
//     is an error naming the field path, a scalar target keeps its type and
//     takes only the value, and field paths take `*` wildcards.
//
// Deliberately not read: kustomize's build-time annotations for previous
// names, kinds and namespaces (they exist only inside a kustomize build, and
// a package's own annotations must not make an object answer to another
// object's name).
package applyreplacements

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"github.com/pvkit/pvkit/internal/catalog/internal/sdkproc"
	"sigs.k8s.io/kustomize/api/filters/replacement"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
	kyamlutils "sigs.k8s.io/kustomize/kyaml/utils"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const (
	configKind       = "ApplyReplacements"
	configAPIVersion = "fn.kpt.dev/v1alpha1"
)

// Behaviour is one generation of the function.
type Behaviour struct {
	filter func(nodes []*yaml.RNode, rs []types.Replacement) ([]*yaml.RNode, error)
}

var (
	// V01 is v0.1.0 and v0.1.1.
	V01 = &Behaviour{filter: legacyFilter}
	// V012 is v0.1.2 and the catalog's main branch.
	V012 = &Behaviour{filter: func(nodes []*yaml.RNode, rs []types.Replacement) ([]*yaml.RNode, error) {
		for i := range rs {
			rs[i].SourceValue = nil // not a field before kustomize api v0.20
		}
		return replacement.Filter{Replacements: rs}.Filter(nodes)
	}}
)

// config is the function config's content.
type config struct {
	Replacements []types.Replacement `json:"replacements,omitempty" yaml:"replacements,omitempty"`
}

// Run is the function as a process: a ResourceList on in, the result on
// out, the SDK's failure line on stderr; it returns the exit code.
func (b *Behaviour) Run(in io.Reader, out, stderr io.Writer) int {
	return sdkproc.Main(fn.ResourceListProcessorFunc(b.process), in, out, stderr)
}

// process applies the replacements; a bad config or a failed replacement is
// one error result, and no object is changed.
func (b *Behaviour) process(rl *fn.ResourceList) (bool, error) {
	cfg, err := readConfig(rl.FunctionConfig)
	if err == nil {
		err = b.transform(rl, cfg)
	}
	if err != nil {
		rl.LogResult(err)
		return false, nil
	}
	return true, nil
}

func readConfig(o *fn.KubeObject) (*config, error) {
	if o.IsEmpty() {
		return nil, fmt.Errorf("FunctionConfig is missing. Expect `%s`", configKind)
	}
	if o.GetKind() != configKind || o.GetAPIVersion() != configAPIVersion {
		return nil, fmt.Errorf("received functionConfig of kind %s and apiVersion %s, only functionConfig of kind %s and apiVersion %s is supported",
			o.GetKind(), o.GetAPIVersion(), configKind, configAPIVersion)
	}
	cfg := &config{Replacements: []types.Replacement{}}
	if err := o.As(cfg); err != nil {
		return nil, fmt.Errorf("unable to convert functionConfig to replacements:\n%w", err)
	}
	return cfg, nil
}

// transform runs the filter on the items as kyaml nodes and puts the
// result back; on an error the items are left as they were.
func (b *Behaviour) transform(rl *fn.ResourceList, cfg *config) error {
	nodes := make([]*yaml.RNode, 0, len(rl.Items))
	for _, o := range rl.Items {
		n, err := yaml.Parse(o.String())
		if err != nil {
			return err
		}
		nodes = append(nodes, n)
	}
	nodes, err := b.filter(nodes, cfg.Replacements)
	if err != nil {
		return err
	}
	items := make(fn.KubeObjects, 0, len(nodes))
	for _, n := range nodes {
		s, err := n.String()
		if err != nil {
			return err
		}
		o, err := fn.ParseKubeObject([]byte(s))
		if err != nil {
			return err
		}
		items = append(items, o)
	}
	rl.Items = items
	return nil
}

// legacyFilter is replacements as kustomize api v0.10 applied them (V01).
func legacyFilter(nodes []*yaml.RNode, rs []types.Replacement) ([]*yaml.RNode, error) {
	for i := range rs {
		r := &rs[i]
		if r.Source == nil || r.Targets == nil {
			return nil, fmt.Errorf("replacements must specify a source and at least one target")
		}
		value, err := legacySource(nodes, r.Source)
		if err != nil {
			return nil, err
		}
		for _, t := range r.Targets {
			if err := legacyTarget(nodes, value, t); err != nil {
				return nil, err
			}
		}
	}
	return nodes, nil
}

// idOf is the object's id: group, version and kind from apiVersion and
// kind, its name and its namespace.
func idOf(n *yaml.RNode) resid.ResId {
	var group, version string
	if av := n.Field(yaml.APIVersionField); av != nil {
		group, version = resid.ParseGroupVersion(yaml.GetValue(av.Value))
	}
	return resid.NewResIdWithNamespace(resid.Gvk{Group: group, Version: version, Kind: n.GetKind()}, n.GetName(), n.GetNamespace())
}

// legacySource is the value a source selects: exactly one object, the
// field at its path (metadata.name when none), refined by its delimiter.
func legacySource(nodes []*yaml.RNode, s *types.SourceSelector) (*yaml.RNode, error) {
	var found *yaml.RNode
	for _, n := range nodes {
		if !idOf(n).IsSelectedBy(s.ResId) {
			continue
		}
		if found != nil {
			return nil, fmt.Errorf("multiple matches for selector %s", s)
		}
		found = n
	}
	if found == nil {
		return nil, fmt.Errorf("nothing selected by %s", s)
	}
	if s.FieldPath == "" {
		s.FieldPath = types.DefaultReplacementFieldPath
	}
	v, err := legacyLookup(found, 0, kyamlutils.SmarterPathSplitter(s.FieldPath, "."))
	if err != nil {
		return nil, err
	}
	if v.IsNilOrEmpty() {
		return nil, fmt.Errorf("fieldPath `%s` is missing for replacement source %s", s.FieldPath, s)
	}
	if s.Options == nil || s.Options.Delimiter == "" {
		return v, nil
	}
	if v.YNode().Kind != yaml.ScalarNode {
		return nil, fmt.Errorf("delimiter option can only be used with scalar nodes")
	}
	parts := strings.Split(yaml.GetValue(v), s.Options.Delimiter)
	if s.Options.Index < 0 || s.Options.Index >= len(parts) {
		return nil, fmt.Errorf("options.index %d is out of bounds for value %s", s.Options.Index, yaml.GetValue(v))
	}
	v = v.Copy()
	v.YNode().Value = parts[s.Options.Index]
	return v, nil
}

// legacyTarget writes value to the fields of every object t selects: by
// label and annotation selector, then by id, less what its rejects name.
func legacyTarget(nodes []*yaml.RNode, value *yaml.RNode, t *types.TargetSelector) error {
	if t.Select == nil {
		return fmt.Errorf("target must specify resources to select")
	}
	if len(t.FieldPaths) == 0 {
		t.FieldPaths = []string{types.DefaultReplacementFieldPath}
	}
	for _, n := range nodes {
		ok, err := matchesSelectors(n, t.Select)
		if err != nil {
			return err
		}
		for _, r := range t.Reject {
			if !ok || (r.AnnotationSelector == "" && r.LabelSelector == "") {
				continue
			}
			rejected, err := matchesSelectors(n, r)
			if err != nil {
				return err
			}
			ok = !rejected
		}
		if !ok || !idOf(n).IsSelectedBy(t.Select.ResId) || rejectedByID(n, t.Reject) {
			continue
		}
		for _, fp := range t.FieldPaths {
			if err := legacySet(n, fp, value, t.Options); err != nil {
				return err
			}
		}
	}
	return nil
}

func matchesSelectors(n *yaml.RNode, s *types.Selector) (bool, error) {
	ok, err := n.MatchesAnnotationSelector(s.AnnotationSelector)
	if err != nil || !ok {
		return false, err
	}
	return n.MatchesLabelSelector(s.LabelSelector)
}

func rejectedByID(n *yaml.RNode, rejects []*types.Selector) bool {
	id := idOf(n)
	for _, r := range rejects {
		if !r.ResId.IsEmpty() && id.IsSelectedBy(r.ResId) {
			return true
		}
	}
	return false
}

// legacySet writes value at the field path: a missing field is skipped, or
// created with options.create; the field takes the value node whole.
func legacySet(n *yaml.RNode, fieldPath string, value *yaml.RNode, opts *types.FieldOptions) error {
	create := yaml.Kind(0)
	if opts != nil && opts.Create {
		create = value.YNode().Kind
	}
	field, err := legacyLookup(n, create, kyamlutils.SmarterPathSplitter(fieldPath, "."))
	if err != nil || field == nil {
		return err
	}
	value = value.Copy()
	if opts != nil && opts.Delimiter != "" {
		if field.YNode().Kind != yaml.ScalarNode {
			return fmt.Errorf("delimiter option can only be used with scalar nodes")
		}
		parts := strings.Split(field.YNode().Value, opts.Delimiter)
		v := yaml.GetValue(value)
		switch {
		case opts.Index < 0:
			parts = append([]string{v}, parts...)
		case opts.Index >= len(parts):
			parts = append(parts, v)
		default:
			parts[opts.Index] = v
		}
		value.YNode().Value = strings.Join(parts, opts.Delimiter)
	}
	field.SetYNode(value.YNode())
	return nil
}

// legacyLookup is a field path looked up (and, with a create kind, made) as
// kyaml v0.13 did under kustomize api v0.10: part by part, a `*` part is a
// field of that name (kyaml later refuses it as a wildcard), a field made
// before a numeric index is a map (kyaml later makes it a list), and a node
// of the wrong kind on the way is v0.13's error, which names the path.
func legacyLookup(n *yaml.RNode, create yaml.Kind, path []string) (*yaml.RNode, error) {
	match := n
	var walked []string // the map fields on the way, as v0.13 names a path
	for i, part := range path {
		kind := create // the last part's
		if i+1 < len(path) {
			kind = yaml.MappingNode
			if yaml.IsListIndex(path[i+1]) {
				kind = yaml.SequenceNode
			}
		}
		var f yaml.Filter
		switch {
		case part == "*" && create == 0:
			f = yaml.Get(part)
		case part == "*":
			f = yaml.FieldMatcher{Name: part, Create: yaml.NewRNode(&yaml.Node{Kind: kind})}
		case create == 0:
			f = yaml.Lookup(part)
		default:
			f = yaml.LookupCreate(kind, part)
		}
		next, err := match.Pipe(f)
		var wrongKind *yaml.InvalidNodeKindError
		if errors.As(err, &wrongKind) {
			want := "MappingNode"
			if _, numErr := strconv.Atoi(part); numErr == nil || part == "-" || yaml.IsListIndex(part) {
				want = "SequenceNode"
			}
			text, _ := match.String()
			return nil, fmt.Errorf("wrong Node Kind for %s expected: %s was %s: value: {%s}",
				strings.Join(walked, "."), want, kindNames[match.YNode().Kind], strings.TrimSpace(text))
		}
		if err != nil || next == nil {
			return nil, err
		}
		if _, numErr := strconv.Atoi(part); numErr != nil && part != "-" && !yaml.IsListIndex(part) {
			walked = append(walked, part)
		}
		match = next
	}
	return match, nil
}

var kindNames = map[yaml.Kind]string{
	yaml.DocumentNode: "DocumentNode",
	yaml.SequenceNode: "SequenceNode",
	yaml.MappingNode:  "MappingNode",
	yaml.ScalarNode:   "ScalarNode",
	yaml.AliasNode:    "AliasNode",
}
