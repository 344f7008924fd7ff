// Package commonmeta is set-labels v0.1.x and set-annotations v0.1.x of the
// kpt function catalog: labels or annotations put at kustomize's common
// field specs (`commonLabels`, `commonAnnotations`) plus the config's own,
// on every object, local config included. Written from the functions'
// READMEs and the catalog's e2e cases; the field specs are kustomize's
// documented defaults, applied with kustomize's label and annotation filters
// (the library the functions are built on).
//
// Behaviour, as the catalog's cases show it:
//   - function config: a ConfigMap (`v1`, its `data`), or `SetLabels` /
//     `SetAnnotations` (and the legacy `SetLabelConfig` /
//     `SetAnnotationConfig`) of `fn.kpt.dev/v1alpha1` with `labels` /
//     `annotations` and `additionalLabelFields` / `additionalAnnotationFields`
//     (the deprecated `fieldSpecs` is read as those; both is an error);
//     anything else, or no labels, is an error;
//   - keys already there keep their place; new keys are added in sorted
//     order;
//   - set-annotations at `unstable` (the catalog's main branch, after
//     v0.1.4) reports each field it set ("set annotations: {...}", with the
//     field path and the object's file); v0.1.x reports nothing on success.
//
// Deliberate difference: v0.1.x round-tripped every object through JSON
// (kustomize's ApplyToJSON), which drops the quoting style of strings the
// function did not touch (kpt copies comments and field order back, not
// styles). pvkit edits the YAML in place and leaves what it does not set as
// it was. The v0.1.x executables cannot be built here (the module proxy
// refuses them), so the difference is read from the code path, not measured.
package commonmeta

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/api/filters/annotations"
	"sigs.k8s.io/kustomize/api/filters/labels"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// fnGroup is the function config group and version.
const fnGroup = "fn.kpt.dev/v1alpha1"

// Function is one of the two functions at one behaviour.
type Function struct {
	what       string // "label" or "annotation"
	kind       string // the config kind: SetLabels, SetAnnotations
	legacy     string // the legacy config kind
	extra      string // the config's field of further field specs
	wrongKind  string // the error for another config kind
	defaults   types.FsSlice
	reportEach bool // results per field set (set-annotations unstable)
	// spacedSeverity: stderr says "[error] : ...", as the kyaml framework
	// of the v0.1.x releases printed it (the main branch's prints "[error]: ...").
	spacedSeverity bool
}

// SetLabels is set-labels v0.1.x.
var SetLabels = &Function{what: "label", kind: "SetLabels", legacy: "SetLabelConfig", extra: "additionalLabelFields",
	wrongKind: "`functionConfig` must be either a `ConfigMap` or `SetLabels`", defaults: mustSpecs(commonLabels), spacedSeverity: true}

// SetAnnotations is set-annotations v0.1.x.
var SetAnnotations = &Function{what: "annotation", kind: "SetAnnotations", legacy: "SetAnnotationConfig", extra: "additionalAnnotationFields",
	wrongKind: "`functionConfig` must be a `ConfigMap` or `SetAnnotations`", defaults: mustSpecs(commonAnnotations), spacedSeverity: true}

// SetAnnotationsUnstable is set-annotations at the catalog's main branch:
// v0.1.x that reports each field it sets.
var SetAnnotationsUnstable = &Function{what: "annotation", kind: "SetAnnotations", legacy: "SetAnnotationConfig", extra: "additionalAnnotationFields",
	wrongKind: SetAnnotations.wrongKind, defaults: SetAnnotations.defaults, reportEach: true}

// Run is the function as a process: a ResourceList on in, the result on out,
// the error results on stderr; it returns the exit code.
func (f *Function) Run(in io.Reader, out, stderr io.Writer) int {
	err := framework.Execute(framework.ResourceListProcessorFunc(f.process),
		&kio.ByteReadWriter{Reader: in, Writer: out, KeepReaderAnnotations: true})
	if err != nil {
		msg := err.Error()
		if f.spacedSeverity {
			msg = strings.Replace(msg, "[error]: ", "[error] : ", 1)
		}
		fmt.Fprint(stderr, msg)
		return 1
	}
	return 0
}

