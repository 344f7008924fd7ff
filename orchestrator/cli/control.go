package cli

// pvctl suspend, resume, reconcile and wait: the operator's controls on a
// set or a variant, against a cluster (--kubeconfig, --context) as Flux's
// and kubectl's, and on the last run's state. Both sides end in the same
// reconcilers (kit.SuspendAnnotation, kit.ReconcileRequestAnnotation).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/pkg/pvsexpand"
	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// pollInterval is how often wait, resume and reconcile read the object
// again; tests shorten it.
var pollInterval = time.Second

// now stamps reconcile requests; tests fix it.
var now = time.Now

const controlExitCodes = `Exit codes: 0 done; 1 the command failed, or (waiting) the condition was not met in --timeout; 2 usage.`

func controlCommands(ctx context.Context, o *Options) []*cobra.Command {
	return []*cobra.Command{suspendCommand(ctx, o, true), suspendCommand(ctx, o, false), reconcileCommand(ctx, o), waitCommand(ctx, o)}
}

// suspendCommand is pvctl suspend (suspend) and pvctl resume.
func suspendCommand(ctx context.Context, o *Options, suspend bool) *cobra.Command {
	var cf clusterFlags
	var timeout time.Duration
	var noWait bool
	c := &cobra.Command{
		Use:   "suspend KIND/NAME",
		Short: "Suspend a set or a variant: it writes nothing to Porch or to a child until resumed (pvkit.dev/suspend)",
		Long: `Suspend a PackageVariantSet or a PackageVariant, as flux suspend does: its reconcile
writes nothing to Porch, and a set's writes no child and holds its children too, until
pvctl resume. It says so in its status (Suspended=True, and pvctl status shows the reason
Suspended). Deleting a suspended object is not suspended: its deletionPolicy applies.

Against a cluster (--kubeconfig or --context) it sets the annotation pvkit.dev/suspend:
"true" (a GitOps tool that owns the object should set it in git instead). Without them
it records the suspension in the last run's state: every pvctl run gives the object the
annotation, unless its file sets pvkit.dev/suspend itself (the file wins).

` + controlExitCodes,
		Example: `  pvctl suspend pvs/app --kubeconfig ~/.kube/config -n fleet
  pvctl suspend packagevariant/app-staging       # in the last run's state`,
		Args:              args(1, 1, "suspend takes one KIND/NAME"),
		ValidArgsFunction: fleetNames(o),
		RunE: func(_ *cobra.Command, a []string) error {
			kind, name, err := parseKindName(a[0])
			if err != nil {
				return err
			}
			return suspendControl(ctx, o, cf, kind, name, suspend, timeout, !noWait)
		},
	}
	if !suspend {
		c.Use = "resume KIND/NAME"
		c.Short = "Resume a suspended set or variant, and (against a cluster) wait for its reconcile"
		c.Long = `Resume a PackageVariantSet or a PackageVariant that pvctl suspend suspended, as flux
resume does. Against a cluster (--kubeconfig or --context) it removes the annotation
pvkit.dev/suspend, asks for a reconcile now (pvkit.dev/reconcile-requested-at) and waits
until the controller has handled it (--no-wait: do not wait), then prints the object's
Ready condition. Without them it removes the suspension from the last run's state: the
next pvctl run reconciles the object.

Exit codes: 0 done (waiting: the object is Ready); 1 the command failed, or the object is
not Ready, or its reconcile was not handled in --timeout; 2 usage.`
		c.Example = `  pvctl resume pvs/app --kubeconfig ~/.kube/config -n fleet
  pvctl resume packagevariant/app-staging        # in the last run's state`
		c.Args = args(1, 1, "resume takes one KIND/NAME")
		c.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "with a cluster: how long to wait for the controller to handle the reconcile")
		c.Flags().BoolVar(&noWait, "no-wait", false, "with a cluster: do not wait for the reconcile")
	}
	cf.add(c)
	return c
}

