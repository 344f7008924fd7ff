package pvsexpand

import (
	"fmt"
	"github.com/pvkit/pvkit/pkg/window"
	"strings"

	"github.com/pvkit/pvkit/pkg/api/meta"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/health"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/upstream"
	check "github.com/pvkit/pvkit/pkg/validate"
)

// reservedKeys of the package context (package-context rejects them too).
var reservedKeys = []string{"name", "package-path"}

// validator collects every problem of a set, with kpt field paths.
type validator struct {
	eng      *engine
	problems []krm.Problem
	// exprBytes is the length of the distinct expressions compiled so far
	// (seen): compilation cannot be interrupted, so a set's is bounded by
	// maxSetExpressionBytes (with maxExpressionLength and the parser's
	// recursion limit, that bounds its time).
	exprBytes int
	seen      map[string]bool
}

func (v *validator) errorf(field, format string, a ...any) {
	v.problems = append(v.problems, krm.Errorf(nil, field, format, a...))
}

// Validate checks a typed set the way the reference does (in kpt style)
// and also compiles and type-checks every CEL expression, so a bad
// expression is reported with its field path before anything is
// generated. The problems name no object (krm.About attaches one).
func Validate(set *v1alpha2.PackageVariantSet) []krm.Problem {
	eng, err := celEngine()
	if err != nil {
		return []krm.Problem{krm.Errorf(nil, "", "%v", err)}
	}
	v := &validator{eng: eng, seen: map[string]bool{}}
	if g := set.Spec.Group; g != nil {
		if set.Spec.Upstream != nil {
			v.errorf("spec.group", "`spec.group` and `spec.upstream` cannot both be set: a grouped set's members are its upstreams (rule package-groups)")
		}
		v.upstreamAt("spec.group", g)
		v.grouped(set)
	} else {
		v.upstream(set.Spec.Upstream)
	}
	if len(set.Spec.Targets) == 0 {
		v.errorf("spec.targets", "`spec.targets` must list at least one target")
	}
	for i := range set.Spec.Targets {
		v.target(fmt.Sprintf("spec.targets[%d]", i), &set.Spec.Targets[i])
	}
	v.rollout(set.Spec.Rollout)
	v.problems = append(v.problems, policyProblems(set)...)
	return v.problems
}

// rollout checks a staged rollout (rule: staged-rollouts): at least one
// wave, each named once, valid selectors and amounts.
func (v *validator) rollout(r *v1alpha2.Rollout) {
	if r == nil {
		return
	}
	if len(r.Waves) == 0 {
		v.errorf("spec.rollout.waves", "`spec.rollout.waves` must list at least one wave")
	}
	v.amount("spec.rollout.errorBudget", r.ErrorBudget)
	if r.Health != nil {
		for _, hp := range health.Validate("spec.rollout.health", r.Health) {
			v.errorf(hp.Field, "%s", hp.Message)
		}
	}
	if msg := check.QualifiedName(r.SpreadBy); r.SpreadBy != "" && msg != "" {
		v.errorf("spec.rollout.spreadBy", "`spec.rollout.spreadBy` %q is not a label key: %s", r.SpreadBy, msg)
	}
	if r.OnFailure != "" && r.OnFailure != "pause" && r.OnFailure != "undo" {
		v.errorf("spec.rollout.onFailure", "`spec.rollout.onFailure` must be pause or undo, found %q", r.OnFailure)
	}
	for _, wp := range window.Check("spec.rollout.windows", r.Windows) {
		v.errorf(wp.Field, "%s", wp.Message)
	}
	if r.MinSuccessSeconds != nil && r.Health == nil {
		v.errorf("spec.rollout.minSuccessSeconds", "`spec.rollout.minSuccessSeconds` needs `spec.rollout.health`: without a health check there is nothing to stay healthy")
	}
	if r.MinSuccessSeconds != nil && *r.MinSuccessSeconds < 0 {
		v.errorf("spec.rollout.minSuccessSeconds", "`spec.rollout.minSuccessSeconds` must be 0 or more, found %d", *r.MinSuccessSeconds)
	}
	names := map[string]bool{}
	for i, w := range r.Waves {
		f := fmt.Sprintf("spec.rollout.waves[%d]", i)
		switch {
		case w.Name == "":
			v.errorf(f+".name", "`%s.name` must not be empty", f)
		case names[w.Name]:
			v.errorf(f+".name", "`%s.name` %q names another wave too: wave names are unique", f, w.Name)
		}
		names[w.Name] = true
		if w.Selector != nil {
			v.selector(f+".selector", w.Selector)
		}
		for _, x := range []struct {
			field string
			a     *v1alpha2.IntOrPercent
		}{{".size", w.Size}, {".maxUpdate", w.MaxUpdate}, {".errorBudget", w.ErrorBudget}} {
			v.amount(f+x.field, x.a)
		}
		if w.MaxUpdate != nil && w.MaxUpdate.Value == 0 {
			v.errorf(f+".maxUpdate", "`%s.maxUpdate` is 0: the wave would never move a child", f)
		}
	}
}

func (v *validator) upstream(u *pv.Upstream) {
	if u == nil {
		v.errorf("spec.upstream", "`spec.upstream` must be set (or, pvkit's, `spec.group`)")
		return
	}
	v.upstreamAt("spec.upstream", u)
}

