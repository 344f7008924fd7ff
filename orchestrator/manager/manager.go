// Package manager is `pvctl controller`: both reconcilers in one
// controller-runtime manager, with metrics, health and readiness probes,
// optional leader election, Events and structured logs. It talks to Porch
// through the cluster's API (Porch is an aggregated API): PackageRevisions
// are watched and indexed per package and per owner (no namespace-wide LIST
// per reconcile), PackageRevisionResources are read and written directly,
// never cached.
//
// It links neither pvctl's commands (orchestrator/cli) nor its local
// runtime and embedded cluster (orchestrator/local); a test holds it to
// that.
//
// Leader election needs a Lease in the controller's own namespace, and
// nothing else: a Role there (config/rbac), not a ClusterRole that would
// let the controller rewrite the Leases of kube-system.
package manager

//+kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update,namespace=pvkit-system

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/observe"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/stamp"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	"github.com/pvkit/pvkit"
	"github.com/pvkit/pvkit/orchestrator/api"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/metrics"
	"github.com/pvkit/pvkit/orchestrator/reconcilers"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/remote"
	"github.com/pvkit/pvkit/orchestrator/store/porch"
	"github.com/pvkit/pvkit/pkg/pvsexpand"
	"github.com/spf13/pflag"
	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// EventSource is the component name on the Events the controller records.
const EventSource = "pvkit-controller"

const usage = `Reconcile PackageVariants and PackageVariantSets against Porch, until stopped.

Usage:
  pvctl controller [flags]

Examples:
  # In a cluster (the ServiceAccount's credentials):
  pvctl controller --leader-elect
  # From a laptop, against the current context of ~/.kube/config:
  pvctl controller --metrics-bind-address 0 --health-probe-bind-address 0
  # Another kubeconfig and context, as kubectl takes them:
  pvctl controller --kubeconfig ~/.kube/porch --context porch-dev

Flags:
`

// Options are the controller's flags.
type Options struct {
	Kubeconfig, Context        string
	MetricsAddr, ProbeAddr     string
	LeaderElect                bool
	LeaderID, LeaderElectionNS string
	ReadableKinds              string // comma-separated, see kit.ReadableKinds
	Workers                    int    // reconciles at once, per kind
	MaxChildren                int    // PackageVariants one set may have
	QPS                        float64
	Burst                      int
	ApproveByPolicy            bool   // approve drafts as Nephio's approval controller does
	MetricsSecure              bool   // serve metrics over HTTPS, to authenticated and authorized clients only
	MetricsCertDir             string // tls.crt and tls.key to serve metrics with (cert-manager's secret); "": self-signed
	WatchNamespaces            string // comma-separated; empty: every namespace
	ProvenanceKey              string // OpenSSH private key that signs drafts' provenance records
	ProvenanceAllowedSigners   string // allowed_signers file that checks them for pvkit.dev/require-provenance
	ObserveInterval            time.Duration
	// The health checks' other clusters (orchestrator/remote).
	HealthClusters       int
	HealthClusterTimeout time.Duration
	HealthClusterPoll    time.Duration
	HealthClusterServers string // comma-separated host patterns and networks (remote.Servers)
	HealthClusterMaxResp int64
	ReconcileTimeout     time.Duration
	PorchTimeout         time.Duration
	Shard                string // pvkit.dev/shard value this process reconciles; empty: the unlabelled objects
	zap                  zap.Options
}

