// Command pvs-expand is the pvs-expand KRM function (see README.md). All of
// its logic is in pkg/pvsexpand, which the orchestrator runs in-process.
package main

import (
	"context"
	"os"
	"time"

	"github.com/pvkit/pvkit/internal/fnmain"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/pvsexpand"
)

// timeout bounds one run's expansion (its CEL evaluations), as the
// controller bounds one reconcile's (docs/security.md).
const timeout = 10 * time.Second

func main() {
	os.Exit(fnmain.Main("pvs-expand", func(rl *krm.ResourceList) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		pvsexpand.ProcessContext(ctx, rl)
	}))
}
