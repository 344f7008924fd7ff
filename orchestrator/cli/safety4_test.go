package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"

	"github.com/google/go-cmp/cmp"

	"github.com/pvkit/pvkit/internal/fntest"
)

// Regression cases of the fifth attack pass (issue 47, docs/security.md
// "round four"): each failed on the code before it.

// Issue 47 #7: the lock was opened following a link, and its target
// truncated; a repository linked into --repos was skipped unsaid
// ("holds 1 entries and no bare repository").
func TestLockAndRepositoryLinksRefused(t *testing.T) {
	t.Run("lock is a link", func(t *testing.T) {
		w := newWS(t)
		victim := filepath.Join(t.TempDir(), "victim")
		if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
			t.Fatal(err)
		}
		lock := filepath.Join(w.repos, ".pvctl.lock")
		_ = os.Remove(lock)
		if err := os.Symlink(victim, lock); err != nil {
			t.Fatal(err)
		}
		before := strings.Join(w.revisions(), "\n")
		code, _, errs := w.cmd("run", "-f", w.in)
		if code != ExitUsage || !strings.Contains(errs, lock+" is a symbolic link") {
			t.Fatalf("run: exit %d, %q", code, errs)
		}
		if b, _ := os.ReadFile(victim); string(b) != "precious" {
			t.Fatalf("the link's target was written: %q", b)
		}
		if after := strings.Join(w.revisions(), "\n"); after != before {
			t.Fatalf("run wrote:\n%s", after)
		}
	})
	t.Run("lock is a FIFO", func(t *testing.T) {
		w := newWS(t)
		lock := filepath.Join(w.repos, ".pvctl.lock")
		_ = os.Remove(lock)
		if err := syscall.Mkfifo(lock, 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs := w.cmd("run", "-f", w.in)
		if code != ExitUsage || !strings.Contains(errs, "the lock "+lock+" is not a regular file") {
			t.Fatalf("run: exit %d, %q", code, errs)
		}
	})
	t.Run("repository is a link", func(t *testing.T) {
		w := newWS(t)
		moved := filepath.Join(t.TempDir(), "blueprints.git")
		if err := os.Rename(filepath.Join(w.repos, "blueprints.git"), moved); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(w.repos, "blueprints.git")
		if err := os.Symlink(moved, link); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"publish", "--repo", "blueprints", "--package", "other", filepath.Join(fntest.RepoRoot(), "examples", "app")},
			{"run", "-f", w.in},
			{"get"},
		} {
			code, _, errs := w.cmd(args[0], args[1:]...)
			if code != ExitUsage || !strings.Contains(errs, link+" is a symbolic link") || strings.Contains(errs, "no bare repository") {
				t.Fatalf("%s: exit %d, %q", args[0], code, errs)
			}
		}
	})
}

