package porch

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// handled is the evidence, in place of a fixed sleep, that pvkit's
// controller has seen and handled everything up to now in the namespace:
// every PackageVariant and PackageVariantSet of it is asked to reconcile
// (pvkit.dev/reconcile-requested-at, as pvctl reconcile asks it), and
// handled waits until each says, in its own status
// (lastHandledReconcileAt), that a reconcile that saw the request finished.
// A reconcile finishes only after it has read the object, its upstream and
// its drafts and written what it decided: what the controller would write
// in answer to what happened before the request, it has written by then.
// Per object, so tests in other namespaces may run beside it. It returns
// how long it took.
func (e *env) handled(what string, timeout time.Duration) time.Duration {
	e.t.Helper()
	start := time.Now()
	e.handledN++
	token := fmt.Sprintf("e2e-%d-%d", start.UnixNano(), e.handledN)
	var pvs pvapi.PackageVariantList
	var sets pvsapi.PackageVariantSetList
	if err := e.c.List(context.Background(), &pvs, client.InNamespace(e.ns)); err != nil {
		e.t.Fatal(err)
	}
	if err := e.c.List(context.Background(), &sets, client.InNamespace(e.ns)); err != nil {
		e.t.Fatal(err)
	}
	var objs []client.Object
	// A suspended object (its own annotation, or its set's, as its
	// Suspended condition says) handles no request: it decides nothing, and
	// pvctl reconcile refuses it. What it would do is shown otherwise.
	for i := range pvs.Items {
		v := &pvs.Items[i]
		if v.DeletionTimestamp == nil && kit.SuspendedBy("", v.Annotations) == "" && !apimeta.IsStatusConditionTrue(v.Status.Conditions, kit.ConditionSuspended) {
			objs = append(objs, v)
		}
	}
	for i := range sets.Items {
		s := &sets.Items[i]
		if s.DeletionTimestamp == nil && kit.SuspendedBy("", s.Annotations) == "" && !apimeta.IsStatusConditionTrue(s.Status.Conditions, kit.ConditionSuspended) {
			objs = append(objs, s)
		}
	}
	for _, o := range objs {
		kind := "packagevariant"
		if _, ok := o.(*pvsapi.PackageVariantSet); ok {
			kind = "packagevariantset"
		}
		if out, err := kubectl("", "-n", e.ns, "annotate", "--overwrite", kind, o.GetName(), kit.ReconcileRequestAnnotation+"="+token); err != nil {
			e.t.Fatalf("asking %s %s to reconcile: %v: %s", kind, o.GetName(), err, out)
		}
	}
	e.eventually(timeout, what+": every variant and set handled a reconcile request", func() (bool, string) {
		var waiting []string
		for _, o := range objs {
			key := client.ObjectKeyFromObject(o)
			switch o.(type) {
			case *pvapi.PackageVariant:
				var v pvapi.PackageVariant
				if err := e.c.Get(context.Background(), key, &v); err != nil || v.Status.LastHandledReconcileAt != token {
					waiting = append(waiting, "pv/"+key.Name)
				}
			default:
				var s pvsapi.PackageVariantSet
				if err := e.c.Get(context.Background(), key, &s); err != nil || s.Status.LastHandledReconcileAt != token {
					waiting = append(waiting, "pvs/"+key.Name)
				}
			}
		}
		sort.Strings(waiting)
		return len(waiting) == 0, "waiting for " + strings.Join(waiting, ", ")
	})
	d := time.Since(start)
	e.t.Logf("%s: the controller handled %d objects' reconcile requests in %s", what, len(objs), d.Round(time.Millisecond))
	return d
}

// stable waits until probe's answer has not changed for 3 s (polled every
// 500 ms), at most timeout: evidence that what it reads (a listing, another
// controller's requests) has settled, in place of a fixed sleep.
func (e *env) stable(what string, timeout time.Duration, probe func() string) {
	e.t.Helper()
	start := time.Now()
	last, since := probe(), time.Now()
	for time.Since(start) < timeout {
		time.Sleep(500 * time.Millisecond)
		if now := probe(); now != last {
			last, since = now, time.Now()
		} else if time.Since(since) >= 3*time.Second {
			e.t.Logf("%s: settled after %s", what, time.Since(start).Round(time.Millisecond))
			return
		}
	}
	e.t.Logf("%s: still changing after %s; going on", what, timeout)
}
