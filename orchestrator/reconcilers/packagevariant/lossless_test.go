package packagevariant

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"

	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/fakestore"
	"github.com/pvkit/pvkit/pkg/provenance"
	"github.com/pvkit/pvkit/pkg/variant"
	ctrl "sigs.k8s.io/controller-runtime"
)

// landsButFails is a store whose every other draft update lands and is
// answered with an error, as Porch v1.5.3 answers "remote not found"
// after its push.
type landsButFails struct {
	*fakestore.Store
	mu sync.Mutex
	n  int
}

func (s *landsButFails) UpdateResourcesRendered(ctx context.Context, namespace, name string, res store.Resources) (store.RenderStatus, store.Resources, error) {
	rs, after, err := s.Store.UpdateResourcesRendered(ctx, namespace, name, res)
	s.mu.Lock()
	s.n++
	fail := s.n%2 == 0
	s.mu.Unlock()
	if err == nil && fail {
		return rs, store.Resources{}, errors.New("Internal error occurred: remote not found")
	}
	return rs, after, err
}

// Issue 61's acceptance: with every third status patch answered by a
// conflict and every other Porch write landing but answered by an error,
// every draft's lastWrite is recorded (its digest is the draft's) and
// approval by policy approves what it approves without the faults: three
// variants cloned, approved, upgraded to a second upstream, approved.
func TestFaultsLoseNoFacts(t *testing.T) {
	run := func(t *testing.T, faults bool) string {
		e := approvingEnv(t, false)
		if faults {
			e.r.Store = &landsButFails{Store: e.store}
			e.conflicts.EveryNth(3)
		}
		e.store.AddRepository(ns, "deploy")
		e.store.Publish(ns, "blueprints", "app", blueprint(t))
		names := []string{"a", "b", "c"}
		for _, n := range names {
			e.variant(strings.NewReplacer("name: app-prod", "name: app-"+n, "package: app-prod", "package: app-"+n).Replace(policyVariant("approval.nephio.org/policy: always")))
		}
		settle := func() {
			for i := 0; i < 12; i++ {
				for _, n := range names {
					_ = e.reconcile("app-" + n) // the faults' errors are retried, as the controller retries them
				}
			}
		}
		settle()
		next := blueprint(t)
		next["extra.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n"
		e.store.Publish(ns, "blueprints", "app", next)
		settle()
		var out []string
		for _, n := range names {
			v := e.get("app-" + n)
			for _, r := range e.downstreamOf("app-" + n) {
				out = append(out, fmt.Sprintf("%s %s %d", r.Name, r.Lifecycle, r.Revision))
			}
			for _, dt := range v.Status.DownstreamTargets {
				if dt.LastWrite == "" {
					t.Errorf("%s: %s has no lastWrite", v.Name, dt.Name)
				} else if got := variant.Fingerprint(e.store.Files(ns, dt.Name)); dt.Lifecycle == string(store.Draft) && got != dt.LastWrite {
					t.Errorf("%s: %s's lastWrite %s is not its digest %s", v.Name, dt.Name, dt.LastWrite, got)
				}
			}
		}
		return strings.Join(out, "\n")
	}
	want := run(t, false)
	if !strings.Contains(want, "deploy.app-c.packagevariant-2 Published 2") {
		t.Fatalf("without faults, the upgrades are not published:\n%s", want)
	}
	if got := run(t, true); got != want {
		t.Fatalf("with the faults:\n%s\nwithout:\n%s", got, want)
	}
}

// downstreamOf lists the revisions of deploy/<pkg>, pkg the variant's
// downstream package.
func (e *env) downstreamOf(name string) []store.Revision {
	e.t.Helper()
	return e.downstream(e.get(name).Spec.Downstream.Package)
}

// e2e-porch (TestHealthGatedRolloutOnPorch): Porch answered the write of a
// draft's provenance record after its render ("ref file is empty") with an
// error; the write before it stood, nothing recorded it, and approval by
// policy waited for a person for ever. That write is the variant's last.
func TestRestampFailureKeepsTheWrite(t *testing.T) {
	e := approvingEnv(t, false)
	renders := 0
	e.store.SetRenderer(func(files map[string]string) (map[string]string, store.RenderStatus) {
		renders++ // each render changes the package: the record is written again after it
		out := maps.Clone(files)
		out["rendered.yaml"] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: rendered\ndata:\n  n: \"%d\"\n", renders)
		return out, store.RenderStatus{}
	})
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(policyVariant("approval.nephio.org/policy: always"))
	e.store.Inject(fakestore.Fault{Op: fakestore.OpUpdateResources, Skip: 1, Err: errors.New("Internal error occurred: ref file is empty")})
	if err := e.reconcile("app-prod"); err == nil || !strings.Contains(err.Error(), "ref file is empty") {
		t.Fatalf("the restamp's failure: %v", err)
	}
	draft := e.downstream("app-prod")[0]
	if got := e.get("app-prod").Target(draft.Name).LastWrite; got == "" || got != variant.Fingerprint(e.files(draft)) {
		t.Fatalf("lastWrite %q, the draft's digest %q", got, variant.Fingerprint(e.files(draft)))
	}
	e.mustReconcile("app-prod")
	e.mustReconcile("app-prod")
	if got := e.lifecycles(); got != "deploy.app-prod.packagevariant-1 Published 1" {
		t.Fatalf("approval by policy: %s", got)
	}
}

