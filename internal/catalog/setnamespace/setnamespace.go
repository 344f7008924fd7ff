// Package setnamespace is set-namespace of the kpt function catalog at its
// main branch (`unstable`), written from its README and its e2e cases
// (`tests/set-namespace`, `examples/set-namespace-*` of
// github.com/kptdev/krm-functions-catalog) on the kpt function SDK the
// catalog's function uses. The released v0.3.1 and v0.4.1 are the proxy's
// builds (hack/catalog); the main branch differs from them (origins,
// namespaceMatcher, the results).
//
// What it does, as the README and the cases show:
//   - the config: a ConfigMap's `data.namespace` (or, for the package
//     context ConfigMap `kptfile.kpt.dev`, its `data.name`) and optional
//     `data.namespaceMatcher`; or a SetNamespace (fn.kpt.dev/v1alpha1):
//     `namespace`, `namespaceMatcher`. A config error is an error result
//     naming the config object, and the function still exits 0 (as the
//     catalog's does: kpt goes on);
//   - local config is left alone;
//   - the namespace fields: a namespaced object's `metadata.namespace` (an
//     object with none counts as `default`, and is written so), a
//     Namespace's name, and, where they are set, a CRD's conversion webhook
//     service namespace, an APIService's service namespace and the
//     namespace of each subject of a RoleBinding or ClusterRoleBinding;
//   - with no matcher, every field is set to the new namespace, provided
//     the objects that came from an upstream package (kpt's
//     `internal.kpt.dev/upstream-identifier`) all came from one namespace
//     (else an error result asks for namespaceMatcher); an object with no
//     upstream origin is changed too, with a warning;
//   - with a matcher, only fields whose value, or whose object's upstream
//     namespace, is the matcher;
//   - a `config.kubernetes.io/depends-on` naming an object of the package
//     by its namespace follows the change;
//   - results: one per object matched by origin, a summary of the fields
//     changed, a summary of the depends-on annotations changed.
//
// Deliberately different: an empty package context (`kptfile.kpt.dev`)
// says "`data.name` should not be empty", as the catalog's code means to
// (its message names data.namespace, the field that ConfigMap does not
// use); the fields of CRDs, APIServices and binding
// subjects are changed only where set, as the README says (the main branch
// writes them where missing, breaking a CRD with no conversion webhook and
// a local APIService); RoleBinding subjects are changed as the README says
// (the main branch, counting only cluster-scoped objects there, skips
// them: the binding then names a service account left in the old
// namespace).
package setnamespace

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"github.com/pvkit/pvkit/internal/catalog/internal/sdkproc"
)

// Run is the function as a process: a ResourceList on in, the result on
// out, the SDK's failure line on stderr; it returns the exit code.
func Run(in io.Reader, out, stderr io.Writer) int {
	return sdkproc.Main(fn.ResourceListProcessorFunc(process), in, out, stderr)
}

const (
	packageContext = "kptfile.kpt.dev"
	dependsOn      = "config.kubernetes.io/depends-on"
	// the kinds the config may be
	configKinds = "`ConfigMap.v1` or `SetNamespace.v1alpha1.fn.kpt.dev`"
)

func process(rl *fn.ResourceList) (bool, error) {
	c, err := readConfig(rl.FunctionConfig)
	if err != nil {
		rl.Results = append(rl.Results, fn.ErrorConfigObjectResult(err, rl.FunctionConfig))
		return true, nil
	}
	rl.Results = append(rl.Results, c.transform(rl.Items)...)
	return true, nil
}

// config is what the function config asks.
type config struct {
	namespace, matcher string
}

