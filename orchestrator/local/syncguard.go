package local

// What --sync refuses to take from a package (rule:
// synced-objects-decide-nothing): what an API server sets, owner
// references to anything not synced from the same package revision, and
// nested variants that would clone their own lineage.

import (
	"context"

	"github.com/pvkit/pvkit/orchestrator/store"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// maxLineage bounds how far lineage follows upstream locks.
const maxLineage = 16

// lineage is a revision's package and the packages it was cloned from,
// following upstream locks (REPO/PACKAGE each).
func (s *syncer) lineage(rev store.Revision) map[string]bool {
	out := map[string]bool{rev.Repository + "/" + rev.Package: true}
	lock := rev.Lock
	for i := 0; lock != nil && i < maxLineage; i++ {
		key := lock.Repository + "/" + lock.Package
		if out[key] {
			break
		}
		out[key] = true
		var next *store.Lock
		for _, r := range s.gs.All(s.namespace) {
			if r.Repository == lock.Repository && r.Package == lock.Package && r.Lifecycle == store.Published && r.Lock != nil {
				next = r.Lock
			}
		}
		lock = next
	}
	return out
}

// clonesItsLineage reports whether a synced PackageVariant or set clones
// a package of its own lineage, and which.
func clonesItsLineage(u *unstructured.Unstructured, lineage map[string]bool) (string, bool) {
	if u.GetKind() != "PackageVariant" && u.GetKind() != "PackageVariantSet" {
		return "", false
	}
	repo, _, _ := unstructured.NestedString(u.Object, "spec", "upstream", "repo")
	pkg, _, _ := unstructured.NestedString(u.Object, "spec", "upstream", "package")
	up := repo + "/" + pkg
	return up, lineage[up]
}

// serverSet removes from a synced object what an API server sets and
// ignores from a client (rule: synced-objects-decide-nothing): its UID,
// resource version, generation, timestamps, managed fields and status. A
// package author knows the UIDs pvctl derives (UID); a synced variant
// with another's UID would own that variant's drafts, approve them by its
// own policy and, with --prune, delete them.
func serverSet(u *unstructured.Unstructured) {
	for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
		"deletionGracePeriodSeconds", "managedFields", "selfLink"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	delete(u.Object, "status")
}

// owners keeps a synced object's owner references only to objects synced
// from the same package revision, each with that object's UID in the
// cluster (a reference's UID is the package's word, not the cluster's);
// every other reference is dropped with a warning, so that nothing synced
// claims to be another object's child (a set's, which would then adopt,
// rewrite or remove it). An owner not created yet is dropped for this
// pass; the next pass (every pass syncs again) adds it.
func (s *syncer) owners(ctx context.Context, u *unstructured.Unstructured) error {
	refs := u.GetOwnerReferences()
	if len(refs) == 0 {
		return nil
	}
	source := u.GetAnnotations()[SyncedFromAnnotation]
	var keep []metav1.OwnerReference
	for _, ref := range refs {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			s.warn("--sync: %s: %s %s: owner reference %s %s dropped: %v", source, u.GetKind(), u.GetName(), ref.Kind, ref.Name, err)
			continue
		}
		owner := &unstructured.Unstructured{}
		owner.SetGroupVersionKind(gv.WithKind(ref.Kind))
		err = s.c.Get(ctx, client.ObjectKey{Namespace: u.GetNamespace(), Name: ref.Name}, owner)
		switch {
		case apierrors.IsNotFound(err) && s.pending[objKey(ref.APIVersion, ref.Kind, ref.Name)] == source:
			continue // created later in this pass
		case err == nil && owner.GetAnnotations()[SyncedFromAnnotation] == source:
			ref.UID = owner.GetUID()
			keep = append(keep, ref)
		default:
			s.warn("--sync: %s: %s %s: owner reference to %s %s dropped: only an object synced from the same package revision may own a synced object",
				source, u.GetKind(), u.GetName(), ref.Kind, ref.Name)
		}
	}
	u.SetOwnerReferences(keep)
	return nil
}