// flags declares the controller's flags on fs.
func flags(fs *pflag.FlagSet, o *Options) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "path to the kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster credentials)")
	fs.StringVar(&o.Context, "context", "", "the kubeconfig context to use (default: its current context)")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", ":8443", "address the metrics endpoint binds to (0 disables it)")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", true, "serve metrics over HTTPS to clients the API server authenticates (TokenReview) and authorizes (SubjectAccessReview: get on the non-resource URL /metrics, config/rbac/metrics_reader_role.yaml); false: plain HTTP to anyone who reaches the port")
	fs.StringVar(&o.MetricsCertDir, "metrics-cert-dir", "", "a directory with tls.crt and tls.key (a cert-manager Certificate's secret, mounted: config/cert-manager) to serve metrics with, reloaded when they change; empty: a self-signed certificate")
	fs.StringVar(&o.WatchNamespaces, "watch-namespace", "", "reconcile, read and inject only in these namespaces, comma-separated (default: every namespace); bind the controller's ClusterRole with a RoleBinding in each (config/namespaced)")
	fs.StringVar(&o.Shard, "shard", "", "reconcile only the PackageVariantSets and PackageVariants labelled pvkit.dev/shard=KEY (a set's children carry its label), with its own leader election lease; empty: only those without the label. One Deployment per shard: config/sharding")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":8081", "address the health and readiness probes bind to (0 disables them)")
	fs.BoolVar(&o.LeaderElect, "leader-elect", false, "elect a leader, so that only one of several replicas reconciles")
	fs.StringVar(&o.LeaderID, "leader-election-id", "", "the leader election lease name (default: pvkit-controller.pvkit.dev, or pvkit-controller-KEY.pvkit.dev with --shard KEY)")
	fs.StringVar(&o.LeaderElectionNS, "leader-election-namespace", "", "the namespace of the leader election lease (default: the controller's own)")
	fs.StringVar(&o.ReadableKinds, "readable-kinds", strings.Join(kit.DefaultReadableKinds, ","),
		"the kinds pvkit may read for injection and objectSelector, comma-separated, as Kind (core group) or Kind.group; no wildcards, a Secret only when listed; the controller's role must allow list and watch on each")
	fs.IntVar(&o.MaxChildren, "max-children-per-set", pvsexpand.DefaultMaxChildren, "PackageVariants one PackageVariantSet may have; a set asking for more stalls with TooManyChildren")
	fs.IntVar(&o.Workers, "workers", 8, "variants (and, separately, sets) reconciled at once; one variant is never reconciled twice at once, and variants writing the same package take turns")
	fs.Float64Var(&o.QPS, "kube-api-qps", 0, "requests per second to the API server, client-side; 0: no client-side limit, the API server's priority and fairness decides (as in a cluster)")
	fs.IntVar(&o.Burst, "kube-api-burst", 0, "requests allowed in a burst above --kube-api-qps (default: twice --kube-api-qps)")
	fs.BoolVar(&o.ApproveByPolicy, "approve-by-policy", false, "approve the finished drafts of Ready variants that ask for it (approval.nephio.org/policy: initial or always; approval.nephio.org/delay), as Nephio's approval controller does; off by default (Nephio runs its own). Needs config/rbac/approve-by-policy.yaml")
	fs.StringVar(&o.ProvenanceKey, "provenance-key", "", "an OpenSSH private key without a passphrase (ssh-keygen -t ed25519 -N '') that signs the provenance record of every draft pvkit writes (namespace pvkit-provenance; pvctl verify and ssh-keygen -Y verify check it); empty: records are unsigned")
	fs.StringVar(&o.ProvenanceAllowedSigners, "provenance-allowed-signers", "", "an OpenSSH allowed_signers file: a draft that requires provenance (pvkit.dev/require-provenance: \"true\") is approved by policy only when its record is signed by one of these keys; empty: the record's content is checked, not its signature")
	fs.DurationVar(&o.ObserveInterval, "observe-interval", observe.DefaultObserveInterval, "how often a variant with a published revision is reconciled though nothing changes, with up to a tenth more at random (its branch's content, its health; pvkit.dev/observe-interval on a variant or set overrides it, at least 1m); 0: only when something changes")
	fs.IntVar(&o.HealthClusters, "health-clusters", remote.DefaultMaxClusters, "the most clients of other clusters held at once, for health checks that name a cluster (spec.health.clusterExpr: its kubeconfig in the Secret <cluster>-kubeconfig, key value); the least recently used is forgotten, and made again when needed")
	fs.DurationVar(&o.HealthClusterTimeout, "health-cluster-timeout", remote.DefaultTimeout, "how long one request to another cluster's API server may take (a health check that names a cluster); past it the target's health reads ClusterUnreachable")
	fs.DurationVar(&o.HealthClusterPoll, "health-cluster-poll", observe.DefaultClusterPoll, "how often a variant whose health is read from another cluster, and is not True, is read again (other clusters are polled, not watched)")
	fs.StringVar(&o.HealthClusterServers, "health-cluster-servers", "", "the API servers a kubeconfig Secret may name, comma-separated host names, *.suffix patterns and networks (10.20.0.0/16); checked on every address dialled. Empty: any server but loopback, link-local (the node's metadata service), unspecified and multicast addresses, which are allowed only when a listed network holds them; with entries, only the servers they match. A kubeconfig's proxy-url is refused unless an entry allows the proxy")
	fs.Int64Var(&o.HealthClusterMaxResp, "health-cluster-max-response", remote.DefaultMaxResponse, "the most bytes of one answer read from another cluster's API server; an answer past it is cut, and the target's health says so")
	fs.DurationVar(&o.ReconcileTimeout, "reconcile-timeout", kit.DefaultReconcileTimeout, "the most one reconcile of a set or a variant may take; past it its steps stop, Ready=False DeadlineExceeded says what was under way, and it is retried (the worker is free for the others)")
	fs.DurationVar(&o.PorchTimeout, "porch-timeout", porch.DefaultRequestTimeout, "the most one request to Porch may take (a write renders the package through Porch's function runner); past it the request fails naming it, and the reconcile is retried. Less than --reconcile-timeout")
	// The logging flags are zap's (Go flag style), carried over as --zap-*.
	gofs := flag.NewFlagSet("zap", flag.ContinueOnError)
	o.zap.BindFlags(gofs)
	fs.AddGoFlagSet(gofs)
}

