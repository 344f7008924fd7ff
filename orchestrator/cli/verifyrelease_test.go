package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// verify-release's errors name what is missing (internal/release's
// TestReleaseVerifiesAndTamperingFails checks a real release).
func TestVerifyReleaseErrors(t *testing.T) {
	dir := t.TempDir()
	signers := filepath.Join(dir, "allowed_signers")
	if err := os.WriteFile(signers, []byte("release@pvkit.dev ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{dir}, ExitUsage, "--allowed-signers is required"},
		{[]string{dir, "--allowed-signers", filepath.Join(dir, "nope")}, ExitUsage, "--allowed-signers: open "},
		{[]string{dir, "--allowed-signers", signers}, ExitNotReady, "checksums.txt: open "},
	} {
		var out, errb bytes.Buffer
		code := Command(context.Background(), "verify-release", c.args, &out, &errb)
		if code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("verify-release %v: exit %d, %q; want %d and %q", c.args, code, errb.String(), c.code, c.want)
		}
	}
}