// upstreamAt checks an upstream reference at field (spec.upstream, or a
// grouped set's spec.group).
func (v *validator) upstreamAt(field string, u *pv.Upstream) {
	if u.Repo == "" {
		v.errorf(field+".repo", "`%s.repo` must not be empty", field)
	}
	if u.Package == "" {
		v.errorf(field+".package", "`%s.package` must not be empty", field)
	}
	if u.Revision < -1 {
		v.errorf(field+".revision", "`%s.revision` must be a published revision number (1 or more), or -1 for the branch placeholder (Porch's `main`), found %d", field, u.Revision)
	}
	for _, msg := range upstream.CheckSemver(u) {
		v.errorf(field+".semver", "%s", strings.ReplaceAll(msg, "spec.upstream", field))
	}
}

// grouped checks what a grouped set cannot have (rule package-groups):
// package names in its targets and a downstream package in its templates
// (each member names its own package).
func (v *validator) grouped(set *v1alpha2.PackageVariantSet) {
	for i, t := range set.Spec.Targets {
		field := fmt.Sprintf("spec.targets[%d]", i)
		names := func(f string, n []string) {
			if len(n) > 0 {
				v.errorf(f+".packageNames", "`%s.packageNames` cannot be set in a set with `spec.group`: each member of the group names its downstream package", f)
			}
		}
		for j, r := range t.Repositories {
			names(fmt.Sprintf("%s.repositories[%d]", field, j), r.PackageNames)
		}
		if s := t.RepositorySelector; s != nil {
			names(field+".repositorySelector", s.PackageNames)
		}
		if s := t.ObjectSelector; s != nil {
			names(field+".objectSelector", s.PackageNames)
		}
		if tpl := t.Template; tpl != nil && tpl.Downstream != nil && (tpl.Downstream.Package != nil || tpl.Downstream.PackageExpr != nil) {
			v.errorf(field+".template.downstream.package", "`%s.template.downstream.package` (and `packageExpr`) cannot be set in a set with `spec.group`: each member of the group names its downstream package", field)
		}
	}
}

func (v *validator) target(field string, t *v1alpha2.Target) {
	kinds := 0
	if t.Repositories != nil {
		kinds++
		if len(t.Repositories) == 0 {
			v.errorf(field+".repositories", "`%s.repositories` must not be an empty list", field)
		}
		for j, r := range t.Repositories {
			f := fmt.Sprintf("%s.repositories[%d]", field, j)
			if r.Name == "" {
				v.errorf(f+".name", "`%s.name` must not be empty", f)
			}
			v.packageNames(f, r.PackageNames)
		}
	}
	if s := t.RepositorySelector; s != nil {
		kinds++
		v.selector(field+".repositorySelector", &s.LabelSelector)
		v.packageNames(field+".repositorySelector", s.PackageNames)
	}
	if s := t.ObjectSelector; s != nil {
		kinds++
		f := field + ".objectSelector"
		if s.APIVersion == "" {
			v.errorf(f+".apiVersion", "`%s.apiVersion` must not be empty", f)
		}
		if s.Kind == "" {
			v.errorf(f+".kind", "`%s.kind` must not be empty", f)
		}
		v.selector(f, &s.LabelSelector)
		v.packageNames(f, s.PackageNames)
	}
	if kinds != 1 {
		v.errorf(field, "`%s` must specify exactly one of `repositories`, `repositorySelector` or `objectSelector`, found %d", field, kinds)
	}
	if t.Template != nil {
		s := listScope
		if t.Repositories == nil {
			s = objectScope
		}
		v.template(field+".template", t.Template, s)
	}
}

func (v *validator) packageNames(field string, names []string) {
	for k, n := range names {
		if n == "" {
			v.errorf(fmt.Sprintf("%s.packageNames[%d]", field, k), "`%s.packageNames[%d]` must not be empty", field, k)
		}
	}
}

func (v *validator) selector(field string, s *meta.LabelSelector) {
	for _, p := range s.Validate() {
		f := field + "." + p.Field
		v.errorf(f, "`%s` %s", f, p.Message)
	}
}

// expr compiles one expression for the validation report.
func (v *validator) expr(field string, s scope, expr *string) {
	if expr == nil {
		return
	}
	if *expr == "" {
		v.errorf(field, "`%s` must not be empty", field)
		return
	}
	key := string(rune('0'+s)) + *expr
	if !v.seen[key] {
		v.seen[key] = true
		if v.exprBytes += len(*expr); v.exprBytes > maxSetExpressionBytes {
			v.errorf(field, "`%s`: the set's distinct expressions add up to more than %d characters (%d so far); it is not compiled: use fewer, shorter expressions or split the set",
				field, maxSetExpressionBytes, v.exprBytes)
			return
		}
	}
	if _, err := v.eng.compile(s, *expr); err != nil {
		v.errorf(field, "`%s` %s", field, exprError(err))
	}
}

// oneOf checks that at most one (or, with required, exactly one) of two
// template fields is set.
func (v *validator) oneOf(field, a, b string, hasA, hasB, required bool) {
	switch {
	case hasA && hasB:
		v.errorf(field, "`%s` may specify only one of `%s` and `%s`", field, a, b)
	case required && !hasA && !hasB:
		v.errorf(field, "`%s` must specify one of `%s` or `%s`", field, a, b)
	}
}

// amount checks a count or a percent.
func (v *validator) amount(field string, a *v1alpha2.IntOrPercent) {
	switch {
	case a == nil:
	case a.Invalid != "":
		v.errorf(field, "`%s` is %s, not a count or a percent (3, \"30%%\")", field, a.Invalid)
	case a.Percent && a.Value > 100:
		v.errorf(field, "`%s` is %s, more than 100%%", field, a)
	}
}
