package starlark

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/qri-io/starlib/bsoup"
	"github.com/qri-io/starlib/encoding/base64"
	"github.com/qri-io/starlib/encoding/csv"
	starjson "github.com/qri-io/starlib/encoding/json"
	staryaml "github.com/qri-io/starlib/encoding/yaml"
	"github.com/qri-io/starlib/geo"
	"github.com/qri-io/starlib/hash"
	"github.com/qri-io/starlib/html"
	"github.com/qri-io/starlib/http"
	"github.com/qri-io/starlib/math"
	"github.com/qri-io/starlib/re"
	"github.com/qri-io/starlib/time"
	"github.com/qri-io/starlib/util"
	"github.com/qri-io/starlib/xlsx"
	"github.com/qri-io/starlib/zipfile"
	gostarlark "go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// modules are what `load` gives, by name.
var modules = map[string]func() (gostarlark.StringDict, error){
	bsoup.ModuleName:    bsoup.LoadModule,
	base64.ModuleName:   base64.LoadModule,
	csv.ModuleName:      csv.LoadModule,
	starjson.ModuleName: func() (gostarlark.StringDict, error) { return gostarlark.StringDict{"json": starjson.Module}, nil },
	staryaml.ModuleName: staryaml.LoadModule,
	geo.ModuleName:      geo.LoadModule,
	hash.ModuleName:     hash.LoadModule,
	html.ModuleName:     html.LoadModule,
	http.ModuleName:     http.LoadModule,
	math.ModuleName:     func() (gostarlark.StringDict, error) { return gostarlark.StringDict{"math": math.Module}, nil },
	re.ModuleName:       re.LoadModule,
	time.ModuleName:     func() (gostarlark.StringDict, error) { return gostarlark.StringDict{"time": time.Module}, nil },
	xlsx.ModuleName:     xlsx.LoadModule,
	zipfile.ModuleName:  zipfile.LoadModule,
	"krmfn.star":        func() (gostarlark.StringDict, error) { return gostarlark.StringDict{"krmfn": krmfn}, nil },
}

// load gives a module by name; an unknown name gives nothing, as the
// catalog's does (load then says the module has no such member).
func load(_ *gostarlark.Thread, module string) (gostarlark.StringDict, error) {
	if m, ok := modules[module]; ok {
		return m()
	}
	return nil, nil
}

// krmfn is the catalog's helper module for matching objects.
var krmfn = &starlarkstruct.Module{Name: "krmfn", Members: gostarlark.StringDict{
	"match_gvk": matcher("match_gvk", 2, func(m yaml.ResourceMeta, args []string) bool {
		return m.APIVersion == args[0] && m.Kind == args[1]
	}),
	"match_name":      matcher("match_name", 1, func(m yaml.ResourceMeta, args []string) bool { return m.Name == args[0] }),
	"match_namespace": matcher("match_namespace", 1, func(m yaml.ResourceMeta, args []string) bool { return m.Namespace == args[0] }),
}}

// matcher is a builtin taking an object and n strings, true where match
// says the object's meta matches them.
func matcher(name string, n int, match func(yaml.ResourceMeta, []string) bool) *gostarlark.Builtin {
	return gostarlark.NewBuiltin(name, func(_ *gostarlark.Thread, b *gostarlark.Builtin, args gostarlark.Tuple, kwargs []gostarlark.Tuple) (gostarlark.Value, error) {
		var o gostarlark.Value
		strs := make([]string, n)
		ptrs := []any{&o}
		for i := range strs {
			ptrs = append(ptrs, &strs[i])
		}
		if err := gostarlark.UnpackPositionalArgs(b.Name(), args, kwargs, n+1, ptrs...); err != nil {
			return nil, err
		}
		meta, err := metaOf(o)
		if err != nil {
			return nil, err
		}
		return gostarlark.Bool(match(meta, strs)), nil
	})
}

// metaOf is an object's type and object meta.
func metaOf(o gostarlark.Value) (yaml.ResourceMeta, error) {
	v, err := util.Unmarshal(o)
	if err != nil {
		return yaml.ResourceMeta{}, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return yaml.ResourceMeta{}, fmt.Errorf("not an object: %w", err)
	}
	var meta yaml.ResourceMeta
	if err := yaml.Unmarshal(b, &meta); err != nil {
		return yaml.ResourceMeta{}, fmt.Errorf("not an object: %w", err)
	}
	return meta, nil
}

// lazySchema is ctx.open_api: kyaml's built-in Kubernetes schema, made a
// starlark value the first time a program reads it (it is large).
type lazySchema struct {
	once sync.Once
	val  gostarlark.Value
	err  error
}

var _ gostarlark.Mapping = (*lazySchema)(nil)

func (s *lazySchema) value() gostarlark.Value {
	s.once.Do(func() {
		b, err := json.Marshal(openapi.Schema())
		if err != nil {
			s.err = err
			return
		}
		var m map[string]any
		if s.err = yaml.Unmarshal(b, &m); s.err == nil {
			s.val, s.err = util.Marshal(m)
		}
	})
	if s.err != nil {
		return gostarlark.None
	}
	return s.val
}

func (s *lazySchema) String() string         { return s.value().String() }
func (s *lazySchema) Type() string           { return s.value().Type() }
func (s *lazySchema) Freeze()                { s.value().Freeze() }
func (s *lazySchema) Truth() gostarlark.Bool { return s.value().Truth() }
func (s *lazySchema) Hash() (uint32, error)  { return s.value().Hash() }
func (s *lazySchema) Get(k gostarlark.Value) (gostarlark.Value, bool, error) {
	if m, ok := s.value().(gostarlark.Mapping); ok {
		return m.Get(k)
	}
	return nil, false, s.err
}
