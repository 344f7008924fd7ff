package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/orchestrator/local/state"
)

// Regression cases of the second attack pass (docs/security.md): each
// failed on the code before it.

// gitOut runs git on a bare repository of the workspace and returns its
// trimmed stdout.
func (w *ws) gitOut(repo, stdin string, args ...string) string {
	w.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Env = append(os.Environ(), "GIT_DIR="+filepath.Join(w.repos, repo+".git"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// dotGitDraft pushes, as a user with git could, a draft drafts/app/evil
// whose package holds app/.git/{HEAD,config} with core.fsmonitor set (a
// command git runs on `git status` in a checkout), beside the package's
// Kptfile.
func (w *ws) dotGitDraft(marker string) {
	w.t.Helper()
	cfg := w.gitOut("blueprints", "[core]\n\tfsmonitor = touch "+marker+"\n", "hash-object", "-w", "--stdin")
	head := w.gitOut("blueprints", "ref: refs/heads/main\n", "hash-object", "-w", "--stdin")
	kptfile := w.gitOut("blueprints", "", "rev-parse", "app/v1:app/Kptfile")
	gitTree := w.gitOut("blueprints", "100644 blob "+cfg+"\tconfig\n100644 blob "+head+"\tHEAD\n", "mktree")
	pkg := w.gitOut("blueprints", "040000 tree "+gitTree+"\t.git\n100644 blob "+kptfile+"\tKptfile\n", "mktree")
	root := w.gitOut("blueprints", "040000 tree "+pkg+"\tapp\n", "mktree")
	commit := w.gitOut("blueprints", "", "commit-tree", "-m", "evil", root)
	w.gitOut("blueprints", "", "update-ref", "refs/heads/drafts/app/evil", commit)
}

// Issue 18 #1: a `.git` directory inside a package. Its revision is not
// served (a warning names it), so `pull` cannot write it out, no variant can
// clone it, and everything else works.
func TestDotGitInPackageIsNotServed(t *testing.T) {
	w := newWS(t)
	marker := filepath.Join(t.TempDir(), "PWNED")
	w.dotGitDraft(marker)
	code, out, errs := w.cmd("get")
	if code != ExitOK || !strings.Contains(out, "blueprints.app.v1") || !strings.Contains(out, "blueprints.app.evil  app      evil       0         false   Unreadable") {
		t.Fatalf("get: exit %d\n%s\n%s", code, out, errs)
	}
	contains(t, errs, `warning: repository "blueprints": refs/heads/drafts/app/evil is not served: `,
		`file path must not have a segment git reads as its own directory (".git"), found ".git"`)
	dir := filepath.Join(t.TempDir(), "app")
	code, _, errs = w.cmd("pull", "blueprints.app.evil", dir)
	if code == ExitOK || !strings.Contains(errs, "package revision blueprints.app.evil cannot be read (refs/heads/drafts/app/evil: ") {
		t.Fatalf("pull: exit %d, %q", code, errs)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("pull wrote %s", dir)
	}
	// A variant whose upstream is that revision clones nothing.
	w.write("app-staging.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "app-staging.yaml")),
		"    package: app\n  downstream:", "    package: app\n    workspaceName: evil\n  downstream:", 1))
	out = w.run(ExitStalled)
	contains(t, out, "app-staging", "UpstreamNotFound")
	for _, r := range w.revisions() {
		files := w.files(strings.Fields(r)[0])
		for name := range files {
			if strings.Contains(name, ".git/") {
				t.Fatalf("%s holds %s", r, name)
			}
		}
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatal("the package's git configuration ran a command")
	}
}

// Issue 18 #8: one odd tag stopped get, run and approve in every
// repository. Non-canonical numbers are not revisions; a second tag on a
// published commit is its own revision; a tag on a tree is skipped with a
// warning; the rest is served.
func TestOddTagsAreIsolated(t *testing.T) {
	w := newWS(t)
	v1 := w.gitOut("blueprints", "", "rev-parse", "app/v1")
	w.gitOut("blueprints", "", "tag", "app/v01", v1)
	w.gitOut("blueprints", "", "tag", "app/v+1", v1)
	w.gitOut("blueprints", "", "tag", "-a", "app/v2", "-m", "annotated, on revision 1's commit", v1)
	w.gitOut("blueprints", "", "tag", "app/v3", w.gitOut("blueprints", "", "rev-parse", "app/v1^{tree}"))
	code, out, errs := w.cmd("get")
	if code != ExitOK {
		t.Fatalf("get: exit %d\n%s", code, errs)
	}
	contains(t, out, "blueprints.app.v1 ", "blueprints.app.v2 ")
	contains(t, errs, `warning: repository "blueprints": refs/tags/app/v3 is not served: commit `)
	if strings.Contains(out, "v01") || strings.Contains(out, "v+1") {
		t.Fatalf("get lists a tag that is no revision:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 7 && f[0] == "blueprints.app.v3" && (f[3] != "3" || f[5] != "Unreadable") {
			t.Fatalf("the tag on a tree: %q", l)
		}
	}
	contains(t, out, "blueprints.app.v3 ")
	out = w.run(ExitOK)
	contains(t, out, "created draft edge-useast1.app.packagevariant-1 (clone of blueprints.app.v2)")
	contains(t, w.mustCmd(ExitOK, "approve", "edge-useast1.app.packagevariant-1"), "approved edge-useast1.app.packagevariant-1")
	before := w.snapshot()
	contains(t, w.run(ExitOK), "No changes")
	if d := cmp.Diff(before, w.snapshot(), cmpIgnoreState); d != "" {
		t.Fatalf("a second run wrote:\n%s", d)
	}
}

// Issue 18 #13: a repository directory that is a symbolic link made
// publish run git init where it pointed, outside --repos, and report
// success.
func TestRepositoryLinkIsRefused(t *testing.T) {
	w := newWS(t)
	outside := t.TempDir()
	link := filepath.Join(w.repos, "linked.git")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	code, _, errs := w.cmd("publish", "--repo", "linked", "--package", "app", filepath.Join(fntest.RepoRoot(), "examples", "app"))
	if code == ExitOK || !strings.Contains(errs, link+" is a symbolic link") {
		t.Fatalf("publish: exit %d, %q", code, errs)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("publish wrote through the link: %v", entries)
	}
	// A Repository of that name in run's files: the same.
	w.write("linked.yaml", "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: linked\n")
	code, _, errs = w.cmd("run", "-o", "wide", "-f", w.in)
	if code == ExitOK || !strings.Contains(errs, "is a symbolic link") {
		t.Fatalf("run: exit %d, %q", code, errs)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("run wrote through the link: %v", entries)
	}
}

// Issue 18 #12: a set's child would have the name of a hand-written
// PackageVariant. That target fails, naming both; the hand-written variant
// keeps its spec and its draft; the set's other child is reconciled; the run
// settles (it did not).
func TestSetChildNeverReplacesAnotherVariant(t *testing.T) {
	w := newWS(t)
	w.write("hand.yaml", "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: app-edge-useast1-app\n"+
		"spec:\n  upstream: {repo: blueprints, package: app}\n  downstream: {repo: edge-useast1, package: by-hand}\n")
	out := w.run(ExitNotReady)
	contains(t, out, `its PackageVariant would be named "app-edge-useast1-app", the name of another PackageVariant of the namespace (one that is no set's child)`,
		"PackageVariantSet  app ", "PartiallyReconciled",
		"created draft edge-useast1.by-hand.packagevariant-1", "created draft edge-uswest1.app.packagevariant-1")
	revs := strings.Join(w.revisions(), "\n")
	if strings.Contains(revs, "edge-useast1.app.") {
		t.Fatalf("the set's child was created under the taken name:\n%s", revs)
	}
	before := w.snapshot()
	w.run(ExitNotReady)
	if d := cmp.Diff(before, w.snapshot(), cmpIgnoreState); d != "" {
		t.Fatalf("a second run wrote:\n%s", d)
	}
}

// Issue 18 #9: a readiness gate behind a YAML merge key (or an alias) was
// invisible to approve, which published; kpt's decoder sees the gate.
func TestApproveSeesGatesBehindMergeKeys(t *testing.T) {
	for name, info := range map[string]string{
		"merge key": "info: {<<: {readinessGates: [{conditionType: example.com/reviewed}]}}\n",
		"alias":     "x-gates: &g [{conditionType: example.com/reviewed}]\ninfo:\n  readinessGates: *g\n",
	} {
		t.Run(name, func(t *testing.T) {
			w := newWS(t)
			w.run(ExitOK)
			const rev = "edge-useast1.app.packagevariant-1"
			s := w.store()
			res, err := s.GetResources(context.Background(), "default", rev)
			if err != nil {
				t.Fatal(err)
			}
			res.Files["Kptfile"] = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n" + info
			if _, err := s.UpdateResources(context.Background(), "default", rev, res); err != nil {
				t.Fatal(err)
			}
			code, _, errs := w.cmd("approve", rev)
			if code == ExitOK || !strings.Contains(errs, `package revision `+rev+` is not ready: readiness gate "example.com/reviewed" has no condition`) {
				t.Fatalf("approve: exit %d, %q", code, errs)
			}
			for _, r := range w.revisions() {
				if strings.HasPrefix(r, "edge-useast1.app.v") || strings.Contains(r, rev+" Published") {
					t.Fatalf("published: %v", w.revisions())
				}
			}
		})
	}
}

// Issue 18 #5, the state file: a 107 KB state file whose aliases expand to
// gigabytes killed every run. It is refused, naming the file, and nothing
// is written.
func TestStateFileScalarAliasBomb(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	bomb := "packageVariants:\n- metadata: {name: a, annotations: {x: &a " + strings.Repeat("x", 100_000) + "}}\n" +
		"  spec: {upstream: {repo: r, package: p}}\nx: &b [" + strings.Repeat("*a, ", 99) + "*a]\ny: [" + strings.Repeat("*b, ", 99) + "*b]\n"
	path := filepath.Join(w.repos, state.File)
	if err := os.WriteFile(path, []byte(bomb), 0o644); err != nil {
		t.Fatal(err)
	}
	before := w.snapshot()
	code, _, errs := w.cmd("run", "-o", "wide", "-f", w.in)
	if code == ExitOK || !strings.Contains(errs, path+": its YAML aliases expand its ") || !strings.Contains(errs, "delete it to start from no variants") {
		t.Fatalf("run: exit %d, %q", code, errs)
	}
	if d := cmp.Diff(before, w.snapshot()); d != "" {
		t.Fatalf("a refused run wrote:\n%s", d)
	}
}

// Issue 18 #7: objects that leave the files fall under the mass-deletion
// rule. `run -f EMPTYDIR --prune` deleted every variant and its drafts, and
// leaving the set's file out did the same to all its children.
func TestMassDeletionOfVariantsLeavingTheFiles(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	before := w.snapshot()
	empty := t.TempDir()
	noSet := t.TempDir()
	for _, f := range []string{"app-staging.yaml", "cluster-objects.yaml", "repositories.yaml"} {
		if err := os.WriteFile(filepath.Join(noSet, f), []byte(readFile(t, filepath.Join(w.in, f))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, dir := range map[string]string{"empty directory": empty, "the set's file left out": noSet} {
		for _, prune := range []string{"--prune", "--prune=false"} {
			code, out, errs := w.cmd("run", "-f", dir, prune)
			if code != ExitUsage || !strings.Contains(errs, "PackageVariants of the last run (more than half); this run would delete app-edge-useast1-app, app-edge-uswest1-app") ||
				!strings.Contains(errs, "nothing was done. Check -f; if that is intended, run with --prune=all") {
				t.Fatalf("%s %s: exit %d\n%s\n%s", name, prune, code, out, errs)
			}
			if d := cmp.Diff(before, w.snapshot()); d != "" {
				t.Fatalf("%s %s: the run wrote:\n%s", name, prune, d)
			}
		}
	}
	// One variant leaving the files is not a mass deletion: --prune removes it.
	w.remove("app-staging.yaml")
	contains(t, w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in, "--prune"), "deleted PackageVariant app-staging")
	// --prune=all removes them all.
	contains(t, w.mustCmd(ExitOK, "run", "-f", empty, "--prune=all"), "deleted PackageVariant app-edge-useast1-app", "deleted edge-useast1.app.packagevariant-1")
}

// Issue 18 #6 through the reconciler: a set whose targets ask for more
// children than --max-children-per-set stalls with TooManyChildren, naming
// the count, and creates none; a bound of 0 is a usage error.
func TestSetChildrenAreBounded(t *testing.T) {
	w := newWS(t)
	out := w.mustCmd(ExitStalled, "run", "-o", "wide", "-f", w.in, "--max-children-per-set", "1")
	contains(t, out, "PackageVariantSet  app ", "TooManyChildren",
		"too many children: its targets ask for more than 1 PackageVariants (2 counted at `spec.targets[0].repositorySelector`)")
	if strings.Contains(out, "created PackageVariant app-") {
		t.Fatalf("a set over the bound created children:\n%s", out)
	}
	code, _, errs := w.cmd("run", "-o", "wide", "-f", w.in, "--max-children-per-set", "0")
	if code != ExitUsage || !strings.Contains(errs, "--max-children-per-set: 0, want 1 or more") {
		t.Fatalf("exit %d, %q", code, errs)
	}
}

// Issue 19 #4: one draft branch whose Kptfile is not YAML (pushed with git)
// stopped get, run, approve, pull and del of it, and publish elsewhere. It
// is listed as Unreadable with a warning; every other command works; naming
// it says why; del removes it.
func TestUnreadableDraftIsIsolated(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	const name = "edge-useast1.app.broken"
	kptfile := w.gitOut("edge-useast1", "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata: {name: app\n", "hash-object", "-w", "--stdin")
	pkg := w.gitOut("edge-useast1", "100644 blob "+kptfile+"\tKptfile\n", "mktree")
	root := w.gitOut("edge-useast1", "040000 tree "+pkg+"\tapp\n", "mktree")
	w.gitOut("edge-useast1", "", "update-ref", "refs/heads/drafts/app/broken", w.gitOut("edge-useast1", "", "commit-tree", "-m", "broken", root))

	code, out, errs := w.cmd("get")
	if code != ExitOK || !strings.Contains(out, name) || !strings.Contains(out, "Unreadable") || !strings.Contains(out, "edge-useast1.app.packagevariant-1") {
		t.Fatalf("get: exit %d\n%s\n%s", code, out, errs)
	}
	contains(t, errs, `warning: repository "edge-useast1": refs/heads/drafts/app/broken is not served: `)
	contains(t, w.run(ExitOK), "No changes")
	contains(t, w.mustCmd(ExitOK, "publish", "--repo", "other", "--package", "app", filepath.Join(fntest.RepoRoot(), "examples", "app")), "published other.app.v1")
	contains(t, w.mustCmd(ExitOK, "approve", "edge-useast1.app.packagevariant-1"), "approved edge-useast1.app.packagevariant-1")
	for _, verb := range []string{"approve", "pull"} {
		args := []string{name}
		if verb == "pull" {
			args = append(args, filepath.Join(t.TempDir(), "x"))
		}
		code, _, errs := w.cmd(verb, args...)
		if code == ExitOK || !strings.Contains(errs, "package revision "+name+" cannot be read (refs/heads/drafts/app/broken: ") ||
			!strings.Contains(errs, "pvctl del "+name+" removes it") {
			t.Fatalf("%s: exit %d, %q", verb, code, errs)
		}
	}
	contains(t, w.mustCmd(ExitOK, "del", name), "deleted "+name+" (it could not be read: ")
	code, out, errs = w.cmd("get")
	if code != ExitOK || strings.Contains(out, name) || strings.Contains(errs, "warning") {
		t.Fatalf("after del: exit %d\n%s\n%s", code, out, errs)
	}
}

// Issue 27 #8: -n names a directory, so it is checked as the apiserver
// checks metadata.namespace (a DNS-1123 label) before anything is opened:
// `-n ../../../x publish` created a repository outside --repos, and `-n ..`
// served the default namespace as another.
func TestNamespaceFlagIsNoPath(t *testing.T) {
	w := newWS(t)
	parent := filepath.Dir(w.repos)
	snap := fntest.ReadTree(t, parent)
	for _, ns := range []string{"../../../x", "..", ".", "a/b", "Team", "a.b", "-x", strings.Repeat("a", 64)} {
		for _, args := range [][]string{
			{"publish", "--repo", "blueprints", "--package", "x", filepath.Join(fntest.RepoRoot(), "examples", "app")},
			{"run", "-o", "wide", "-f", w.in},
			{"get"},
			{"status"},
		} {
			code, out, errs := w.cmd(args[0], append(args[1:], "-n", ns)...)
			want := fmt.Sprintf("--namespace must be a DNS-1123 label (at most 63 lower-case letters, digits or '-', starting and ending with a letter or digit), found %q", ns)
			if code != ExitUsage || !strings.Contains(errs, want) {
				t.Errorf("pvctl %s -n %q: exit %d\n%s%s\nwant exit 2 and %s", args[0], ns, code, out, errs, want)
			}
		}
	}
	if d := cmp.Diff(snap, fntest.ReadTree(t, parent)); d != "" {
		t.Fatalf("a refused -n wrote:\n%s", d)
	}
	w.mustCmd(ExitOK, "publish", "-n", "team-a", "--repo", "blueprints", "--package", "x", filepath.Join(fntest.RepoRoot(), "examples", "app"))
}
