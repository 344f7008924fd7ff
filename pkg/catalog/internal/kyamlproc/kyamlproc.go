// Package kyamlproc runs a kyaml function framework processor as a catalog
// function built with kyaml's command.Build runs it: the ResourceList read
// from in, the output written to out, and on failure the error printed on
// stderr as command.Build prints it (no newline), exit 1.
package kyamlproc

import (
	"fmt"
	"io"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// Main runs p and returns the exit code.
func Main(p framework.ResourceListProcessor, in io.Reader, out, stderr io.Writer) int {
	if err := framework.Execute(p, &kio.ByteReadWriter{Reader: in, Writer: out, KeepReaderAnnotations: true}); err != nil {
		fmt.Fprintf(stderr, "%v", err)
		return 1
	}
	return 0
}
