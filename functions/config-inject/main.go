// Command config-inject is the config-inject KRM function (see README.md).
// All of its logic is in pkg/configinject, which the orchestrator runs
// in-process.
package main

import (
	_ "embed"
	"os"

	"github.com/pvkit/pvkit/internal/fnmain"
	"github.com/pvkit/pvkit/pkg/configinject"
)

// readme is the function's README: its --help (kpt fn doc) says what it
// says.
//
//go:embed README.md
var readme string

func main() { os.Exit(fnmain.Main("config-inject", readme, configinject.Process)) }
