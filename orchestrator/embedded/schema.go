package embedded

import (
	"context"
	"fmt"
	"sync"

	"github.com/pvkit/pvkit/config/crd"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structural "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	sigsyaml "sigs.k8s.io/yaml"
)

// schemas applies the CRDs' schemas to the PackageVariants and
// PackageVariantSets the embedded cluster stores, as an API server does
// on create and update: the OpenAPI schema (types, enums, bounds, required
// fields) and the x-kubernetes-validations CEL rules, transition rules
// with the old object. What the files give is checked more strictly
// before (pkg/variant, pvs-expand); this holds for what a run writes
// itself: a set's children, synced objects, status patches.
type schemas map[schema.GroupVersionKind]*crdSchema

type crdSchema struct {
	gk        schema.GroupKind
	validator validation.SchemaValidator
	cel       *cel.Validator
	s         *structural.Structural
}

// crdSchemas are the CRDs' schemas, read once.
var crdSchemas = sync.OnceValues(loadSchemas)

// SchemaProblems are what the CRD's schema and CEL rules say of an object
// of a kind pvkit ships a CRD for (none for any other kind), as an API
// server's messages; err when the schemas cannot be read.
func SchemaProblems(ctx context.Context, gvk schema.GroupVersionKind, obj runtime.Object) (field.ErrorList, error) {
	sch, err := crdSchemas()
	if err != nil {
		return nil, err
	}
	c, ok := sch[gvk]
	if !ok {
		return nil, nil
	}
	return c.errors(ctx, gvk, obj)
}

// loadSchemas reads the CRDs pvkit ships.
func loadSchemas() (schemas, error) {
	out := schemas{}
	for _, b := range [][]byte{crd.PackageVariants, crd.PackageVariantSets} {
		var c apiextv1.CustomResourceDefinition
		if err := sigsyaml.UnmarshalStrict(b, &c); err != nil {
			return nil, fmt.Errorf("the CRD: %w", err)
		}
		for _, v := range c.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			var props apiextensions.JSONSchemaProps
			if err := apiextv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &props, nil); err != nil {
				return nil, fmt.Errorf("CRD %s %s: %w", c.Name, v.Name, err)
			}
			st, err := structural.NewStructural(&props)
			if err != nil {
				return nil, fmt.Errorf("CRD %s %s: %w", c.Name, v.Name, err)
			}
			validator, _, err := validation.NewSchemaValidator(&props)
			if err != nil {
				return nil, fmt.Errorf("CRD %s %s: %w", c.Name, v.Name, err)
			}
			gvk := schema.GroupVersionKind{Group: c.Spec.Group, Version: v.Name, Kind: c.Spec.Names.Kind}
			out[gvk] = &crdSchema{gk: gvk.GroupKind(), validator: validator, s: st,
				cel: cel.NewValidator(st, true, celconfig.PerCallLimit)}
		}
	}
	return out, nil
}

// validate checks an object of a CRD's kind being created (old nil) or
// updated (old reads what the cluster holds, only when obj has errors), as
// the API server would: an Invalid error naming each field.
// An update is held only to what it makes worse: an error the object had
// already is not reported again (the API server's validation ratcheting),
// so that an object the files gave, checked by pvkit's own validation
// (which stalls it with its own message), can still get its finalizer and
// status.
func (s schemas) validate(ctx context.Context, gvk schema.GroupVersionKind, name string, obj runtime.Object, old func() (runtime.Object, error)) error {
	c, ok := s[gvk]
	if !ok {
		return nil
	}
	errs, err := c.errors(ctx, gvk, obj)
	if err != nil || len(errs) == 0 {
		return err
	}
	if old != nil {
		prev, err := old()
		if err != nil {
			return err
		}
		before, err := c.errors(ctx, gvk, prev)
		if err != nil {
			return err
		}
		had := map[string]bool{}
		for _, e := range before {
			had[e.Error()] = true
		}
		var worse field.ErrorList
		for _, e := range errs {
			if !had[e.Error()] {
				worse = append(worse, e)
			}
		}
		errs = worse
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(c.gk, name, errs)
	}
	return nil
}

// errors are what the schema and its CEL rules say of an object.
func (c *crdSchema) errors(ctx context.Context, gvk schema.GroupVersionKind, obj runtime.Object) (field.ErrorList, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u["apiVersion"], u["kind"] = gvk.GroupVersion().String(), gvk.Kind
	errs := validation.ValidateCustomResource(nil, u, c.validator)
	// As kube-apiserver does (measured in TestSchemasOnAnAPIServer): the
	// CEL rules are not evaluated on an object the OpenAPI checks found
	// missing a field, of a wrong type, too long, with too many items or a
	// value outside an enum, and one more error says so.
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeRequired, field.ErrorTypeTypeInvalid, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeNotSupported:
			return append(errs, field.Invalid(nil, nil, celSkipped)), nil
		}
	}
	celErrs, _ := c.cel.Validate(ctx, nil, c.s, u, nil, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...), nil
}

// celSkipped is kube-apiserver's error for CEL rules it did not evaluate.
const celSkipped = "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"
