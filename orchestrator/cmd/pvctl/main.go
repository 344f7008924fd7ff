// Command pvctl is pvkit's orchestrator.
//
//	pvctl controller [flags]   reconcile PackageVariants and PackageVariantSets against Porch
//	pvctl run -f FILE...       the same reconcile on local git repositories, once
//	pvctl get | publish | approve
//	pvctl version
//
// The controller is orchestrator/controller; the local commands are
// orchestrator/cli.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/pvkit/pvkit/orchestrator/cli"
	"github.com/pvkit/pvkit/orchestrator/controller"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Version is set at build time (-ldflags "-X main.Version=...").
var Version = "v0.1.0-dev"

const usage = `pvctl is pvkit's orchestrator.

Usage:
  pvctl controller [flags]             reconcile PackageVariants and PackageVariantSets against Porch
` + cli.Usage + `  pvctl version                        print the version

` + cli.UsageFlags

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	switch os.Args[1] {
	case "controller":
		os.Exit(controller.Main(ctrl.SetupSignalHandler(), os.Args[2:], os.Stdout, os.Stderr))
	case "run", "plan", "get", "publish", "approve":
		os.Exit(cli.Command(context.Background(), os.Args[1], os.Args[2:], os.Stdout, os.Stderr))
	case "version":
		fmt.Println(Version)
	case "-h", "--help", "help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "pvctl: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
}
