package cli

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// verifyCommit checks ref of a repository as git does with an
// allowed_signers file: git verify-commit's words, and whether git holds
// the signature good and valid (%G? is G: the key is one the file allows
// for the signer; a good signature of a key it does not name is U, which
// verify-commit still exits 0 for, saying "No principal matched").
func (w *ws) verifyCommit(repo, ref, allowed string) (string, bool) {
	w.t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(w.repos, repo+".git"))
	if len(dirs) != 1 {
		w.t.Fatalf("repository %s: %v", repo, dirs)
	}
	git := func(args ...string) (string, error) {
		out, err := exec.Command("git", append([]string{"--git-dir", dirs[0], "-c", "gpg.ssh.allowedSignersFile=" + allowed}, args...)...).CombinedOutput()
		return string(out), err
	}
	out, err := git("verify-commit", ref)
	trust, _ := git("log", "-1", "--format=%G?", ref)
	return out, err == nil && strings.TrimSpace(trust) == "G"
}

// Issue 60 #3 and its acceptance: with a provenance key (run's
// --provenance-key, every other verb's $PVCTL_PROVENANCE_KEY), the commits
// pvctl writes are signed as git signs one (gpg.format=ssh): `git
// verify-commit` with the allowed_signers file accepts the drafts' and the
// publications' commits; a commit signed by another key, and one written
// without a key, it refuses.
func TestSignedCommitsVerifyWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	key, allowed := newSSHKey(t, "pvctl@pvkit.dev")
	other, _ := newSSHKey(t, "someone@example.com")
	// blueprints/app is published without a key: git says nothing of a
	// commit without a signature, and refuses it.
	w := newWS(t)
	if out, ok := w.verifyCommit("blueprints", "main", allowed); ok {
		t.Fatalf("an unsigned commit verified: %s", out)
	}
	t.Setenv(ProvenanceKeyEnv, key)
	w.run(ExitOK)
	drafts := w.drafts()
	if len(drafts) == 0 {
		t.Fatal("the run made no draft")
	}
	w.approveDrafts()
	for _, repo := range []string{"edge-useast1", "core-euwest1"} {
		for _, ref := range []string{"main", "refs/tags/app/v1"} {
			if out, ok := w.verifyCommit(repo, ref, allowed); !ok || !strings.Contains(out, `Good "git" signature for pvctl@pvkit.dev`) {
				t.Errorf("%s %s: git verify-commit refused pvctl's commit: %s", repo, ref, out)
			}
		}
	}
	// Another key signs the next blueprint: refused.
	t.Setenv(ProvenanceKeyEnv, other)
	w.publishV2()
	if out, ok := w.verifyCommit("blueprints", "main", allowed); ok || !strings.Contains(out, "No principal matched") {
		t.Fatalf("a commit signed by another key verified: %s", out)
	}
	// A key pvctl cannot load is a usage error naming the variable.
	t.Setenv(ProvenanceKeyEnv, filepath.Join(t.TempDir(), "missing"))
	code, _, errs := w.cmd("approve", "nothing")
	if code != ExitUsage || !strings.Contains(errs, "$"+ProvenanceKeyEnv+": --provenance-key:") {
		t.Fatalf("a missing key: exit %d: %s", code, errs)
	}
}
