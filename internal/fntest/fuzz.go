package fntest

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/pvkit/pvkit/internal/fnmain"
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// FuzzKptfile is the Kptfile every fuzzed package has.
const FuzzKptfile = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n"

// FuzzFunction fuzzes a function as its binary runs it: any bytes as a
// package file and any bytes as the functionConfig. It must never panic; a
// run that succeeds must write a ResourceList that a second run leaves
// unchanged. The seeds are the function's golden cases (each input file with
// the case's config) plus extra.
func FuzzFunction(f *testing.F, name string, p krm.Processor, extra ...[2]string) {
	cases, _ := filepath.Glob(filepath.Join(RepoRoot(), "functions", name, "testdata", "*"))
	for _, c := range cases {
		cfg, _ := os.ReadFile(filepath.Join(c, "fnconfig.yaml"))
		files, _ := filepath.Glob(filepath.Join(c, "input", "*.yaml"))
		for _, file := range files {
			b, _ := os.ReadFile(file)
			f.Add(b, cfg)
		}
	}
	for _, e := range extra {
		f.Add([]byte(e[0]), []byte(e[1]))
	}
	f.Fuzz(func(t *testing.T, file, config []byte) {
		items, err := krm.FilesToItems(map[string]string{"Kptfile": FuzzKptfile, "fuzz.yaml": string(file)})
		if err != nil {
			return // kpt and the orchestrator reject unparsable packages before any function runs
		}
		rl := &krm.ResourceList{Items: items}
		if fc, err := yaml.Parse(string(config)); err == nil && fc.YNode().Kind == yaml.MappingNode {
			rl.FunctionConfig = fc
		}
		in, err := rl.Bytes()
		if err != nil {
			return
		}
		var out bytes.Buffer
		if fnmain.Run(name, p, bytes.NewReader(in), &out, io.Discard) != 0 {
			return
		}
		first, err := krm.ParseResourceList(out.Bytes())
		if err != nil {
			t.Fatalf("the output is not a ResourceList: %v", err)
		}
		first.Results = nil
		again, err := first.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		var out2 bytes.Buffer
		if code := fnmain.Run(name, p, bytes.NewReader(again), &out2, io.Discard); code != 0 {
			t.Fatalf("a second run on the output failed")
		}
		second, err := krm.ParseResourceList(out2.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		second.Results = nil
		b2, _ := second.Bytes()
		if !bytes.Equal(again, b2) {
			t.Fatalf("a second run changed its own output:\n%s\n----\n%s", again, b2)
		}
	})
}
