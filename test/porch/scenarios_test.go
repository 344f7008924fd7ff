package porch

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	porchconfig "github.com/nephio-project/porch/api/porchconfig/v1alpha1"
	"github.com/pvkit/pvkit/internal/fntest"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const converge = 90 * time.Second

// ownedDrafts are the revisions of repo/pkg owned by a PackageVariant.
func (e *env) owned(repo, pkg string) []porchapi.PackageRevision {
	return e.ownedByRepository(pkg)[repo]
}

// ownedByRepository is owned for every repository of the namespace, from
// one listing: a check over a fleet lists once per poll, not once per
// repository (TestStagedRolloutOnPorch listed 21 times every 250 ms, and
// Porch serves each listing from every repository of the namespace).
func (e *env) ownedByRepository(pkg string) map[string][]porchapi.PackageRevision {
	e.t.Helper()
	var l porchapi.PackageRevisionList
	if err := e.c.List(context.Background(), &l, client.InNamespace(e.ns)); err != nil {
		e.t.Fatal(err)
	}
	out := map[string][]porchapi.PackageRevision{}
	for _, r := range l.Items {
		if r.Spec.PackageName != pkg || r.DeletionTimestamp != nil { // Porch's failed create leaves a revision being deleted
			continue
		}
		for _, o := range r.OwnerReferences {
			if o.Kind == "PackageVariant" {
				out[r.Spec.RepositoryName] = append(out[r.Spec.RepositoryName], r)
				break
			}
		}
	}
	return out
}

func (e *env) ready(name string) (bool, string) {
	var v pvapi.PackageVariant
	if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: name}, &v); err != nil {
		return false, err.Error()
	}
	return isReady(&v)
}

// isReady says whether v is Ready at its generation.
func isReady(v *pvapi.PackageVariant) (bool, string) {
	c := apimeta.FindStatusCondition(v.Status.Conditions, pvapi.ConditionReady)
	if c == nil {
		return false, "no Ready condition"
	}
	// Porch's own controllers do not write observedGeneration (0).
	current := v.Status.ObservedGeneration == v.Generation || v.Status.ObservedGeneration == 0
	return c.Status == "True" && current, fmt.Sprintf("Ready=%s %s: %s", c.Status, c.Reason, c.Message)
}

// allReady says whether the namespace holds exactly n PackageVariants and
// every one of them is Ready; the message names the first that is not.
func (e *env) allReady(n int) (bool, string) {
	var l pvapi.PackageVariantList
	if err := e.c.List(context.Background(), &l, client.InNamespace(e.ns)); err != nil {
		return false, err.Error()
	}
	if len(l.Items) != n {
		return false, fmt.Sprintf("%d children", len(l.Items))
	}
	for i := range l.Items {
		if ok, msg := isReady(&l.Items[i]); !ok {
			return false, l.Items[i].Name + ": " + msg
		}
	}
	return true, ""
}

// blueprint is examples/app without its own pipeline: Porch renders a
// clone at once, with the package context Porch generates (name only), and
// the example's apply-replacements reads data.env from it, so Porch v1.5.3
// cannot clone examples/app as it is ("fieldPath `data.env` is missing").
func blueprint(t *testing.T) map[string]string {
	files := fntest.ReadTree(t, filepath.Join(repoRoot, "examples/app"))
	delete(files, "replacements.yaml")
	k, _, ok := strings.Cut(files["Kptfile"], "pipeline:")
	if !ok {
		t.Fatal("examples/app/Kptfile has no pipeline")
	}
	files["Kptfile"] = k
	return files
}

// upstream registers a blueprints repository holding files as app/v1.
func (e *env) upstream(files map[string]string) {
	url := e.bareRepo("blueprints")
	e.publishUpstream(url, "app", "v1", files)
	e.repository("blueprints", url, false, nil)
	e.eventually(converge, "Porch lists blueprints/app v1", func() (bool, string) {
		for _, r := range e.revisions("blueprints", "app") {
			if r.Spec.Lifecycle == porchapi.PackageRevisionLifecyclePublished {
				return true, ""
			}
		}
		return false, "not yet"
	})
}