// Main runs `pvctl controller ARGS` and returns the exit code: 0 after a
// clean stop or for --help and --version, 2 for a usage error (the error
// and a one-line hint, not the whole help), 1 for any other failure.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var o Options
	// Errors are logged without a stack trace (a missing kubeconfig is no
	// crash); a panic still has one; --zap-stacktrace-level changes it.
	o.zap.StacktraceLevel = zapcore.PanicLevel
	var version bool
	fs := pflag.NewFlagSet("pvctl controller", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	flags(fs, &o)
	fs.BoolVar(&version, "version", false, "print the version and exit")
	fs.SortFlags = false
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			fmt.Fprint(stdout, fs.FlagUsages())
			return 0
		}
		fmt.Fprintf(stderr, "pvctl controller: %v\nRun 'pvctl controller --help' for the flags.\n", err)
		return 2
	}
	if version {
		fmt.Fprintln(stdout, pvkit.Version())
		return 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "pvctl controller: unexpected argument %q\nRun 'pvctl controller --help' for the flags.\n", fs.Arg(0))
		return 2
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.zap)))
	ctrl.Log.WithName("setup").Info("pvkit-controller", "version", pvkit.Version())
	if err := Run(ctx, o); err != nil {
		fmt.Fprintln(stderr, "pvctl controller:", err)
		return 1
	}
	return 0
}

