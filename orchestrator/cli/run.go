package cli

// pvctl run and pvctl plan: one command, its options in runFlags; plan is
// run --dry-run.

import (
	"context"
	"errors"
	"fmt"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/stamp"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/local"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/pvkit/pvkit/pkg/pvsexpand"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// runFlags are pvctl run's (and plan's) options.
type runFlags struct {
	plan              bool // the command is plan
	files             []string
	output, statePath string
	prune             local.Prune
	maxChildren       int
	readable, sync    []string
	// clusters are --cluster NAME=CONTEXT (health checks' other clusters).
	clusters     []string
	render       renderFlags
	timeout      time.Duration
	dryRun, diff bool
	// cluster is plan --kubeconfig/--context: plan against a cluster.
	cluster         clusterFlags
	approveByPolicy bool
	// provenanceKey and provenanceSigners: --provenance-key and
	// --provenance-allowed-signers.
	provenanceKey, provenanceSigners string
	// now is --now: the instant the run takes as now (empty: the clock).
	now string
	// until is --until: run again at each rollout gate due before it.
	until string
}

const runLong = `Run the controllers' reconcile once against the repositories in --repos. The files
are the whole desired state: variants, sets, Repository objects (their labels are what
sets select) and the objects variants inject and sets select.

Nothing is removed without --prune: variants or sets gone from the files, children a set
no longer selects, owned drafts of an old downstream are listed under "Not removed" and
the run exits 3 (the set says RemovalHeld). A set that would lose more than half of its children (and more than one)
stalls with MassDeletion even with --prune; files that no longer give more than half of
the variants of the last run (and more than one) stop the run before it does anything.
--prune=all lifts both guards. A set may have at most --max-children-per-set children.

Exit codes: 0 every set and variant Ready; 1 not yet; 2 usage or input error; 3 a removal
held back; 4 something stalled (a paused rollout too); 5 a downstream package drifted;
130 interrupted (Ctrl-C: what the run did is saved).`

const planLong = `Print what pvctl run -f would change, and write nothing: the same reconcile, run on a
copy of the repositories (pvctl run --dry-run). --diff adds each package revision's
unified diff: a new draft against nothing, an edit or upgrade draft against the
published revision it changes.

With --kubeconfig or --context, print what pvkit's controller would do if the files were
applied to the cluster (kubectl apply: the namespace's other sets and variants stay): the
namespace's sets, variants, Repositories, package revisions and readable objects are read
into an embedded cluster and an in-memory Porch, the files applied over them, and the
controller's reconcilers run until nothing changes. Nothing is written to the cluster.
Removals are listed as held back (the controller would make them); --approve-by-policy
plans as the controller run with that flag.

Exit codes: 0 nothing would change; 3 something would change, or a removal would wait
for --prune; 4 some set or variant would stall; 1 some set or variant would not be Ready,
and no other change (each is named, as run would exit 1); 2 usage or input error;
130 interrupted.`

func runCommand(ctx context.Context, o *Options, plan bool) *cobra.Command {
	r := &runFlags{plan: plan, maxChildren: pvsexpand.DefaultMaxChildren, dryRun: plan}
	c := &cobra.Command{
		Use:   "run -f FILE|DIR|- ...",
		Short: "Reconcile PackageVariants and PackageVariantSets against local git repositories, then exit",
		Long:  runLong,
		Example: `  pvctl run -f examples/local                 # create and update; remove nothing
  pvctl run -f examples/local --prune         # also remove what the files no longer ask for
  pvctl run -f examples/local --dry-run --diff  # the plan and each package's diff; write nothing
  cat variants.yaml | pvctl run -f -`,
		Args: func(_ *cobra.Command, a []string) error {
			if len(a) > 0 {
				return usageErr("unexpected arguments %q (files go after -f)", a)
			}
			return nil
		},
		RunE: func(*cobra.Command, []string) error { return r.run(ctx, o) },
	}
	if plan {
		c.Use, c.Short, c.Long = "plan -f FILE|DIR|- ...", "Print what pvctl run would change, and write nothing (run --dry-run)", planLong
		c.Example = `  pvctl plan -f examples/local           # exit 0: nothing would change; 3: something would; 4: something is stalled
  pvctl plan -f examples/local --diff    # with the unified diff of each package revision`
	}
	r.add(c)
	// Flag values complete too.
	completeFlag(c, "prune", func() []string { return []string{"true", "false", "all"} })
	completeFlag(c, "sync", func() []string { return repoNames(o) })
	if plan { // a plan is a dry run; the flag is run's
		_ = c.Flags().MarkHidden("dry-run")
		r.cluster.add(c)
		c.Flags().Lookup("kubeconfig").Usage = "plan against a cluster instead of the local repositories: this kubeconfig file (kubectl's rules: $KUBECONFIG, ~/.kube/config when empty and --context is set)"
		c.Flags().Lookup("context").Usage = "plan against a cluster instead of the local repositories: this kubeconfig context"
		c.Flags().BoolVar(&r.approveByPolicy, "approve-by-policy", false, "with --kubeconfig or --context: plan as the controller run with --approve-by-policy")
		c.Example += "\n  pvctl plan -f fleet/ --kubeconfig ~/.kube/config -n fleet   # what the controller would do with these files"
	}
	return c
}

func (r *runFlags) add(c *cobra.Command) {
	f := c.Flags()
	f.StringArrayVarP(&r.files, "filename", "f", nil, "a YAML file, a directory of them, or - for standard input (repeatable)")
	outputFlag(c, &r.output, listOutputs, "the changes and the sets and variants (wide: messages whole; name: the sets and variants; json and yaml: a List of them, with the changes beside the items)")
	f.StringVar(&r.statePath, "state", "", "the state file (default: REPOS/"+state.File+")")
	f.Var(&r.prune, "prune", "remove what the files no longer ask for (--prune or --prune=true); --prune=all also lifts the mass-deletion guard; --prune=false, the default, removes nothing (exit 3 when something waits)")
	f.Lookup("prune").NoOptDefVal = "true"
	f.BoolVar(&r.dryRun, "dry-run", r.plan, "print what the run would change and write nothing")
	f.StringSliceVar(&r.readable, "readable-kinds", nil, "more kinds (Kind or Kind.group) variants may inject and sets may select, besides ConfigMap and the kinds of the objects in the files or applied by --sync (a Secret only when named here)")
	f.IntVar(&r.maxChildren, "max-children-per-set", r.maxChildren, "PackageVariants one PackageVariantSet may have; a set asking for more stalls with TooManyChildren")
	f.BoolVar(&r.diff, "diff", false, "with --dry-run: the unified diff of each package revision the run would change")
	f.StringArrayVar(&r.sync, "sync", nil, "REPO: apply the published packages of this repository to the embedded cluster, as ConfigSync would, so that the variants and sets they nest are reconciled in the same run (repeatable)")
	f.StringVar(&r.provenanceKey, "provenance-key", os.Getenv(ProvenanceKeyEnv), "an OpenSSH private key without a passphrase that signs the provenance record of each draft the run writes (pvctl verify --allowed-signers checks it) and every git commit it writes, as git signs one (gpg.format=ssh: git verify-commit checks it); default: $"+ProvenanceKeyEnv+", else unsigned")
	f.StringVar(&r.provenanceSigners, "provenance-allowed-signers", "", "an OpenSSH allowed_signers file: a draft that requires provenance (pvkit.dev/require-provenance: \"true\") is approved only when its record is signed by one of these keys")
	f.StringArrayVar(&r.clusters, "cluster", nil, "NAME=CONTEXT: read the objects of cluster NAME, which a health check names (spec.health.clusterExpr), through this context of your kubeconfig ($KUBECONFIG or ~/.kube/config) instead of from files annotated pvkit.dev/cluster: NAME (repeatable)")
	f.StringVar(&r.now, "now", "", "the instant the run takes as now (RFC 3339, such as 2026-11-27T18:00:00Z): a rollout's windows, deadlines and soaks are read by it; to preview a window, and in tests (default: the clock)")
	f.DurationVar(&r.timeout, "timeout", 30*time.Minute, "stop each run after this long (0: never), saving what it did; each draft's render has its own deadline (--render-timeout)")
	if !r.plan {
		f.StringVar(&r.until, "until", "", "run again when a staged rollout's next gate falls due (a soak ends, a progress deadline, a window opens or closes: status.rollout.next), as long as it falls due by this instant (RFC 3339) or this long from now (such as 2h); with --now the clock jumps to each gate instead of sleeping")
	}
	r.render.add(c)
}

// check refuses flags that do not go together, before anything is read.
func (r *runFlags) check() error {
	switch {
	case !slices.Contains(listOutputs, r.output):
		return checkOutput(r.output, listOutputs)
	case r.maxChildren < 1:
		return usageErr("--max-children-per-set: %d, want 1 or more", r.maxChildren)
	case len(r.files) == 0:
		return usageErr("run needs -f: the files are the whole desired state, so a run without them would remove every variant")
	case r.diff && !r.dryRun:
		return usageErr("--diff goes with --dry-run (pvctl plan --diff)")
	case r.plan && !r.dryRun:
		return usageErr("plan never writes: --dry-run=false goes with pvctl run")
	case r.timeout < 0:
		return usageErr("--timeout must not be negative, found %s", r.timeout)
	}
	if _, err := r.clock(); err != nil {
		return err
	}
	clusters, err := local.ParseClusters(r.clusters)
	if err != nil {
		return usageErr("%v", err)
	}
	if err := local.CheckContexts(clusters, ""); err != nil {
		return usageErr("%v", err)
	}
	if r.until != "" && r.dryRun {
		return usageErr("--until goes with a run that writes: a dry run changes nothing a gate could wait on")
	}
	if _, err := r.untilAt(time.Now()); err != nil {
		return err
	}
	return nil
}

// clock is --now as the run's clock (nil: the real one).
func (r *runFlags) clock() (kit.Clock, error) {
	if r.now == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, r.now)
	if err != nil {
		return nil, usageErr("--now %q is not an RFC 3339 instant such as 2026-11-27T18:00:00Z", r.now)
	}
	return kit.Fixed(t), nil
}

