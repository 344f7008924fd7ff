// Command pipeline-prepend is the pipeline-prepend KRM function (see README.md). All of its
// logic is in pkg/pipelineprepend, which the orchestrator runs in-process.
package main

import (
	"os"

	"github.com/pvkit/pvkit/internal/fnmain"
	"github.com/pvkit/pvkit/pkg/pipelineprepend"
)

func main() { os.Exit(fnmain.Main("pipeline-prepend", pipelineprepend.Process)) }