// RESTConfig is the cluster the flags name, as kubectl finds it: the
// kubeconfig file (--kubeconfig, else $KUBECONFIG, else ~/.kube/config) and
// its context (--context, else the current one); with neither flag nor file,
// the in-cluster credentials.
func RESTConfig(kubeconfig, context string) (*rest.Config, error) {
	if kubeconfig == "" && context == "" {
		return ctrl.GetConfig()
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	return cfg, nil
}

// RateLimit sets the client-side rate limit: qps > 0 limits requests to
// qps a second (burst, default 2*qps, above it); qps 0 leaves the limit to
// the API server's priority and fairness, as controller-runtime does for
// in-cluster credentials. Without it, credentials from a kubeconfig file
// would get client-go's default of 5 requests a second per resource: a fan-out to 50
// repositories needs about 300.
func RateLimit(cfg *rest.Config, qps float64, burst int) {
	if qps <= 0 {
		cfg.QPS, cfg.Burst = -1, 0
		return
	}
	if burst <= 0 {
		burst = int(2 * qps)
	}
	cfg.QPS, cfg.Burst = float32(qps), burst
}

// Run runs the controller until ctx is done.
func Run(ctx context.Context, o Options) error {
	kinds, err := kit.ParseReadableKinds(strings.Split(o.ReadableKinds, ","))
	if err != nil {
		return fmt.Errorf("--readable-kinds: %w", err)
	}
	if o.Workers < 1 || o.Workers > MaxWorkers {
		return fmt.Errorf("--workers: %d is not between 1 and %d", o.Workers, MaxWorkers)
	}
	if o.MaxChildren < 1 {
		return fmt.Errorf("--max-children-per-set: %d, want 1 or more", o.MaxChildren)
	}
	if _, err := ParseNamespaces(o.WatchNamespaces); err != nil {
		return err
	}
	shard, err := kit.ParseShard(o.Shard)
	if err != nil {
		return err
	}
	if o.QPS < 0 || o.Burst < 0 {
		return fmt.Errorf("--kube-api-qps and --kube-api-burst: %v and %d, want 0 or more", o.QPS, o.Burst)
	}
	if err := checkCertDir(o); err != nil {
		return err
	}
	servers, err := remote.ParseServers(strings.Split(o.HealthClusterServers, ","))
	if err != nil {
		return err
	}
	if o.ReconcileTimeout < 10*time.Second || o.PorchTimeout < time.Second || o.PorchTimeout >= o.ReconcileTimeout {
		return fmt.Errorf("--reconcile-timeout %s and --porch-timeout %s: want a reconcile of at least 10s, a request of at least 1s, and the request less than the reconcile", o.ReconcileTimeout, o.PorchTimeout)
	}
	if o.HealthClusterMaxResp < 1<<16 {
		return fmt.Errorf("--health-cluster-max-response: %d, want at least 65536 (an API server's discovery answers are larger)", o.HealthClusterMaxResp)
	}
	prov, err := stamp.NewProvenance("controller", o.ProvenanceKey, o.ProvenanceAllowedSigners)
	if err != nil {
		return err
	}
	cfg, err := RESTConfig(o.Kubeconfig, o.Context)
	if err != nil {
		return err
	}
	RateLimit(cfg, o.QPS, o.Burst)
	cfg.UserAgent = UserAgent(shard)
	mgr, err := NewManager(cfg, o)
	if err != nil {
		return err
	}
	if err := Setup(ctx, mgr, reconcilers.Options{Kinds: kinds, Workers: o.Workers, MaxChildren: o.MaxChildren, ApproveByPolicy: o.ApproveByPolicy,
		Provenance: prov, ObserveInterval: o.ObserveInterval, Shard: shard, ReconcileTimeout: o.ReconcileTimeout, PorchTimeout: o.PorchTimeout,
		Clusters: &remote.Clusters{Secrets: mgr.GetAPIReader(), Options: remote.Options{MaxClusters: o.HealthClusters, Timeout: o.HealthClusterTimeout,
			MaxResponse: o.HealthClusterMaxResp, Servers: servers}},
		ClusterPoll: o.HealthClusterPoll}); err != nil {
		return err
	}
	ctrl.Log.WithName("setup").Info("starting", "version", pvkit.Version(), "readableKinds", kinds.String(), "workers", o.Workers, "maxChildrenPerSet", o.MaxChildren,
		"approveByPolicy", o.ApproveByPolicy, "watchNamespaces", o.WatchNamespaces, "shard", shard.Name(), "leaseName", LeaseName(o), "metricsSecure", o.MetricsSecure, "provenanceSigned", prov.Sign != nil, "healthClusterServers", servers.String())
	return mgr.Start(ctx)
}

// NewManager builds the manager: the orchestrator's scheme, metrics,
// probes, leader election, no webhooks, and a cache that leaves
// PackageRevisionResources out and takes injected and selected kinds as
// unstructured objects.
func NewManager(cfg *rest.Config, o Options) (ctrl.Manager, error) {
	scheme, err := api.Scheme()
	if err != nil {
		return nil, err
	}
	namespaces, err := ParseNamespaces(o.WatchNamespaces)
	if err != nil {
		return nil, err
	}
	shard, err := kit.ParseShard(o.Shard)
	if err != nil {
		return nil, err
	}
	var byNamespace map[string]cache.Config
	for _, ns := range namespaces {
		if byNamespace == nil {
			byNamespace = map[string]cache.Config{}
		}
		byNamespace[ns] = cache.Config{}
	}
	metricsOpts := metricsserver.Options{BindAddress: o.MetricsAddr}
	if o.MetricsSecure {
		// controller-runtime's secure metrics, as kubebuilder scaffolds
		// them: HTTPS (a self-signed certificate unless one is mounted), a
		// bearer token the API server authenticates, and a
		// SubjectAccessReview for get on /metrics.
		metricsOpts.SecureServing = true
		metricsOpts.FilterProvider = filters.WithAuthenticationAndAuthorization
		// A certificate given (cert-manager's): controller-runtime serves it
		// and reloads it when the secret's files change.
		metricsOpts.CertDir, metricsOpts.CertName, metricsOpts.KeyName = o.MetricsCertDir, "tls.crt", "tls.key"
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsOpts,
		Cache:                   CacheOptions(byNamespace, shard),
		HealthProbeBindAddress:  o.ProbeAddr,
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        LeaseName(o),
		LeaderElectionNamespace: o.LeaderElectionNS,
		// A stopping leader gives the Lease back (the process ends when the
		// manager stops, so nothing runs after), so that a rollout's new
		// leader takes over at once rather than after the lease duration.
		LeaderElectionReleaseOnCancel: true,
		// No webhooks: keep Porch's port 9443 free.
		WebhookServer: webhook.NewServer(webhook.Options{Port: 0}),
		Client: client.Options{Cache: &client.CacheOptions{
			DisableFor:   []client.Object{&porchapi.PackageRevisionResources{}},
			Unstructured: true, // injected and selected objects, watched as they are met
		}},
	})
	if err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("informers", CacheSynced(mgr.GetCache())); err != nil {
		return nil, err
	}
	return mgr, nil
}

