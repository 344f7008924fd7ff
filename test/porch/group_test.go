package porch

import (
	"context"
	"fmt"
	"strings"
	"testing"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// groupMember is a member package of the group's catalog: a ConfigMap
// saying its version, and, broken, a validator that refuses it (its draft
// does not render, so Porch does not create it).
func groupMember(name, version string, broken bool) map[string]string {
	files := map[string]string{
		"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: free5gc-" + name + "\n",
		"nf.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  version: " + version + "\n",
	}
	if broken {
		files["Kptfile"] += "pipeline:\n  validators:\n  - image: ghcr.io/kptdev/krm-functions-catalog/starlark:v0.4.3\n    configPath: broken.yaml\n"
		files["broken.yaml"] = "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: broken\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\nsource: |\n  fail(\"" + name + " " + version + " is broken\")\n"
	}
	return files
}

// groupOf is the group package's files at revision n: upf and smf at
// their catalog revision n.
func groupOf(n int) map[string]string {
	return map[string]string{
		"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: free5gc\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n",
		"group.yaml": fmt.Sprintf("apiVersion: pvkit.dev/v1alpha1\nkind: PackageGroup\nmetadata:\n  name: free5gc\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n"+
			"spec:\n  members:\n  - {name: upf, upstream: {repo: catalog, package: free5gc-upf, revision: %d}}\n  - {name: smf, upstream: {repo: catalog, package: free5gc-smf, revision: %d}}\n", n, n),
	}
}

// groupAt is where each target's members are: the group revision their
// PackageVariants come from, "mixed" when they disagree.
func (e *env) groupAt() map[string]string {
	e.t.Helper()
	var l pvapi.PackageVariantList
	if err := e.c.List(context.Background(), &l, client.InNamespace(e.ns)); err != nil {
		e.t.Fatal(err)
	}
	at := map[string]string{}
	for _, v := range l.Items {
		u, rev := v.Spec.Downstream.Repo, v.Annotations["pvkit.dev/group-revision"]
		if was, ok := at[u]; ok && was != rev {
			at[u] = "mixed"
		} else if !ok {
			at[u] = rev
		}
	}
	return at
}

// listed waits until Porch lists revision n of both members.
func (e *env) listed(n int) {
	e.t.Helper()
	e.eventually(converge, fmt.Sprintf("Porch lists the members' v%d", n), func() (bool, string) {
		c := 0
		for _, m := range []string{"free5gc-upf", "free5gc-smf"} {
			for _, r := range e.revisions("catalog", m) {
				if r.Spec.Revision == n && r.Spec.Lifecycle == porchapi.PackageRevisionLifecyclePublished {
					c++
				}
			}
		}
		return c == 2, fmt.Sprintf("%d of 2", c)
	})
}

// memberAt says whether a repository's newest published revision of a
// member is locked to the member's catalog revision rev.
func (e *env) memberAt(repo, member, rev string) bool {
	newest, lock := 0, ""
	for _, r := range e.owned(repo, member) {
		if r.Spec.Lifecycle == porchapi.PackageRevisionLifecyclePublished && r.Spec.Revision > newest {
			newest = r.Spec.Revision
			if l := r.Status.UpstreamLock; l != nil && l.Git != nil {
				lock = l.Git.Ref
			}
		}
	}
	return lock == "free5gc-"+member+"/"+rev
}

// Issue 59's acceptance on a real Porch (rule package-groups): a group of
// two (upf, smf) over five repositories, in two waves. The group's v2,
// whose smf does not render, fails in the canary: the canary's upf is
// held back, the rollout pauses naming the member and no other target
// moves; undo brings the canary's
// two members back to v1. The group's v3 then goes out in both waves, no
// target counted done with members of two group revisions, every
// target's two members at v3 in the end.
func TestGroupReleaseOnPorch(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "groups")
	approvingController(t)
	catalog := e.bareRepo("catalog")
	for _, m := range []string{"upf", "smf"} {
		e.publishUpstream(catalog, "free5gc-"+m, "v1", groupMember(m, "v1", false))
	}
	e.repository("catalog", catalog, false, nil)
	bp := e.bareRepo("blueprints")
	e.publishUpstream(bp, "free5gc", "v1", groupOf(1))
	e.repository("blueprints", bp, false, nil)
	repos := make([]string, 5)
	for i := range repos {
		l := map[string]string{"role": "edge"}
		if i == 0 {
			l["ring"] = "canary"
		}
		repos[i] = fmt.Sprintf("g5-%d", i)
		e.repository(repos[i], e.bareRepo(repos[i]), true, l)
	}
	e.eventually(converge, "Porch lists the catalog's v1 and the group's v1", func() (bool, string) {
		n := len(e.revisions("catalog", "free5gc-upf")) + len(e.revisions("catalog", "free5gc-smf")) + len(e.revisions("blueprints", "free5gc"))
		return n >= 3, fmt.Sprintf("%d revisions", n)
	})
	e.apply(`apiVersion: config.porch.kpt.dev/v1alpha2
kind: PackageVariantSet
metadata: {name: free5gc}
spec:
  group: {repo: blueprints, package: free5gc}
  targets:
  - repositorySelector:
      matchLabels: {role: edge}
    template:
      annotations: {approval.nephio.org/policy: always}
  rollout:
    errorBudget: 0
    progressDeadlineSeconds: 120
    waves:
    - name: canary
      selector:
        matchLabels: {ring: canary}
    - name: rest
`)
	allAt := func(rev string) (bool, string) {
		c := 0
		for _, r := range repos {
			if e.memberAt(r, "upf", rev) && e.memberAt(r, "smf", rev) {
				c++
			}
		}
		return c == len(repos), fmt.Sprintf("%d of %d targets with both members published at %s; %v", c, len(repos), rev, e.groupAt())
	}
	e.eventually(4*converge, "every target's two members published at v1", func() (bool, string) { return allAt("v1") })

	// v2: smf's does not render.
	e.publishUpstream(catalog, "free5gc-upf", "v2", groupMember("upf", "v2", false))
	e.publishUpstream(catalog, "free5gc-smf", "v2", groupMember("smf", "v2", true))
	e.listed(2) // the members first, as a release is made: then the group that names them
	e.publishUpstream(bp, "free5gc", "v2", groupOf(2))
	set := &pvsapi.PackageVariantSet{}
	rolloutSays := func() string {
		if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: "free5gc"}, set); err != nil || set.Status.Rollout == nil {
			return fmt.Sprint(err)
		}
		r := set.Status.Rollout
		return string(r.Phase) + " " + r.Target.Name + ": " + r.Message
	}
	e.eventually(4*converge, "the rollout paused in the canary, naming smf", func() (bool, string) {
		s := rolloutSays()
		return strings.HasPrefix(s, "Paused ") && strings.Contains(s, "more than wave canary's error budget of 0 (a first wave's, unless its errorBudget says otherwise): g5-0: member smf (free5gc-g5-0-smf)"), s
	})
	// On its own failure: its render (Porch answers the upgrade's create
	// with the renderer's error), not Porch failing its repository.
	if s := rolloutSays(); !strings.Contains(s, "member smf (free5gc-g5-0-smf): not Ready for 2m0s (RenderFailed: ") || strings.Contains(s, "has failed every write") {
		t.Fatalf("the canary failed, but not on smf's render: %s", s)
	}
	for _, r := range repos[1:] {
		if at := e.groupAt()[r]; at != "blueprints.free5gc.v1" {
			t.Fatalf("%s moved past the failed canary: %s", r, at)
		}
	}
	// The canary's upf, whose v2 draft renders, is held back: a target's
	// members are published together.
	if s := rolloutSays(); !strings.Contains(s, "held back, the other members of g5-0 (member smf (free5gc-g5-0-smf)") || !e.memberAt("g5-0", "upf", "v1") {
		t.Fatalf("the canary's upf was not held back at v1 (newest published at v1: %v): %s", e.memberAt("g5-0", "upf", "v1"), s)
	}
	if _, err := kubectl("", "annotate", "-n", e.ns, "packagevariantset", "free5gc", "pvkit.dev/rollout-undo=blueprints.free5gc.v2"); err != nil {
		t.Fatal(err)
	}
	e.eventually(4*converge, "undo: the canary's two members back at v1", func() (bool, string) {
		return e.groupAt()["g5-0"] == "blueprints.free5gc.v1" && e.memberAt("g5-0", "upf", "v1") && e.memberAt("g5-0", "smf", "v1"),
			fmt.Sprintf("%v; upf at v1 %v", e.groupAt(), e.memberAt("g5-0", "upf", "v1"))
	})

	// v3, both members good: out in both waves. A target the rollout
	// counts done never has members of two group revisions.
	e.publishUpstream(catalog, "free5gc-upf", "v3", groupMember("upf", "v3", false))
	e.publishUpstream(catalog, "free5gc-smf", "v3", groupMember("smf", "v3", false))
	e.listed(3)
	e.publishUpstream(bp, "free5gc", "v3", groupOf(3))
	e.eventually(4*converge, "the group's v3 Complete, every target's two members published at v3", func() (bool, string) {
		s := rolloutSays()
		if r := set.Status.Rollout; r != nil && r.Target.Name == "blueprints.free5gc.v3" {
			at := e.groupAt()
			for _, w := range r.Waves {
				done := append([]string(nil), w.DoneMembers...)
				if w.State == "Complete" {
					done = w.Members
				}
				for _, u := range done {
					if at[u] != "blueprints.free5gc.v3" {
						t.Fatalf("target %s counted done with its members at %s", u, at[u])
					}
				}
			}
		}
		ok, why := allAt("v3")
		return ok && strings.HasPrefix(s, "Complete blueprints.free5gc.v3"), s + "; " + why
	})
}