// setOver is a PackageVariantSet "app" of blueprints/app (with the extra
// upstream field pin, "" for none) over the repositories labelled selector,
// each child's template being downstream package app plus the lines extra.
func setOver(pin, selector, extra string) string {
	up := "{repo: blueprints, package: app}"
	if pin != "" {
		up = "{repo: blueprints, package: app, " + pin + "}"
	}
	return fmt.Sprintf(`apiVersion: config.porch.kpt.dev/v1alpha2
kind: PackageVariantSet
metadata: {name: app}
spec:
  upstream: %s
  targets:
  - repositorySelector:
      matchLabels: {%s}
    template:
      downstream: {package: app}
%s`, up, selector, extra)
}

const cluster = `apiVersion: v1
kind: ConfigMap
metadata: {name: us-east1-endpoints}
data: {db: "db.us-east1.internal:5432", cache: "cache.us-east1.internal:6379"}
---
apiVersion: example.com/v1
kind: Team
metadata: {name: web-team}
spec: {lead: alice, oncall: web-oncall@example.com}
`

const appProd = `apiVersion: config.porch.kpt.dev/v1alpha1
kind: PackageVariant
metadata: {name: app-prod}
spec:
  upstream: {repo: blueprints, package: app}
  downstream: {repo: deploy, package: app}
  labels: {env: prod}
  packageContext:
    data: {env: prod, region: us-east1}
  pipeline:
    mutators:
    - image: gcr.io/kpt-fn/set-namespace:v0.4.1
      name: set-ns
      configMap: {namespace: prod}
  injectors:
  - kind: ConfigMap
    name: us-east1-endpoints
  - group: example.com
    kind: Team
    name: web-team
`

// Clone with package context, pipeline and injection; the readiness gate
// is visible in the draft, Porch renders it, and it is approved through
// Porch; the variant then reports the published revision, and a resync
// writes nothing.
func TestCloneContextPipelineInjection(t *testing.T) {
	t.Parallel() // its own namespace and repositories; the stack and the controller are shared (issue 48 #4)
	e := newEnv(t, "clone")
	e.upstream(blueprint(t))
	e.repository("deploy", e.bareRepo("deploy"), true, nil)
	e.apply(cluster)
	e.apply(appProd)

	var draft porchapi.PackageRevision
	e.eventually(converge, "an owned draft of deploy/app, Ready", func() (bool, string) {
		owned := e.owned("deploy", "app")
		if len(owned) != 1 {
			return false, fmt.Sprintf("%d owned revisions", len(owned))
		}
		draft = owned[0]
		return e.ready("app-prod")
	})
	f := e.resources(draft.Name)
	for file, want := range map[string]string{
		"package-context.yaml": "region: us-east1",
		"Kptfile":              "name: PackageVariant.app-prod.set-ns.0",
		"endpoints.yaml":       "db.us-east1.internal:5432",
		"team.yaml":            "lead: alice",
		"deployment.yaml":      "namespace: prod", // set-namespace ran: Porch rendered the pipeline
	} {
		if !strings.Contains(f[file], want) {
			t.Errorf("%s of %s lacks %q:\n%s", file, draft.Name, want, f[file])
		}
	}
	if !strings.Contains(f["Kptfile"], "readinessGates") || !strings.Contains(f["Kptfile"], `injected resource "us-east1-endpoints" from cluster`) {
		t.Errorf("the Kptfile shows no readiness gate or injection condition:\n%s", f["Kptfile"])
	}
	if draft.Labels["env"] != "prod" {
		t.Errorf("the draft's labels: %v", draft.Labels)
	}

	e.approve(draft.Name)
	e.eventually(converge, "the variant reports the published revision", func() (bool, string) {
		var v pvapi.PackageVariant
		if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: "app-prod"}, &v); err != nil {
			return false, err.Error()
		}
		if ok, msg := e.ready("app-prod"); !ok {
			return false, msg
		}
		return len(v.Status.DownstreamTargets) == 1 && v.Status.DownstreamTargets[0].Name == draft.Name &&
			len(e.owned("deploy", "app")) == 1, fmt.Sprintf("targets %+v", v.Status.DownstreamTargets)
	})
	if l := e.owned("deploy", "app")[0].Spec.Lifecycle; l != porchapi.PackageRevisionLifecyclePublished {
		t.Fatalf("after approval: %s", l)
	}
}