// reconcileCommand is pvctl reconcile.
func reconcileCommand(ctx context.Context, o *Options) *cobra.Command {
	var cf clusterFlags
	r := &runFlags{maxChildren: pvsexpand.DefaultMaxChildren}
	c := &cobra.Command{
		Use:   "reconcile KIND/NAME",
		Short: "Reconcile a set or a variant now (pvkit.dev/reconcile-requested-at), and wait for it",
		Long: `Reconcile a PackageVariantSet or a PackageVariant now, as flux reconcile does: against a
cluster (--kubeconfig or --context) it sets the annotation pvkit.dev/reconcile-requested-at
to the time, waits until the controller has handled it (status.lastHandledReconcileAt),
and prints the object's Ready condition. A suspended object is refused: resume it.

Without a cluster, every pvctl run reconciles every set and variant: pvctl reconcile
KIND/NAME -f FILE|DIR is pvctl run with the same flags, refused when the object is
suspended in the last run's state.

Exit codes: 0 done, the object Ready; 1 the command failed, the object is not Ready, or
its reconcile was not handled in --timeout; 4 (without a cluster) some set or variant is
stalled; 3 (without a cluster) a removal was held back; 2 usage.`,
		Example: `  pvctl reconcile pvs/app --kubeconfig ~/.kube/config -n fleet
  pvctl reconcile pv/app-staging -f examples/local`,
		Args:              args(1, 1, "reconcile takes one KIND/NAME"),
		ValidArgsFunction: fleetNames(o),
		RunE: func(_ *cobra.Command, a []string) error {
			kind, name, err := parseKindName(a[0])
			if err != nil {
				return err
			}
			if cf.set() {
				if len(r.files) > 0 {
					return usageErr("-f goes with a local reconcile; with --kubeconfig or --context, the cluster holds the objects")
				}
				return reconcileInCluster(ctx, o, cf, kind, name, r.timeout)
			}
			if len(r.files) == 0 {
				return usageErr("a local reconcile is a pvctl run: give the files with -f (or a cluster with --kubeconfig or --context)")
			}
			st, err := state.Read(filepath.Join(o.Repos, state.File))
			if err != nil {
				return err
			}
			if st.Controls[state.ControlKey(kind, name)][kit.SuspendAnnotation] != "" {
				return fmt.Errorf("%s %s is suspended in the last run's state: pvctl resume %s/%s first", strings.ToLower(kind), name, strings.ToLower(kind), name)
			}
			return r.run(ctx, o)
		},
	}
	r.add(c)
	_ = c.Flags().MarkHidden("dry-run")
	// One --timeout: the run's without a cluster, the wait's with one.
	c.Flags().Lookup("timeout").Usage = "without a cluster: stop the run after this long (0: never); with one: how long to wait for the controller to handle the reconcile"
	cf.add(c)
	return c
}

// waitCommand is pvctl wait.
func waitCommand(ctx context.Context, o *Options) *cobra.Command {
	var cf clusterFlags
	var forCond string
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "wait KIND/NAME --for=condition=TYPE[=STATUS]",
		Short: "Wait until a set or a variant has a condition, as kubectl wait does",
		Long: `Wait until a PackageVariantSet or a PackageVariant has a condition of its current
generation (the condition's observedGeneration at least the object's generation), as
kubectl wait --for=condition does: STATUS defaults to True. It reads the cluster
(--kubeconfig or --context) or the last run's state, every second.

` + controlExitCodes,
		Example: `  pvctl wait pvs/app --for=condition=Ready --timeout 10m --kubeconfig ~/.kube/config -n fleet
  pvctl wait pv/app-staging --for=condition=Stalled=False`,
		Args:              args(1, 1, "wait takes one KIND/NAME"),
		ValidArgsFunction: fleetNames(o),
		RunE: func(_ *cobra.Command, a []string) error {
			kind, name, err := parseKindName(a[0])
			if err != nil {
				return err
			}
			typ, status, err := parseFor(forCond)
			if err != nil {
				return err
			}
			if timeout <= 0 {
				return usageErr("--timeout must be positive, found %s", timeout)
			}
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			read, err := o.readOne(ctx, cf, kind, name)
			if err != nil {
				return err
			}
			var last string
			for {
				obj, err := read()
				if err != nil && ctx.Err() != nil { // the deadline came during the read
					return fmt.Errorf("timed out after %s waiting for %s/%s %s=%s; last: %s", timeout, strings.ToLower(kind), name, typ, status, last)
				}
				if err != nil {
					return err
				}
				cond := meta.FindStatusCondition(obj.conds, typ)
				switch {
				case cond == nil:
					last = fmt.Sprintf("no %s condition yet", typ)
				case cond.ObservedGeneration < obj.gen:
					last = fmt.Sprintf("%s=%s of generation %d, not yet of generation %d", typ, cond.Status, cond.ObservedGeneration, obj.gen)
				case string(cond.Status) == status:
					fmt.Fprintf(o.Stdout, "%s condition met (%s=%s)\n", obj.key(), typ, status)
					return nil
				default:
					last = fmt.Sprintf("%s=%s %s: %s", typ, cond.Status, cond.Reason, cond.Message)
				}
				select {
				case <-ctx.Done():
					return fmt.Errorf("timed out after %s waiting for %s %s=%s; last: %s", timeout, obj.key(), typ, status, last)
				case <-time.After(pollInterval):
				}
			}
		},
	}
	c.Flags().StringVar(&forCond, "for", "condition=Ready", "the condition: condition=TYPE or condition=TYPE=STATUS (True, False or Unknown)")
	completeFlag(c, "for", func() []string {
		var out []string
		for _, typ := range []string{pvapi.ConditionReady, pvapi.ConditionStalled, pvapi.ConditionReconciling} {
			out = append(out, "condition="+typ, "condition="+typ+"=True", "condition="+typ+"=False")
		}
		return out
	})
	c.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "give up after this long")
	cf.add(c)
	return c
}

