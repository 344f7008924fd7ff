package pvsexpand

import (
	"context"
	"fmt"
	"sort"
	"strings"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
)

// renderer computes PackageVariant specs for the instances of one set.
type renderer struct {
	ctx      context.Context // the caller's: its deadline bounds the expansion
	eng      *engine
	world    *World
	upstream *pv.Upstream
	upObject *Object
	// spent is the CEL cost of the set's evaluations so far: at most
	// maxSetCost for all its targets together.
	spent uint64
}

// render computes the spec of one instance (reference RND order): the
// downstream repository first (repoExpr cannot see `repository`), then the
// Repository is looked up and every other field is computed.
func (r *renderer) render(in instance, tpl *v1alpha2.PackageVariantTemplate, field string) (*pv.PackageVariantSpec, error) {
	up := *r.upstream
	spec := &pv.PackageVariantSpec{Upstream: &up, Downstream: &pv.Downstream{Repo: in.repoDefault, Package: in.packageDefault}}
	if tpl == nil {
		return spec, nil
	}
	if o, ok := in.targetVar.(*Object); ok {
		if err := o.withinBounds(); err != nil {
			return nil, err
		}
	}
	if err := r.upObject.withinBounds(); err != nil {
		return nil, err
	}
	vars := map[string]any{"repoDefault": in.repoDefault, "packageDefault": in.packageDefault, "upstream": r.upObject, "target": in.targetVar}
	ev := &evaluator{ctx: r.ctx, eng: r.eng, vars: vars, spent: &r.spent}
	if d := tpl.Downstream; d != nil {
		spec.Downstream.Repo = ev.value(field+".downstream.repo", d.Repo, d.RepoExpr, in.scope.withoutRepository(), spec.Downstream.Repo)
	}
	if ev.err != nil {
		return nil, ev.err
	}
	repo := r.world.Repository(spec.Downstream.Repo)
	if repo == nil {
		return nil, fmt.Errorf("downstream repository %q not found among the Repository objects in namespace %q", spec.Downstream.Repo, r.world.Namespace)
	}
	repoObj := repo
	if err := repoObj.withinBounds(); err != nil {
		return nil, err
	}
	vars["repository"] = repoObj
	s := in.scope
	if d := tpl.Downstream; d != nil {
		spec.Downstream.Package = ev.value(field+".downstream.package", d.Package, d.PackageExpr, s, spec.Downstream.Package)
	}
	if tpl.AdoptionPolicy != nil {
		spec.AdoptionPolicy = *tpl.AdoptionPolicy
	}
	if tpl.DeletionPolicy != nil {
		spec.DeletionPolicy = *tpl.DeletionPolicy
	}
	spec.Labels = ev.mapping(field+".labelExprs", tpl.Labels, tpl.LabelExprs, s)
	spec.Annotations = ev.mapping(field+".annotationExprs", tpl.Annotations, tpl.AnnotationExprs, s)
	spec.PackageContext = ev.packageContext(field+".packageContext", tpl.PackageContext, s)
	spec.Injectors = ev.injectors(field+".injectors", tpl.Injectors, s)
	spec.Pipeline = ev.pipeline(field+".pipeline", tpl.Pipeline, s)
	return spec, ev.err
}

// evaluator evaluates expressions until the first error, which it keeps.
type evaluator struct {
	ctx   context.Context
	eng   *engine
	vars  map[string]any
	err   error
	spent *uint64 // the set's CEL cost so far (renderer.spent)
}

func (e *evaluator) eval(field string, s scope, expr string) string {
	if e.err != nil {
		return ""
	}
	// The deadline is checked before every expression, not only inside
	// comprehensions (where CEL checks it every interruptEvery steps).
	if err := e.ctx.Err(); err != nil {
		e.err = fmt.Errorf("`%s`: not evaluated: the set's expansion ran out of time (%v)", field, err)
		return ""
	}
	if *e.spent > maxSetCost {
		e.err = fmt.Errorf("`%s`: not evaluated: the set's expressions spent their cost budget of %d for one expansion; fewer targets or cheaper expressions", field, maxSetCost)
		return ""
	}
	p, err := e.eng.compile(s, expr)
	if err == nil {
		var v string
		var cost uint64
		v, cost, err = eval(e.ctx, p, e.vars)
		*e.spent += cost
		if err == nil {
			return v
		}
		err = e.whoseKey(expr, err)
	}
	e.err = fmt.Errorf("`%s`: %v", field, err)
	return ""
}