// config is the function config of either function.
type config struct {
	Labels                     map[string]string `json:"labels,omitempty"`
	Annotations                map[string]string `json:"annotations,omitempty"`
	FieldSpecs                 []types.FieldSpec `json:"fieldSpecs,omitempty"`
	AdditionalLabelFields      []types.FieldSpec `json:"additionalLabelFields,omitempty"`
	AdditionalAnnotationFields []types.FieldSpec `json:"additionalAnnotationFields,omitempty"`
}

func (f *Function) process(rl *framework.ResourceList) error {
	values, specs, err := f.configure(rl.FunctionConfig)
	if err != nil {
		err = fmt.Errorf("failed to configure function: %w", err)
	} else if err = f.apply(rl, values, specs); err != nil {
		err = fmt.Errorf("failed to run function: failed to run transformer: %w", err)
	}
	if err != nil {
		rl.Results = framework.Results{{Message: err.Error(), Severity: framework.Error}}
		return rl.Results
	}
	return nil
}

// configure reads the function config: the values to set and the field
// specs to set them at (the config's, then the defaults).
func (f *Function) configure(cfg *yaml.RNode) (map[string]string, types.FsSlice, error) {
	var values map[string]string
	var extra types.FsSlice
	meta, _ := cfg.GetMeta()
	switch {
	case meta.APIVersion == "v1" && meta.Kind == "ConfigMap":
		values = cfg.GetDataMap()
	case meta.APIVersion == fnGroup && (meta.Kind == f.kind || meta.Kind == f.legacy):
		s, err := cfg.String()
		if err != nil {
			return nil, nil, fmt.Errorf("cannot get YAML from RNode: %w", err)
		}
		var c config
		if err := sigsyaml.Unmarshal([]byte(s), &c); err != nil {
			return nil, nil, fmt.Errorf("failed to unmarshal config %#v: %w", s, err)
		}
		values, extra = c.Labels, c.AdditionalLabelFields
		if f.what == "annotation" {
			values, extra = c.Annotations, c.AdditionalAnnotationFields
		}
		if extra != nil && c.FieldSpecs != nil {
			return nil, nil, fmt.Errorf("`fieldSpecs` has been deprecated, please rename it to `%s`", f.extra)
		}
		if extra == nil {
			extra = c.FieldSpecs
		}
	default:
		return nil, nil, fmt.Errorf("%s", f.wrongKind)
	}
	if len(values) == 0 {
		return nil, nil, fmt.Errorf("input %s list cannot be empty", f.what)
	}
	return values, append(append(types.FsSlice{}, extra...), f.defaults...), nil
}

// setKey is where a result's values were set.
type setKey struct {
	file  string
	index int
	field string
}

// apply sets the values on every object and, for reportEach, records what
// it set where.
func (f *Function) apply(rl *framework.ResourceList, values map[string]string, specs types.FsSlice) error {
	set := map[setKey]map[string]string{}
	for _, r := range rl.Items {
		file, index, _ := kioutil.GetFileAnnotations(r)
		i, _ := strconv.Atoi(index)
		track := func(key, value, _ string, node *yaml.RNode) {
			k := setKey{file: file, index: i, field: strings.Join(node.FieldPath(), ".")}
			if set[k] == nil {
				set[k] = map[string]string{}
			}
			set[k][key] = value
		}
		var err error
		if f.what == "label" {
			_, err = labels.Filter{Labels: values, FsSlice: specs}.Filter([]*yaml.RNode{r})
		} else {
			flt := annotations.Filter{Annotations: values, FsSlice: specs}
			flt.WithMutationTracker(track)
			_, err = flt.Filter([]*yaml.RNode{r})
		}
		if err != nil {
			return err
		}
	}
	if !f.reportEach {
		return nil
	}
	if len(set) == 0 {
		rl.Results = framework.Results{{Message: "no annotations applied"}}
		return nil
	}
	keys := make([]setKey, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		x, y := keys[a], keys[b]
		if x.file != y.file {
			return x.file < y.file
		}
		if x.index != y.index {
			return x.index < y.index
		}
		return x.field < y.field
	})
	for _, k := range keys {
		b, err := json.Marshal(set[k])
		if err != nil {
			return err
		}
		rl.Results = append(rl.Results, &framework.Result{Message: fmt.Sprintf("set annotations: %s", b),
			Field: &framework.Field{Path: k.field}, File: &framework.File{Path: k.file, Index: k.index}})
	}
	return nil
}
