// Command pvkit-catalog runs pvkit's build of the kpt catalog functions
// (internal/catalog; see README.md). One executable for every behaviour: run by
// the name of a behaviour (make catalog-functions links bin/catalog/
// set-labels-v0.2 and the others to it), named by $PVKIT_CATALOG_FUNCTION
// (pvctl's sandbox runs it through a descriptor, whose name says nothing),
// or given that name as its first argument, it is that function, reading a
// ResourceList on stdin as kpt's `--exec` and Porch's function runner give
// it.
//
//	pvkit-catalog --list     the behaviours' names, one per line
//	pvkit-catalog --config   Porch's function runner config for them
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/pvkit/pvkit/internal/catalog"
)

// FunctionEnv names the behaviour to run when the name the executable was
// run by is none.
const FunctionEnv = "PVKIT_CATALOG_FUNCTION"

func main() {
	self := filepath.Base(os.Args[0])
	if catalog.ByExecutable(self) == nil && os.Getenv(FunctionEnv) != "" {
		self = os.Getenv(FunctionEnv)
	}
	os.Exit(run(self, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(self string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	name := self
	if len(args) > 0 {
		switch args[0] {
		case "--list":
			for _, f := range catalog.Functions {
				fmt.Fprintln(stdout, f.Executable)
			}
			return 0
		case "--config":
			_, _ = stdout.Write(catalog.Config())
			return 0
		}
		if catalog.ByExecutable(self) == nil {
			name = args[0]
		}
	}
	f := catalog.ByExecutable(name)
	if f == nil {
		names := make([]string, 0, len(catalog.Functions))
		for _, f := range catalog.Functions {
			names = append(names, f.Executable)
		}
		fmt.Fprintf(stderr, "pvkit-catalog: no function %q: run it as one of %s (an executable of that name, or the name as the first argument), or with --list or --config\n",
			name, strings.Join(names, ", "))
		return 2
	}
	return f.Call(stdin, stdout, stderr)
}
