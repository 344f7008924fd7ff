// Command pvs-expand is the pvs-expand KRM function (see README.md). All of
// its logic is in pkg/pvsexpand, which the orchestrator runs in-process.
package main

import (
	"os"

	"github.com/pvkit/pvkit/internal/fnmain"
	"github.com/pvkit/pvkit/pkg/pvsexpand"
)

func main() { os.Exit(fnmain.Main("pvs-expand", pvsexpand.Process)) }
