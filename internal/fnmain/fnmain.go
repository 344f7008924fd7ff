// Package fnmain is the few lines every pvkit function binary shares: read a
// ResourceList from stdin, run the function, write the ResourceList with its
// results to stdout, print one line per error to stderr (Porch's exec
// evaluator keeps only stderr) and exit non-zero on any error result.
package fnmain

import (
	"fmt"
	"io"
	"os"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Main runs p as the process's function and returns the exit code; with
// --help (or -h) it prints the usage its README gives (Help) instead, and
// reads nothing.
func Main(name, readme string, p krm.Processor) int {
	if wantsHelp(os.Args[1:]) {
		text, err := Help(name, readme)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: error: %v\n", name, err)
			return 1
		}
		fmt.Fprint(os.Stdout, text)
		return 0
	}
	return Run(name, p, os.Stdin, os.Stdout, os.Stderr)
}

// Run runs p over in, writing the output ResourceList to out and error lines
// to errOut. It returns 0 on success and 1 when the input cannot be read or
// the function reported an error.
func Run(name string, p krm.Processor, in io.Reader, out, errOut io.Writer) int {
	data, err := io.ReadAll(in)
	if err != nil {
		fmt.Fprintf(errOut, "%s: error: failed to read stdin: %v\n", name, err)
		return 1
	}
	rl, err := krm.ParseResourceList(data)
	if err != nil {
		fmt.Fprintf(errOut, "%s: error: %v\n", name, err)
		return 1
	}
	before := len(rl.Results)
	p(rl)
	for _, it := range rl.Items {
		dropRunID(it)
	}
	b, err := rl.Bytes()
	if err != nil {
		fmt.Fprintf(errOut, "%s: error: failed to write the output ResourceList: %v\n", name, err)
		return 1
	}
	if _, err := out.Write(b); err != nil {
		fmt.Fprintf(errOut, "%s: error: failed to write stdout: %v\n", name, err)
		return 1
	}
	code := 0
	for _, r := range rl.Results[before:] {
		if r.Severity == fn.Error {
			fmt.Fprintf(errOut, "%s: %s\n", name, krm.Line(r))
			code = 1
		}
	}
	return code
}

// dropRunID removes the id annotation kpt sets on every item for one run.
// kpt (kyaml's FunctionFilter) uses it only to copy comments and field order
// from its input onto the output: it matches list entries by index, so
// comments land on the wrong entries when a function inserts entries, and it
// turns folded scalars into quoted ones. pvkit's functions keep comments and
// field order themselves, so their output is written as they produced it.
func dropRunID(item *yaml.RNode) {
	ann := krm.Lookup(item.YNode(), "metadata", "annotations")
	krm.RemoveField(ann, kioutil.IdAnnotation)
	krm.RemoveField(ann, kioutil.LegacyIdAnnotation)
}
