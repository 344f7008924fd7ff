// Package fnmain is the few lines every pvkit function binary shares: read a
// ResourceList from stdin, run the function, write the ResourceList with its
// results to stdout, print one line per error to stderr (Porch's exec
// evaluator keeps only stderr) and exit non-zero on any error result.
package fnmain

import (
	"fmt"
	"io"
	"os"

	"github.com/GoogleContainerTools/kpt-functions-sdk/go/fn"
	"github.com/pvkit/pvkit/pkg/krm"
)

// Main runs p as the process's function and returns the exit code.
func Main(name string, p krm.Processor) int {
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
