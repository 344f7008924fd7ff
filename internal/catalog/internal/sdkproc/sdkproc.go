// Package sdkproc runs a kpt function SDK processor as its process would:
// the ResourceList read from in, the SDK's output written to out even when
// the function failed, and on failure the SDK's one line on stderr.
package sdkproc

import (
	"fmt"
	"io"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// Process runs p on the ResourceList in and writes the result to out; the
// error is the one the SDK's main would print after "failed to evaluate
// function: ".
func Process(p fn.ResourceListProcessor, in io.Reader, out io.Writer) error {
	input, err := io.ReadAll(in)
	if err != nil {
		return fmt.Errorf("unable to read from stdin: %v", err)
	}
	res, err := fn.Run(p, input)
	if _, werr := out.Write(res); werr != nil && err == nil {
		err = werr
	}
	return err
}

// Main is Process with the SDK's failure line and exit code.
func Main(p fn.ResourceListProcessor, in io.Reader, out, stderr io.Writer) int {
	if err := Process(p, in, out); err != nil {
		fmt.Fprintf(stderr, "failed to evaluate function: %v", err)
		return 1
	}
	return 0
}