// checkFleet refuses a run that would start a fleet nobody asked for: with
// no --repos and no $PVCTL_REPOS, ./repositories must be there already (a
// run started from the wrong directory used to create a second fleet
// there, with only a warning). Naming a new directory starts one; pvctl
// publish makes one too. A plan writes nothing and is not refused.
func (r *runFlags) checkFleet(o *Options) error {
	if r.dryRun || o.ReposNamed {
		return nil
	}
	root := ReposDir("", "default")
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		return nil
	}
	wd, _ := os.Getwd()
	return usageErr("no repositories directory %s in %s, and none named: run starts a fleet only where it is told to. "+
		"Run it from the directory that holds the fleet's, name that with --repos DIR (or $PVCTL_REPOS), or name a new one with --repos to start a fleet there (pvctl publish makes one too)", root, wd)
}

// options are the run's local.RunOptions.
func (r *runFlags) options(o *Options) (local.RunOptions, error) {
	var stdin []byte
	for _, f := range r.files {
		if f == "-" {
			b, err := io.ReadAll(o.Stdin)
			if err != nil {
				return local.RunOptions{}, err
			}
			stdin = b
		}
	}
	rendering, err := r.render.options()
	if err != nil {
		return local.RunOptions{}, err
	}
	prov, err := stamp.NewProvenance("pvctl", r.provenanceKey, r.provenanceSigners)
	if err != nil {
		return local.RunOptions{}, usageErr("%v", err)
	}
	clock, _ := r.clock() // check() refused a bad one
	clusters, _ := local.ParseClusters(r.clusters)
	return local.RunOptions{Clusters: clusters, Repos: o.Repos, Files: r.files, Namespace: o.Namespace, State: r.statePath, Clock: clock,
		Prune: r.prune, DryRun: r.dryRun, Diff: r.diff, Stdin: stdin, Progress: progressWriter(o.Stderr), MaxChildren: r.maxChildren,
		ReadableKinds: r.readable, Render: rendering, Sync: r.sync, Provenance: prov}, nil
}