// readOne returns a reader of one set or variant, as wait polls it: from
// the cluster, one GET of the object (not the namespace's lists that
// status reads), or from the last run's state.
func (o *Options) readOne(ctx context.Context, cf clusterFlags, kind, name string) (func() (fleetObject, error), error) {
	if !cf.set() {
		return func() (fleetObject, error) {
			f, err := o.loadFleet(ctx, cf)
			if err != nil {
				return fleetObject{}, err
			}
			objs := f.objects(kind, name, labels.Everything())
			if len(objs) == 0 {
				return fleetObject{}, fmt.Errorf("%s %s: not found in %s (pvctl status lists them)", strings.ToLower(kind), name, f.where)
			}
			return objs[0], nil
		}, nil
	}
	c, err := ClusterClient(cf.kubeconfig, cf.context)
	if err != nil {
		return nil, err
	}
	return func() (fleetObject, error) {
		obj, err := clusterObject(ctx, c, o.Namespace, kind, name)
		if err != nil {
			return fleetObject{}, err
		}
		f := &fleet{}
		switch v := obj.(type) {
		case *pvapi.PackageVariant:
			f.variants = []pvapi.PackageVariant{*v}
		case *pvsapi.PackageVariantSet:
			f.sets = []pvsapi.PackageVariantSet{*v}
		}
		return f.objects(kind, name, labels.Everything())[0], nil
	}, nil
}

// parseFor reads --for=condition=TYPE[=STATUS].
func parseFor(s string) (typ, status string, err error) {
	rest, ok := strings.CutPrefix(s, "condition=")
	if !ok || rest == "" {
		return "", "", usageErr("--for must be condition=TYPE or condition=TYPE=STATUS, not %q", s)
	}
	typ, status, ok = strings.Cut(rest, "=")
	if !ok {
		status = "True"
	}
	for _, want := range []string{"True", "False", "Unknown"} {
		if strings.EqualFold(status, want) {
			return typ, want, nil
		}
	}
	return "", "", usageErr("--for: status %q is not True, False or Unknown", status)
}

// clusterObject reads a set or variant from the cluster.
func clusterObject(ctx context.Context, c client.Client, namespace, kind, name string) (client.Object, error) {
	var obj client.Object = &pvapi.PackageVariant{}
	if kind == "PackageVariantSet" {
		obj = &pvsapi.PackageVariantSet{}
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%s %s: not found in namespace %s of the cluster", strings.ToLower(kind), name, namespace)
		}
		return nil, fmt.Errorf("reading %s %s: %w", strings.ToLower(kind), name, err)
	}
	return obj, nil
}

// annotate merge-patches annotations of obj: a nil value removes one.
func annotate(ctx context.Context, c client.Client, obj client.Object, changes map[string]*string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": changes}})
	if err != nil {
		return err
	}
	if err := c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("annotating %s: %w", obj.GetName(), err)
	}
	return nil
}

// clusterTarget connects to the cluster and reads the set or variant a
// control names; key is its kind/name.
func clusterTarget(ctx context.Context, o *Options, cf clusterFlags, kind, name string) (c client.Client, obj client.Object, key string, err error) {
	if c, err = ClusterClient(cf.kubeconfig, cf.context); err != nil {
		return nil, nil, "", err
	}
	if obj, err = clusterObject(ctx, c, o.Namespace, kind, name); err != nil {
		return nil, nil, "", err
	}
	return c, obj, strings.ToLower(kind) + "/" + name, nil
}

