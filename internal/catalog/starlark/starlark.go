// Package starlark is starlark of the kpt function catalog, v0.5.0, v0.5.1
// and its main branch (they behave alike), written from its README and its
// e2e cases and examples (`tests/starlark`, `examples/starlark-*` of
// github.com/kptdev/krm-functions-catalog) on go.starlark.net and
// qri-io/starlib, the libraries the catalog's function is built on. The
// releases before (v0.3.0, v0.4.3) are the module proxy's builds
// (hack/catalog).
//
// What it does:
//   - the config is a StarlarkRun (group fn.kpt.dev, any version) with
//     `source`, the program, and optional `params`; or a ConfigMap (the core
//     group, any version) whose `data.source` is the program; no program is
//     the error "`source` must not be empty";
//   - the program runs with `ctx.resource_list` (the ResourceList as a
//     dict: `items`, `functionConfig`), `ctx.open_api` (kyaml's built-in
//     Kubernetes schema) and `ctx.environment` (the process environment);
//     `set`, top-level reassignment and recursion are allowed; `load` gives
//     starlib's modules (bsoup, encoding/base64, csv, json, yaml, geo, hash,
//     html, http, math, re, time, xlsx, zipfile) and `krmfn.star`
//     (match_gvk, match_name, match_namespace);
//   - the items it leaves are the output (kpt keeps their comments, field
//     order and files); print writes to stderr; an error is the error
//     result with the message, and exit 1.
//
// It runs as a sandboxed executable, never in process (catalog.Function
// Sandboxed): it runs the package's own program, and only a process can be
// given no network, a minimal environment and a memory bound, as kpt gives
// an image.
//
// Deliberately different: krmfn.match_gvk(r, apiVersion, kind) matches the
// object's apiVersion and kind; v0.5.x compares the whole apiVersion with
// the version of the core group, so it never matches a grouped kind
// (`apps/v1`) and every script that filters with it changes nothing.
package starlark

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"github.com/pvkit/pvkit/internal/catalog/internal/sdkproc"
	"github.com/qri-io/starlib/util"
	gostarlark "go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Run is the function as a process: a ResourceList on in, the result on
// out, print and the SDK's failure line on stderr; it returns the exit
// code.
func Run(in io.Reader, out, stderr io.Writer) int {
	prints := &lines{w: stderr}
	return sdkproc.Main(fn.ResourceListProcessorFunc(func(rl *fn.ResourceList) (bool, error) {
		if err := run(rl, prints); err != nil {
			rl.Results = fn.Results{{Message: err.Error(), Severity: fn.Error}}
			prints.end()
			return false, nil
		}
		return true, nil
	}), in, out, stderr)
}

// lines writes print's messages to stderr one per line, as kpt records
// the catalog's (no newline after the last, unless more follows).
type lines struct {
	w       io.Writer
	printed bool
}

func (l *lines) print(msg string) {
	if l.printed {
		fmt.Fprint(l.w, "\n")
	}
	fmt.Fprint(l.w, msg)
	l.printed = true
}

// end ends the last line before something else is written.
func (l *lines) end() {
	if l.printed {
		fmt.Fprint(l.w, "\n")
		l.printed = false
	}
}

// program is what the config asks to run.
type program struct {
	name, source string
}

// defaultName names a program whose config has no name (in its messages).
const defaultName = "starlark-function-run"

