// Command package-context is the package-context KRM function (see README.md). All of its
// logic is in pkg/packagecontext, which the orchestrator runs in-process.
package main

import (
	_ "embed"
	"os"

	"github.com/pvkit/pvkit/internal/fnmain"
	"github.com/pvkit/pvkit/pkg/packagecontext"
)

// readme is the function's README: its --help (kpt fn doc) says what it
// says.
//
//go:embed README.md
var readme string

func main() { os.Exit(fnmain.Main("package-context", readme, packagecontext.Process)) }