// Issue 47 #11: a run started from the wrong directory created
// ./repositories and a second fleet there, with only a warning. It starts
// one only where told to: --repos (or $PVCTL_REPOS) naming a new
// directory.
func TestRunStartsAFleetOnlyWhereTold(t *testing.T) {
	w := newWS(t)
	elsewhere := t.TempDir()
	t.Chdir(elsewhere)
	t.Setenv("PVCTL_REPOS", "")
	var out, errb strings.Builder
	code := Command(context.Background(), "run", []string{"-f", w.in}, &out, &errb)
	if code != ExitUsage || !strings.Contains(errb.String(), "no repositories directory repositories in "+elsewhere+", and none named: run starts a fleet only where it is told to") {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Fatalf("the refused run made %v", entries)
	}
	// The files without their blueprints Repository: a new fleet of
	// deployment repositories only (a blueprints repository that is not
	// there is an error of its own, issue 46 #5).
	in := filepath.Join(t.TempDir(), "in")
	fntest.WriteTree(t, in, fntest.ReadTree(t, w.in))
	repos := readFile(t, filepath.Join(in, "repositories.yaml"))
	_, rest, _ := strings.Cut(repos, "---\n")
	if err := os.WriteFile(filepath.Join(in, "repositories.yaml"), []byte(rest), 0o644); err != nil || !strings.Contains(repos, "name: blueprints") || strings.Contains(rest, "name: blueprints") {
		t.Fatalf("examples/local/repositories.yaml changed: %v", err)
	}
	// A plan writes nothing: it still plans, and names the directory.
	errb.Reset()
	if code := Command(context.Background(), "plan", []string{"-f", in}, &out, &errb); code == ExitUsage ||
		!strings.Contains(errb.String(), "warning: the repositories directory repositories did not exist") {
		t.Fatalf("plan: exit %d\n%s", code, errb.String())
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Fatalf("the plan made %v", entries)
	}
	// Named, by the flag or the environment, a new directory is a new fleet.
	for _, named := range []struct{ flag, env string }{{flag: "repositories"}, {env: filepath.Join(elsewhere, "from-env")}} {
		t.Setenv("PVCTL_REPOS", named.env)
		args := []string{"-f", in}
		if named.flag != "" {
			args = append(args, "--repos", named.flag)
		}
		errb.Reset()
		if code := Command(context.Background(), "run", args, &out, &errb); code == ExitUsage || !strings.Contains(errb.String(), "did not exist: this run creates it") {
			t.Fatalf("run %v (PVCTL_REPOS=%q): exit %d\n%s", args, named.env, code, errb.String())
		}
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "repositories", "edge-useast1.git")); err != nil {
		t.Fatal(err)
	}
}

// Issue 47 #8: pvctl applied none of the CRD's bounds to its files (21 or
// 20,000 waves, a 64-character wave name, progressDeadlineSeconds: -5) nor
// the API server's annotation and object bounds: what a cluster refuses ran
// locally (20,000 waves cost a plan 30 s and 329 MB). Each is an input
// error naming file, object and field, before anything runs.
func TestFilesAreHeldToTheCRDAndAPIServerBounds(t *testing.T) {
	set := func(waves, extra string) string {
		return "apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: bounded\n" + extra +
			"spec:\n  upstream: {repo: blueprints, package: app}\n  targets:\n  - repositories: [{name: edge-useast1}]\n  rollout:\n" + waves
	}
	wave := func(name string) string { return "    - name: " + name + "\n" }
	many := func(n int) string {
		var b strings.Builder
		b.WriteString("    waves:\n")
		for i := range n {
			b.WriteString(wave(fmt.Sprintf("w%d", i)))
		}
		return b.String()
	}
	big := strings.Repeat("x", 256<<10)
	for _, tc := range []struct{ name, yaml, want string }{
		{"21 waves", set(many(21), ""), "`spec.rollout.waves` Too many: 21: must have at most 20 items"},
		{"20,000 waves", set(many(20000), ""), "`spec.rollout.waves` Too many: 20000: must have at most 20 items"},
		{"a 64-character wave name", set("    waves:\n"+wave(strings.Repeat("w", 64)), ""), "`spec.rollout.waves[0].name` Too long: may not be more than 63 bytes"},
		{"a negative deadline", set("    waves:\n"+wave("all")+"    progressDeadlineSeconds: -5\n", ""),
			"`spec.rollout.progressDeadlineSeconds` Invalid value: -5: spec.rollout.progressDeadlineSeconds in body should be greater than or equal to 1"},
		{"annotations over 256 KiB", set("    waves:\n"+wave("all"), "  annotations:\n    a: "+big+"\n"),
			"`metadata.annotations` are 262145 bytes together (keys and values), at most 262144, as the API server bounds them"},
		{"an object over 1.5 MiB", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: huge\ndata:\n" + hugeData(1600),
			"ConfigMap \"huge\": the object is"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWS(t)
			w.write("bounded.yaml", tc.yaml)
			snap := w.snapshot()
			for _, verb := range []string{"plan", "run"} {
				code, _, errs := w.cmd(verb, "-f", w.in)
				if code != ExitUsage || !strings.Contains(errs, filepath.Join(w.in, "bounded.yaml")+": ") || !strings.Contains(errs, tc.want) {
					t.Fatalf("%s: exit %d, %.600s", verb, code, errs)
				}
			}
			if d := cmp.Diff(snap, w.snapshot()); d != "" {
				t.Fatalf("a refused run wrote:\n%s", d)
			}
		})
	}
}

