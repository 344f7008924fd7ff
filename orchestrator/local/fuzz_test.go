package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/pkg/krm"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FuzzRunInput: any bytes as a pvctl run input file. Reading it must never
// panic: every problem is a message naming the file. Seeds: the examples,
// the alias bomb, a mistyped ConfigMap, names that would be paths.
func FuzzRunInput(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(fntest.RepoRoot(), "examples", "local", "*.yaml"))
	for _, file := range files {
		b, _ := os.ReadFile(file)
		f.Add(b)
	}
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  x: 1\n"))
	f.Add([]byte("apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: ../../x\n"))
	f.Add([]byte("a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		in := &input{files: map[string]string{}}
		for _, msg := range in.readBytes("in.yaml", b, "default") {
			if !strings.HasPrefix(msg, "in.yaml: ") {
				t.Fatalf("a message does not name the file: %q", msg)
			}
		}
	})
}

// FuzzSyncObject: any published file's items as --sync would apply them.
// Nothing panics, and whatever is applied carries nothing a package may
// not decide (rule: synced-objects-decide-nothing): no UID, resource
// version, generation, timestamps, managed fields or status; the run's
// namespace; the synced-from mark; never local config or a Kptfile.
func FuzzSyncObject(f *testing.F) {
	f.Add([]byte("apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: evil\n  uid: 1234\n  resourceVersion: \"9\"\n" +
		"  generation: 3\n  creationTimestamp: \"2020-01-01T00:00:00Z\"\n  deletionTimestamp: \"2020-01-01T00:00:00Z\"\n" +
		"  ownerReferences:\n  - {apiVersion: v1, kind: ConfigMap, name: x, uid: u}\nspec:\n  upstream: {repo: apps, package: p}\nstatus: {x: 1}\n"))
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: other\n"))
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n"))
	f.Add([]byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: a\n"))
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  managedFields: [{manager: x}]\n  selfLink: /x\ndata: {a: 1}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		items, err := krm.FilesToItems(map[string]string{"objects.yaml": string(b)})
		if err != nil {
			return
		}
		s := &syncer{namespace: "default", warned: map[string]bool{}}
		lineage := map[string]bool{"apps/p": true}
		for _, it := range items {
			u, ok := s.object(it.YNode(), "apps/p@v1")
			if !ok {
				continue
			}
			clonesItsLineage(u, lineage)
			for _, field := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
				"deletionGracePeriodSeconds", "managedFields", "selfLink"} {
				if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", field); found {
					t.Fatalf("applied with metadata.%s: %v", field, u.Object)
				}
			}
			if _, found := u.Object["status"]; found {
				t.Fatalf("applied with a status: %v", u.Object)
			}
			if u.GetNamespace() != "default" || u.GetAnnotations()[SyncedFromAnnotation] != "apps/p@v1" || u.GetKind() == "Kptfile" ||
				u.GetAnnotations()["config.kubernetes.io/local-config"] == "true" {
				t.Fatalf("applied: %v", u.Object)
			}
		}
	})
}