// A PackageVariantSet over labelled Repositories: one child and one draft
// per matching repository; a label removed removes that child and deletes
// its draft, and leaves the others.
func TestSetOverLabelledRepositories(t *testing.T) {
	t.Parallel() // its own namespace and repositories; the stack and the controller are shared (issue 48 #4)
	e := newEnv(t, "set")
	e.upstream(blueprint(t))
	e.apply(cluster)
	for _, r := range []string{"east", "west", "north"} {
		e.repository(r, e.bareRepo(r), true, map[string]string{"env": "prod"})
	}
	e.apply(setOver("", `env: prod`, `      packageContext:
        dataExprs:
        - key: cluster
          valueExpr: repository.name
`))
	e.eventually(converge, "a draft per labelled repository", func() (bool, string) {
		for _, r := range []string{"east", "west", "north"} {
			if _, ok, msg := e.onlyOwned(r, "app"); !ok {
				return false, r + ": " + msg
			}
		}
		return true, ""
	})
	// A draft is listed once cloned, before pvkit's write lands: wait for it.
	west, _, _ := e.onlyOwned("west", "app")
	e.eventually(converge, "west's package context with cluster: west", func() (bool, string) {
		f := e.resources(west.Name)
		return strings.Contains(f["package-context.yaml"], "cluster: west"), f["package-context.yaml"]
	})

	e.retry("removing north's label", func() error {
		var repo porchconfig.Repository
		if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: "north"}, &repo); err != nil {
			return err
		}
		delete(repo.Labels, "env")
		return e.c.Update(context.Background(), &repo)
	})
	e.eventually(converge, "north's child and draft removed, the others kept", func() (bool, string) {
		var l pvapi.PackageVariantList
		if err := e.c.List(context.Background(), &l, client.InNamespace(e.ns)); err != nil {
			return false, err.Error()
		}
		return len(l.Items) == 2 && len(e.owned("north", "app")) == 0 && len(e.owned("east", "app")) == 1 && len(e.owned("west", "app")) == 1,
			fmt.Sprintf("%d children, north %d, east %d, west %d", len(l.Items), len(e.owned("north", "app")), len(e.owned("east", "app")), len(e.owned("west", "app")))
	})
}

