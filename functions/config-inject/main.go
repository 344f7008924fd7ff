// Command config-inject is the config-inject KRM function (see README.md).
// All of its logic is in pkg/configinject, which the orchestrator runs
// in-process.
package main

import (
	"os"

	"github.com/pvkit/pvkit/internal/fnmain"
	"github.com/pvkit/pvkit/pkg/configinject"
)

func main() { os.Exit(fnmain.Main("config-inject", configinject.Process)) }