func readConfig(o *fn.KubeObject) (*config, error) {
	switch {
	case o.IsEmpty():
		return nil, fmt.Errorf("FunctionConfig is missing. Expect %s", configKinds)
	case is(o, "", "v1", "ConfigMap"):
		data, _, err := o.NestedStringMap("data")
		if err != nil {
			return nil, err
		}
		c := &config{matcher: data["namespaceMatcher"], namespace: data["namespace"]}
		if c.namespace == "" && o.GetName() == packageContext {
			c.namespace = data["name"]
		}
		if c.namespace == "" && o.GetName() == packageContext {
			return nil, fmt.Errorf("`data.name` should not be empty")
		}
		if c.namespace == "" {
			return nil, fmt.Errorf("`data.namespace` should not be empty")
		}
		return c, nil
	case is(o, "fn.kpt.dev", "v1alpha1", "SetNamespace"):
		var s struct {
			Namespace        string `json:"namespace"`
			NamespaceMatcher string `json:"namespaceMatcher"`
		}
		if err := o.As(&s); err != nil {
			return nil, err
		}
		if s.Namespace == "" {
			return nil, fmt.Errorf("`namespace` should not be empty")
		}
		return &config{namespace: s.Namespace, matcher: s.NamespaceMatcher}, nil
	}
	return nil, fmt.Errorf("unknown functionConfig Kind=%v ApiVersion=%v, expect %s", o.GetKind(), o.GetAPIVersion(), configKinds)
}

// is says whether an object is of exactly this group, version and kind
// (the SDK's IsGVK takes an empty part for any).
func is(o *fn.KubeObject, group, version, kind string) bool {
	gvk := o.GroupVersionKind()
	return gvk.Group == group && gvk.Version == version && gvk.Kind == kind
}

// field is one namespace field: its value now, its object's upstream
// namespace ("" for the fields of cluster-scoped objects), its object, and
// how to write it.
type field struct {
	value, origin string
	object        *fn.KubeObject
	set           func(string) error
}

func (c *config) transform(items fn.KubeObjects) fn.Results {
	objects := items.WhereNot(func(o *fn.KubeObject) bool { return o.IsLocalConfig() })
	// The objects a depends-on may name, before the change.
	named := map[string]bool{}
	for _, o := range objects {
		if id := o.GetID(); id.Namespace != fn.UnknownNamespace {
			named[dependency(id)] = true
		}
	}
	origins, results, err := c.origins(objects)
	if err != nil {
		return fn.Results{fn.ErrorResult(err)}
	}
	if c.matcher == "" && len(origins) > 1 {
		return fn.Results{fn.ErrorResult(fmt.Errorf("unable to use origin `namespace` to match. expect a single upstream namespace, found %v. "+
			"please switch to use `namespaceMatcher`to specify the namespace value you want to change", origins))}
	}
	fields, err := namespaceFields(objects)
	if err != nil {
		return fn.Results{fn.ErrorResult(err)}
	}
	var old []string
	changed := 0
	for _, f := range fields {
		change := c.matcher == ""
		if !change {
			if f.origin == c.matcher {
				results = append(results, fn.GeneralResult(fmt.Sprintf("[%s] has matching origin %s", f.object.ShortString(), f.origin), fn.Info))
			}
			change = f.value == c.matcher || f.origin == c.matcher
		}
		value := f.value
		if value == "" {
			value = fn.DefaultNamespace
		}
		if value != c.namespace && change {
			old = append(old, value)
			value = c.namespace
			changed++
		}
		if value != f.value {
			if err := f.set(value); err != nil {
				return append(results, fn.ErrorResult(err))
			}
		}
	}
	msg := fmt.Sprintf("all matching namespaces are already %q. no value changed", c.namespace)
	if changed > 0 {
		msg = fmt.Sprintf("namespace %v updated to %q, %d value(s) changed", set(old), c.namespace, changed)
	}
	results = append(results, fn.GeneralResult(msg, fn.Info))
	n, oldDeps, err := c.dependencies(objects, named)
	if err != nil {
		return append(results, fn.ErrorResult(err))
	}
	msg = "all `depends-on` annotations are up-to-date. no `namespace` changed"
	if n > 0 {
		msg = fmt.Sprintf("`depends-on` annotation namespace %v updated to %q, %d value(s) changed", set(oldDeps), c.namespace, n)
	}
	return append(results, fn.GeneralResult(msg, fn.Info))
}

// set is the values sorted, each once.
func set(values []string) []string {
	slices.Sort(values)
	return slices.Compact(values)
}