// run runs (or plans), prints the report, and says how it ended (rule:
// pvctl-exit).
func (r *runFlags) run(ctx context.Context, o *Options) error {
	if err := r.check(); err != nil {
		return err
	}
	do, err := r.runner(o)
	if err != nil {
		return err
	}
	rep, err := r.runUntil(ctx, o.Stderr, do)
	if err != nil {
		return err
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(o.Stderr, "warning: %s\n", w)
	}
	if err := printReport(o.Stdout, rep, r.output, o.paint()); err != nil {
		return err
	}
	return r.outcome(ctx, o, rep)
}

// runner is what run does: local.Run on the repositories, or, for plan
// --kubeconfig/--context, local.PlanCluster on the cluster.
func (r *runFlags) runner(o *Options) (func(context.Context, kit.Clock) (*local.Report, error), error) {
	if !r.cluster.set() {
		if r.approveByPolicy {
			return nil, usageErr("--approve-by-policy goes with --kubeconfig or --context: pvctl run always approves by policy")
		}
		if err := r.checkFleet(o); err != nil {
			return nil, err
		}
		opts, err := r.options(o)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, clock kit.Clock) (*local.Report, error) {
			opts.Clock = clock
			return local.Run(ctx, opts)
		}, nil
	}
	switch {
	case r.diff:
		return nil, usageErr("--diff goes with a local plan; against a cluster, plan lists the changes only")
	case len(r.sync) > 0:
		return nil, usageErr("--sync goes with a local plan; a cluster's ConfigSync applies its own")
	case r.prune != local.PruneNone:
		return nil, usageErr("--prune goes with a local plan; against a cluster, what the controller would remove is listed as held back")
	case r.statePath != "":
		return nil, usageErr("--state goes with a local plan; against a cluster, the cluster is the state")
	}
	opts, err := r.options(o) // the files, standard input and the render, as a local plan reads them
	if err != nil {
		return nil, err
	}
	c, err := ClusterClient(r.cluster.kubeconfig, r.cluster.context)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, _ kit.Clock) (*local.Report, error) {
		return local.PlanCluster(ctx, local.ClusterPlanOptions{Client: c, Namespace: o.Namespace, Files: opts.Files, Stdin: opts.Stdin,
			ReadableKinds: opts.ReadableKinds, MaxChildren: opts.MaxChildren, ApproveByPolicy: r.approveByPolicy, Render: opts.Render})
	}, nil
}