func readConfig(o *fn.KubeObject) (*program, error) {
	gvk := o.GroupVersionKind()
	p := &program{name: o.GetName()}
	switch {
	case o.IsEmpty():
		return nil, fmt.Errorf("FunctionConfig is missing. Expect `ConfigMap` or `StarlarkRun`")
	case gvk.Group == "" && gvk.Kind == "ConfigMap":
		data, _, err := o.NestedStringMap("data")
		if err != nil {
			return nil, err
		}
		p.source = data["source"]
	case gvk.Group == "fn.kpt.dev" && gvk.Kind == "StarlarkRun":
		var s struct {
			Source string         `json:"source"`
			Params map[string]any `json:"params"`
		}
		if err := o.As(&s); err != nil {
			return nil, err
		}
		p.source = s.Source
	default:
		return nil, fmt.Errorf("`functionConfig` must be either /v1, Kind=ConfigMap or fn.kpt.dev/v1alpha1, Kind=StarlarkRun, but we got: %v", gvk)
	}
	if p.name == "" {
		p.name = defaultName
	}
	if p.source == "" {
		return nil, fmt.Errorf("`source` must not be empty")
	}
	return p, nil
}

func run(rl *fn.ResourceList, prints *lines) error {
	p, err := readConfig(rl.FunctionConfig)
	if err != nil {
		return err
	}
	list, err := wrap(rl)
	if err != nil {
		return err
	}
	m, err := list.Map()
	if err != nil {
		return err
	}
	value, err := util.Marshal(m)
	if err != nil {
		return err
	}
	if err := execute(p, value, prints); err != nil {
		return err
	}
	items, err := unwrap(value)
	if err != nil {
		return err
	}
	rl.Items = items
	return nil
}

// wrap is the ResourceList the program sees: its items and function
// config, as the function received them.
func wrap(rl *fn.ResourceList) (*yaml.RNode, error) {
	out, err := yaml.FromMap(map[string]any{"apiVersion": kio.ResourceListAPIVersion, "kind": kio.ResourceListKind, "items": []any{}})
	if err != nil {
		return nil, err
	}
	var items []*yaml.Node
	for _, o := range rl.Items {
		n, err := yaml.Parse(o.String())
		if err != nil {
			return nil, err
		}
		items = append(items, n.YNode())
	}
	if _, err := out.Pipe(yaml.Lookup("items"), yaml.Append(items...)); err != nil {
		return nil, err
	}
	if !rl.FunctionConfig.IsEmpty() {
		fc, err := yaml.Parse(rl.FunctionConfig.String())
		if err != nil {
			return nil, err
		}
		if err := out.PipeE(yaml.SetField("functionConfig", fc)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// unwrap reads the items back from the ResourceList the program left.
func unwrap(value gostarlark.Value) (fn.KubeObjects, error) {
	v, err := util.Unmarshal(value)
	if err != nil {
		return nil, err
	}
	b, err := yaml.Marshal(v)
	if err != nil {
		return nil, err
	}
	list, err := yaml.Parse(string(b))
	if err != nil {
		return nil, err
	}
	items, err := list.Pipe(yaml.Lookup("items"))
	if err != nil {
		return nil, err
	}
	nodes, err := items.Elements()
	if err != nil {
		return nil, err
	}
	out := make(fn.KubeObjects, 0, len(nodes))
	for _, n := range nodes {
		o, err := fn.ParseKubeObject([]byte(n.MustString()))
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// execute runs the program on the ResourceList value.
func execute(p *program, list gostarlark.Value, prints *lines) error {
	thread := &gostarlark.Thread{Name: p.name, Load: load,
		Print: func(_ *gostarlark.Thread, msg string) { prints.print(msg) }}
	env, err := environment()
	if err != nil {
		return err
	}
	ctx := starlarkstruct.FromStringDict(starlarkstruct.Default, gostarlark.StringDict{
		"resource_list": list,
		"open_api":      &lazySchema{},
		"environment":   env,
	})
	opts := &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true, Recursion: true}
	_, err = gostarlark.ExecFileOptions(opts, thread, p.name, p.source, gostarlark.StringDict{"ctx": ctx})
	return err
}

// environment is the process environment as a dict.
func environment() (gostarlark.Value, error) {
	env := map[string]any{}
	for _, e := range os.Environ() {
		if k, v, ok := strings.Cut(e, "="); ok {
			env[k] = v
		}
	}
	return util.Marshal(env)
}
