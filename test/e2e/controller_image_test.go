package e2e

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// The controller image: OCI labels, a non-root user, and the controller
// running with a read-only root filesystem, all capabilities dropped and no
// privilege escalation, as config/manager/deployment.yaml runs it. With no
// cluster, it must get as far as loading its kubeconfig and fail there with
// exit 1, which proves the binary starts under those constraints.
func TestControllerImage(t *testing.T) {
	needKpt(t)
	imagesEnabled(t)
	out, err := exec.Command("docker", "image", "inspect", "pvkit/controller:dev").Output()
	if err != nil {
		t.Fatalf("docker image inspect pvkit/controller:dev: %v (make images builds it)", err)
	}
	var info []struct {
		Size   int64
		Config struct {
			User       string
			Entrypoint []string
			Labels     map[string]string
		}
	}
	if err := json.Unmarshal(out, &info); err != nil || len(info) != 1 {
		t.Fatalf("docker image inspect: %v %s", err, out)
	}
	c := info[0].Config
	if c.User != "65534:65534" || len(c.Entrypoint) != 1 || c.Entrypoint[0] != "/usr/local/bin/pvkit-controller" {
		t.Errorf("user %q, entrypoint %q; want 65534:65534 and the controller", c.User, c.Entrypoint)
	}
	for _, l := range []string{"org.opencontainers.image.title", "org.opencontainers.image.version", "org.opencontainers.image.source", "org.opencontainers.image.licenses"} {
		if c.Labels[l] == "" {
			t.Errorf("label %s is missing: %v", l, c.Labels)
		}
	}
	t.Logf("pvkit/controller:dev is %d bytes uncompressed", info[0].Size)

	run := func(args ...string) (string, int) {
		cmd := exec.Command("docker", append([]string{"run", "--rm", "--read-only", "--cap-drop", "ALL",
			"--security-opt", "no-new-privileges", "pvkit/controller:dev"}, args...)...)
		b, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(b), code
	}
	if out, code := run("--help"); code != 0 || !strings.Contains(out, "-readable-kinds") || !strings.Contains(out, "-workers") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
	if out, code := run("--kubeconfig", "/nonexistent", "--metrics-bind-address", "0", "--health-probe-bind-address", "0"); code != 1 ||
		!strings.Contains(out, "pvctl controller: loading the kubeconfig") {
		t.Errorf("with no cluster: exit %d, want 1 and the kubeconfig named\n%s", code, out)
	}
	if out, code := run("id"); code != 2 || !strings.Contains(out, `unexpected argument "id"`) {
		t.Errorf("an argument: exit %d, want 2\n%s", code, out)
	}
}