// CacheOptions are the informers' options: the namespaces (nil: all), and
// for sets and variants the shard's label selector, sent to the API server
// with every LIST and WATCH (another shard's objects never reach this
// process, its cache or its work queues).
func CacheOptions(namespaces map[string]cache.Config, shard *kit.Shard) cache.Options {
	sel := shard.Selector()
	return cache.Options{DefaultNamespaces: namespaces, ByObject: map[client.Object]cache.ByObject{
		&pvapi.PackageVariant{}:     {Label: sel},
		&pvsapi.PackageVariantSet{}: {Label: sel},
	}}
}

// UserAgent is the controller's user agent: its version and its shard, so
// that an API server's audit log says which shard made each request
// ("shard/-": the unlabelled one).
func UserAgent(shard *kit.Shard) string {
	key := shard.Key
	if key == "" {
		key = "-"
	}
	return fmt.Sprintf("pvkit-controller/%s (%s/%s) shard/%s", pvkit.Version(), runtime.GOOS, runtime.GOARCH, key)
}

// LeaseName is the leader election Lease's name: --leader-election-id, or
// one per shard (each shard elects its own leader).
func LeaseName(o Options) string {
	switch {
	case o.LeaderID != "":
		return o.LeaderID
	case o.Shard != "":
		return "pvkit-controller-" + o.Shard + ".pvkit.dev"
	}
	return "pvkit-controller.pvkit.dev"
}

