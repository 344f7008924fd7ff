// Command testfn is a KRM function for the render tests only: its
// functionConfig's data says what to do, in this order:
//
//	label: KEY=VALUE   label every resource but the Kptfile
//	generate: NAME     add a ConfigMap NAME (no file: the runtime gives it one)
//	delete: NAME       remove the resources named NAME
//	fail: MESSAGE      report MESSAGE as an error and exit 1
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func main() {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rl, err := krm.ParseResourceList(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var data map[string]string
	if rl.FunctionConfig != nil {
		data = rl.FunctionConfig.GetDataMap()
	}
	if kv := data["label"]; kv != "" {
		k, v, _ := strings.Cut(kv, "=")
		for _, it := range rl.Items {
			if it.GetKind() != "Kptfile" {
				krm.SetField(krm.EnsureMap(krm.EnsureMap(it.YNode(), "metadata"), "labels"), k, krm.StringNode(v))
			}
		}
	}
	if name := data["generate"]; name != "" {
		rl.Items = append(rl.Items, yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "+name+"\ndata:\n  made: \"yes\"\n"))
	}
	if name := data["delete"]; name != "" {
		var kept []*yaml.RNode
		for _, it := range rl.Items {
			if it.GetName() != name {
				kept = append(kept, it)
			}
		}
		rl.Items = kept
	}
	code := 0
	if msg := data["fail"]; msg != "" {
		rl.Results = append(rl.Results, &fn.Result{Severity: fn.Error, Message: msg})
		fmt.Fprintln(os.Stderr, msg)
		code = 1
	}
	out, err := rl.Bytes()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Stdout.Write(out)
	os.Exit(code)
}