// A package whose own Kptfile pipeline names pvkit's images: Porch renders
// it through its function runner, which runs pvkit's binaries for those
// image names (deploy/function-runner/config.yaml); the render's results
// reach the variant's status.
func TestPorchRendersPvkitImages(t *testing.T) {
	t.Parallel() // its own namespace and repositories; the stack and the controller are shared (issue 48 #4)
	e := newEnv(t, "render")
	e.upstream(fntest.ReadTree(t, filepath.Join(repoRoot, "examples/render-images/app")))
	e.repository("deploy", e.bareRepo("deploy"), true, nil)
	e.apply(cluster)
	e.apply(`apiVersion: config.porch.kpt.dev/v1alpha1
kind: PackageVariant
metadata: {name: app-render}
spec:
  upstream: {repo: blueprints, package: app}
  downstream: {repo: deploy, package: app}
  packageContext:
    data: {env: prod}
`)
	// This package's own pipeline (package-context with env: dev,
	// config-inject without the cluster's Team) undoes the variant's
	// mutation on every render. pvkit writes once, sees Porch's rendered
	// answer undo it, and stalls with RenderConflict; then it writes nothing
	// (issue 21 #4: it used to write again on every reconcile, 430 writes in
	// 5 minutes).
	e.eventually(converge, "a rendered draft, RenderConflict", func() (bool, string) {
		if len(e.owned("deploy", "app")) != 1 {
			return false, "no draft"
		}
		var v pvapi.PackageVariant
		if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: "app-render"}, &v); err != nil {
			return false, err.Error()
		}
		c := apimeta.FindStatusCondition(v.Status.Conditions, pvapi.ConditionStalled)
		if c == nil || c.Status != "True" || c.Reason != pvapi.ReasonRenderConflict {
			return false, fmt.Sprintf("Stalled = %+v", c)
		}
		return true, ""
	})
	t.Cleanup(func() { _, _ = kubectl("", "delete", "-n", e.ns, "packagevariant", "app-render", "--wait=false") })
	rv := func() string {
		if d := e.owned("deploy", "app"); len(d) == 1 {
			return d[0].ResourceVersion
		}
		return ""
	}
	before := rv()
	// Asked to reconcile again, the stalled variant writes nothing
	// (evidence, not time: issue 48 #3).
	e.handled("a variant stalled RenderConflict", converge)
	if after := rv(); after != before {
		t.Errorf("the draft was written after RenderConflict, in a reconcile that handled a request (resourceVersion %s, then %s)", before, after)
	}
	var v pvapi.PackageVariant
	if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: "app-render"}, &v); err != nil {
		t.Fatal(err)
	}
	images := ""
	for _, tgt := range v.Status.DownstreamTargets {
		for _, r := range tgt.RenderStatus.Result.Items {
			images += r.Image + " "
		}
	}
	if !strings.Contains(images, "pvkit/config-inject:dev") {
		t.Errorf("the render results in status name no pvkit image: %q (%+v)", images, v.Status.DownstreamTargets)
	}
}

// writeResources changes a draft's files through Porch (a manual edit).
func (e *env) writeResources(name string, change func(map[string]string)) {
	e.t.Helper()
	ctx := context.Background()
	e.retry("editing "+name, func() error {
		var prr porchapi.PackageRevisionResources
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: name}, &prr); err != nil {
			return err
		}
		change(prr.Spec.Resources)
		return e.c.Update(ctx, &prr)
	})
}

func (e *env) onlyOwned(repo, pkg string) (porchapi.PackageRevision, bool, string) {
	owned := e.owned(repo, pkg)
	if len(owned) != 1 {
		return porchapi.PackageRevision{}, false, fmt.Sprintf("%d owned revisions", len(owned))
	}
	return owned[0], true, ""
}

// An injected ConfigMap that changes updates the draft; a manual edit of
// the published downstream survives an upgrade to a new upstream revision
// (Porch's resource-merge upgrade draft).
func TestInjectionChangeAndUpgradeKeepsManualEdit(t *testing.T) {
	t.Parallel() // its own namespace and repositories; the stack and the controller are shared (issue 48 #4)
	e := newEnv(t, "upgrade")
	files := blueprint(t)
	url := e.bareRepo("blueprints")
	e.publishUpstream(url, "app", "v1", files)
	e.repository("blueprints", url, false, nil)
	e.repository("deploy", e.bareRepo("deploy"), true, nil)
	e.apply(cluster)
	e.apply(appProd)
	var draft porchapi.PackageRevision
	e.eventually(converge, "the clone", func() (bool, string) {
		d, ok, msg := e.onlyOwned("deploy", "app")
		draft = d
		return ok, msg
	})

	// The injected object changes: the same draft is updated in place.
	e.apply(strings.Replace(cluster, "db.us-east1.internal:5432", "db2.us-east1.internal:5432", 1))
	e.eventually(converge, "the draft follows the ConfigMap", func() (bool, string) {
		f := e.resources(draft.Name)
		return strings.Contains(f["endpoints.yaml"], "db2.us-east1.internal:5432"), f["endpoints.yaml"]
	})

	// A manual edit in the draft, approved.
	e.writeResources(draft.Name, func(f map[string]string) {
		f["deployment.yaml"] = strings.Replace(f["deployment.yaml"], "app: web\n", "app: web\n    owner: platform-team\n", 1)
	})
	e.approve(draft.Name)
	e.eventually(converge, "Ready on the published revision", func() (bool, string) { return e.ready("app-prod") })

	// Upstream v2 changes the image: pvkit makes an upgrade draft that has both.
	files["deployment.yaml"] = strings.Replace(files["deployment.yaml"], "nginx:1.27", "nginx:1.28", 1)
	e.publishUpstream(url, "app", "v2", files)
	var upgrade porchapi.PackageRevision
	e.eventually(converge, "an upgrade draft", func() (bool, string) {
		for _, r := range e.owned("deploy", "app") {
			if r.Spec.Lifecycle == porchapi.PackageRevisionLifecycleDraft {
				upgrade = r
				return true, ""
			}
		}
		return false, "no draft yet"
	})
	e.eventually(converge, "the upgrade draft mutated", func() (bool, string) { return e.ready("app-prod") })
	f := e.resources(upgrade.Name)
	for _, want := range []string{"nginx:1.28", "owner: platform-team", "namespace: prod"} {
		if !strings.Contains(f["deployment.yaml"], want) {
			t.Errorf("the upgrade draft %s lacks %q:\n%s", upgrade.Name, want, f["deployment.yaml"])
		}
	}
	if !strings.Contains(f["endpoints.yaml"], "db2.us-east1.internal:5432") {
		t.Errorf("the upgrade draft lost the injection:\n%s", f["endpoints.yaml"])
	}
	if n := len(e.owned("deploy", "app")); n != 2 {
		t.Errorf("%d owned revisions, want the published one and the upgrade draft", n)
	}
}

