package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/orchestrator/local/state"
)

// Publishing never writes outside --repos, never follows a link, and never
// lets one package overlap another on main.
func TestPublishSafety(t *testing.T) {
	w := newWS(t)
	parent := filepath.Dir(w.repos)
	before, _ := os.ReadDir(parent)
	w.cmd("publish", "--repo", "../evil", "--package", "x", w.in)
	if after, _ := os.ReadDir(parent); len(after) != len(before) {
		t.Fatalf("publish --repo ../evil created something beside --repos: %v -> %v", before, after)
	}
	for _, c := range []struct {
		name  string
		setup func(dir string)
		want  string
	}{
		{"symlink", func(dir string) {
			if err := os.Symlink("/etc/passwd", filepath.Join(dir, "passwd.yaml")); err != nil {
				t.Fatal(err)
			}
		}, "passwd.yaml: is a symbolic link; pvctl copies regular files only"},
		{"file named .git", func(dir string) {
			if err := os.WriteFile(filepath.Join(dir, ".git"), []byte("gitdir: /elsewhere\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, ".git: a file named .git cannot be published"},
		// Issue 27 #6: what git refuses on HFS+ and NTFS.
		{"HFS+ .git look-alike", func(dir string) {
			if err := os.MkdirAll(filepath.Join(dir, ".gi\u200ct"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ".gi\u200ct", "config"), []byte("[core]\n\tfsmonitor = touch /tmp/pwned\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, ".gi\u200ct/config: file path must not have a segment git reads as its own directory"},
		{"NTFS .git stream", func(dir string) {
			if err := os.WriteFile(filepath.Join(dir, ".git::$INDEX_ALLOCATION"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, ".git::$INDEX_ALLOCATION: file path must not have a segment git reads as its own directory"},
		{".gitmodules", func(dir string) {
			if err := os.WriteFile(filepath.Join(dir, "gitmod~1"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "gitmod~1: file path must not have a segment git reads as its .gitmodules"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "Kptfile"), []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			c.setup(dir)
			snap := w.snapshot()
			code, _, errs := w.cmd("publish", "--repo", "blueprints", "--package", "x", dir)
			if code != ExitUsage || !strings.Contains(errs, filepath.Join(dir, c.want)) {
				t.Fatalf("exit %d, %q; want exit 2 and %q", code, errs, c.want)
			}
			if d := cmp.Diff(snap, w.snapshot()); d != "" {
				t.Fatalf("a refused publish wrote:\n%s", d)
			}
		})
	}
	// blueprints/app is published (newWS): a package inside it, or one
	// containing it, is refused and main is left alone.
	for _, c := range []struct{ pkg, want string }{
		{"app/sub", `package "app/sub" is the subpackage sub of the published package "app" (blueprints.app.v1), whose files differ: publish "app" with its subpackages to change it; nothing was published`},
	} {
		snap := w.snapshot()
		code, _, errs := w.cmd("publish", "--repo", "blueprints", "--package", c.pkg, filepath.Join(fntest.RepoRoot(), "examples", "app"))
		if code != ExitNotReady || !strings.Contains(errs, c.want) {
			t.Fatalf("publish %s: exit %d, %q; want %q", c.pkg, code, errs, c.want)
		}
		if d := cmp.Diff(snap, w.snapshot()); d != "" {
			t.Fatalf("a refused publish wrote:\n%s", d)
		}
	}
	w.mustCmd(ExitOK, "publish", "--repo", "other", "--package", "team/app", filepath.Join(fntest.RepoRoot(), "examples", "app"))
	code, _, errs := w.cmd("publish", "--repo", "other", "--package", "team", filepath.Join(fntest.RepoRoot(), "examples", "app"))
	if code != ExitNotReady || !strings.Contains(errs, `package "team" would contain the published package "team/app"`) {
		t.Fatalf("publish team: exit %d, %q", code, errs)
	}
}

// A variant whose downstream package would be a path outside its
// repository is invalid: the CRD's schema refuses it as a cluster would
// (issue 47 #8; it stalled before, pkg/variant's own check, which the
// controller keeps), and nothing of it is written.
func TestVariantPackagePathValidated(t *testing.T) {
	w := newWS(t)
	w.write("app-staging.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "app-staging.yaml")), "    repo: core-euwest1\n    package: app\n", "    repo: core-euwest1\n    package: ../../../tmp/pwn\n", 1))
	code, _, errs := w.cmd("run", "-o", "wide", "-f", w.in)
	if code != ExitUsage || !strings.Contains(errs, "app-staging.yaml: PackageVariant \"app-staging\": `spec.downstream.package` Invalid value: \"../../../tmp/pwn\": spec.downstream.package in body should match") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, r := range w.revisions() {
		if strings.Contains(r, "pwn") {
			t.Fatalf("an invalid variant wrote %s", r)
		}
	}
}

// A Repository named ../../x creates nothing outside --repos.
func TestRepositoryNameNeverAPath(t *testing.T) {
	w := newWS(t)
	w.write("evil.yaml", "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: ../../x\n")
	parent := filepath.Dir(w.repos)
	before, _ := os.ReadDir(parent)
	code, _, errs := w.cmd("run", "-o", "wide", "-f", w.in)
	if code != ExitUsage || !strings.Contains(errs, `Repository "../../x": `+"`metadata.name`"+` must be a DNS-1123 subdomain`) {
		t.Fatalf("exit %d, %q", code, errs)
	}
	if after, _ := os.ReadDir(parent); len(after) != len(before) {
		t.Fatalf("created beside --repos: %v -> %v", before, after)
	}
}

// Everyday mistakes delete nothing: no -f is a usage error; a typo in a kind
// of Porch's groups is an input error; a selector typo holds its removals
// back without --prune, and --prune keeps the mass-deletion guard.
func TestMistakesDeleteNothing(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	before := w.snapshot()
	code, _, errs := w.cmd("run")
	if code != ExitUsage || !strings.Contains(errs, "pvctl run: run needs -f") {
		t.Fatalf("run without -f: exit %d, %q", code, errs)
	}
	w.write("app-staging.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "app-staging.yaml")), "kind: PackageVariant\n", "kind: PackageVarient\n", 1))
	code, _, errs = w.cmd("run", "-o", "wide", "-f", w.in)
	if code != ExitUsage || !strings.Contains(errs, `PackageVarient "app-staging": config.porch.kpt.dev/v1alpha1 has no kind PackageVarient`) {
		t.Fatalf("kind typo: exit %d, %q", code, errs)
	}
	w.write("app-staging.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "app-staging.yaml")), "kind: PackageVarient\n", "kind: PackageVariant\n", 1))
	w.write("fleet-set.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "fleet-set.yaml")), "env: prod", "env: prd", 1))
	// Every child of the set would go: the mass-deletion guard holds, with
	// or without --prune.
	for _, args := range [][]string{{"-f", w.in}, {"-f", w.in, "--prune"}} {
		out := w.mustCmd(ExitStalled, "run", args...)
		contains(t, out, "MassDeletion")
		contains(t, out, "the set would remove 2 of its 2 PackageVariants (more than half); none was removed")
		if d := cmp.Diff(before, w.snapshot(), cmpIgnoreState); d != "" {
			t.Fatalf("pvctl run %v removed something:\n%s", args, d)
		}
	}
	out := w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in, "--prune=all")
	contains(t, out, "deleted edge-useast1.app.packagevariant-1")
}

// Bad input: a message naming file, object and field; exit 2; nothing
// written.
func TestInputErrors(t *testing.T) {
	for _, c := range []struct {
		name, file, content, want string
	}{
		{"unparsable", "bad.yaml", "a: [\n", "bad.yaml: cannot parse: "},
		{"no kind", "bad.yaml", "apiVersion: v1\nmetadata:\n  name: x\n", "bad.yaml: object 0: `apiVersion` and `kind` are required"},
		{"no name", "bad.yaml", "apiVersion: v1\nkind: ConfigMap\n", "bad.yaml: ConfigMap 0 in the file: `metadata.name` is required"},
		{"duplicate", "zz.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: us-east1-endpoints\n", `zz.yaml: ConfigMap "us-east1-endpoints": defined again (first in `},
		{"namespace", "bad.yaml", "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: x\n  namespace: other\n",
			"bad.yaml: PackageVariant \"x\": `metadata.namespace` is \"other\"; pvctl run serves one namespace, \"default\" (--namespace)"},
		{"unknown field", "bad.yaml", "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: x\nspec:\n  upstrem: {}\n",
			"bad.yaml: PackageVariant \"x\": `spec.upstrem` is not a field of PackageVariant (did you mean `upstream`?); refused, as kubectl's strict field validation refuses it"},
		// Issue 29 #5: every type error of a spec at once (they came one per
		// run), and a revision given as a name hints at workspaceName.
		{"every type error at once", "bad.yaml", "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: x\nspec:\n" +
			"  upstream: {repo: blueprints, package: app, revision: main}\n  downstream: {repo: deploy, package: x}\n  packageContext:\n    data: {replicas: 3, enabled: true}\n  bogus: 1\n",
			"bad.yaml: PackageVariant \"x\": `spec.upstream.revision` must be an integer, found a string (a revision is a number; a workspace or branch is named by `workspaceName`, as `workspaceName: main`); " +
				"`spec.packageContext.data.replicas` must be a string, found a number; `spec.packageContext.data.enabled` must be a string, found a boolean; " +
				"`spec.bogus` is not a field of PackageVariant; refused, as kubectl's strict field validation refuses it"},
		{"wrong type", "bad.yaml", "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: x\nspec:\n  injectors: {}\n",
			"bad.yaml: PackageVariant \"x\": `spec.injectors` must be a list, found a map"},
		{"repository directory", "bad.yaml", "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: r\nspec:\n  type: git\n  git:\n    repo: x\n    directory: ../pkgs\n",
			"bad.yaml: Repository \"r\": `spec.git.directory` \"../pkgs\": "},
		{"alias bomb", "bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\ndata:\n  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" +
			"  l1: &l1 [*l0, *l0, *l0, *l0, *l0, *l0, *l0, *l0, *l0]\n  l2: &l2 [*l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1]\n" +
			"  l3: &l3 [*l2, *l2, *l2, *l2, *l2, *l2, *l2, *l2, *l2]\n  l4: &l4 [*l3, *l3, *l3, *l3, *l3, *l3, *l3, *l3, *l3]\n" +
			"  l5: &l5 [*l4, *l4, *l4, *l4, *l4, *l4, *l4, *l4, *l4]\n  l6: &l6 [*l5, *l5, *l5, *l5, *l5, *l5, *l5, *l5, *l5]\n" +
			"  l7: &l7 [*l6, *l6, *l6, *l6, *l6, *l6, *l6, *l6, *l6]\n",
			"bad.yaml: object 0: its YAML aliases expand its 609 bytes to more than 71626"},
		// Issue 18 #5: few nodes, many bytes.
		{"scalar alias bomb", "bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\ndata:\n  a: &a " + strings.Repeat("x", 10_000) +
			"\n  b: &b [" + strings.Repeat("*a, ", 99) + "*a]\n  c: [" + strings.Repeat("*b, ", 99) + "*b]\n",
			"bad.yaml: object 0: its YAML aliases expand its 11115 bytes to more than 176686"},
		{"mistyped ConfigMap", "bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  x: 1\n  y: [a]\n",
			"bad.yaml: ConfigMap \"x\": `data.x` must be a string, found a number"},
		{"invalid name", "bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n",
			"bad.yaml: ConfigMap \"Bad_Name\": `metadata.name` must be a DNS-1123 subdomain"},
		{"Repository name", "bad.yaml", "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: ..x\n",
			"bad.yaml: Repository \"..x\": `metadata.name` must be a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', starting and ending with a letter or digit), found \"..x\""},
		{"label key and value, annotation key", "bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: {\"a b\": ok, env: \"no spaces\"}\n  annotations: {\"/x\": v}\n",
			"bad.yaml: ConfigMap \"x\": `metadata.labels` key must be a qualified name"},
		{"repository type", "bad.yaml", "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: r\nspec:\n  type: oci\n",
			"bad.yaml: Repository \"r\": `spec.type` is \"oci\"; pvctl run serves git repositories"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWS(t)
			w.write(c.file, c.content)
			before := w.snapshot()
			code, out, errs := w.cmd("run", "-o", "wide", "-f", w.in)
			if code != ExitUsage || out != "" || !strings.HasPrefix(errs, "pvctl run: ") || !strings.Contains(errs, filepath.Join(w.in, c.want)) {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit 2 and %q", code, out, errs, c.want)
			}
			if d := cmp.Diff(before, w.snapshot()); d != "" {
				t.Fatalf("bad input wrote to the repositories:\n%s", d)
			}
		})
	}
}

func TestCommandErrors(t *testing.T) {
	w := newWS(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "-o", "xml"}, ExitUsage, `pvctl run: -o must be table, wide, name, json, yaml, not "xml"`},
		{[]string{"run", "--prune=some", "-f", w.in}, ExitUsage, `pvctl run: invalid argument "some" for "--prune" flag: --prune takes true, all or false, not "some"`},
		{[]string{"get", "-o", "xml"}, ExitUsage, `pvctl get: -o must be table, wide, name, json, yaml, not "xml"`},
		{[]string{"diff", "blueprints.app.v1", "--against", "x"}, ExitUsage, `pvctl diff: --against must be upstream, published or a package revision: package revision x: not found (pvctl get lists them)`},
		{[]string{"run", "extra"}, ExitUsage, `pvctl run: unexpected arguments ["extra"] (files go after -f)`},
		{[]string{"run", "-f", "/does/not/exist"}, ExitUsage, "pvctl run: stat /does/not/exist: no such file or directory"},
		{[]string{"publish", "--repo", "r"}, ExitUsage, "pvctl publish: publish needs --repo, --package and one directory"},
		{[]string{"publish", "--repo", "r", "--package", "../x", w.in}, ExitUsage, `pvctl publish: --package must not have a ".." segment, found "../x"`},
		{[]string{"publish", "--repo", "../evil", "--package", "x", w.in}, ExitUsage, `pvctl publish: --repo must be a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', starting and ending with a letter or digit), found "../evil"`},
		{[]string{"publish", "--repo", "r", "--package", "/abs", w.in}, ExitUsage, `pvctl publish: --package must be a relative path, found "/abs"`},
		{[]string{"approve"}, ExitUsage, "pvctl approve: approve needs the names of the package revisions"},
		{[]string{"approve", "nope"}, ExitNotReady, "pvctl approve: package revision nope: not found (pvctl get lists them)"},
		{[]string{"frobnicate"}, ExitUsage, `pvctl: unknown command "frobnicate"`},
	} {
		code, _, errs := w.cmd(c.args[0], c.args[1:]...)
		if code != c.code || !strings.HasPrefix(errs, c.want) {
			t.Errorf("pvctl %v: exit %d, stderr %q; want exit %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
	var out, errb bytes.Buffer
	if code := Command(context.Background(), "get", []string{"--repos", filepath.Join(t.TempDir(), "none")}, &out, &errb); code != ExitNotReady ||
		!strings.Contains(errb.String(), "no repositories directory") {
		t.Errorf("get on a missing directory: exit %d, %q", code, errb.String())
	}
	// A corrupt state file is an input problem, reported before any write.
	if err := os.WriteFile(filepath.Join(w.repos, state.File), []byte("packageVariants: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := w.cmd("run", "-o", "wide", "-f", w.in)
	if code != ExitNotReady || !strings.Contains(errs, state.File+": ") || !strings.Contains(errs, "delete it to start from no variants") {
		t.Errorf("corrupt state: exit %d, %q", code, errs)
	}
}

// Issue 31 #3: --repos is refused, exit 2 and nothing written, when it is a
// git working tree, a bare repository, or a directory that holds something
// but no repository; an empty or new one is fine.
func TestReposDirRefused(t *testing.T) {
	w := newWS(t)
	root := t.TempDir()
	tree := filepath.Join(root, "tree")
	if out, err := exec.Command("git", "init", "-q", tree).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	bare := filepath.Join(root, "bare.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	yamls := filepath.Join(root, "yamls")
	fntest.WriteTree(t, yamls, map[string]string{"a.yaml": "a: 1\n"})
	for _, tc := range []struct{ dir, want string }{
		{tree, "is a git working tree"},
		{bare, "is a bare git repository; --repos names the directory that holds the repositories (" + root + "?)"},
		{yamls, "holds 1 entries and no bare repository: not a repositories directory"},
	} {
		for _, verb := range [][]string{{"run", "-o", "wide", "-f", w.in}, {"plan", "-f", w.in}, {"get"}, {"publish", "--no-render", "--repo", "b", "--package", "p", filepath.Join(fntest.RepoRoot(), "examples", "app")}} {
			var out, errb bytes.Buffer
			code := Command(context.Background(), verb[0], append([]string{"--repos", tc.dir}, verb[1:]...), &out, &errb)
			if code != ExitUsage || !strings.Contains(errb.String(), "--repos "+tc.dir+": "+tc.want) {
				t.Errorf("%s %v: exit %d\n%s", tc.dir, verb, code, errb.String())
			}
		}
		for _, f := range []string{".pvctl.lock", "pvctl-state.yaml"} {
			if _, err := os.Stat(filepath.Join(tc.dir, f)); !os.IsNotExist(err) {
				t.Errorf("%s: %s was written", tc.dir, f)
			}
		}
	}
	empty := filepath.Join(root, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := Command(context.Background(), "get", []string{"--repos", empty}, &out, &errb); code != ExitOK {
		t.Errorf("an empty --repos: exit %d: %s", code, errb.String())
	}
}

// Issue 31 #3: an API group one typo away from Porch's is an input error
// (a first run would otherwise do nothing and exit 0).
func TestPorchGroupTypoRefused(t *testing.T) {
	w := newWS(t)
	w.write("typo.yaml", "apiVersion: config.porch.kpt.io/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: typo\nspec: {}\n")
	code, _, errs := w.cmd("run", "-o", "wide", "-f", w.in)
	if code != ExitUsage || !strings.Contains(errs, `typo.yaml: PackageVariant "typo": API group "config.porch.kpt.io" is not "config.porch.kpt.dev" (a typo?)`) {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

// Issue 31 #6: the exit codes pvctl's help (and plan's) states are the
// ones it gives. The help is parsed as a person reads it ("N meaning; ..."),
// each outcome is produced, and its exit code compared with the number the
// help gives it: the test fails when either changes without the other.
func TestHelpStatesExitCodes(t *testing.T) {
	w := newWS(t)
	stated := func(verb ...string) func(phrase string) int {
		t.Helper()
		help := strings.Join(strings.Fields(w.mustCmd(ExitOK, append(verb, "--help")[0], append(verb, "--help")[1:]...)), " ")
		_, section, ok := strings.Cut(help, "Exit codes: ")
		if !ok {
			t.Fatalf("%v --help states no exit codes:\n%s", verb, help)
		}
		section, _, _ = strings.Cut(section, "Usage:")
		codes := map[string]int{}
		for _, part := range regexp.MustCompile(`(\d) ([^;]+)`).FindAllStringSubmatch(section, -1) {
			n, _ := strconv.Atoi(part[1])
			codes[part[2]] = n
		}
		return func(phrase string) int {
			t.Helper()
			for text, n := range codes {
				if strings.Contains(text, phrase) {
					return n
				}
			}
			t.Fatalf("%v --help states no code for %q: %v", verb, phrase, codes)
			return -1
		}
	}
	root, plan := stated(), stated("plan")
	check := func(what string, want int, args ...string) {
		t.Helper()
		if got, _, errs := w.cmd(args[0], args[1:]...); got != want {
			t.Errorf("%s: exit %d, the help says %d\n%s", what, got, want, errs)
		}
	}
	check("plan with changes", root("plan: something would change"), "plan", "-f", w.in)
	check("plan with changes", plan("something would change"), "plan", "-f", w.in)
	check("a bad flag", root("usage"), "run", "--bogus")
	check("a bad flag to plan", plan("usage"), "plan", "--bogus")
	check("a run that converges", root("done"), "run", "-o", "wide", "-f", w.in)
	// Issue 32 #4: wait's, suspend's and reconcile's help as well.
	wait, suspend, reconcile := stated("wait"), stated("suspend"), stated("reconcile")
	check("a wait whose condition holds", wait("done"), "wait", "pvs/app", "--timeout", "5s")
	check("a wait whose condition does not come", wait("not met in --timeout"), "wait", "pvs/app", "--for=condition=Stalled", "--timeout", "10ms")
	check("a wait with a bad --for", wait("usage"), "wait", "pvs/app", "--for=ready")
	check("a suspension", suspend("done"), "suspend", "pvs/app")
	check("a suspension of nothing", suspend("the command failed"), "suspend", "pvs/nosuch")
	check("a reconcile of a suspended set", reconcile("the command failed"), "reconcile", "pvs/app", "-f", w.in)
	check("a resumption", suspend("done"), "resume", "pvs/app")
	check("a local reconcile that converges", reconcile("done"), "reconcile", "pvs/app", "-f", w.in)
	check("a reconcile without -f", reconcile("usage"), "reconcile", "pvs/app")
	check("a plan of nothing", plan("nothing would change"), "plan", "-f", w.in)
	w.write("repositories.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "repositories.yaml")), "    env: prod\n    region: us-west1", "    env: retired\n    region: us-west1", 1))
	check("a plan whose removal would wait", plan("a removal would wait"), "plan", "-f", w.in)
	check("a removal held back", root("a removal held back"), "run", "-o", "wide", "-f", w.in)
	w.write("stalled.yaml", "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: stalled\nspec:\n"+
		"  upstream: {repo: blueprints, package: nosuch}\n  downstream: {repo: core-euwest1, package: stalled}\n")
	check("a stalled variant in a plan", plan("stall"), "plan", "-f", w.in, "--prune")
	check("a stalled variant", root("stalled"), "run", "-o", "wide", "-f", w.in, "--prune")
	check("a local reconcile with a stalled variant", reconcile("stalled"), "reconcile", "pvs/app", "-f", w.in, "--prune")
	check("a failed command", root("the command failed"), "approve", "nope")
}
