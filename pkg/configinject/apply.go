package configinject

import (
	"fmt"

	"github.com/pvkit/pvkit/pkg/kptfile"
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Summary counts what Apply did.
type Summary struct {
	Points, Injected, Updated, NotInjected, GatesAdded int
	Candidates, Ignored                                int
}

func (s Summary) String() string {
	if s.Points == 0 {
		return fmt.Sprintf("nothing to do: the package has no injection points (%d candidate(s) in the namespace, %d in other namespaces ignored)",
			s.Candidates, s.Ignored)
	}
	return fmt.Sprintf("%d injection point(s): %d injected (%d updated, %d already current), %d not injected; %d readiness gate(s) added; %d candidate(s) in other namespaces ignored",
		s.Points, s.Injected, s.Updated, s.Injected-s.Updated, s.NotInjected, s.GatesAdded, s.Ignored)
}

// injection is one planned copy into a point.
type injection struct {
	point *Point
	field string
	value *yaml.Node
	from  string
}

// Apply injects candidates into the package's injection points and records
// the outcome in the Kptfile. On any problem of error severity it changes
// nothing; required points left without an object are reported as warnings.
func Apply(items []*yaml.RNode, cfg *Config) (Summary, []krm.Problem) {
	s := Summary{Candidates: len(cfg.Candidates), Ignored: cfg.Ignored}
	points, problems := FindPoints(items)
	if len(problems) > 0 {
		return s, problems
	}
	s.Points = len(points)
	if len(points) == 0 {
		return s, nil
	}
	kf, p := kptfileFor(items)
	if p != nil {
		return s, []krm.Problem{*p}
	}
	plan, conds, warnings := decide(points, newResolver(cfg))
	for _, in := range plan {
		if inject(in) {
			s.Updated++
		}
	}
	s.Injected, s.NotInjected = len(plan), len(points)-len(plan)
	var err error
	if s.GatesAdded, err = record(kf, points, conds); err != nil {
		return s, []krm.Problem{kf.Problem(err)}
	}
	return s, warnings
}

// kptfileFor finds the root Kptfile and checks the fields Apply edits, so a
// bad Kptfile fails the run before anything is changed.
func kptfileFor(items []*yaml.RNode) (*kptfile.Kptfile, *krm.Problem) {
	kf, err := kptfile.Find(items)
	if err != nil {
		p := krm.Errorf(nil, "", "%s", err).InFile(kptfile.FileName)
		return nil, &p
	}
	if kf == nil {
		p := krm.Errorf(nil, "", "file not found; the package needs a root Kptfile to record the injection conditions").InFile(kptfile.FileName)
		return nil, &p
	}
	if _, err := kf.ReadinessGates(); err != nil {
		p := kf.Problem(err)
		return nil, &p
	}
	if _, err := kf.Conditions(); err != nil {
		p := kf.Problem(err)
		return nil, &p
	}
	return kf, nil
}

// decide chooses, for every point, the object to inject or the reason there
// is none, without changing anything.
func decide(points []*Point, r *resolver) ([]injection, []kptfile.Condition, []krm.Problem) {
	var plan []injection
	var warnings []krm.Problem
	conds := make([]kptfile.Condition, 0, len(points))
	for _, p := range points {
		c := r.choose(p.typeKey())
		reason := c.reason
		if c.candidate != nil {
			from := krm.Name(c.candidate.YNode())
			field := "spec"
			if p.APIVersion == "v1" && p.Kind == "ConfigMap" {
				field = "data"
			}
			if v := krm.Field(c.candidate.YNode(), field); !krm.IsNull(v) {
				plan = append(plan, injection{point: p, field: field, value: v, from: from})
				conds = append(conds, kptfile.Condition{Type: p.ConditionType(), Status: kptfile.ConditionTrue,
					Reason: ReasonInjected, Message: fmt.Sprintf("injected resource %q from cluster", from)})
				continue
			}
			reason = fmt.Sprintf("field %q not found in resource %q", field, from)
		}
		conds = append(conds, kptfile.Condition{Type: p.ConditionType(), Status: kptfile.ConditionFalse,
			Reason: ReasonNoResource, Message: reason})
		if p.Required {
			warnings = append(warnings, krm.Warningf(p.Item, "", "required injection point %q was not injected: %s", p.ConditionType(), reason))
		}
	}
	return plan, conds, warnings
}

// inject copies the candidate's field into the point; it reports whether the
// point changed. A field that already holds the value is left untouched.
func inject(in injection) bool {
	n := in.point.Item.YNode()
	changed := false
	if cur := krm.Field(n, in.field); cur == nil || !krm.SemanticEqual(cur, in.value) {
		krm.SetField(n, in.field, yaml.CopyYNode(in.value))
		changed = true
	}
	if v, _ := krm.ScalarAt(n, "metadata", "annotations", InjectedAnnotation); v != in.from {
		krm.SetField(krm.EnsureMap(krm.EnsureMap(n, "metadata"), "annotations"), InjectedAnnotation, krm.StringNode(in.from))
		changed = true
	}
	return changed
}

// record adds the readiness gates of required points and sets one condition
// per point in the Kptfile.
func record(kf *kptfile.Kptfile, points []*Point, conds []kptfile.Condition) (int, error) {
	var gates []string
	for _, p := range points {
		if p.Required {
			gates = append(gates, p.ConditionType())
		}
	}
	added, err := kf.AddReadinessGates(gates)
	if err != nil {
		return 0, err
	}
	if err := kf.SetConditions(conds); err != nil {
		return 0, err
	}
	return added, nil
}
