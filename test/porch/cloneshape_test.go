package porch

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/orchestrator/cli"
	"github.com/pvkit/pvkit/pkg/provenance"
)

// Issue 21 and issue 29 #4 (rule: porch-clone-shape): a draft pvctl makes
// on local git repositories holds what the draft Porch v1.5.3 makes for
// the same variant holds, byte for byte, the Kptfile included (its name,
// upstream and lock in Porch's encoding; only the upstream's URL and
// commit differ, each side naming its own repository): the package context
// Porch generates in a deployment repository and keeps elsewhere, each
// resource's merge key, the variant's mutation.
func TestLocalCloneMatchesPorch(t *testing.T) {
	t.Parallel() // its own namespace and repositories; the stack and the controller are shared (issue 48 #4)
	e := newEnv(t, "shape")
	blueprint := map[string]string{
		"Kptfile":              "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app # the blueprint\n  annotations:\n    owner: y\ninfo:\n  description: an app\n",
		"package-context.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n  name: app\n  dropped: on-clone\n",
		"resources.yaml": "# two documents\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings # the app's\ndata:\n  color: blue\n---\n" +
			"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: apps\n  labels:\n    app: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n",
		"README.md": "# app\n",
	}
	variant := func(repo string) string {
		return "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: " + repo + "\nspec:\n" +
			"  upstream: {repo: blueprints, package: app}\n  downstream: {repo: " + repo + ", package: shape}\n  packageContext:\n    data: {env: prod}\n"
	}
	repos := map[string]bool{"deploy": true, "blueprint-copies": false}
	e.upstream(blueprint)
	for repo, deployment := range repos {
		e.repository(repo, e.bareRepo(repo), deployment, nil)
		e.apply(variant(repo))
	}
	byPorch := map[string]map[string]string{}
	for repo := range repos {
		// Ready first, then the draft's files, holding the mutation: read
		// the other way round, the files could be those of a moment before
		// the mutation's write (a flake seen once, at bb0d960).
		e.eventually(converge, repo+"'s draft, Ready, mutated", func() (bool, string) {
			if ok, msg := e.ready(repo); !ok {
				return false, msg
			}
			owned := e.owned(repo, "shape")
			if len(owned) != 1 {
				return false, fmt.Sprintf("%d owned drafts", len(owned))
			}
			byPorch[repo] = e.resources(owned[0].Name)
			return strings.Contains(byPorch[repo]["Kptfile"], "reason: Mutated"), "the draft's files do not hold the mutation yet"
		})
	}

	dir := t.TempDir()
	localRepos, pkg, in := filepath.Join(dir, "repos"), filepath.Join(dir, "app"), filepath.Join(dir, "in")
	fntest.WriteTree(t, pkg, blueprint)
	inputs := map[string]string{}
	for repo, deployment := range repos {
		inputs[repo+".yaml"] = variant(repo) + "---\napiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: " + repo +
			"\nspec:\n  deployment: " + fmt.Sprint(deployment) + "\n"
	}
	fntest.WriteTree(t, in, inputs)
	pvctl := func(name string, args ...string) {
		t.Helper()
		var o, errb bytes.Buffer
		if code := cli.Command(context.Background(), name, append([]string{"--repos", localRepos}, args...), &o, &errb); code != 0 {
			t.Fatalf("pvctl %s %v: exit %d\n%s\n%s", name, args, code, o.String(), errb.String())
		}
	}
	pvctl("publish", "--repo", "blueprints", "--package", "app", pkg)
	// A repository that is not a deployment one must be there already, as
	// on Porch's side (rule: no-silent-repositories): an empty bare one.
	if out, err := exec.Command("git", "init", "-q", "--bare", filepath.Join(localRepos, "blueprint-copies.git")).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v\n%s", err, out)
	}
	pvctl("run", "-f", in)
	for repo := range repos {
		out := filepath.Join(dir, "pulled-"+repo)
		pvctl("pull", repo+".shape.packagevariant-1", out)
		local := fntest.ReadTree(t, out)
		// Each side names its own upstream repository (Porch's is served from
		// the stack's directory) and its own commit of it.
		for _, files := range []map[string]string{byPorch[repo], local} {
			// Each side's provenance record names its own namespace,
			// variant UID, build and upstream commit: it must hold for its
			// files (rule provenance-record), over the same files.
			files[provenance.FileName] = recordHolds(t, repo, files)
			if !upstreamOrigin.MatchString(files["Kptfile"]) || !strings.Contains(files["Kptfile"], "/blueprints.git\n") {
				t.Fatalf("%s: no upstream URL and commit:\n%s", repo, files["Kptfile"])
			}
			files["Kptfile"] = upstreamOrigin.ReplaceAllString(files["Kptfile"], "$1 ORIGIN")
		}
		if diff := cmp.Diff(byPorch[repo], local); diff != "" {
			t.Fatalf("%s (deployment: %v): pvctl's draft differs from Porch's (-Porch +pvctl):\n%s", repo, repos[repo], diff)
		}
	}
}

// upstreamOrigin is a Kptfile's upstream repository URL or lock commit.
var upstreamOrigin = regexp.MustCompile(`(?m)^(\s+(?:repo: file://|commit:)).*$`)

// recordHolds checks a package's provenance record against its files and
// says what the record names that both hosts share: the variant's name and
// the files.
func recordHolds(t *testing.T, what string, files map[string]string) string {
	t.Helper()
	res, err := provenance.Check(files, nil)
	if err != nil {
		t.Fatalf("%s: the provenance record: %v", what, err)
	}
	var names []string
	for _, s := range res.Record.Statement.Subject {
		names = append(names, s.Name)
	}
	return "holds: variant " + res.Record.Statement.Predicate.BuildDefinition.ExternalParameters.Variant.Name + "; " + strings.Join(names, " ")
}
