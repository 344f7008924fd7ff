package install

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/internal/sshsig"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// Issue 62 #8: config/provenance gives the controller its signing key: a
// Secret the operator creates, mounted read-only where --provenance-key
// names it, readable by the pod's group only, not optional. The key file
// the overlay's comment says to make (ssh-keygen) is one the controller
// loads.
func TestProvenanceOverlay(t *testing.T) {
	objs := buildDir(t, filepath.Join(fntest.RepoRoot(), "config/provenance"))
	d := decode[appsv1.Deployment](t, objs, "Deployment/pvkit-controller")
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	var flag string
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--provenance-key="); ok {
			flag = v
		}
	}
	if flag == "" {
		t.Fatalf("no --provenance-key in %q", c.Args)
	}
	i := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == path.Dir(flag) })
	if i < 0 || !c.VolumeMounts[i].ReadOnly {
		t.Fatalf("--provenance-key=%s is not in a read-only mount: %+v", flag, c.VolumeMounts)
	}
	j := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == c.VolumeMounts[i].Name })
	if j < 0 || pod.Volumes[j].Secret == nil {
		t.Fatalf("the mount %s is not a Secret's: %+v", c.VolumeMounts[i].Name, pod.Volumes)
	}
	s := pod.Volumes[j].Secret
	if s.SecretName != "pvkit-provenance-key" || (s.Optional != nil && *s.Optional) || s.DefaultMode == nil || *s.DefaultMode != 0o440 || len(s.Items) != 0 {
		t.Errorf("the key's Secret volume: %+v; want pvkit-provenance-key, not optional, mode 0440, every key a file", s)
	}
	if path.Base(flag) != "key" {
		t.Errorf("--provenance-key=%s: the file is the Secret's key %q (--from-file=key=...)", flag, path.Base(flag))
	}
	if sc := pod.SecurityContext; sc == nil || sc.FSGroup == nil || sc.RunAsGroup == nil || *sc.FSGroup != *sc.RunAsGroup {
		t.Errorf("the key's group is not the pod's: %+v", sc)
	}
	// The key the comment makes loads.
	key := filepath.Join(t.TempDir(), "provenance_key")
	sshKeygen(t, "-q", "-t", "ed25519", "-N", "", "-C", "pvkit-controller@example.com", "-f", key)
	if _, err := sshsig.LoadKey(key); err != nil {
		t.Fatalf("the overlay's key: %v", err)
	}
}

// sshKeygen runs ssh-keygen (skipping without it, as the provenance tests do).
func sshKeygen(t *testing.T, args ...string) {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen not installed")
	}
	if out, err := exec.Command("ssh-keygen", args...).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
}

// Issue 62 #8: make release-manifests is make release without pvctl's
// cross-compiles: the same release tool and image builds, no pvctl
// platform (make -n shows the recipe; a run is in the note).
func TestReleaseManifestsTarget(t *testing.T) {
	out, err := exec.Command("make", "-C", fntest.RepoRoot(), "--no-print-directory", "-n", "release-manifests", "VERSION=v0.1.0").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n release-manifests: %v\n%s", err, out)
	}
	s := string(out)
	for _, want := range []string{"for p in ; do", "./orchestrator/cmd/pvkit-controller", "go run ./internal/cmd/release --version 'v0.1.0'"} {
		if !strings.Contains(s, want) {
			t.Errorf("make -n release-manifests lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "darwin") {
		t.Errorf("make -n release-manifests cross-compiles pvctl:\n%s", s)
	}
}

// Issue 62 #9: make demo shows the functions' part before pvctl is built:
// hack/demo.sh builds the functions alone, starts the rest in the
// background, runs the functions' steps, and waits for the build before
// its first pvctl command; make demo does not build everything first.
// (The times, measured on empty caches, are in docs/performance.md.)
func TestDemoShowsTheFunctionsFirst(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(fntest.RepoRoot(), "hack", "demo.sh"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	at := func(what string) int {
		i := strings.Index(s, what)
		if i < 0 {
			t.Fatalf("hack/demo.sh lacks %q", what)
		}
		return i
	}
	order := []string{"hack/build.sh functions", "hack/build.sh > ", `step "1. `, `wait "$build_pid"`, `pvctl publish`}
	for i := 1; i < len(order); i++ {
		if at(order[i-1]) > at(order[i]) {
			t.Errorf("hack/demo.sh: %q comes after %q", order[i-1], order[i])
		}
	}
	out, err := exec.Command("make", "-C", fntest.RepoRoot(), "--no-print-directory", "-n", "demo").CombinedOutput()
	if err != nil || strings.Contains(string(out), "hack/build.sh\n") || !strings.Contains(string(out), "hack/demo.sh") {
		t.Errorf("make -n demo builds everything before the demo: %v\n%s", err, out)
	}
}