// unreadAfterALostAnswer is a store whose next draft update is answered
// with an error, landing or not (land), and whose reads of the draft then
// fail a few times: e2e-porch on a loaded machine,
// TestStagedRolloutOnPorch ("ref file is empty" on the update of an
// upgrade draft and on the reads after it).
type unreadAfterALostAnswer struct {
	*fakestore.Store
	lose, land bool
	unread     int
	// stale: the draft is read back as it was before the write (Porch's
	// cache behind its push), not refused.
	stale  bool
	before store.Resources
}

func (s *unreadAfterALostAnswer) UpdateResourcesRendered(ctx context.Context, namespace, name string, res store.Resources) (store.RenderStatus, store.Resources, error) {
	if s.lose {
		s.lose, s.unread = false, 2
		if s.stale {
			s.unread = 1
			var err error
			if s.before, err = s.Store.GetResources(ctx, namespace, name); err != nil {
				return store.RenderStatus{}, store.Resources{}, err
			}
		}
		if !s.land {
			return store.RenderStatus{}, store.Resources{}, errors.New("Internal error occurred: ref file is empty")
		}
		rs, _, err := s.Store.UpdateResourcesRendered(ctx, namespace, name, res)
		if err != nil {
			return rs, store.Resources{}, err
		}
		return rs, store.Resources{}, errors.New("Internal error occurred: ref file is empty")
	}
	return s.Store.UpdateResourcesRendered(ctx, namespace, name, res)
}

func (s *unreadAfterALostAnswer) GetResources(ctx context.Context, namespace, name string) (store.Resources, error) {
	if s.unread > 0 {
		s.unread--
		if s.stale {
			return s.before, nil
		}
		return store.Resources{}, errors.New("ref file is empty")
	}
	return s.Store.GetResources(ctx, namespace, name)
}

