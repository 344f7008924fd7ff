// Command pvctl is pvkit's orchestrator.
//
//	pvctl controller [flags]   reconcile PackageVariants and PackageVariantSets against Porch
//	pvctl run -f FILE...       the same reconcile on local git repositories, once
//	pvctl get | publish | approve
//	pvctl version
//
// The controller runs both reconcilers in one controller-runtime manager,
// with metrics, health and readiness probes, and optional leader election.
// It talks to Porch through the cluster's API (Porch is an aggregated API):
// PackageRevisions are watched and indexed per package and per owner (no
// namespace-wide LIST per reconcile), PackageRevisionResources are read and
// written directly, never cached.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/cli"
	"github.com/pvkit/pvkit/orchestrator/controllers/packagevariant"
	"github.com/pvkit/pvkit/orchestrator/controllers/packagevariantset"
	"github.com/pvkit/pvkit/orchestrator/store"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
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
		if err := controller(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "pvctl controller:", err)
			os.Exit(1)
		}
	case "run", "get", "publish", "approve":
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

// Scheme holds every type the controller reads or writes.
func Scheme() (*runtime.Scheme, error) { return cli.Scheme() }

func controller(args []string) error {
	fs := flag.NewFlagSet("controller", flag.ContinueOnError)
	metricsAddr := fs.String("metrics-bind-address", ":8080", "address the metrics endpoint binds to (0 disables it)")
	probeAddr := fs.String("health-probe-bind-address", ":8081", "address the health and readiness probes bind to")
	leaderElect := fs.Bool("leader-elect", false, "elect a leader, so that only one of several replicas reconciles")
	leaderID := fs.String("leader-election-id", "pvkit-controller.pvkit.dev", "the leader election lease name")
	namespace := fs.String("leader-election-namespace", "", "the namespace of the leader election lease (default: the controller's own)")
	opts := zap.Options{}
	opts.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	scheme, err := Scheme()
	if err != nil {
		return err
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: *metricsAddr},
		HealthProbeBindAddress:  *probeAddr,
		LeaderElection:          *leaderElect,
		LeaderElectionID:        *leaderID,
		LeaderElectionNamespace: *namespace,
		// No webhooks: keep Porch's port 9443 free.
		WebhookServer: webhook.NewServer(webhook.Options{Port: 0}),
		Client: client.Options{Cache: &client.CacheOptions{
			DisableFor:   []client.Object{&porchapi.PackageRevisionResources{}},
			Unstructured: true, // injected and selected objects, watched as they are met
		}},
	})
	if err != nil {
		return err
	}
	ctx := ctrl.SetupSignalHandler()
	if err := setup(ctx, mgr); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// setup registers the store's indexes and both reconcilers.
func setup(ctx context.Context, mgr ctrl.Manager) error {
	if err := store.SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	porch := &store.Porch{Client: mgr.GetClient()}
	if err := (&packagevariant.Reconciler{Client: mgr.GetClient(), Store: porch}).SetupWithManager(ctx, mgr); err != nil {
		return err
	}
	return (&packagevariantset.Reconciler{Client: mgr.GetClient(), Store: porch}).SetupWithManager(ctx, mgr)
}
