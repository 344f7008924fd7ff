package manager

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/api"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariantset"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Release is the uninstall step that makes the controller's removal safe:
// with the controller stopped (make undeploy), every PackageRevision owned
// by a PackageVariant loses that owner reference, and every PackageVariant
// and PackageVariantSet loses pvkit's finalizer. Nothing is deleted: the revisions stay in Porch,
// ownerless, and the variants stay, for Porch's controllers (or a later
// pvkit) to take over, or for the CRDs to be removed without any variant
// hanging in Terminating. With dryRun it only says what it would do.
func Release(ctx context.Context, c client.Client, namespace string, dryRun bool, w io.Writer) error {
	var variants pvapi.PackageVariantList
	if err := c.List(ctx, &variants, client.InNamespace(namespace)); err != nil {
		return fmt.Errorf("listing PackageVariants: %w", err)
	}
	uids := map[types.UID]bool{}
	for _, v := range variants.Items {
		uids[v.UID] = true
	}
	var revisions porchapi.PackageRevisionList
	if err := c.List(ctx, &revisions, client.InNamespace(namespace)); err != nil {
		return fmt.Errorf("listing PackageRevisions: %w", err)
	}
	sort.Slice(revisions.Items, func(i, j int) bool { return key(&revisions.Items[i]) < key(&revisions.Items[j]) })
	verb := map[bool]string{true: "would release", false: "released"}[dryRun]
	var errs []error
	for i := range revisions.Items {
		pr := &revisions.Items[i]
		var kept []metav1.OwnerReference
		for _, ref := range pr.OwnerReferences {
			if ref.Kind != pv.Kind || !uids[ref.UID] {
				kept = append(kept, ref)
			}
		}
		if len(kept) == len(pr.OwnerReferences) {
			continue
		}
		if !dryRun {
			pr.OwnerReferences = kept
			if err := c.Update(ctx, pr); err != nil {
				errs = append(errs, fmt.Errorf("releasing PackageRevision %s: %w", key(pr), err))
				continue
			}
		}
		fmt.Fprintf(w, "%s PackageRevision %s (no PackageVariant owns it now)\n", verb, key(pr))
	}
	verb = map[bool]string{true: "would remove", false: "removed"}[dryRun]
	vs := make([]client.Object, len(variants.Items))
	for i := range variants.Items {
		vs[i] = &variants.Items[i]
	}
	errs = append(errs, unfinalize(ctx, c, vs, "PackageVariant", pv.Finalizer, dryRun, verb, w))
	// A set's finalizer (packagevariantset.ChildrenFinalizer: a deleted
	// set removes its children wave by wave) goes too, so that no set
	// hangs in Terminating without its controller.
	var sets pvsapi.PackageVariantSetList
	if err := c.List(ctx, &sets, client.InNamespace(namespace)); err != nil {
		return errors.Join(append(errs, fmt.Errorf("listing PackageVariantSets: %w", err))...)
	}
	ss := make([]client.Object, len(sets.Items))
	for i := range sets.Items {
		ss[i] = &sets.Items[i]
	}
	errs = append(errs, unfinalize(ctx, c, ss, "PackageVariantSet", packagevariantset.ChildrenFinalizer, dryRun, verb, w))
	return errors.Join(errs...)
}

// unfinalize removes pvkit's finalizer from each object that has it, in
// name order, saying so (or, dryRun, what it would do).
func unfinalize(ctx context.Context, c client.Client, objs []client.Object, kind, finalizer string, dryRun bool, verb string, w io.Writer) error {
	sort.Slice(objs, func(i, j int) bool { return key(objs[i]) < key(objs[j]) })
	var errs []error
	for _, o := range objs {
		if !controllerutil.ContainsFinalizer(o, finalizer) {
			continue
		}
		if !dryRun {
			orig := o.DeepCopyObject().(client.Object)
			controllerutil.RemoveFinalizer(o, finalizer)
			if err := c.Patch(ctx, o, client.MergeFrom(orig)); err != nil {
				errs = append(errs, fmt.Errorf("removing the finalizer of %s %s: %w", kind, key(o), err))
				continue
			}
		}
		fmt.Fprintf(w, "%s the finalizer of %s %s\n", verb, kind, key(o))
	}
	return errors.Join(errs...)
}

func key(o client.Object) string { return o.GetNamespace() + "/" + o.GetName() }

// NewClient is a client of the cluster a kubeconfig file and context name
// pick (kubectl's rules), with the orchestrator's scheme: the one pvctl's
// cluster commands (release, stop-porch-controllers, status and events
// with --kubeconfig) use.
func NewClient(kubeconfig, kubecontext string) (client.Client, error) {
	cfg, err := RESTConfig(kubeconfig, kubecontext)
	if err != nil {
		return nil, err
	}
	scheme, err := api.Scheme()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

// ReleaseMain is `pvctl release`: Release against the cluster of
// --kubeconfig/--context, in one namespace (-n) or all (-A).
func ReleaseMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var kubeconfig, kctx, namespace string
	var all, dryRun bool
	fs := pflag.NewFlagSet("pvctl release", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&kubeconfig, "kubeconfig", "", "path to the kubeconfig file (default: $KUBECONFIG, ~/.kube/config)")
	fs.StringVar(&kctx, "context", "", "the kubeconfig context to use")
	fs.StringVarP(&namespace, "namespace", "n", "", "only this namespace")
	fs.BoolVarP(&all, "all-namespaces", "A", false, "every namespace")
	fs.BoolVar(&dryRun, "dry-run", false, "say what would be released, change nothing")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprint(stdout, releaseUsage+fs.FlagUsages())
			return 0
		}
		fmt.Fprintf(stderr, "pvctl release: %v\nRun 'pvctl release --help' for the flags.\n", err)
		return 2
	}
	if all == (namespace != "") || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "pvctl release: name one namespace (-n NAMESPACE) or all of them (-A)\nRun 'pvctl release --help' for the flags.")
		return 2
	}
	c, err := NewClient(kubeconfig, kctx)
	if err == nil {
		err = Release(ctx, c, namespace, dryRun, stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "pvctl release:", err)
		return 1
	}
	return 0
}

const releaseUsage = `Release what pvkit's controller owns, before removing it: every PackageRevision
owned by a PackageVariant loses that owner reference, and every PackageVariant
loses pvkit's finalizer. Nothing is deleted. Stop the controller first
(make undeploy), or it adds them back.

Usage:
  pvctl release (-n NAMESPACE | -A) [flags]

Examples:
  make undeploy && pvctl release -A --dry-run && pvctl release -A

Flags:
`
