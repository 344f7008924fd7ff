// Command package-context is the package-context KRM function (see README.md). All of its
// logic is in pkg/packagecontext, which the orchestrator runs in-process.
package main

import (
	"os"

	"github.com/pvkit/pvkit/internal/fnmain"
	"github.com/pvkit/pvkit/pkg/packagecontext"
)

func main() { os.Exit(fnmain.Main("package-context", packagecontext.Process)) }
