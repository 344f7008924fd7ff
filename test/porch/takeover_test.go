package porch

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Porch v1.5.3's own PackageVariant and PackageVariantSet controllers
// (built by stack.sh), run with the admin kubeconfig.
var porchControllers *exec.Cmd

const pvkitUser = "system:serviceaccount:pvkit-system:pvkit-controller"

func startPorchControllers(t *testing.T) {
	t.Helper()
	logf, err := os.OpenFile(filepath.Join(stackDir, "porch-controllers.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	porchControllers = exec.Command(filepath.Join(repoRoot, ".cache/porch/bin/porch-controllers"), "--reconcilers=packagevariants,packagevariantsets")
	porchControllers.Env = append(os.Environ(), "KUBECONFIG="+adminKC, "KUBERNETES_SERVICE_HOST=", "KUBERNETES_SERVICE_PORT=")
	porchControllers.Stdout, porchControllers.Stderr = logf, logf
	if err := porchControllers.Start(); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(stackDir, "porch-controllers.pid"), []byte(fmt.Sprint(porchControllers.Process.Pid)), 0o644)
	if err := waitReady("Porch's controllers", "http://127.0.0.1:8081/readyz", logf.Name()); err != nil {
		t.Fatal(err)
	}
}

func stopPorchControllers() { stopProcess(&porchControllers) }

// writes are the package writes an audit log records from one client:
// PackageRevisions created and PackageRevisionResources updated, and all
// its requests.
type writes struct {
	Creates, ResourceWrites, Requests int
	// ByCall counts the requests per "verb resource[/subresource]".
	ByCall map[string]int
}

// auditSize is where the audit log ends now.
func auditSize(t *testing.T) int64 {
	st, err := os.Stat(filepath.Join(stackDir, "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// auditEvent is one request the audit log recorded, as the scenarios read it.
type auditEvent struct {
	Stage     string `json:"stage"`
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	User      struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef struct {
		Resource, Subresource, Namespace, APIGroup, Name string
	} `json:"objectRef"`
}

// scanAudit calls each with every completed request the audit log
// recorded from offset on.
func scanAudit(t *testing.T, offset int64, each func(ev auditEvent)) {
	t.Helper()
	f, err := os.Open(filepath.Join(stackDir, "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() < offset {
		t.Fatalf("the audit log was rotated since offset %d (it has %d bytes): the requests cannot be counted", offset, st.Size())
	}
	if _, err := f.Seek(offset, 0); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev auditEvent
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Stage == "ResponseComplete" {
			each(ev)
		}
	}
}

// audit counts, from offset on, the requests of the clients match picks
// (by user name and user agent), in namespace ns ("" for all).
func audit(t *testing.T, offset int64, ns string, match func(user, agent string) bool) writes {
	t.Helper()
	w := writes{ByCall: map[string]int{}}
	scanAudit(t, offset, func(ev auditEvent) {
		if !match(ev.User.Username, ev.UserAgent) || (ns != "" && ev.ObjectRef.Namespace != ns) {
			return
		}
		w.Requests++
		call := ev.Verb + " " + ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			call += "/" + ev.ObjectRef.Subresource
		}
		w.ByCall[call]++
		switch {
		case ev.ObjectRef.Resource == "packagerevisions" && ev.Verb == "create":
			w.Creates++
		case ev.ObjectRef.Resource == "packagerevisionresources" && (ev.Verb == "update" || ev.Verb == "patch"):
			w.ResourceWrites++
		}
	})
	return w
}

func isPvkit(user, _ string) bool { return user == pvkitUser }

func isPorchControllers(_, agent string) bool { return strings.HasPrefix(agent, "porch-controllers/") }

// fleet creates a set over 10 repositories and two variants with context,
// pipeline and injection, and waits for 12 owned drafts.
func (e *env) fleet(t *testing.T) {
	e.upstream(blueprint(t))
	e.apply(cluster)
	for i := 0; i < 10; i++ {
		r := fmt.Sprintf("site-%02d", i)
		e.repository(r, e.bareRepo(r), true, map[string]string{"fleet": "yes"})
	}
	e.repository("deploy", e.bareRepo("deploy"), true, nil)
	// Pinned: Porch's controllers take the branch placeholder (main) when no
	// workspace name is given, pvkit the latest published revision (rule: upstream-selection); the
	// takeover is exact where both pick the same upstream.
	e.apply(setOver("workspaceName: v1", `fleet: "yes"`, `      packageContext:
        data: {env: prod}
`) + "---\n" + pinned(appProd) + "---\n" + pinned(strings.NewReplacer("name: app-prod", "name: app-staging", "downstream: {repo: deploy, package: app}", "downstream: {repo: deploy, package: app-staging}",
		"env: prod, region", "env: staging, region").Replace(appProd)))
	e.fleetDrafts(t)
}

// fleetDrafts waits until each of the fleet's 12 packages has one draft
// owned by a PackageVariant.
func (e *env) fleetDrafts(t *testing.T) {
	// Porch's controllers sometimes leave a draft without owner and never
	// make it again ("workspaceNames must be unique", the failure pvkit's
	// never-ownerless rule fixes; fresh-clone CI at 2875dfd lost this test
	// to it, 11 of 12 drafts owned for 4.5 minutes). The fleet is their
	// setup here, not what is measured: such a draft, seen twice 10 s
	// apart, is deleted as a person would, and they make it again.
	// Porch's listing can lag a burst of writes (rule listing-lags): a
	// repository whose package shows no owned draft after 30 s is nudged,
	// every 15 s. The message names what is missing, and what Porch lists
	// there, for a failure to say which (fresh-clone CI at 74cedee waited
	// the whole 270 s here without saying).
	seen := map[string]time.Time{}
	start, nudged := time.Now(), map[string]time.Time{}
	e.eventually(3*converge, "12 owned drafts", func() (bool, string) {
		pkgs := [][2]string{{"deploy", "app"}, {"deploy", "app-staging"}}
		for i := 0; i < 10; i++ {
			pkgs = append(pkgs, [2]string{fmt.Sprintf("site-%02d", i), "app"})
		}
		n := 0
		var missing []string
		for _, p := range pkgs {
			owned := e.owned(p[0], p[1])
			if len(owned) > 1 {
				// Porch's controllers sometimes make a second draft of one
				// package (a local run at ef3fb28: site-00's -1 and -2, both
				// approved by this setup, 14 revisions for 13): the setup
				// deletes all but the first, as a person would.
				sort.Slice(owned, func(i, j int) bool { return owned[i].Name < owned[j].Name })
				for _, r := range owned[1:] {
					t.Logf("Porch's controllers made a second draft of %s/%s: %s deleted", p[0], p[1], r.Name)
					_ = e.c.Delete(context.Background(), &r)
				}
				owned = owned[:1]
			}
			n += len(owned)
			revs := e.revisions(p[0], p[1])
			if len(owned) == 0 {
				var listed []string
				for _, r := range revs {
					listed = append(listed, fmt.Sprintf("%s %s owners=%d", r.Name, r.Spec.Lifecycle, len(r.OwnerReferences)))
				}
				missing = append(missing, fmt.Sprintf("%s/%s (Porch lists %v)", p[0], p[1], listed))
				if time.Since(start) > 30*time.Second && time.Since(nudged[p[0]]) > 15*time.Second {
					e.nudge(p[0])
					nudged[p[0]] = time.Now()
				}
			}
			for _, r := range revs {
				if len(r.OwnerReferences) > 0 || r.Spec.Lifecycle != porchapi.PackageRevisionLifecycleDraft || !strings.HasPrefix(r.Spec.WorkspaceName, "packagevariant-") {
					continue
				}
				if first, ok := seen[r.Name]; !ok {
					seen[r.Name] = time.Now()
				} else if time.Since(first) > 10*time.Second {
					t.Logf("Porch's controllers left %s without owner: deleted, for them to make it again", r.Name)
					_ = e.c.Delete(context.Background(), &r)
					delete(seen, r.Name)
				}
			}
		}
		return n == 12, fmt.Sprintf("%d owned drafts; none of %s; Porch's variants: %s", n, strings.Join(missing, ", "), e.porchVariantConditions())
	})
}

// oneDraft is the package's drafts of a PackageVariant (its workspace
// packagevariant-N), one alone, owned if one is: the others, which Porch's
// controllers sometimes make beside it, are deleted (and logged).
func (e *env) oneDraft(repo, pkg string) []porchapi.PackageRevision {
	var drafts []porchapi.PackageRevision
	for _, r := range e.revisions(repo, pkg) {
		if r.DeletionTimestamp == nil && r.Spec.Lifecycle == porchapi.PackageRevisionLifecycleDraft && strings.HasPrefix(r.Spec.WorkspaceName, "packagevariant-") {
			drafts = append(drafts, r)
		}
	}
	// The one kept is an owned one if there is one (CI run 29: Porch's
	// controllers left -1 without owner and made -2 again each time -2 was
	// deleted, sixty times), else the first by name.
	sort.Slice(drafts, func(i, j int) bool {
		if oi, oj := len(drafts[i].OwnerReferences) > 0, len(drafts[j].OwnerReferences) > 0; oi != oj {
			return oi
		}
		return drafts[i].Name < drafts[j].Name
	})
	for _, r := range drafts[min(1, len(drafts)):] {
		e.t.Logf("Porch's controllers made a second draft of %s/%s: %s deleted", repo, pkg, r.Name)
		_ = e.c.Delete(context.Background(), &r)
	}
	return drafts[:min(1, len(drafts))]
}

// porchVariantConditions is each PackageVariant's Ready condition as the
// controller running (Porch's, in the takeover's setup) left it, but the
// Ready ones: what a setup that waits in vain waits on.
func (e *env) porchVariantConditions() string {
	var l pvapi.PackageVariantList
	if err := e.c.List(context.Background(), &l, client.InNamespace(e.ns)); err != nil {
		return err.Error()
	}
	var out []string
	for _, v := range l.Items {
		c := apimeta.FindStatusCondition(v.Status.Conditions, "Ready")
		switch {
		case c == nil:
			out = append(out, v.Name+": no Ready condition")
		case c.Status != metav1.ConditionTrue:
			out = append(out, fmt.Sprintf("%s: Ready %s %s: %s", v.Name, c.Status, c.Reason, c.Message))
		}
	}
	if len(out) == 0 {
		return "every one Ready"
	}
	return strings.Join(out, "; ")
}

// pinned pins a variant's upstream to workspace v1 (see fleet).
func pinned(variant string) string {
	return strings.Replace(variant, "upstream: {repo: blueprints, package: app}", "upstream: {repo: blueprints, package: app, workspaceName: v1}", 1)
}

func (e *env) revisionNames(t *testing.T) map[string]string {
	var l porchapi.PackageRevisionList
	if err := e.c.List(context.Background(), &l, client.InNamespace(e.ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range l.Items {
		if r.DeletionTimestamp == nil && r.Spec.Revision != -1 {
			out[r.Name] = string(r.Spec.Lifecycle)
		}
	}
	return out
}

// Takeover: a fleet converged by Porch's own controllers (half of the
// drafts approved), Porch's controllers stopped, pvkit started: until every
// variant and the set have handled a reconcile request (handled), pvkit
// creates no PackageRevision and writes no package, and every variant is
// Ready; a spec change then is written, and the same check sees it. Then the reverse (Porch's controllers back), measured
// and reported.
// (rule: takeover-zero-writes)
func TestTakeoverFromPorchControllers(t *testing.T) {
	e := newEnv(t, "takeover")
	stopController()
	t.Cleanup(func() {
		stopPorchControllers()
		if controller == nil {
			if err := startController(); err != nil {
				t.Error(err)
			}
		}
	})
	startPorchControllers(t)
	e.fleet(t)
	// Approve the drafts of six packages, then let Porch's controllers
	// settle. A package's draft is approved only while it is the package's
	// one draft (Porch's controllers sometimes make a second one of a
	// package, owned or not, a while after the first: a local run at
	// ef3fb28 approved site-00's -1 and -2, 14 revisions for 13; the extra
	// one is deleted, as a person would) and once Porch's controller has
	// mutated it (its package context holds the variant's env): approved
	// between its clone and its mutation, Porch publishes it unmutated and
	// its controller makes a second draft to mutate it (seen at d3d3d98
	// and 286c49b, site-09 packagevariant-2), and the fleet is not
	// converged.
	pkgs := []string{"deploy/app", "deploy/app-staging"}
	for i := 0; i < 10; i++ {
		pkgs = append(pkgs, fmt.Sprintf("site-%02d/app", i))
	}
	for _, p := range pkgs[:6] {
		repo, pkg, _ := strings.Cut(p, "/")
		var name string
		e.eventually(converge, p+": one draft, mutated by Porch's controller", func() (bool, string) {
			drafts := e.oneDraft(repo, pkg)
			if len(drafts) != 1 {
				return false, fmt.Sprintf("%d drafts", len(drafts))
			}
			name = drafts[0].Name
			if len(drafts[0].OwnerReferences) == 0 {
				return false, name + " has no owner yet"
			}
			return strings.Contains(e.resources(name)["package-context.yaml"], "env: "), name + "'s package context has no env yet"
		})
		e.approve(name)
	}
	// Converged, by evidence: Porch lists a revision of every variant's
	// package (its listing can lag a burst of writes: the repository of one
	// that is missing is nudged, eventuallyListed), and the listing has
	// stopped changing. (A 10 s sleep here once missed site-07's draft, and
	// pvkit, taking over, made it again.)
	for _, p := range pkgs {
		repo, pkg, _ := strings.Cut(p, "/")
		e.eventuallyListed(repo, converge, "Porch lists a revision of "+p, func() (bool, string) {
			return len(e.revisions(repo, pkg)) > 0, "none"
		})
	}
	e.stable("Porch's controllers after the approvals", converge, func() string {
		for _, p := range pkgs { // a second draft made meanwhile goes too
			repo, pkg, _ := strings.Cut(p, "/")
			e.oneDraft(repo, pkg)
		}
		return fmt.Sprint(e.revisionNames(t))
	})
	stopPorchControllers()
	// A second draft Porch's controllers made between the last look and
	// their stop goes too, and its deletion is listed (CI run 28: site-06's
	// -2, made and deleted four times, was listed again after the stop).
	e.eventually(converge, "one revision per variant once Porch's controllers stopped", func() (bool, string) {
		for _, p := range pkgs {
			repo, pkg, _ := strings.Cut(p, "/")
			e.oneDraft(repo, pkg)
		}
		names := e.revisionNames(t)
		return len(names) == len(pkgs)+1, fmt.Sprint(names)
	})
	before := e.revisionNames(t)
	if n := len(before); n != len(pkgs)+1 { // and the blueprint
		t.Fatalf("Porch's controllers left %d revisions, want %d: %v", n, len(pkgs)+1, before)
	}

	offset := auditSize(t)
	if err := startController(); err != nil {
		t.Fatal(err)
	}
	// Evidence, not time (issue 48 #3): every variant and the set handled a
	// reconcile request after the takeover's first reconciles.
	took := e.handled("takeover", 3*converge)
	w := audit(t, offset, e.ns, isPvkit)
	t.Logf("pvkit, taking over 12 variants (handled in %s): %d requests, %d PackageRevisions created, %d package writes", took.Round(time.Second), w.Requests, w.Creates, w.ResourceWrites)
	if w.Creates != 0 || w.ResourceWrites != 0 {
		t.Errorf("pvkit created %d PackageRevisions and wrote %d packages while taking over a converged fleet", w.Creates, w.ResourceWrites)
	}
	after := e.revisionNames(t)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("the revisions changed on takeover:\nbefore %v\nafter  %v", before, after)
	}
	var l pvapi.PackageVariantList
	if err := e.c.List(context.Background(), &l, client.InNamespace(e.ns)); err != nil {
		t.Fatal(err)
	}
	for _, v := range l.Items {
		if ok, msg := e.ready(v.Name); !ok {
			t.Errorf("%s after takeover: %s", v.Name, msg)
		}
	}

	// The check catches a write: a variant whose package context changes
	// is written, and the same evidence and audit say so.
	offset = auditSize(t)
	if out, err := kubectl("", "-n", e.ns, "patch", "packagevariant", "app-staging", "--type", "merge",
		"-p", `{"spec":{"packageContext":{"data":{"takeover-check":"written"}}}}`); err != nil {
		t.Fatalf("patching app-staging: %v: %s", err, out)
	}
	e.handled("a variant whose spec changed", 3*converge)
	if w := audit(t, offset, e.ns, isPvkit); w.Creates+w.ResourceWrites == 0 {
		t.Errorf("the check saw no package write after a variant's package context changed: %+v", w)
	}

	// The reverse: pvkit stopped, Porch's controllers back until their
	// requests settle. What they do is Porch's behaviour, reported here,
	// not pvkit's to assert.
	stopController()
	offset = auditSize(t)
	startPorchControllers(t)
	e.stable("Porch's controllers after taking back", converge, func() string { return fmt.Sprint(audit(t, offset, e.ns, isPorchControllers).Requests) })
	w = audit(t, offset, e.ns, isPorchControllers)
	t.Logf("Porch's controllers after taking back: %d requests, %d PackageRevisions created, %d package writes", w.Requests, w.Creates, w.ResourceWrites)
	if after2 := e.revisionNames(t); fmt.Sprint(after) != fmt.Sprint(after2) {
		t.Logf("Porch's controllers changed the revisions on the way back:\nbefore %v\nafter  %v", after, after2)
	}
}
