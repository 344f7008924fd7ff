package porch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// startShard runs one more controller, for shard key, beside the suite's
// (which, started with no --shard, is the unlabelled shard); it is
// stopped when the test ends.
func startShard(t *testing.T, key string) {
	t.Helper()
	logf, err := os.OpenFile(filepath.Join(stackDir, "pvkit-controller-"+key+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	addrs, err := freeAddrs(2)
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := runController("shard "+key+"'s controller", []string{"--kubeconfig", filepath.Join(stackDir, "pvkit-controller.kubeconfig"),
		"--metrics-bind-address", addrs[1], "--health-probe-bind-address", addrs[0], "--workers", workers(), "--zap-encoder", "console",
		"--leader-elect", "--leader-election-namespace", "pvkit-system", "--shard", key}, logf, addrs[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopProcess(&cmd); logf.Close() })
}

// shardWrite is one write the audit log recorded, by the shard whose
// controller made it ("-": the unlabelled shard's, the suite's controller).
type shardWrite struct {
	shard, verb, resource, name string
}

// shardWrites are the writes pvkit's controllers made in ns from offset
// on, each with the shard its user agent names (shard/KEY).
func shardWrites(t *testing.T, offset int64, ns string) []shardWrite {
	t.Helper()
	var out []shardWrite
	scanAudit(t, offset, func(ev auditEvent) {
		if ev.User.Username != pvkitUser || ev.ObjectRef.Namespace != ns {
			return
		}
		switch ev.Verb {
		case "create", "update", "patch", "delete":
		default:
			return
		}
		_, shard, ok := strings.Cut(ev.UserAgent, " shard/")
		if !ok {
			t.Fatalf("a pvkit request without its shard in the user agent: %q", ev.UserAgent)
		}
		out = append(out, shardWrite{shard, ev.Verb, ev.ObjectRef.Resource, ev.ObjectRef.Name})
	})
	return out
}

// setOf says which of the scenario's sets a written object belongs to
// (sa, sb, su: their children's names start with the set's, their
// packages are app-a, app-b, app-u), or "". A create names no object in
// the audit log (the name is in its body): "?".
func setOf(w shardWrite) string {
	if w.name == "" && w.verb == "create" {
		return "?"
	}
	for _, s := range []string{"sa", "sb", "su"} {
		pkg := ".app-" + s[1:] + "."
		switch w.resource {
		case "packagevariants", "packagevariantsets", "events":
			if w.name == s || strings.HasPrefix(w.name, s+"-") || strings.HasPrefix(w.name, s+".") {
				return s
			}
		case "packagerevisions", "packagerevisionresources":
			if strings.Contains(w.name, pkg) {
				return s
			}
		}
	}
	return ""
}

func shardSet(name, shard, pkg string) string {
	labels := ""
	if shard != "" {
		labels = fmt.Sprintf("\n  labels: {%s: %s}", v1alpha2.ShardLabel, shard)
	}
	return fmt.Sprintf(`apiVersion: config.porch.kpt.dev/v1alpha2
kind: PackageVariantSet
metadata:
  name: %s%s
spec:
  upstream: {repo: blueprints, package: app}
  targets:
  - repositorySelector:
      matchLabels: {fleet: "yes"}
    template:
      downstream: {package: %s}
`, name, labels, pkg)
}

// Issue 56 #1: two shard controllers on the stack beside the suite's: each
// reconciles only its own sets and their children (the audit log, by user
// agent, shows it never wrote another's), the suite's controller takes
// what has no label, and a relabelled set is handed over, its children
// with it, with no duplicate or ownerless draft; the new shard then
// reconciles its changes, the old one writes nothing of it.
func TestShardsOnPorch(t *testing.T) {
	t.Parallel() // its own namespace and repositories; the shards' controllers see only its labelled sets
	e := newEnv(t, "shards")
	startShard(t, "a")
	startShard(t, "b")
	e.upstream(blueprint(t))
	repos := []string{"r1", "r2", "r3"}
	for _, r := range repos {
		e.repository(r, e.bareRepo(r), true, map[string]string{"fleet": "yes"})
	}
	offset := auditSize(t)
	e.apply(shardSet("sa", "a", "app-a") + "---\n" + shardSet("sb", "b", "app-b") + "---\n" + shardSet("su", "", "app-u"))
	oneDraftEach := func(sets ...string) (bool, string) {
		for _, s := range sets {
			by := e.ownedByRepository("app-" + s[1:])
			for _, r := range repos {
				if n := len(by[r]); n != 1 {
					return false, fmt.Sprintf("%s/app-%s: %d owned revisions", r, s[1:], n)
				}
			}
		}
		return true, ""
	}
	e.eventually(converge, "a draft per set and repository", func() (bool, string) { return oneDraftEach("sa", "sb", "su") })
	e.eventually(converge, "nine children Ready", func() (bool, string) { return e.allReady(9) })
	labelsOf := func() map[string]string {
		var l pvapi.PackageVariantList
		if err := e.c.List(context.Background(), &l, client.InNamespace(e.ns)); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, v := range l.Items {
			out[v.Name] = v.Labels[v1alpha2.ShardLabel]
		}
		return out
	}
	for name, shard := range labelsOf() {
		if want := map[string]string{"sa": "a", "sb": "b", "su": ""}[name[:2]]; shard != want {
			t.Errorf("child %s in shard %q, want %q (its set's)", name, shard, want)
		}
	}
	e.stable("every shard's writes", converge, func() string { return fmt.Sprint(len(shardWrites(t, offset, e.ns))) })
	for _, key := range []string{"a", "b"} {
		var l coordinationv1.Lease
		if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: "pvkit-system", Name: "pvkit-controller-" + key + ".pvkit.dev"}, &l); err != nil || l.Spec.HolderIdentity == nil {
			t.Errorf("shard %s's Lease: %v %+v", key, err, l.Spec)
		}
	}
	owner := map[string]string{"sa": "a", "sb": "b", "su": "-"}
	wrote, creates := map[string]int{}, map[string]int{}
	for _, w := range shardWrites(t, offset, e.ns) {
		s := setOf(w)
		if s == "?" {
			creates[w.shard]++
			continue
		}
		if s == "" {
			t.Errorf("shard %s wrote %s %s %s, of no set of the scenario", w.shard, w.verb, w.resource, w.name)
			continue
		}
		if owner[s] != w.shard {
			t.Errorf("shard %s wrote %s %s %s, of set %s (shard %s's)", w.shard, w.verb, w.resource, w.name, s, owner[s])
		}
		wrote[w.shard]++
	}
	if wrote["a"] == 0 || wrote["b"] == 0 || wrote["-"] == 0 {
		t.Fatalf("writes by shard: %v; want every shard to have written its own", wrote)
	}
	t.Logf("writes by shard before the hand-over: %v, and creates (unnamed in the audit log) %v", wrote, creates)

	// sb moves to shard a; then its template changes: shard a writes it,
	// shard b nothing.
	offset = auditSize(t)
	if out, err := kubectl("", "-n", e.ns, "label", "packagevariantsets", "sb", v1alpha2.ShardLabel+"=a", "--overwrite"); err != nil {
		t.Fatal(out, err)
	}
	e.eventually(converge, "sb handed over to shard a", func() (bool, string) {
		var set pvsapi.PackageVariantSet
		if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: "sb"}, &set); err != nil {
			return false, err.Error()
		}
		l := labelsOf()
		var moved []string
		for name, shard := range l {
			if strings.HasPrefix(name, "sb-") && shard == "a" {
				moved = append(moved, name)
			}
		}
		return set.Status.Shard == "a" && len(moved) == 3, fmt.Sprintf("status.shard %q, children in a: %v", set.Status.Shard, moved)
	})
	e.retry("changing sb's template", func() error {
		var set pvsapi.PackageVariantSet
		if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: "sb"}, &set); err != nil {
			return err
		}
		set.Spec.Targets[0].Template.PackageContext = &v1alpha2.PackageContextTemplate{Data: map[string]string{"moved-to": "shard-a"}}
		return e.c.Update(context.Background(), &set)
	})
	e.eventually(converge, "sb's drafts carry the change", func() (bool, string) {
		by := e.ownedByRepository("app-b")
		for _, r := range repos {
			if len(by[r]) != 1 {
				return false, fmt.Sprintf("%s/app-b: %d owned revisions", r, len(by[r]))
			}
			if f := e.resources(by[r][0].Name); !strings.Contains(f["package-context.yaml"], "moved-to: shard-a") {
				return false, r + ": " + f["package-context.yaml"]
			}
		}
		return true, ""
	})
	e.eventually(converge, "nine children Ready", func() (bool, string) { return e.allReady(9) })
	if ok, msg := oneDraftEach("sa", "sb", "su"); !ok {
		t.Fatalf("after the hand-over: %s", msg)
	}
	if ownerless := e.ownerless("app-b"); len(ownerless) > 0 {
		t.Fatalf("ownerless revisions of app-b after the hand-over: %v", ownerless)
	}
	e.stable("the hand-over's writes", converge, func() string { return fmt.Sprint(len(shardWrites(t, offset, e.ns))) })
	owner["sb"] = "a"
	byShard := map[string]int{}
	for _, w := range shardWrites(t, offset, e.ns) {
		if s := setOf(w); s != "" && s != "?" && owner[s] != w.shard {
			t.Errorf("after the hand-over, shard %s wrote %s %s %s, of set %s (shard %s's)", w.shard, w.verb, w.resource, w.name, s, owner[s])
		}
		if setOf(w) == "sb" {
			byShard[w.shard]++
		}
	}
	if byShard["a"] == 0 {
		t.Fatalf("shard a made no write for sb after taking it over: %v", byShard)
	}
	for _, w := range shardWrites(t, offset, e.ns) {
		if w.shard == "b" { // shard b has nothing left: not even a create
			t.Errorf("after the hand-over, shard b wrote %s %s %q", w.verb, w.resource, w.name)
		}
	}
	t.Logf("writes for sb after the hand-over, by shard: %v", byShard)

	// Back to the unlabelled shard, the suite's controller (which then
	// unloads the namespace): the label goes from the set and its children.
	for _, s := range []string{"sa", "sb"} {
		if out, err := kubectl("", "-n", e.ns, "label", "packagevariantsets", s, v1alpha2.ShardLabel+"-"); err != nil {
			t.Fatal(out, err)
		}
	}
	e.eventually(converge, "every child in the unlabelled shard", func() (bool, string) {
		var labelled []string
		for name, shard := range labelsOf() {
			if shard != "" {
				labelled = append(labelled, name+"="+shard)
			}
		}
		sort.Strings(labelled)
		return len(labelled) == 0, strings.Join(labelled, ", ")
	})
	e.eventually(converge, "nine children Ready", func() (bool, string) { return e.allReady(9) })
	if ok, msg := oneDraftEach("sa", "sb", "su"); !ok {
		t.Fatalf("back in the unlabelled shard: %s", msg)
	}
}

// ownerless are the namespace's unpublished revisions of pkg that no
// variant owns (the branch placeholder aside).
func (e *env) ownerless(pkg string) []string {
	e.t.Helper()
	var all porchapi.PackageRevisionList
	if err := e.c.List(context.Background(), &all, client.InNamespace(e.ns)); err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, r := range all.Items {
		if r.Spec.PackageName == pkg && len(r.OwnerReferences) == 0 && r.Spec.Lifecycle != porchapi.PackageRevisionLifecyclePublished &&
			r.Spec.WorkspaceName != "main" && r.DeletionTimestamp == nil {
			out = append(out, r.Name)
		}
	}
	return out
}
