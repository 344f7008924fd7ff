package install

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// Issue 58 #4: each health layout's overlay names its kinds in
// --readable-kinds (which parse) and grants them and the kubeconfig
// Secrets, nothing wider: no rule of its own has a wildcard, a write verb
// or Secrets without resourceNames, and the Secrets' rule is get only.
func TestHealthOverlays(t *testing.T) {
	for dir, kinds := range map[string][]string{
		"flux-hub":       {"Kustomization.kustomize.toolkit.fluxcd.io", "HelmRelease.helm.toolkit.fluxcd.io"},
		"argocd-central": {"Application.argoproj.io"},
		"capi-edge":      {"Kustomization.kustomize.toolkit.fluxcd.io", "RootSync.configsync.gke.io"},
	} {
		objs := buildDir(t, filepath.Join(fntest.RepoRoot(), "config/health", dir))
		d := decode[appsv1.Deployment](t, objs, "Deployment/pvkit-controller")
		var flag string
		for _, a := range d.Spec.Template.Spec.Containers[0].Args {
			if v, ok := strings.CutPrefix(a, "--readable-kinds="); ok {
				flag = v
			}
		}
		if _, err := kit.ParseReadableKinds(strings.Split(flag, ",")); err != nil {
			t.Errorf("%s: --readable-kinds=%s: %v", dir, flag, err)
		}
		for _, k := range kinds {
			if !slices.Contains(strings.Split(flag, ","), k) {
				t.Errorf("%s: --readable-kinds=%s lacks %s", dir, flag, k)
			}
		}
		secretRules := 0
		for key := range objs {
			kind, name, _ := strings.Cut(key, "/")
			if (kind != "ClusterRole" && kind != "Role") || !strings.Contains(name, "health") && !strings.Contains(name, "kubeconfigs") {
				continue
			}
			rules := decode[rbacv1.ClusterRole](t, objs, key).Rules
			for _, r := range rules {
				for _, v := range r.Verbs {
					if !slices.Contains([]string{"get", "list", "watch"}, v) {
						t.Errorf("%s: %s grants %s", dir, key, v)
					}
				}
				if slices.Contains(r.Resources, "*") || slices.Contains(r.APIGroups, "*") {
					t.Errorf("%s: %s has a wildcard: %+v", dir, key, r)
				}
				if slices.Contains(r.Resources, "secrets") {
					secretRules++
					if len(r.ResourceNames) == 0 || !slices.Equal(r.Verbs, []string{"get"}) {
						t.Errorf("%s: %s grants Secrets beyond get by name: %+v", dir, key, r)
					}
				}
			}
		}
		if want := map[bool]int{true: 1, false: 0}[dir == "capi-edge"]; secretRules != want {
			t.Errorf("%s: %d rules on Secrets, want %d", dir, secretRules, want)
		}
	}
}