func reconcileInCluster(ctx context.Context, o *Options, cf clusterFlags, kind, name string, timeout time.Duration) error {
	c, obj, key, err := clusterTarget(ctx, o, cf, kind, name)
	if err != nil {
		return err
	}
	if why := kit.SuspendedBy(kind+" "+name, obj.GetAnnotations()); why != "" {
		return fmt.Errorf("%s: pvctl resume %s first", why, key)
	}
	at := now().UTC().Format(time.RFC3339Nano)
	if err := annotate(ctx, c, obj, map[string]*string{kit.ReconcileRequestAnnotation: &at}); err != nil {
		return err
	}
	fmt.Fprintf(o.Stdout, "%s: reconcile requested at %s\n", key, at)
	return waitHandled(ctx, o, c, kind, name, at, timeout)
}

// waitHandled waits until the controller has handled the request at
// (status.lastHandledReconcileAt), then prints the Ready condition: not
// Ready is exit 1.
func waitHandled(ctx context.Context, o *Options, c client.Client, kind, name, at string, timeout time.Duration) error {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	key := strings.ToLower(kind) + "/" + name
	for {
		obj, err := clusterObject(ctx, c, o.Namespace, kind, name)
		if err != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return err
		}
		var handled string
		var conds []metav1.Condition
		switch v := obj.(type) {
		case *pvapi.PackageVariant:
			handled, conds = v.Status.LastHandledReconcileAt, v.Status.Conditions
		case *pvsapi.PackageVariantSet:
			handled, conds = v.Status.LastHandledReconcileAt, v.Status.Conditions
		}
		if handled == at {
			ready, reason, msg, _ := kit.Readiness(conds)
			fmt.Fprintf(o.Stdout, "%s reconciled: Ready=%s %s", key, ready, reason)
			if msg != "" && ready != metav1.ConditionTrue {
				fmt.Fprintf(o.Stdout, ": %s", msg)
			}
			fmt.Fprintln(o.Stdout)
			if ready != metav1.ConditionTrue {
				return errNotReady
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("timed out after %s waiting for the controller to handle the reconcile of %s requested at %s (is pvkit's controller running, and does it watch namespace %s?)", timeout, key, at, o.Namespace)
		case <-time.After(pollInterval):
		}
	}
}

// suspendControl is pvctl suspend (suspend) and pvctl resume, over a
// cluster's object or the last run's state (controlTarget). Against a
// cluster, resume also asks for a reconcile and (wait) waits until it is
// handled.
func suspendControl(ctx context.Context, o *Options, cf clusterFlags, kind, name string, suspend bool, timeout time.Duration, wait bool) error {
	t, err := o.openControl(ctx, cf, map[bool]string{true: "suspend", false: "resume"}[suspend], kind, name)
	if err != nil {
		return err
	}
	defer t.close()
	has := t.current(kit.SuspendAnnotation) == "true"
	if !t.cluster() {
		has = t.current(kit.SuspendAnnotation) != ""
	}
	changes := map[string]string{kit.SuspendAnnotation: ""}
	switch file, fromFile := t.fromFile(kit.SuspendAnnotation); {
	case suspend && has:
		fmt.Fprintf(o.Stdout, "%s is suspended already\n", t.key)
		return nil
	case suspend:
		changes[kit.SuspendAnnotation] = "true"
	case !t.cluster() && !has && fromFile && file != "false":
		return fmt.Errorf("%s is suspended by its file (%s: %q), not by pvctl suspend: edit the file", t.key, kit.SuspendAnnotation, file)
	case !t.cluster() && !has:
		fmt.Fprintf(o.Stdout, "%s is not suspended\n", t.key)
		return nil
	}
	at := ""
	if !suspend && t.cluster() {
		at = now().UTC().Format(time.RFC3339Nano)
		changes[kit.ReconcileRequestAnnotation] = at
	}
	if err := t.apply(ctx, changes); err != nil {
		return err
	}
	switch {
	case t.cluster() && suspend:
		fmt.Fprintf(o.Stdout, "%s suspended\n", t.key)
	case t.cluster():
		fmt.Fprintf(o.Stdout, "%s resumed\n", t.key)
		if wait {
			return waitHandled(ctx, o, t.c, kind, name, at, timeout)
		}
	case suspend:
		what := "it"
		if kind == "PackageVariantSet" {
			what = "it or its children"
		}
		fmt.Fprintf(o.Stdout, "%s suspended: pvctl run writes nothing for %s until pvctl resume %s\n", t.key, what, t.key)
	default:
		fmt.Fprintf(o.Stdout, "%s resumed: the next pvctl run reconciles it\n", t.key)
	}
	return nil
}
