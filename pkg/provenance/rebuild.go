package provenance

import (
	"errors"
	"fmt"
	"strings"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/configinject"
	"github.com/pvkit/pvkit/pkg/kptfile"
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ErrNoParameters: the record was written before records carried what a
// rebuild needs (externalParameters.parameters): its content
// still checks, it cannot be rebuilt.
var ErrNoParameters = errors.New("the record was written before pvkit recorded what a rebuild needs (externalParameters.parameters): its content is checked, it cannot be rebuilt")

// Rebuild is what a record says a rebuild of its package needs (pvctl
// verify --rebuild): the variant and its spec, the upstream at its
// commit, the objects injected and the builder.
type Rebuild struct {
	Variant    VariantRef
	Parameters *pv.PackageVariantSpec
	// URL, Directory, Ref and Commit are the upstream as the Kptfile's
	// upstreamLock pinned it.
	URL, Directory, Ref, Commit string
	Injected                    []Injected
	// Builder is the builder's name ("controller", "pvctl") and Version
	// pvkit's version when the record was written.
	Builder, Version string
}

// Injected is an object config-inject copied into the package, as the
// record names it.
type Injected struct {
	APIVersion, Kind, Namespace, Name string
	// Field is the field copied (data, spec); File and Point the
	// injection point; Digest the field's digest when it was read.
	Field, File, Point, Digest string
}

func (i Injected) String() string {
	return fmt.Sprintf("injected %s %s/%s", i.Kind, i.Namespace, i.Name)
}

// Rebuild reads what a rebuild needs from the record: ErrNoParameters for
// a record written before it carried them, an error naming the field for
// one that names no upstream commit.
func (r *Record) Rebuild() (*Rebuild, error) {
	bd := r.Statement.Predicate.BuildDefinition
	if bd.ExternalParameters.Parameters == nil {
		return nil, ErrNoParameters
	}
	out := &Rebuild{Variant: bd.ExternalParameters.Variant, Parameters: bd.ExternalParameters.Parameters}
	out.Builder = strings.TrimPrefix(r.Statement.Predicate.RunDetails.Builder.ID, "https://pvkit.dev/")
	out.Version = r.Statement.Predicate.RunDetails.Builder.Version["pvkit"]
	for _, d := range bd.ResolvedDependencies {
		if d.Name == "upstream" {
			out.URL, out.Directory, out.Ref, out.Commit = d.URI, d.Annotations["directory"], d.Annotations["ref"], d.Digest["gitCommit"]
			continue
		}
		f := strings.Fields(d.Name)
		ns, name, ok := strings.Cut(f[len(f)-1], "/")
		if len(f) != 4 || f[0] != "injected" || !ok {
			return nil, fmt.Errorf("%s: field data.statement: predicate.buildDefinition.resolvedDependencies: %q is neither the upstream nor an injected object", FileName, d.Name)
		}
		out.Injected = append(out.Injected, Injected{APIVersion: f[1], Kind: f[2], Namespace: ns, Name: name, Field: d.Annotations["field"],
			File: d.Annotations["file"], Point: d.Annotations["point"], Digest: d.Digest[DigestAlgorithm]})
	}
	if out.Commit == "" {
		return nil, fmt.Errorf("%s: field data.statement: predicate.buildDefinition.resolvedDependencies: no upstream with a gitCommit: nothing to rebuild from", FileName)
	}
	return out, nil
}

// Objects are the injected objects as the package holds them, one for
// each the record names, made from the injection point's copied field
// (what config-inject read), each checked against its recorded digest:
// problems names each one the package does not hold, or holds with
// another field than the one read.
func (rb *Rebuild) Objects(files map[string]string) (objs []map[string]any, problems []string, err error) {
	items, err := krm.FilesToItems(WithoutRecord(files))
	if err != nil {
		return nil, nil, err
	}
	// The points by file, name and what they say was injected: one look-up
	// an entry, however many entries a record (a forged one too) lists.
	type pointKey struct{ file, point, injected string }
	points := make(map[pointKey]*yaml.RNode, len(items))
	for _, it := range items {
		points[pointKey{krm.Path(it), krm.Name(it.YNode()), krm.Annotation(it, configinject.InjectedAnnotation)}] = it // the last wins, as a scan would
	}
	for _, in := range rb.Injected {
		point := points[pointKey{in.File, in.Point, in.Name}]
		if point == nil {
			problems = append(problems, fmt.Sprintf("%s: the package has no injection point %s in %s that names it", in, in.Point, in.File))
			continue
		}
		field := krm.Field(point.YNode(), in.Field)
		if field == nil {
			problems = append(problems, fmt.Sprintf("%s: the injection point %s in %s has no %s", in, in.Point, in.File, in.Field))
			continue
		}
		if got := nodeDigest(field); got != in.Digest {
			problems = append(problems, fmt.Sprintf("%s: the package holds %s with digest %s, the record says %s was injected (%s %s in %s)", in, in.Field, short(got), short(in.Digest), in.Kind, in.Point, in.File))
		}
		var value any
		if err := field.Decode(&value); err != nil {
			return nil, nil, fmt.Errorf("%s: %s of %s: %w", in.File, in.Field, in.Point, err)
		}
		objs = append(objs, map[string]any{"apiVersion": in.APIVersion, "kind": in.Kind,
			"metadata": map[string]any{"name": in.Name, "namespace": in.Namespace}, in.Field: value})
	}
	return objs, problems, nil
}

// StandIn names the object a rebuild puts in the cluster for a point the
// record says nothing of (StandIns).
const StandIn = "pvkit-rebuild-stand-in"

// StandIns are objects that no injector selects, one for each type of an
// injection point whose condition in the package says the cluster had
// objects of it and no injector selected one (configinject.NoMatch): the
// record names what was injected, not what the cluster held beside it, so
// a rebuild takes that from the package's own condition (rule
// provenance-rebuild). Without them the rebuilt condition would say the
// cluster had none of the type.
func (rb *Rebuild) StandIns(files map[string]string, namespace string) ([]map[string]any, error) {
	items, err := krm.FilesToItems(WithoutRecord(files))
	if err != nil {
		return nil, err
	}
	kf, err := kptfile.Find(items)
	if err != nil || kf == nil {
		return nil, err
	}
	conds, err := kf.Conditions()
	if err != nil {
		return nil, err
	}
	// A name no injector of the variant names (a set of them: a record
	// listing the names StandIn, StandIn-x, StandIn-x-x... costs one pass).
	named := make(map[string]bool, len(rb.Parameters.Injectors))
	for _, inj := range rb.Parameters.Injectors {
		named[inj.Name] = true
	}
	name := StandIn
	for named[name] {
		name += "-x"
	}
	// The package's items by the condition type of their injection point.
	byCondition := make(map[string][]*yaml.RNode, len(items))
	for _, it := range items {
		_, kind := krm.TypeMeta(it.YNode())
		t := configinject.ConditionPrefix + "." + kind + "." + krm.Name(it.YNode())
		byCondition[t] = append(byCondition[t], it)
	}
	var out []map[string]any
	seen := map[string]bool{}
	for _, c := range conds {
		if c.Status != kptfile.ConditionFalse || c.Message != configinject.NoMatch {
			continue
		}
		for _, it := range byCondition[c.Type] {
			apiVersion, kind := krm.TypeMeta(it.YNode())
			key := apiVersion + " " + kind
			if seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name, "namespace": namespace}})
		}
	}
	return out, nil
}

func short(digest string) string {
	if len(digest) > 12 {
		return digest[:12]
	}
	return digest
}
