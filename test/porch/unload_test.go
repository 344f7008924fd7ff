package porch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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

// healPorchCache does what the README ("Porch failing") says an operator does when
// Porch v1.5.3 is stuck on a repository after porch-server was killed
// mid-write (fresh-clone CI run 42: the SIGKILL of
// TestPorchRestartDuringFanOut left edge-14's cached clone with
// refs/remotes/origin/main all zeros; every fetch of it failed and every
// listing timed out for minutes, no end in sight): porch-server stopped,
// the cached clones of the namespace's repositories whose refs are broken
// removed, porch-server started again. Whether it had to is logged: it is
// Porch's failure mode, not pvkit's, and pvkit must converge after it.
//
// Before the remedy, the stall must be named where an operator looks: a
// child of the namespace says "Porch's repository NS/REPO has failed every
// write" (README, "Porch failing"): no in-API action heals Porch v1.5.3's
// cache, so the named stall is what pvkit owes.
func (e *env) healPorchCache(t *testing.T) bool {
	t.Helper()
	broken := e.brokenPorchCaches()
	if len(broken) == 0 {
		return false
	}
	var repos []string
	for _, d := range broken {
		if _, r, ok := strings.Cut(strings.TrimSuffix(filepath.Base(d), ".git"), e.ns+"-"); ok {
			repos = append(repos, r)
		}
	}
	e.eventually(2*converge, "a child names Porch's failing repository before the remedy ("+strings.Join(repos, ", ")+")", func() (bool, string) {
		var l pvapi.PackageVariantList
		if err := e.c.List(context.Background(), &l, client.InNamespace(e.ns)); err != nil {
			return false, err.Error()
		}
		var not []string
		for _, v := range l.Items {
			ok, msg := e.ready(v.Name)
			for _, r := range repos {
				if !ok && (strings.Contains(msg, "repository "+e.ns+"/"+r+")") || strings.Contains(msg, "Porch's repository "+e.ns+"/"+r+" has failed every write")) {
					t.Logf("named before the remedy: %s: %s", v.Name, msg)
					return true, ""
				}
			}
			if !ok {
				not = append(not, v.Name+": "+msg)
			}
		}
		return false, fmt.Sprintf("%d children, none naming the repository; not Ready: %s", len(l.Items), strings.Join(not, "; "))
	})
	stack(t, "kill-porch")
	for _, d := range broken {
		if err := os.RemoveAll(d); err != nil {
			t.Fatal(err)
		}
	}
	stack(t, "restart-porch")
	t.Logf("Porch's cache was broken by the kill (a ref of zeros, or an empty ref file) in %d repositories: the stall named, the clones removed, porch-server restarted (%s)", len(broken), strings.Join(broken, ", "))
	return true
}

// brokenPorchCaches are the cached clones of the namespace's repositories
// whose refs Porch cannot read (a ref of zeros, or none readable).
func (e *env) brokenPorchCaches() []string {
	dirs, _ := filepath.Glob(filepath.Join(stackDir, "porch-cache", "git", "*"+e.ns+"*"))
	var broken []string
	for _, d := range dirs {
		out, err := exec.Command("git", "-C", d, "for-each-ref", "--format=%(objectname) %(refname)").CombinedOutput()
		if err != nil || strings.Contains(string(out), strings.Repeat("0", 40)) || strings.Contains(string(out), "broken ref") || emptyRef(d) {
			broken = append(broken, d)
		}
	}
	return broken
}

// emptyRef reports whether a clone has a loose ref file that is empty
// (go-git, which Porch reads its clones with: "ref file is empty").
func emptyRef(dir string) bool {
	gitDir, err := exec.Command("git", "-C", dir, "rev-parse", "--absolute-git-dir").Output()
	if err != nil {
		return false
	}
	empty := false
	filepath.WalkDir(filepath.Join(strings.TrimSpace(string(gitDir)), "refs"), func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil && fi.Size() == 0 {
				empty = true
			}
		}
		return nil
	})
	return empty
}

// breakPorchCache empties the loose ref file of the branch of the first
// cached clone of the namespace's edge repositories (porch-server
// stopped), as a SIGKILL mid-write of it leaves it (Porch then says "ref
// file is empty"; a ref of zeros written the same way Porch fetches over
// at its start: measured, the fan-out converged in 6 s); false when there
// is none.
func (e *env) breakPorchCache(t *testing.T) bool {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(stackDir, "porch-cache", "git", "*"+e.ns+"*edge*"))
	for _, d := range dirs {
		out, err := exec.Command("git", "-C", d, "for-each-ref", "--format=%(refname)", "refs/remotes/origin/main", "refs/heads/main").Output()
		if err != nil || len(strings.Fields(string(out))) == 0 {
			continue
		}
		ref := strings.Fields(string(out))[0]
		gitDir, err := exec.Command("git", "-C", d, "rev-parse", "--absolute-git-dir").Output()
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		if err := os.WriteFile(filepath.Join(strings.TrimSpace(string(gitDir)), ref), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("broke Porch's cached clone %s: %s is an empty file", d, ref)
		return true
	}
	t.Logf("no cached clone of an edge repository to break (%d dirs)", len(dirs))
	return false
}
