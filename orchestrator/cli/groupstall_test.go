package cli

import (
	"path/filepath"
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
)

// Every group.yaml problem stalls the set (rules stall-or-retry and
// package-groups): Stalled True, reason UpstreamNotFound, the message
// naming the member and its field; run exits 4, not a retried error.
func TestBrokenGroupStalls(t *testing.T) {
	member := func(m string) string {
		return "apiVersion: pvkit.dev/v1alpha1\nkind: PackageGroup\nmetadata:\n  name: free5gc\nspec:\n  members:\n" + m
	}
	// One fleet, each problem the group's next revision.
	w := groupWS(t)
	for _, c := range []struct{ name, group, want string }{
		{"member named twice", member("  - {name: upf, upstream: {repo: catalog, package: free5gc-upf}}\n  - {name: upf, upstream: {repo: catalog, package: free5gc-smf}, package: smf}\n"),
			"group.yaml: spec.members[1].name: \"upf\" is spec.members[0]'s name too; each member is named once"},
		{"bad member name", member("  - {name: UPF_1, upstream: {repo: catalog, package: free5gc-upf}}\n"),
			"group.yaml: spec.members[0].name: "},
		{"dot-dot package", member("  - {name: upf, upstream: {repo: catalog, package: free5gc-upf}, package: ../upf}\n"),
			"group.yaml: spec.members[0].package: the downstream package must not have a \"..\" segment, found \"../upf\""},
		{"absolute package", member("  - {name: upf, upstream: {repo: catalog, package: free5gc-upf}, package: /etc/upf}\n"),
			"group.yaml: spec.members[0].package: the downstream package must be a relative path, found \"/etc/upf\""},
		{"absolute upstream package", member("  - {name: upf, upstream: {repo: catalog, package: /free5gc-upf}, package: upf}\n"),
			"group.yaml: spec.members[0].upstream.package: the upstream package must be a relative path, found \"/free5gc-upf\""},
		{"repository name refused", member("  - {name: upf, upstream: {repo: Catalog_1, package: free5gc-upf}}\n"),
			"group.yaml: spec.members[0].upstream.repo: a Repository's name must be a DNS-1123 subdomain"},
		{"not a group", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: free5gc\n",
			"its group.yaml: not a pvkit.dev/v1alpha1 PackageGroup (found v1 ConfigMap)"},
		{"no members", member(""), "group.yaml: spec.members: a group has at least one member"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w.t = t
			dir := filepath.Join(t.TempDir(), "free5gc")
			fntest.WriteTree(t, dir, map[string]string{"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: free5gc\n", "group.yaml": c.group})
			w.mustCmd(ExitOK, "publish", "--repo", "blueprints", "--package", "free5gc", dir)
			out := w.run(ExitStalled)
			contains(t, out, c.want)
			sets := w.stateFile().Sets
			if len(sets) != 1 {
				t.Fatalf("%d sets in the state", len(sets))
			}
			stalled := apimeta.FindStatusCondition(sets[0].Status.Conditions, "Stalled")
			if stalled == nil || stalled.Status != "True" || stalled.Reason != "UpstreamNotFound" {
				t.Fatalf("Stalled: %+v", stalled)
			}
			contains(t, stalled.Message, c.want)
		})
	}
}