// ParseNamespaces reads --watch-namespace: namespace names, comma-separated,
// each a DNS label, none twice; empty is every namespace (nil).
func ParseNamespaces(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var out []string
	for _, ns := range strings.Split(list, ",") {
		ns = strings.TrimSpace(ns)
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return nil, fmt.Errorf("--watch-namespace: %q is not a namespace name: %s", ns, strings.Join(errs, "; "))
		}
		if slices.Contains(out, ns) {
			return nil, fmt.Errorf("--watch-namespace: %q is named twice", ns)
		}
		out = append(out, ns)
	}
	slices.Sort(out)
	return out, nil
}

// CacheSynced is the readiness check: ready once the informer caches have
// synced (a rollout waits for a replica that can reconcile). Every replica
// runs the caches, the leader and the standbys alike: a standby is ready
// too, and takes over without a cold start; which one leads is the Lease's
// holderIdentity (kubectl -n pvkit-system get lease).
func CacheSynced(c interface{ WaitForCacheSync(context.Context) bool }) healthz.Checker {
	return func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), 100*time.Millisecond)
		defer cancel()
		if !c.WaitForCacheSync(ctx) {
			return errors.New("the informer caches have not synced yet")
		}
		return nil
	}
}

// MaxWorkers bounds --workers: Porch serialises writes per package and
// serves a few dozen requests at once; more workers only queue there.
const MaxWorkers = 64

// Setup registers the store's indexes, pvkit's metrics (package metrics)
// and both reconcilers on the manager's client, reader, Porch store and
// Event recorder, with what o says of the rest (the kinds they may read,
// their number of workers, the bound on a set's children, approval by
// policy, provenance, the observation interval).
func Setup(ctx context.Context, mgr ctrl.Manager, o reconcilers.Options) error {
	if err := porch.SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	m, err := metrics.New(crmetrics.Registry, mgr.GetClient())
	if err != nil {
		return fmt.Errorf("registering pvkit's metrics: %w", err)
	}
	// Every request to Porch is bounded (--porch-timeout); the manager's
	// watches are not (they are long-lived, on the manager's own clients).
	porch := &porch.Store{Client: porch.Bounded(m.Porch(mgr.GetClient()), o.PorchTimeout), Reader: porch.BoundedReader(mgr.GetAPIReader(), o.PorchTimeout)}
	m.FailingRepositories(func() []metrics.RepositoryFailure {
		var out []metrics.RepositoryFailure
		for _, f := range porch.FailingRepositories() {
			out = append(out, metrics.RepositoryFailure{Namespace: f.Namespace, Repository: f.Repository, Since: f.Since})
		}
		return out
	})
	o.Client, o.Reader, o.Store, o.Recorder, o.Metrics = mgr.GetClient(), mgr.GetAPIReader(), porch, mgr.GetEventRecorderFor(EventSource), m
	pv, pvs := reconcilers.New(o)
	if err := pv.SetupWithManager(ctx, mgr); err != nil {
		return err
	}
	return pvs.SetupWithManager(ctx, mgr)
}

// checkCertDir refuses --metrics-cert-dir without HTTPS, or naming a
// directory without a readable tls.crt and tls.key.
func checkCertDir(o Options) error {
	if o.MetricsCertDir == "" {
		return nil
	}
	if !o.MetricsSecure {
		return fmt.Errorf("--metrics-cert-dir %s goes with --metrics-secure (HTTPS): plain HTTP serves no certificate", o.MetricsCertDir)
	}
	for _, f := range []string{"tls.crt", "tls.key"} {
		if _, err := os.Stat(filepath.Join(o.MetricsCertDir, f)); err != nil {
			return fmt.Errorf("--metrics-cert-dir: %w (mount the Certificate's secret there: config/cert-manager)", err)
		}
	}
	return nil
}
