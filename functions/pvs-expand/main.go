// Command pvs-expand is the pvs-expand KRM function (see README.md). All of
// its logic is in pkg/pvsexpand, which the orchestrator runs in-process.
package main

import (
	"context"
	_ "embed"
	"os"
	"time"

	"github.com/pvkit/pvkit/internal/fnmain"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/pvsexpand"
)

// timeout bounds one run's expansion (its CEL evaluations), as the
// controller bounds one reconcile's (docs/security.md).
const timeout = 10 * time.Second

// readme is the function's README: its --help (kpt fn doc) says what it
// says.
//
//go:embed README.md
var readme string

func main() {
	os.Exit(fnmain.Main("pvs-expand", readme, func(rl *krm.ResourceList) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		pvsexpand.ProcessContext(ctx, rl)
	}))
}
