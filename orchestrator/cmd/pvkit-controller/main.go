// Command pvkit-controller is `pvctl controller` alone: the same code
// (orchestrator/manager), the same flags, without pvctl's local commands,
// git store and embedded cluster. It is what the controller image ships
// (Dockerfile.controller), so that the image stays small; pvctl controller
// remains the way to run it from a laptop.
package main

import (
	"os"

	"github.com/pvkit/pvkit/orchestrator/manager"
	ctrl "sigs.k8s.io/controller-runtime"
)

func main() {
	os.Exit(manager.Main(ctrl.SetupSignalHandler(), os.Args[1:], os.Stdout, os.Stderr))
}