// ErrInterrupted is the cause of a context a signal cancelled (SIGINT,
// SIGTERM): the run stops where it is, saves what it did, and says so.
var ErrInterrupted = errors.New("interrupted")

// outcome is the error (and so the exit code) a report ends in.
func (r *runFlags) outcome(ctx context.Context, o *Options, rep *local.Report) error {
	if rep.Unsettled != "" && errors.Is(context.Cause(ctx), ErrInterrupted) {
		if r.dryRun {
			fmt.Fprintf(o.Stderr, "pvctl plan: interrupted; the plan is incomplete (nothing was written)\n")
		} else {
			fmt.Fprintf(o.Stderr, "pvctl run: interrupted after %s; what it did is saved, run again to go on\n", plural(len(rep.Changes), "change"))
		}
		return errStopped // exit 130 (it was 1, as a variant not Ready yet)
	}
	if rep.Unsettled != "" {
		if r.dryRun {
			fmt.Fprintf(o.Stderr, "pvctl plan: %s; the plan is incomplete (nothing was written)\n", rep.Unsettled)
		} else {
			fmt.Fprintf(o.Stderr, "pvctl run: %s; what it did is saved, run again to go on\n", rep.Unsettled)
		}
		return errNotReady
	}
	_, notReady, stalled := rep.Counts()
	failing := 0
	for _, obj := range rep.Objects {
		// A local plan only: against a cluster the controller's reading of
		// readiness (its approval rights, its watches) is not the plan's.
		if r.dryRun && !r.cluster.set() && obj.Ready != metav1.ConditionTrue && !obj.Stalled && !obj.Deleting && obj.Reason != pvapi.ReasonRemovalHeld {
			// Said, as run exits 1 on it, not "no changes" and exit 0 (issue
			// 62 #1: a set's targets whose CEL fails).
			why := obj.Reason + ": " + obj.Message
			if obj.ReconcileErr != "" && !strings.Contains(why, obj.ReconcileErr) {
				why += " (" + obj.ReconcileErr + ")"
			}
			fmt.Fprintf(o.Stderr, "pvctl plan: %s %s would not be Ready: %s\n", obj.Kind, obj.Name, why)
			failing++
		}
	}
	switch {
	case stalled > 0:
		return errStalled
	case r.dryRun && (len(rep.Changes) > 0 || len(rep.Held) > 0):
		return errWouldChange // what would change wins for a plan; the others are said above
	case failing > 0:
		return errNotReady
	case r.dryRun:
		return nil
	case notReady > 0:
		return errNotReady
	case len(rep.Held) > 0:
		return errHeldBack
	case len(rep.Drifts) > 0:
		return errDrift
	}
	return nil
}
