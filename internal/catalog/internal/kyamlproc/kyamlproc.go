// Package kyamlproc runs a kyaml function framework processor as a catalog
// function built with kyaml's command.Build runs it: the ResourceList read
// from in, the output written to out, and on failure the error on stderr,
// exit 1.
package kyamlproc

import (
	"fmt"
	"io"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// Main runs p and returns the exit code; a failure is printed as
// command.Build prints it (no newline), for a function whose main prints
// nothing more.
func Main(p framework.ResourceListProcessor, in io.Reader, out, stderr io.Writer) int {
	return run(p, in, out, stderr, "%v")
}

// MainLine is Main for a function whose main prints the error again, on
// a line (the catalog's search-replace, upsert-resource, create-setters):
// pvkit prints it once, on a line.
func MainLine(p framework.ResourceListProcessor, in io.Reader, out, stderr io.Writer) int {
	return run(p, in, out, stderr, "%v\n")
}

func run(p framework.ResourceListProcessor, in io.Reader, out, stderr io.Writer, format string) int {
	if err := framework.Execute(p, &kio.ByteReadWriter{Reader: in, Writer: out, KeepReaderAnnotations: true}); err != nil {
		fmt.Fprintf(stderr, format, err)
		return 1
	}
	return 0
}
