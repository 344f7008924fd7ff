package pvsexpand

import (
	"fmt"
	"strings"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
)

func (v *validator) template(field string, t *v1alpha2.PackageVariantTemplate, s scope) {
	if d := t.Downstream; d != nil {
		f := field + ".downstream"
		v.oneOf(f, "repo", "repoExpr", d.Repo != nil, d.RepoExpr != nil, false)
		v.oneOf(f, "package", "packageExpr", d.Package != nil, d.PackageExpr != nil, false)
		v.expr(f+".repoExpr", s.withoutRepository(), d.RepoExpr)
		v.expr(f+".packageExpr", s, d.PackageExpr)
	}
	if p := t.AdoptionPolicy; p != nil && *p != pv.AdoptionPolicyAdoptNone && *p != pv.AdoptionPolicyAdoptExisting {
		v.errorf(field+".adoptionPolicy", "`%s.adoptionPolicy` must be %q or %q, found %q", field, pv.AdoptionPolicyAdoptNone, pv.AdoptionPolicyAdoptExisting, *p)
	}
	if p := t.DeletionPolicy; p != nil && *p != pv.DeletionPolicyDelete && *p != pv.DeletionPolicyOrphan {
		v.errorf(field+".deletionPolicy", "`%s.deletionPolicy` must be %q or %q, found %q", field, pv.DeletionPolicyDelete, pv.DeletionPolicyOrphan, *p)
	}
	v.mapExprs(field+".labelExprs", t.LabelExprs, s)
	v.mapExprs(field+".annotationExprs", t.AnnotationExprs, s)
	if pc := t.PackageContext; pc != nil {
		f := field + ".packageContext"
		for _, k := range reservedKeys {
			if _, ok := pc.Data[k]; ok {
				v.errorf(f+".data", "`%s.data` must not contain the reserved key %q (kpt and Porch set it)", f, k)
			}
			for i, r := range pc.RemoveKeys {
				if r == k {
					v.errorf(fmt.Sprintf("%s.removeKeys[%d]", f, i), "`%s.removeKeys[%d]` must not be the reserved key %q (kpt and Porch set it)", f, i, k)
				}
			}
		}
		v.mapExprs(f+".dataExprs", pc.DataExprs, s)
		for i := range pc.RemoveKeyExprs {
			v.expr(fmt.Sprintf("%s.removeKeyExprs[%d]", f, i), s, &pc.RemoveKeyExprs[i])
		}
	}
	for i, inj := range t.Injectors {
		f := fmt.Sprintf("%s.injectors[%d]", field, i)
		v.oneOf(f, "name", "nameExpr", inj.Name != nil, inj.NameExpr != nil, true)
		v.expr(f+".nameExpr", s, inj.NameExpr)
	}
	if p := t.Pipeline; p != nil {
		v.functions(field+".pipeline.mutators", p.Mutators, s)
		v.functions(field+".pipeline.validators", p.Validators, s)
	}
}

func (v *validator) mapExprs(field string, exprs []v1alpha2.MapExpr, s scope) {
	for i, m := range exprs {
		f := fmt.Sprintf("%s[%d]", field, i)
		v.oneOf(f, "key", "keyExpr", m.Key != nil, m.KeyExpr != nil, true)
		// Neither value nor valueExpr sets the empty string, as in Porch (rule: porch-texts):
		// Porch's own serialiser drops an empty `value`.
		v.oneOf(f, "value", "valueExpr", m.Value != nil, m.ValueExpr != nil, false)
		v.expr(f+".keyExpr", s, m.KeyExpr)
		v.expr(f+".valueExpr", s, m.ValueExpr)
	}
}

func (v *validator) functions(field string, fns []v1alpha2.FunctionTemplate, s scope) {
	for i, fn := range fns {
		f := fmt.Sprintf("%s[%d]", field, i)
		v.oneOf(f, "image", "exec", fn.Image != "", fn.Exec != "", true)
		if fn.ConfigPath != "" && (len(fn.ConfigMap) > 0 || len(fn.ConfigMapExprs) > 0) {
			v.errorf(f, "`%s` may specify only one of `configMap` (or `configMapExprs`) and `configPath`", f)
		}
		v.mapExprs(f+".configMapExprs", fn.ConfigMapExprs, s)
	}
}

// exprError phrases a compile error after the field: "is not a valid
// expression: ..." for CEL's own messages, as is for pvkit's checks.
func exprError(err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, "must ") || strings.HasPrefix(msg, "is too expensive") {
		return msg
	}
	return "is not a valid expression: " + msg
}
