package packagevariant

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/observe"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
)

// branch sets Porch's branch placeholder of app-prod to files, as Porch
// shows a commit to the deployment repository's branch.
func (e *env) branch(files map[string]string) {
	e.store.SetPlaceholder(store.Revision{Namespace: ns, Name: "deploy.app-prod.main", Repository: "deploy", Package: "app-prod",
		Workspace: "main", Revision: -1, Lifecycle: store.Published}, files)
}

// newestPublished is app-prod's newest published revision.
func (e *env) newestPublished() store.Revision {
	var pub store.Revision
	for _, r := range e.downstream("app-prod") {
		if r.Lifecycle.IsPublished() && r.Revision > pub.Revision {
			pub = r
		}
	}
	return pub
}

// publishedVariant is app-prod approved by policy and published
// (revision 1), on the memory store or Porch's API.
func publishedVariant(t testing.TB, onPorch bool) (*env, store.Revision) {
	t.Helper()
	e := approvingEnv(t, onPorch)
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(policyVariant("approval.nephio.org/policy: always"))
	e.mustReconcile("app-prod")
	e.mustReconcile("app-prod")
	pub := e.newestPublished()
	if pub.Revision != 1 {
		t.Fatalf("the variant's revision: %s", e.lifecycles())
	}
	return e, pub
}

