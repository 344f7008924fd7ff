package manager

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Porch's controllers binary (porch-controllers, v1.5.3) runs a reconciler
// when it is named in --reconcilers (a comma-separated list, * for all) or
// when an environment variable ENABLE_<NAME> exists, whatever its value.
// Its reconcilers that pvkit replaces:
var porchVariantReconcilers = []string{"packagevariants", "packagevariantsets"}

// StopPorchControllers stops Porch's own PackageVariant and
// PackageVariantSet reconcilers in their Deployment (Porch's
// porch-system/porch-controllers): it removes them from every container's
// --reconcilers flag and removes their ENABLE_ variables, so the
// Deployment's other reconcilers, if any, keep running; when no other
// reconciler stays enabled (Porch v1.5.3 has no other) or --reconcilers=*
// enables everything, it also scales the Deployment to 0. Nothing is
// deleted. With dryRun it only says what it would do; a Deployment already
// stopped is left alone, and said so.
func StopPorchControllers(ctx context.Context, c client.Client, key types.NamespacedName, dryRun bool, w io.Writer) error {
	var d appsv1.Deployment
	if err := c.Get(ctx, key, &d); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("no Deployment %s: name Porch's controllers Deployment with --namespace and --deployment", key)
		}
		return fmt.Errorf("reading Deployment %s: %w", key, err)
	}
	var did []string
	others, all := false, false
	for i := range d.Spec.Template.Spec.Containers {
		ct := &d.Spec.Template.Spec.Containers[i]
		var env []corev1.EnvVar
		for _, e := range ct.Env {
			if name, ok := strings.CutPrefix(e.Name, "ENABLE_"); ok && slices.Contains(porchVariantReconcilers, strings.ToLower(name)) {
				did = append(did, fmt.Sprintf("remove the variable %s from container %s", e.Name, ct.Name))
				continue
			}
			if strings.HasPrefix(e.Name, "ENABLE_") {
				others = true
			}
			env = append(env, e)
		}
		ct.Env = env
		for _, args := range []*[]string{&ct.Command, &ct.Args} {
			edited, left, star, changed := dropReconcilers(*args)
			others = others || len(left) > 0
			all = all || star
			if changed {
				did = append(did, fmt.Sprintf("set container %s's %s to %s", ct.Name, map[bool]string{true: "command", false: "args"}[args == &ct.Command], quoteArgs(edited)))
				*args = edited
			}
		}
	}
	if (all || !others) && (d.Spec.Replicas == nil || *d.Spec.Replicas != 0) {
		why := "no other reconciler is enabled"
		if all {
			why = "--reconcilers=* enables every reconciler"
		}
		did = append(did, fmt.Sprintf("scale it to 0 replicas (%s)", why))
		zero := int32(0)
		d.Spec.Replicas = &zero
	}
	if len(did) == 0 {
		fmt.Fprintf(w, "Deployment %s: Porch's PackageVariant and PackageVariantSet controllers are already stopped; nothing to do\n", key)
		return nil
	}
	verb := "stopped"
	if dryRun {
		verb = "would stop"
	} else if err := c.Update(ctx, &d); err != nil {
		return fmt.Errorf("updating Deployment %s: %w", key, err)
	}
	fmt.Fprintf(w, "Deployment %s: %s Porch's PackageVariant and PackageVariantSet controllers:\n", key, verb)
	for _, s := range did {
		fmt.Fprintf(w, "  %s\n", s)
	}
	if !dryRun {
		fmt.Fprintf(w, "Wait for its old pods to go (kubectl -n %s rollout status deploy/%s) before starting pvkit's controller.\n", key.Namespace, key.Name)
	}
	return nil
}

// dropReconcilers removes Porch's variant reconcilers from a --reconcilers
// flag (Go's flag syntax: -reconcilers or --reconcilers, =VALUE or a
// separate VALUE) in args. It returns the edited args, the reconcilers left
// enabled, whether * enables them all (which cannot be narrowed: left as is)
// and whether anything changed. A flag left empty is removed.
func dropReconcilers(args []string) (out, left []string, star, changed bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(a, "=")
		if name != "--reconcilers" && name != "-reconcilers" {
			out = append(out, a)
			continue
		}
		original := []string{a}
		if !hasValue {
			if i+1 == len(args) {
				out = append(out, a)
				continue
			}
			i++
			value = args[i]
			original = append(original, value)
		}
		var keep []string
		dropped := false
		for _, r := range strings.Split(value, ",") {
			switch {
			case r == "*":
				star = true
				keep = append(keep, r)
			case slices.Contains(porchVariantReconcilers, r):
				dropped = true
			case r != "":
				keep = append(keep, r)
				left = append(left, r)
			}
		}
		switch {
		case !dropped:
			out = append(out, original...)
		case len(keep) > 0:
			out = append(out, name+"="+strings.Join(keep, ","))
		}
		changed = changed || dropped
	}
	return out, left, star, changed
}

func quoteArgs(a []string) string {
	if len(a) == 0 {
		return "[]"
	}
	return "[" + strings.Join(a, " ") + "]"
}

// StopPorchControllersMain is `pvctl stop-porch-controllers`.
func StopPorchControllersMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var kubeconfig, kctx, namespace, name string
	var dryRun bool
	fs := pflag.NewFlagSet("pvctl stop-porch-controllers", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&kubeconfig, "kubeconfig", "", "path to the kubeconfig file (default: $KUBECONFIG, ~/.kube/config)")
	fs.StringVar(&kctx, "context", "", "the kubeconfig context to use")
	fs.StringVarP(&namespace, "namespace", "n", "porch-system", "the namespace of Porch's controllers Deployment")
	fs.StringVar(&name, "deployment", "porch-controllers", "the name of Porch's controllers Deployment")
	fs.BoolVar(&dryRun, "dry-run", false, "say what would change, change nothing")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprint(stdout, stopUsage+fs.FlagUsages())
			return 0
		}
		fmt.Fprintf(stderr, "pvctl stop-porch-controllers: %v\nRun 'pvctl stop-porch-controllers --help' for the flags.\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "pvctl stop-porch-controllers: takes no arguments, not %q\nRun 'pvctl stop-porch-controllers --help' for the flags.\n", fs.Args())
		return 2
	}
	c, err := NewClient(kubeconfig, kctx)
	if err == nil {
		err = StopPorchControllers(ctx, c, types.NamespacedName{Namespace: namespace, Name: name}, dryRun, stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "pvctl stop-porch-controllers:", err)
		return 1
	}
	return 0
}

const stopUsage = `Stop Porch's own PackageVariant and PackageVariantSet controllers before pvkit's
takes over (both would write the same drafts). In Porch's controllers Deployment
it removes the packagevariants and packagevariantsets reconcilers from
--reconcilers and their ENABLE_ variables; when no other reconciler stays
enabled (Porch v1.5.3 has no other), it scales the Deployment to 0. Nothing is
deleted; running it again changes nothing.

Usage:
  pvctl stop-porch-controllers [flags]

Examples:
  pvctl stop-porch-controllers --dry-run
  pvctl stop-porch-controllers && kubectl -n porch-system rollout status deploy/porch-controllers

Flags:
`