// Deleting variants: deletionPolicy delete deletes a draft and proposes a
// published revision for deletion; orphan leaves the revision, ownerless.
func TestDeletionPolicies(t *testing.T) {
	t.Parallel() // its own namespace and repositories; the stack and the controller are shared (issue 48 #4)
	e := newEnv(t, "delete")
	e.upstream(blueprint(t))
	e.repository("deploy", e.bareRepo("deploy"), true, nil)
	e.apply(cluster)
	variant := func(name, pkg, policy string) string {
		return fmt.Sprintf(`apiVersion: config.porch.kpt.dev/v1alpha1
kind: PackageVariant
metadata: {name: %s}
spec:
  upstream: {repo: blueprints, package: app}
  downstream: {repo: deploy, package: %s}
  deletionPolicy: %s
`, name, pkg, policy)
	}
	e.apply(variant("draft-del", "a", "delete") + "---\n" + variant("pub-del", "b", "delete") + "---\n" + variant("orphan", "c", "orphan"))
	e.eventuallyListed("deploy", converge, "three drafts", func() (bool, string) {
		n := len(e.owned("deploy", "a")) + len(e.owned("deploy", "b")) + len(e.owned("deploy", "c"))
		return n == 3, fmt.Sprintf("%d drafts", n)
	})
	b, _, _ := e.onlyOwned("deploy", "b")
	e.approve(b.Name)
	e.eventually(converge, "pub-del Ready on its published revision", func() (bool, string) { return e.ready("pub-del") })

	if _, err := kubectl("", "delete", "-n", e.ns, "packagevariant", "draft-del", "pub-del", "orphan"); err != nil {
		t.Fatal(err)
	}
	e.eventuallyListed("deploy", converge, "the variants gone and their revisions handled", func() (bool, string) {
		var l pvapi.PackageVariantList
		if err := e.c.List(context.Background(), &l, client.InNamespace(e.ns)); err != nil || len(l.Items) != 0 {
			return false, fmt.Sprintf("%d variants left (%v)", len(l.Items), err)
		}
		a, bs, c := e.revisions("deploy", "a"), e.revisions("deploy", "b"), e.revisions("deploy", "c")
		live := func(rs []porchapi.PackageRevision) (out []porchapi.PackageRevision) {
			for _, r := range rs {
				// Porch lists the branch head as a placeholder revision -1.
				if r.DeletionTimestamp == nil && r.Spec.Revision != -1 {
					out = append(out, r)
				}
			}
			return out
		}
		a, bs, c = live(a), live(bs), live(c)
		if len(a) != 0 {
			return false, "deploy/a's draft is not deleted"
		}
		if len(bs) != 1 || bs[0].Spec.Lifecycle != porchapi.PackageRevisionLifecycleDeletionProposed {
			return false, fmt.Sprintf("deploy/b: %d revisions, want one DeletionProposed", len(bs))
		}
		if len(c) != 1 || c[0].Spec.Lifecycle != porchapi.PackageRevisionLifecycleDraft || len(c[0].OwnerReferences) != 0 {
			return false, fmt.Sprintf("deploy/c: %+v, want the draft left without owner", c)
		}
		return true, ""
	})
}