// value is the Expr if set, else the plain value if set, else def.
func (e *evaluator) value(field string, plain, expr *string, s scope, def string) string {
	switch {
	case expr != nil:
		v := e.eval(field+"Expr", s, *expr)
		if v == "" && e.err == nil {
			e.err = fmt.Errorf("`%sExpr` evaluated to an empty string", field)
		}
		return v
	case plain != nil && *plain != "":
		return *plain
	}
	return def
}

// mapping is plain overlaid by the MapExprs (which win on equal keys); empty is nil.
func (e *evaluator) mapping(field string, plain map[string]string, exprs []v1alpha2.MapExpr, s scope) map[string]string {
	out := make(map[string]string, len(plain)+len(exprs))
	for k, v := range plain {
		out[k] = v
	}
	for i, m := range exprs {
		f := fmt.Sprintf("%s[%d]", field, i)
		k := e.value(f+".key", m.Key, m.KeyExpr, s, "")
		v := e.value(f+".value", m.Value, m.ValueExpr, s, "")
		if e.err == nil && k == "" {
			e.err = fmt.Errorf("`%s.key` must not be empty", f)
		}
		if e.err != nil {
			return nil
		}
		out[k] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func (e *evaluator) packageContext(field string, t *v1alpha2.PackageContextTemplate, s scope) *pv.PackageContext {
	if t == nil {
		return nil
	}
	pc := &pv.PackageContext{Data: e.mapping(field+".dataExprs", t.Data, t.DataExprs, s)}
	keys := map[string]bool{}
	for _, k := range t.RemoveKeys {
		keys[k] = true
	}
	for i, x := range t.RemoveKeyExprs {
		keys[e.eval(fmt.Sprintf("%s.removeKeyExprs[%d]", field, i), s, x)] = true
	}
	for k := range keys {
		pc.RemoveKeys = append(pc.RemoveKeys, k)
	}
	sort.Strings(pc.RemoveKeys)
	for _, k := range reservedKeys {
		if _, ok := pc.Data[k]; ok && e.err == nil {
			e.err = fmt.Errorf("`%s.dataExprs` computed the reserved key %q (kpt and Porch set it)", field, k)
		}
		if keys[k] && e.err == nil {
			e.err = fmt.Errorf("`%s.removeKeyExprs` computed the reserved key %q (kpt and Porch set it)", field, k)
		}
	}
	if pc.Data == nil && pc.RemoveKeys == nil {
		return nil
	}
	return pc
}

func (e *evaluator) injectors(field string, ts []v1alpha2.InjectionSelectorTemplate, s scope) []pv.InjectionSelector {
	var out []pv.InjectionSelector
	for i, t := range ts {
		name := e.value(fmt.Sprintf("%s[%d].name", field, i), t.Name, t.NameExpr, s, "")
		out = append(out, pv.InjectionSelector{Group: t.Group, Version: t.Version, Kind: t.Kind, Name: name})
	}
	return out
}

func (e *evaluator) pipeline(field string, t *v1alpha2.PipelineTemplate, s scope) *pv.Pipeline {
	if t == nil {
		return nil
	}
	p := &pv.Pipeline{
		Validators: e.functions(field+".validators", t.Validators, s),
		Mutators:   e.functions(field+".mutators", t.Mutators, s),
	}
	if len(p.Validators)+len(p.Mutators) == 0 {
		return nil
	}
	return p
}

func (e *evaluator) functions(field string, ts []v1alpha2.FunctionTemplate, s scope) []pv.Function {
	var out []pv.Function
	for i, t := range ts {
		fn := t.Function
		fn.ConfigMap = e.mapping(fmt.Sprintf("%s[%d].configMapExprs", field, i), t.ConfigMap, t.ConfigMapExprs, s)
		out = append(out, fn)
	}
	return out
}

// whoseKey names the object a missing map key was looked up in: CEL says
// only "no such key: team", which, reported on a target, reads as if the
// target lacked it when the expression read `upstream.labels`. The objects
// the expression reads labels or annotations of are checked in order
// (target, repository, upstream); the first that lacks the key is named.
func (e *evaluator) whoseKey(expr string, err error) error {
	key, ok := strings.CutPrefix(err.Error(), "no such key: ")
	if !ok {
		return err
	}
	for _, v := range []string{"target", "repository", "upstream"} {
		o, ok := e.vars[v].(*Object)
		if !ok {
			continue
		}
		for _, f := range []struct {
			name string
			m    map[string]string
		}{{"labels", o.Labels}, {"annotations", o.Annotations}} {
			if _, has := f.m[key]; !has && strings.Contains(expr, v+"."+f.name) {
				return fmt.Errorf("%w (`%s.%s` of %q has no key %q)", err, v, f.name, o.Name, key)
			}
		}
	}
	return err
}