// origins are the upstream namespaces of the namespaced objects that came
// from an upstream package, sorted; each object that did not is a warning.
func (c *config) origins(objects fn.KubeObjects) ([]string, fn.Results, error) {
	var out []string
	var warnings fn.Results
	for _, o := range objects {
		if !o.HasUpstreamOrigin() {
			warnings = append(warnings, fn.GeneralResult(fmt.Sprintf("%v does not have upstream origin.", o.ShortString()), fn.Warning))
			continue
		}
		if o.IsClusterScoped() {
			continue
		}
		origin, err := o.GetOriginID()
		if err != nil {
			return nil, nil, err
		}
		if origin.Namespace == fn.UnknownNamespace {
			return nil, nil, fmt.Errorf("%v is namespace-scoped, but has cluster-scoped or unknown scoepd origin %v", o.ShortString(), origin)
		}
		if !slices.Contains(out, origin.Namespace) {
			out = append(out, origin.Namespace)
		}
	}
	slices.Sort(out)
	return out, warnings, nil
}

// namespaceFields are the namespace fields: those of cluster-scoped
// objects first (a Namespace's name, a CRD's, an APIService's and a
// binding's subjects'), then namespaced objects' metadata.namespace, each
// in the objects' order.
func namespaceFields(objects fn.KubeObjects) ([]field, error) {
	var out []field
	nested := func(o *fn.SubObject, owner *fn.KubeObject, path ...string) error {
		v, found, err := o.NestedString(path...)
		if err != nil || !found {
			return err
		}
		out = append(out, field{value: v, object: owner, set: func(s string) error { return o.SetNestedString(s, path...) }})
		return nil
	}
	for _, o := range objects.Where(func(o *fn.KubeObject) bool { return o.IsClusterScoped() }) {
		var err error
		switch {
		case is(o, "", "v1", "Namespace"):
			origin, oerr := o.GetOriginID()
			if oerr != nil {
				return nil, oerr
			}
			o := o
			out = append(out, field{value: o.GetName(), origin: origin.Name, object: o, set: o.SetName})
		case is(o, "apiextensions.k8s.io", "v1", "CustomResourceDefinition"):
			err = nested(&o.SubObject, o, "spec", "conversion", "webhook", "clientConfig", "service", "namespace")
		case is(o, "apiregistration.k8s.io", "v1", "APIService"):
			err = nested(&o.SubObject, o, "spec", "service", "namespace")
		case o.GetKind() == "ClusterRoleBinding" || o.GetKind() == "RoleBinding":
			err = subjects(o, nested)
		}
		if err != nil {
			return nil, err
		}
	}
	for _, o := range objects.Where(func(o *fn.KubeObject) bool { return o.IsNamespaceScoped() }) {
		if o.GetKind() == "RoleBinding" {
			if err := subjects(o, nested); err != nil {
				return nil, err
			}
		}
		origin, err := o.GetOriginID()
		if err != nil {
			return nil, err
		}
		o := o
		out = append(out, field{value: o.GetNamespace(), origin: origin.Namespace, object: o, set: o.SetNamespace})
	}
	return out, nil
}

// subjects are a binding's subjects' namespace fields.
func subjects(o *fn.KubeObject, nested func(*fn.SubObject, *fn.KubeObject, ...string) error) error {
	for _, s := range o.GetSlice("subjects") {
		if err := nested(s, o, "namespace"); err != nil {
			return err
		}
	}
	return nil
}

// A depends-on naming a namespaced object: group/namespaces/ns/kind/name.
var namespacedDependency = regexp.MustCompile(`\A[-.\w]*/namespaces/[-.\w]*/[-.\w]*/[-.\w]*\z`)

func dependency(id *fn.ResourceIdentifier) string {
	return fmt.Sprintf("%v/namespaces/%v/%v/%v", id.Group, id.Namespace, id.Kind, id.Name)
}

// dependencies moves each depends-on naming an object of the package to
// the new namespace (with a matcher, only from that namespace).
func (c *config) dependencies(objects fn.KubeObjects, named map[string]bool) (int, []string, error) {
	n := 0
	var old []string
	for _, o := range objects {
		value := o.GetAnnotation(dependsOn)
		if value == "" || !namespacedDependency.MatchString(value) || !named[value] {
			continue
		}
		parts := strings.Split(value, "/")
		ns := parts[2]
		if ns == c.namespace || (c.matcher != "" && c.matcher != ns) {
			continue
		}
		old = append(old, ns)
		parts[2] = c.namespace
		if err := o.SetAnnotation(dependsOn, strings.Join(parts, "/")); err != nil {
			return n, old, err
		}
		n++
	}
	return n, old, nil
}
