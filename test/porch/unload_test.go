package porch

import (
	"context"
	"fmt"
	"time"

	porchconfig "github.com/nephio-project/porch/api/porchconfig/v1alpha1"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// unload takes a passed scenario's namespace off the shared stack's load:
// its sets and variants suspended (nothing more is written for them), then
// its Repository objects deleted, so that Porch stops syncing them every 5
// s (--repo-sync-frequency). The stack has no namespace controller, so
// without this every repository of every earlier scenario stayed synced:
// Porch's load grew through the suite, and the scenarios that ran late took
// twice as long as alone (TestStagedRolloutOnPorch: 242 s alone on a fresh
// stack, 427-540 s in CI runs 39 and 40, past go test's 20 minutes in the
// next). A failed scenario keeps everything, for its dump and for a person.
//
// The repositories go only once every set and variant says Suspended: a set
// that saw its targets' repositories vanish before its suspension would
// delete its children.
func (e *env) unload() {
	e.t.Helper()
	ctx := context.Background()
	var pvs pvapi.PackageVariantList
	var sets pvsapi.PackageVariantSetList
	if err := e.c.List(ctx, &sets, client.InNamespace(e.ns)); err != nil {
		e.t.Fatalf("unloading %s: %v", e.ns, err)
	}
	if err := e.c.List(ctx, &pvs, client.InNamespace(e.ns)); err != nil {
		e.t.Fatalf("unloading %s: %v", e.ns, err)
	}
	var objs []client.Object
	for i := range sets.Items {
		objs = append(objs, &sets.Items[i])
	}
	for i := range pvs.Items {
		objs = append(objs, &pvs.Items[i])
	}
	patch := client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"true"}}}`, kit.SuspendAnnotation))
	for _, o := range objs {
		if o.GetDeletionTimestamp() != nil {
			continue
		}
		if err := e.c.Patch(ctx, o, patch); client.IgnoreNotFound(err) != nil {
			e.t.Fatalf("unloading %s: suspending %s: %v", e.ns, o.GetName(), err)
		}
	}
	e.eventually(converge, "every set and variant of a passed scenario suspended", func() (bool, string) {
		for _, o := range objs {
			if o.GetDeletionTimestamp() != nil {
				continue
			}
			if err := e.c.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
				if client.IgnoreNotFound(err) == nil {
					continue
				}
				return false, err.Error()
			}
			if !apimeta.IsStatusConditionTrue(conditions(o), kit.ConditionSuspended) {
				return false, o.GetName() + " is not Suspended yet"
			}
		}
		return true, ""
	})
	var repos porchconfig.RepositoryList
	if err := e.c.List(ctx, &repos, client.InNamespace(e.ns)); err != nil {
		e.t.Fatalf("unloading %s: %v", e.ns, err)
	}
	start := time.Now()
	for i := range repos.Items {
		if err := e.c.Delete(ctx, &repos.Items[i]); client.IgnoreNotFound(err) != nil {
			e.t.Fatalf("unloading %s: deleting repository %s: %v", e.ns, repos.Items[i].Name, err)
		}
	}
	e.t.Logf("unloaded %s: %d sets and variants suspended, %d repositories deleted (%.1f s)", e.ns, len(objs), len(repos.Items), time.Since(start).Seconds())
}

// conditions is a set's or a variant's status conditions.
func conditions(o client.Object) []metav1.Condition {
	switch x := o.(type) {
	case *pvapi.PackageVariant:
		return x.Status.Conditions
	case *pvsapi.PackageVariantSet:
		return x.Status.Conditions
	}
	return nil
}