// aPersonsCommit is files with one resource file changed and one added.
func aPersonsCommit(t *testing.T, files map[string]string) (map[string]string, string) {
	t.Helper()
	var names []string
	for name := range files {
		if name != "Kptfile" && strings.HasSuffix(name, ".yaml") && strings.Contains(files[name], "\nkind: ") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		t.Fatalf("no resource file in %v", files)
	}
	out := maps.Clone(files)
	out[names[0]] += "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hotfix\n"
	out["hotfix.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hotfix2\n"
	return out, names[0]
}

// rule content-drift: the package on the branch changed after approval
// (a commit behind Porch's back) is reported naming the files, with no
// write, a Warning Event once and, on a steady resync, no read; a
// reformatted file is no change; the branch back at the revision ends it.
func TestContentChangedOnTheBranchIsReported(t *testing.T) {
	for _, onPorch := range []bool{false, true} {
		t.Run(fmt.Sprintf("onPorch=%v", onPorch), func(t *testing.T) {
			e, pub := publishedVariant(t, onPorch)
			approved := e.files(pub)
			e.branch(approved)
			e.mustReconcile("app-prod")
			if c := apimeta.FindStatusCondition(e.get("app-prod").Status.Conditions, pvapi.ConditionPublishedDrift); c != nil {
				t.Fatalf("drift with the branch at the revision: %+v", c)
			}
			e.events()

			changed, file := aPersonsCommit(t, approved)
			e.branch(changed)
			writes := e.store.Writes()
			e.mustReconcile("app-prod")
			if n := e.store.Writes() - writes; n != 0 {
				t.Errorf("reporting the drift wrote to the package %d times; want none", n)
			}
			d := e.get("app-prod").Status.DownstreamTargets[0].Drift
			want := fmt.Sprintf("the package on the branch (deploy.app-prod.main) is not the variant's published %s (revision 1): %s modified, hotfix.yaml added;", pub.Name, file)
			if d == nil || d.Reason != pvapi.ReasonContentChanged || d.Revision != "deploy.app-prod.main" || !strings.HasPrefix(d.Message, want) ||
				strings.Join(d.Files, ",") != strings.Join(sortedOf(file, "hotfix.yaml"), ",") {
				t.Fatalf("drift: %+v\nwant message %q", d, want)
			}
			if c := e.condition("app-prod", pvapi.ConditionPublishedDrift); c.Status != metav1.ConditionTrue || c.Reason != pvapi.ReasonContentChanged || !strings.HasPrefix(c.Message, want) {
				t.Fatalf("condition: %+v", c)
			}
			if ev := strings.Join(e.events(), "\n"); !strings.Contains(ev, "Warning PublishedDrift "+want) {
				t.Fatalf("events:\n%s", ev)
			}
			before, reads := e.totalWrites(), e.store.Calls()["GetResources"]
			e.mustReconcile("app-prod")
			if n := e.totalWrites() - before; n != 0 {
				t.Errorf("a steady resync of a drifted variant wrote %d times", n)
			}
			if n := e.store.Calls()["GetResources"] - reads; n != 0 {
				t.Errorf("a steady resync read %d packages; want none (the comparison is remembered)", n)
			}
			if ev := e.events(); len(ev) != 0 {
				t.Errorf("a steady resync recorded events: %q", ev)
			}

			// Reformatted only (a comment, another indentation): no drift.
			reformatted := maps.Clone(approved)
			reformatted[file] = "# reformatted by a person\n" + approved[file]
			e.branch(reformatted)
			e.mustReconcile("app-prod")
			if c := apimeta.FindStatusCondition(e.get("app-prod").Status.Conditions, pvapi.ConditionPublishedDrift); c != nil {
				t.Fatalf("a reformatted file is a drift: %+v", c)
			}
		})
	}
}

func sortedOf(s ...string) []string { sort.Strings(s); return s }

// rule drift-policy: revert makes an edit draft of the variant's revision
// (what pvkit would write), adopt one holding the branch's content with
// the mutations on top; each annotated and announced, approved like any
// draft; published, the drift ends. A value that is no policy is read as
// report, and the message says so.
func TestDriftPolicies(t *testing.T) {
	for _, policy := range []string{observe.DriftRevert, observe.DriftAdopt, "fix-it"} {
		t.Run(policy, func(t *testing.T) {
			e, pub := publishedVariant(t, false)
			approved := e.files(pub)
			changed, file := aPersonsCommit(t, approved)
			e.branch(changed)
			e.annotate("app-prod", observe.DriftPolicyAnnotation, policy)
			e.events()
			writes := e.store.Writes()
			e.mustReconcile("app-prod")
			if policy == "fix-it" {
				if n := e.store.Writes() - writes; n != 0 {
					t.Errorf("an unknown policy wrote %d times; want none (read as report)", n)
				}
				want := `PackageVariant app-prod has pvkit.dev/drift-policy: "fix-it", none of "report", "adopt" and "revert" (read as "report" until fixed)`
				if c := e.condition("app-prod", pvapi.ConditionPublishedDrift); !strings.HasSuffix(c.Message, want) {
					t.Fatalf("condition: %s\nwant it to end %s", c.Message, want)
				}
				return
			}
			var draft store.Revision
			for _, r := range e.downstream("app-prod") {
				if r.Name != pub.Name && r.Name != "deploy.app-prod.main" {
					draft = r
				}
			}
			if draft.Name == "" || draft.Annotations[observe.DriftResolutionAnnotation] != policy+" of deploy.app-prod.main" {
				t.Fatalf("no draft resolving the drift: %s (%+v)", e.lifecycles(), draft.Annotations)
			}
			ev := strings.Join(e.events(), "\n")
			said := map[string]string{observe.DriftRevert: "Normal DriftReverted made draft " + draft.Name + ", which reverts the drift of deploy.app-prod.main from " + pub.Name,
				observe.DriftAdopt: "Normal DriftAdopted made draft " + draft.Name + ", which adopts the drift of deploy.app-prod.main from " + pub.Name}[policy]
			if !strings.Contains(ev, said) {
				t.Fatalf("events:\n%s\nwant %s", ev, said)
			}
			if e.newestPublished().Revision != 2 {
				e.mustReconcile("app-prod") // approval by policy, when the first reconcile left it
			}
			got := e.files(draft)
			_, hotfix := got["hotfix.yaml"]
			switch {
			case policy == observe.DriftRevert && (hotfix || got[file] != approved[file]):
				t.Fatalf("the revert draft holds the person's change:\n%s", got[file])
			case policy == observe.DriftAdopt && (!hotfix || got[file] != changed[file]):
				t.Fatalf("the adopt draft lacks the person's change:\n%v", got)
			}
			if now := e.newestPublished(); now.Revision != 2 {
				t.Fatalf("the resolving draft was not approved: %s", e.lifecycles())
			}
			// Porch's approval moves the branch to the new revision.
			e.branch(e.files(e.newestPublished()))
			e.mustReconcile("app-prod")
			if c := apimeta.FindStatusCondition(e.get("app-prod").Status.Conditions, pvapi.ConditionPublishedDrift); c != nil {
				t.Fatalf("drift after the resolution was published: %+v", c)
			}
			if n := len(e.downstream("app-prod")); n != 3 {
				t.Fatalf("revisions after the resolution: %s", e.lifecycles())
			}
		})
	}
}

// adopt of a newer revision made outside the variant: owned, no write.
func TestAdoptANewerRevision(t *testing.T) {
	e, pub := publishedVariant(t, false)
	theirs := e.store.Publish(ns, "deploy", "app-prod", e.files(pub))
	e.annotate("app-prod", observe.DriftPolicyAnnotation, observe.DriftAdopt)
	e.mustReconcile("app-prod")
	e.mustReconcile("app-prod")
	v := e.get("app-prod")
	for _, r := range e.downstream("app-prod") {
		if r.Name == theirs.Name && !r.OwnedBy(string(v.UID)) {
			t.Fatalf("%s not adopted: %+v", r.Name, r.Owners)
		}
	}
	if c := apimeta.FindStatusCondition(v.Status.Conditions, pvapi.ConditionPublishedDrift); c != nil {
		t.Fatalf("drift after adopting: %+v", c)
	}
	if len(v.Status.DownstreamTargets) != 1 || v.Status.DownstreamTargets[0].Name != theirs.Name {
		t.Fatalf("targets: %+v", v.Status.DownstreamTargets)
	}
}

// approvedBehind is a store whose approvals land but are answered as
// Porch answers a second approval of a published revision, as happens when
// the listing the reconcile read was behind an approval already made.
type approvedBehind struct{ store.Store }

func (s approvedBehind) ApproveRevision(ctx context.Context, namespace, name string) (store.Revision, error) {
	if _, err := s.Store.ApproveRevision(ctx, namespace, name); err != nil {
		return store.Revision{}, err
	}
	return store.Revision{}, fmt.Errorf(`PackageRevision.porch.kpt.dev %q is invalid: spec.lifecycle: Invalid value: "Published": package with Published lifecycle value can only be updated to 'ProposeDeletion'`, name)
}

// An approval Porch refuses because the revision is already published (the
// listing behind it) is a wait for the listing, not an error whose backoff
// grows: found on e2e-porch, where the staged rollout stood for a minute on
// one child retrying it.
func TestApprovalAlreadyMadeIsAWait(t *testing.T) {
	e := approvingEnv(t, false)
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(policyVariant("approval.nephio.org/policy: always"))
	e.r.Store = approvedBehind{e.store}
	res, err := e.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "app-prod"}})
	for i := 0; err == nil && res.RequeueAfter == 0 && i < 3; i++ {
		res, err = e.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "app-prod"}})
	}
	if err != nil || res.RequeueAfter != cacheRetry {
		t.Fatalf("reconcile: %v, %+v; want a wait of %s", err, res, cacheRetry)
	}
	if got := e.lifecycles(); got != "deploy.app-prod.packagevariant-1 Published 1" {
		t.Fatalf("revisions: %s", got)
	}
}