// A write Porch answered with an error, whose draft could not be read
// back, is recorded as unconfirmed (status.downstreamTargets[].unconfirmedWrite):
// the next reconcile that reads the draft at its digest records it as the
// variant's last write, and approval by policy publishes it; a draft read
// otherwise drops it: a person's edit after it is still a person's, and a
// write that did not land is made again.
func TestLostAnswerUnreadDraftIsTheVariants(t *testing.T) {
	for _, c := range []struct {
		name              string
		land, edit, stale bool
	}{{"landed", true, false, false}, {"landed, then a person's edit", true, true, false}, {"not landed", false, false, false},
		// e2e-porch, loaded (TestHealthGatedRolloutOnPorch): "remote not
		// found" on the update, the write landed, the read-back showed the
		// draft as before it; the next reconcile found nothing to write.
		{"landed, read back as it was", true, false, true}, {"not landed, read back as it was", false, false, true}} {
		t.Run(c.name, func(t *testing.T) {
			e := approvingEnv(t, false)
			s := &unreadAfterALostAnswer{Store: e.store, land: c.land, stale: c.stale}
			e.r.Store = s
			draft := e.faultyUpgrade(func() { s.lose = true }, "ref file is empty")
			tg := e.get("app-prod").Target(draft.Name)
			// The unconfirmed write, and the draft as the reconcile created
			// it as the last write (fresh, it is the variant's own).
			if tg.UnconfirmedWrite == "" || tg.LastWrite == "" || tg.LastWrite == tg.UnconfirmedWrite {
				t.Fatalf("after the lost answer: lastWrite %q, unconfirmedWrite %q; want the unconfirmed write and the draft as created", tg.LastWrite, tg.UnconfirmedWrite)
			}
			if landed := tg.UnconfirmedWrite == variant.Fingerprint(e.files(draft)); landed != c.land {
				t.Fatalf("the unconfirmed write is the draft's digest: %v, want %v", landed, c.land)
			}
			if c.edit {
				files := e.files(draft)
				files["person.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: person\n"
				e.store.SetFiles(ns, draft.Name, files)
			}
			for i := 0; i < 4; i++ {
				_ = e.reconcile("app-prod") // the failed reads are retried, as the controller retries them
			}
			if c.edit {
				if got := e.lifecycles(); !strings.Contains(got, draft.Name+" Draft") {
					t.Fatalf("a person's edit was approved by policy: %s", got)
				}
				if why := e.condition("app-prod", pvapi.ConditionApprovalWaiting).Message; !strings.Contains(why, "a person changed it since its variant's last write") {
					t.Fatalf("ApprovalWaiting %q does not say a person changed it", why)
				}
				if tg := e.get("app-prod").Target(draft.Name); tg.UnconfirmedWrite != "" || tg.LastWrite == variant.Fingerprint(e.files(draft)) {
					t.Fatalf("after the edit: lastWrite %q, unconfirmedWrite %q; want no unconfirmed write, and the last write not the edited draft", tg.LastWrite, tg.UnconfirmedWrite)
				}
				return
			}
			if got := e.lifecycles(); !strings.Contains(got, draft.Name+" Published 2") {
				t.Fatalf("approval by policy after the lost answer: %s", got)
			}
			if tg := e.get("app-prod").Target(draft.Name); tg.UnconfirmedWrite != "" || tg.LastWrite != variant.Fingerprint(e.files(draft)) {
				t.Fatalf("lastWrite %q, unconfirmedWrite %q; the draft's digest %q", tg.LastWrite, tg.UnconfirmedWrite, variant.Fingerprint(e.files(draft)))
			}
		})
	}
}

// refusedOnce refuses the first update after lose, as Porch refuses one
// while it is busy: nothing lands, the draft reads as it was.
type refusedOnce struct {
	*fakestore.Store
	lose bool
}

// CreateDraft makes an upgrade as Porch's does: the local revision's
// files (the variant's mutations, its record) with the upstream's new
// files merged in; the fake store's upgrade takes the new upstream alone.
func (s *refusedOnce) CreateDraft(ctx context.Context, spec store.DraftSpec) (store.Revision, error) {
	d, err := s.Store.CreateDraft(ctx, spec)
	if err != nil || spec.Task.Type != store.Upgrade {
		return d, err
	}
	return s.Store.MergeLocal(ctx, spec, d)
}

func (s *refusedOnce) UpdateResourcesRendered(ctx context.Context, namespace, name string, res store.Resources) (store.RenderStatus, store.Resources, error) {
	if s.lose {
		s.lose = false
		return store.RenderStatus{}, store.Resources{}, errors.New("the server is currently unable to handle the request (put packagerevisionresources.porch.kpt.dev " + name + ")")
	}
	return s.Store.UpdateResourcesRendered(ctx, namespace, name, res)
}

// e2e-porch, loaded (TestRolloutUndoOnPorch): an upgrade draft whose first
// write Porch refused, and whose content the upgrade had already made
// complete but for its provenance record (the source's, naming another
// revision), was taken for a person's: the next reconcile, no longer the
// one that created it, had nothing to write, and approval by policy
// waited. The draft as created stays the variant's, and the next
// reconcile writes its record.
func TestRefusedFirstWriteOfAFreshDraft(t *testing.T) {
	e := approvingEnv(t, false)
	s := &refusedOnce{Store: e.store}
	e.r.Store = s
	draft := e.faultyUpgrade(func() { s.lose = true }, "the server is currently unable to handle the request")
	for i := 0; i < 4; i++ {
		_ = e.reconcile("app-prod")
	}
	if got := e.lifecycles(); !strings.Contains(got, draft.Name+" Published 2") {
		t.Fatalf("approval by policy after the refused write: %s (ApprovalWaiting: %q)", got, e.condition("app-prod", pvapi.ConditionApprovalWaiting).Message)
	}
	rec, err := provenance.Read(e.files(draft))
	if err != nil || !rec.For(draft.Name) {
		t.Fatalf("the published draft's record is not its own: %v", err)
	}
}

// faultyUpgrade publishes v1 to a variant approved by policy always, then
// v2, arms the fault, and runs the reconcile that must fail with want; it
// returns the upgrade draft that reconcile created.
func (e *env) faultyUpgrade(arm func(), want string) store.Revision {
	e.t.Helper()
	e.store.Publish(ns, "blueprints", "app", blueprint(e.t))
	e.variant(policyVariant("approval.nephio.org/policy: always"))
	for i := 0; i < 3; i++ {
		e.mustReconcile("app-prod")
	}
	if got := e.lifecycles(); got != "deploy.app-prod.packagevariant-1 Published 1" {
		e.t.Fatalf("before the fault: %s", got)
	}
	next := blueprint(e.t)
	next["extra.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n"
	e.store.Publish(ns, "blueprints", "app", next)
	arm()
	if err := e.reconcile("app-prod"); err == nil || !strings.Contains(err.Error(), want) {
		e.t.Fatalf("the fault: %v, want %q", err, want)
	}
	for _, r := range e.downstream("app-prod") {
		if r.Lifecycle == store.Draft {
			return r
		}
	}
	e.t.Fatalf("no upgrade draft: %s", e.lifecycles())
	return store.Revision{}
}

// unreadOnce fails one read after an upgrade draft's creation, of what
// which names (the new upstream, the draft itself), with err.
type unreadOnce struct {
	refusedOnce
	which  func(spec store.DraftSpec, d store.Revision) string
	err    string
	unread string
}

func (s *unreadOnce) CreateDraft(ctx context.Context, spec store.DraftSpec) (store.Revision, error) {
	d, err := s.refusedOnce.CreateDraft(ctx, spec)
	if err == nil && spec.Task.Type == store.Upgrade && s.lose {
		s.lose, s.unread = false, s.which(spec, d)
	}
	return d, err
}

func (s *unreadOnce) GetResources(ctx context.Context, namespace, name string) (store.Resources, error) {
	if name == s.unread {
		s.unread = ""
		return store.Resources{}, errors.New(s.err)
	}
	return s.refusedOnce.GetResources(ctx, namespace, name)
}

// upstreamUnreadOnce fails the first read of the new upstream once an
// upgrade draft exists (Porch's "ref file is empty" on a revision it lists).
func upstreamUnreadOnce(st *fakestore.Store) *unreadOnce {
	return &unreadOnce{refusedOnce: refusedOnce{Store: st}, err: "ref file is empty",
		which: func(spec store.DraftSpec, _ store.Revision) string { return spec.Task.NewUpstream }}
}

// draftUnreadOnce refuses the first read of an upgrade draft right after
// its creation, as Porch did at N=500 ("error cloning git repository ...
// error creating main branch").
func draftUnreadOnce(st *fakestore.Store) *unreadOnce {
	return &unreadOnce{refusedOnce: refusedOnce{Store: st}, err: "error cloning git repository file:///deploy.git, fetch of remote repository failed: error creating main branch",
		which: func(_ store.DraftSpec, d store.Revision) string { return d.Name }}
}

// e2e-porch (TestRolloutUndoOnPorch, a run after the fix above): the
// reconcile that created an upgrade draft failed before writing it (its
// upstream unread while the dropped files were settled); the draft as
// created stays the variant's, and the next reconcile writes it.
func TestFreshDraftsStepFailsBeforeItsWrite(t *testing.T) {
	e := approvingEnv(t, false)
	s := upstreamUnreadOnce(e.store)
	e.r.Store = s
	draft := e.faultyUpgrade(func() { s.lose = true }, "ref file is empty")
	for i := 0; i < 4; i++ {
		_ = e.reconcile("app-prod")
	}
	if got := e.lifecycles(); !strings.Contains(got, draft.Name+" Published 2") {
		t.Fatalf("approval by policy after the failed step: %s (ApprovalWaiting: %q)", got, e.condition("app-prod", pvapi.ConditionApprovalWaiting).Message)
	}
}

// e2e-porch-release-bench at N=500 (issue 56): the reconcile that created
// an upgrade draft could not read it (Porch's clone of the repository
// failed), so nothing recorded the draft as the variant's; the next
// reconcile took Porch's upgrade for a person's edit and approval by
// policy waited for a person, the rollout stuck at 499 of 500. The draft
// as created is now recorded by its resource version: found unchanged
// since, it is the variant's, written and approved.
func TestFreshDraftUnreadAfterItsCreation(t *testing.T) {
	e := approvingEnv(t, false)
	s := draftUnreadOnce(e.store)
	e.r.Store = s
	draft := e.faultyUpgrade(func() { s.lose = true }, "error creating main branch")
	if tg := e.get("app-prod").Target(draft.Name); tg.CreatedAt != draft.ResourceVersion || tg.LastWrite != "" {
		t.Fatalf("the draft as created is not recorded: createdAt %q, last write %q, want %q and none", tg.CreatedAt, tg.LastWrite, draft.ResourceVersion)
	}
	// The form older pvkit wrote (lastWrite created@<version>) reads the same.
	v := e.get("app-prod")
	for i := range v.Status.DownstreamTargets {
		if dt := &v.Status.DownstreamTargets[i]; dt.Name == draft.Name {
			dt.LastWrite, dt.CreatedAt = pvapi.LegacyCreated+draft.ResourceVersion, ""
		}
	}
	if err := e.client.Status().Update(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		_ = e.reconcile("app-prod")
	}
	if got := e.lifecycles(); !strings.Contains(got, draft.Name+" Published 2") {
		t.Fatalf("approval by policy after the unread draft: %s (ApprovalWaiting: %q)", got, e.condition("app-prod", pvapi.ConditionApprovalWaiting).Message)
	}
	// A person's edit after the creation moves the draft's version: not
	// the variant's as created then; the edit is named (Edited) and kept.
	s2 := draftUnreadOnce(e.store)
	e.r.Store = s2
	next := blueprint(t)
	next["third.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: third\n"
	e.store.Publish(ns, "blueprints", "app", next)
	s2.lose = true
	if err := e.reconcile("app-prod"); err == nil || !strings.Contains(err.Error(), "error creating main branch") {
		t.Fatalf("the fault: %v", err)
	}
	var d3 store.Revision
	for _, r := range e.downstream("app-prod") {
		if r.Lifecycle == store.Draft {
			d3 = r
		}
	}
	files := e.store.Files(ns, d3.Name)
	files["persons.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: persons\n"
	e.store.SetFiles(ns, d3.Name, files)
	_ = e.reconcile("app-prod")
	if tg := e.get("app-prod").Target(d3.Name); !tg.Edited || tg.LastWrite == "" && tg.CreatedAt == d3.ResourceVersion {
		t.Fatalf("a draft changed after its creation: %+v", tg)
	}
	for i := 0; i < 3; i++ {
		_ = e.reconcile("app-prod")
	}
	for _, r := range e.downstream("app-prod") {
		if r.Name == d3.Name && e.store.Files(ns, r.Name)["persons.yaml"] == "" {
			t.Fatalf("the person's file was lost: %s", e.lifecycles())
		}
	}
}

// armsConflicts is a store whose next successful draft update arms
// conflicts for the status patches after it.
type armsConflicts struct {
	*fakestore.Store
	arm func()
}

func (s *armsConflicts) UpdateResourcesRendered(ctx context.Context, namespace, name string, res store.Resources) (store.RenderStatus, store.Resources, error) {
	rs, after, err := s.Store.UpdateResourcesRendered(ctx, namespace, name, res)
	if err == nil && s.arm != nil {
		s.arm()
		s.arm = nil
	}
	return rs, after, err
}

// A status write keeps a write's facts whatever the conflicts: the
// reconcile that writes a draft loses its status patch to four conflicts
// in a row (the patch and its three rebases), and the draft's last write
// is not lost: the digest was recorded before the write to Porch
// (unconfirmedWrite), the next reconcile finds the draft at it and records
// it as the variant's last write, and approval by policy publishes the
// draft. (Lost, the draft read as nobody's write and approval waited for
// a person.)
func TestFourStatusConflictsLoseNoLastWrite(t *testing.T) {
	e := approvingEnv(t, false)
	e.r.ApproveByPolicy = false // the draft waits while its writing reconcile's status is lost
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(policyVariant("approval.nephio.org/policy: always"))
	st := &armsConflicts{Store: e.store}
	st.arm = func() { e.conflicts.Next(1 + kit.StatusRebases) }
	e.r.Store = st
	res, err := e.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: clientKey("app-prod")})
	if err != nil || res.RequeueAfter != kit.StatusLostRetry {
		t.Fatalf("the lost status patch: %v, requeue after %v, want none and %v", err, res.RequeueAfter, kit.StatusLostRetry)
	}
	if n := e.conflicts.Taken(); n != 1+kit.StatusRebases {
		t.Fatalf("%d conflicts given, want %d in a row", n, 1+kit.StatusRebases)
	}
	draft := e.downstream("app-prod")[0]
	digest := variant.Fingerprint(e.files(draft))
	ts := e.get("app-prod").Status.DownstreamTargets
	if len(ts) != 1 || ts[0].Name != draft.Name || ts[0].UnconfirmedWrite != digest {
		t.Fatalf("after the lost status patch, the targets %+v: want %s's write recorded before it (unconfirmedWrite %s)", ts, draft.Name, digest)
	}
	e.mustReconcile("app-prod")
	if got := e.get("app-prod").Target(draft.Name).LastWrite; got != digest {
		t.Fatalf("lastWrite %q, the draft's digest %q", got, digest)
	}
	e.r.ApproveByPolicy = true
	e.mustReconcile("app-prod")
	if got := e.lifecycles(); got != "deploy.app-prod.packagevariant-1 Published 1" {
		t.Fatalf("approval by policy after the lost status: %s", got)
	}
}