func stack(t *testing.T, verb string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(repoRoot, "test/porch/stack.sh"), verb, stackDir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("stack.sh %s: %v\n%s", verb, err, out)
	}
}

// porch-server killed and restarted in the middle of a fan-out to 20
// repositories: the set converges with exactly one draft per repository,
// every draft owned (no duplicate, no ownerless draft), every child Ready.
func TestPorchRestartDuringFanOut(t *testing.T) {
	e := newEnv(t, "restart")
	e.upstream(blueprint(t))
	e.apply(cluster)
	var repos []string
	for i := 0; i < 20; i++ {
		r := fmt.Sprintf("edge-%02d", i)
		repos = append(repos, r)
		e.repository(r, e.bareRepo(r), true, map[string]string{"tier": "edge"})
	}
	e.apply(setOver("", `tier: edge`, `      injectors:
      - kind: ConfigMap
        name: us-east1-endpoints
`))
	e.eventually(converge, "the fan-out under way", func() (bool, string) {
		n := 0
		for _, r := range repos {
			n += len(e.owned(r, "app"))
		}
		return n >= 3, fmt.Sprintf("%d drafts", n)
	})
	stack(t, "kill-porch")
	time.Sleep(3 * time.Second)
	// The state a SIGKILL mid-write leaves at times (fresh-clone CI runs:
	// "ref file is empty"), made every time: one repository's cached clone
	// with its branch's ref file empty. The children there name the stall,
	// and the README's remedy heals it when Porch does not.
	broke := e.breakPorchCache(t)
	stack(t, "restart-porch")

	healed := false
	start := time.Now()
	e.eventually(3*converge, "20 children Ready, one owned draft per repository", func() (bool, string) {
		if !healed && (broke || time.Since(start) > converge) {
			healed = e.healPorchCache(t)
		}
		var l pvapi.PackageVariantList
		if err := e.c.List(context.Background(), &l, client.InNamespace(e.ns)); err != nil {
			return false, err.Error()
		}
		if len(l.Items) != 20 {
			return false, fmt.Sprintf("%d children", len(l.Items))
		}
		for _, v := range l.Items {
			if ok, msg := e.ready(v.Name); !ok {
				return false, v.Name + ": " + msg
			}
		}
		for _, r := range repos {
			if n := len(e.owned(r, "app")); n != 1 {
				return false, fmt.Sprintf("%s: %d owned drafts", r, n)
			}
		}
		return true, ""
	})
	// Nothing else: every revision of app in the edge repositories is
	// owned (deleted ones aside), and stays so after every child and the
	// set handled a reconcile request.
	e.handled("after Porch's restart", 2*converge)
	for _, r := range repos {
		for _, rev := range e.revisions(r, "app") {
			if rev.DeletionTimestamp == nil && len(rev.OwnerReferences) == 0 {
				t.Errorf("%s has no owner", rev.Name)
			}
		}
		// Porch's listing can lag after its restart (rule listing-lags:
		// CI run 28 listed edge-19 with no draft, though nothing deleted
		// it): a repository that shows none is nudged; a second draft
		// would never go away.
		e.eventuallyListed(r, converge, r+": one owned draft after every child handled a request", func() (bool, string) {
			n := len(e.owned(r, "app"))
			return n == 1, fmt.Sprintf("%d owned drafts", n)
		})
	}
}