// Issue 55 #1 (rule published-drift): a newer revision a person made is not
// replaced by approval by policy: the upgrade a new upstream brings waits
// for a person, naming it; with drift-policy revert (a person's decision,
// set beforehand), the revert's draft is approved by policy.
func TestNewerRevisionHoldsApprovalByPolicy(t *testing.T) {
	e, pub := publishedVariant(t, false)
	theirs := e.store.Publish(ns, "deploy", "app-prod", e.files(pub))
	up := blueprint(t)
	up["extra.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n"
	e.store.Publish(ns, "blueprints", "app", up)
	e.mustReconcile("app-prod")
	e.mustReconcile("app-prod")
	if got := e.newestPublished(); got.Name != theirs.Name {
		t.Fatalf("approval by policy published over %s: %s", theirs.Name, e.lifecycles())
	}
	c := e.condition("app-prod", pvapi.ConditionApprovalWaiting)
	want := "a person decides whose content wins: publishing it would replace " + theirs.Name + " (revision 2), newer than the variant's " + pub.Name + " and not made by it"
	if !strings.Contains(c.Message, want) {
		t.Fatalf("ApprovalWaiting: %+v\nwant %q", c, want)
	}

	e.annotate("app-prod", observe.DriftPolicyAnnotation, observe.DriftRevert)
	for _, r := range e.downstream("app-prod") { // the upgrade goes: the revert is the person's decision
		if r.Name != pub.Name && r.Name != theirs.Name {
			if err := e.store.Delete(context.Background(), ns, r.Name); err != nil {
				t.Fatal(err)
			}
		}
	}
	e.mustReconcile("app-prod")
	var reverted bool
	for _, r := range e.downstream("app-prod") {
		reverted = reverted || r.Revision == 3 && r.Annotations[observe.DriftResolutionAnnotation] == observe.DriftRevert+" of "+theirs.Name
	}
	if !reverted {
		t.Fatalf("the revert was not approved by policy: %s", e.lifecycles())
	}
}