// hugeData is a ConfigMap's data of n entries of 1 KB.
func hugeData(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "  k%05d: %s\n", i, strings.Repeat("y", 1000))
	}
	return b.String()
}

// Issue 47 #1: pvctl run's guard counted one run: removing 5, then 2, 1,
// 1, 1 of 10 variants over five --prune runs deleted all ten and their
// drafts, a person's pushed edit among them, with no confirmation. The
// loss counts from the most variants and sets the files gave since the
// guard was last lifted (the state's filesPeak): the run that would leave
// less than half does nothing, naming what would go and the drafts that
// hold someone's edits; --prune=all lifts it and makes the new baseline.
func TestMassDeletionCountsAcrossRuns(t *testing.T) {
	w := newWS(t)
	for _, f := range []string{"fleet-set.yaml", "app-staging.yaml"} {
		w.remove(f)
	}
	variant := func(i int) string {
		return fmt.Sprintf("apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: v%02d\nspec:\n"+
			"  upstream: {repo: blueprints, package: app}\n  downstream: {repo: core-euwest1, package: app-%02d}\n"+
			"  injectors:\n  - kind: ConfigMap\n    name: eu-west1-endpoints\n  - group: example.com\n    kind: Team\n    name: web-team\n", i, i)
	}
	for i := 1; i <= 10; i++ {
		w.write(fmt.Sprintf("v%02d.yaml", i), variant(i))
	}
	w.run(ExitOK)
	if got := w.stateFile().FilesPeak; got != 10 {
		t.Fatalf("filesPeak %d, want 10", got)
	}
	// A person edits v07's draft; the next run reads the edit.
	const draft = "core-euwest1.app-07.packagevariant-1"
	dir := filepath.Join(t.TempDir(), "app")
	w.mustCmd(ExitOK, "pull", draft, dir)
	dep := readFile(t, filepath.Join(dir, "deployment.yaml"))
	if err := os.WriteFile(filepath.Join(dir, "deployment.yaml"), []byte(strings.Replace(dep, "replicas: 1 #", "replicas: 3 #", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	w.mustCmd(ExitOK, "push", draft, dir)
	w.run(ExitOK)
	if v := w.stateFile().Variants; !slices.ContainsFunc(v, func(v pvapi.PackageVariant) bool {
		return v.Name == "v07" && len(v.Status.DownstreamTargets) == 1 && v.Status.DownstreamTargets[0].Edited
	}) {
		t.Fatalf("v07's draft is not Edited in its status")
	}
	for i := 1; i <= 5; i++ { // half: allowed, as before
		w.remove(fmt.Sprintf("v%02d.yaml", i))
	}
	w.mustCmd(ExitOK, "run", "--prune", "-f", w.in)
	w.remove("v06.yaml")
	w.remove("v07.yaml")
	before := w.snapshot()
	code, _, errs := w.cmd("run", "--prune", "-f", w.in)
	want := "the run would leave 3 of the 10 PackageVariants the fleet had since the mass-deletion guard was last lifted (more than half lost); " +
		"this run would delete v06, v07; drafts that hold someone's edits and would go with them: " + draft + " (v07's); nothing was done. Check -f; if that is intended, run with --prune=all"
	if code != ExitUsage || !strings.Contains(errs, want) {
		t.Fatalf("exit %d: %s\nwant %s", code, errs, want)
	}
	if d := cmp.Diff(before, w.snapshot(), cmpIgnoreState); d != "" {
		t.Fatalf("a refused run wrote:\n%s", d)
	}
	w.mustCmd(ExitOK, "run", "--prune=all", "-f", w.in)
	if got := w.stateFile().FilesPeak; got != 3 {
		t.Fatalf("lifted: filesPeak %d, want 3", got)
	}
	if revs := strings.Join(w.revisions(), "\n"); strings.Contains(revs, "app-07") {
		t.Fatalf("v07's draft stayed after --prune=all:\n%s", revs)
	}
}
