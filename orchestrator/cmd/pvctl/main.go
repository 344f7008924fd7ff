// Command pvctl is pvkit's orchestrator.
//
//	pvctl controller [flags]   reconcile PackageVariants and PackageVariantSets against Porch
//	pvctl run -f FILE...       the same reconcile on local git repositories, once
//	pvctl plan | get | diff | pull | publish | propose | approve | reject | del | propose-delete
//	pvctl status | events      the fleet at a glance: the last run's, or a cluster's (--kubeconfig)
//	pvctl release | stop-porch-controllers   uninstall pvkit's controller; stop Porch's before installing it
//	pvctl completion bash|zsh|fish|powershell
//	pvctl version
//
// The controller is orchestrator/manager; the other commands are
// orchestrator/cli, on the local runtime of orchestrator/local. Exit codes
// (rule: pvctl-exit): 0 done, 1 not ready or failed, 2 usage or input
// error, 3 plan would change something or run held a removal back, 4
// stalled.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/pvkit/pvkit/orchestrator/fnruntime"

	"github.com/pvkit/pvkit"
	"github.com/pvkit/pvkit/orchestrator/cli"
	"github.com/pvkit/pvkit/orchestrator/manager"
	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
)

func main() {
	// Started as the worker of pvkit's catalog functions (a render's), this
	// process serves them and exits (orchestrator/fnruntime).
	fnruntime.ServeCatalogIfWorker()
	// Ctrl-C (or SIGTERM) stops a local command where it is: pvctl run
	// saves what it did and says so. A second signal ends the process.
	ctx, cancel := context.WithCancelCause(context.Background())
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-signals
		cancel(cli.ErrInterrupted)
		<-signals
		os.Exit(130)
	}()
	root := cli.NewRoot(ctx, os.Stdin, os.Stdout, os.Stderr)
	root.Version = pvkit.Version() + " (commit " + pvkit.Commit() + ")"

	root.AddCommand(&cobra.Command{
		Use:                "controller [flags]",
		Short:              "Reconcile PackageVariants and PackageVariantSets against Porch, until stopped",
		DisableFlagParsing: true, // its flags are the controller's own (pvctl controller --help)
		RunE: func(_ *cobra.Command, args []string) error {
			if code := manager.Main(ctrl.SetupSignalHandler(), args, os.Stdout, os.Stderr); code != 0 {
				os.Exit(code)
			}
			return nil
		},
	}, &cobra.Command{
		Use:                "release (-n NAMESPACE | -A) [--dry-run]",
		Short:              "Before uninstalling the controller: release every revision a variant owns and every variant's finalizer; deletes nothing",
		DisableFlagParsing: true, // pvctl release --help
		RunE: func(_ *cobra.Command, args []string) error {
			if code := manager.ReleaseMain(context.Background(), args, os.Stdout, os.Stderr); code != 0 {
				os.Exit(code)
			}
			return nil
		},
	}, &cobra.Command{
		Use:                "stop-porch-controllers [--dry-run]",
		Short:              "Before installing the controller: stop Porch's own PackageVariant and PackageVariantSet controllers",
		DisableFlagParsing: true, // pvctl stop-porch-controllers --help
		RunE: func(_ *cobra.Command, args []string) error {
			if code := manager.StopPorchControllersMain(context.Background(), args, os.Stdout, os.Stderr); code != 0 {
				os.Exit(code)
			}
			return nil
		},
	}, &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run:   func(*cobra.Command, []string) { fmt.Printf("%s (commit %s)\n", pvkit.Version(), pvkit.Commit()) },
	})
	os.Exit(cli.Execute(root, os.Stderr))
}
