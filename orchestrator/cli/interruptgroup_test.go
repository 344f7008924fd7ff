package cli

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Ctrl-C at any moment of a signed, grouped, staged run leaves nothing
// half-written: after each interrupt the state file reads, every ref of
// every repository points at a commit pvctl signed, `pvctl verify` holds
// (every record matches its package), and the next runs finish the
// rollout with no target done at members of two group revisions.
func TestInterruptedSignedGroupRun(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	key, allowed := newSSHKey(t, "pvctl@pvkit.dev")
	t.Setenv(ProvenanceKeyEnv, key)
	w := groupRolloutWS(t)
	for _, m := range []string{"upf", "smf", "amf"} {
		w.publishMember(m, "v2")
	}
	w.publishGroup3(2)
	repos := []string{"catalog", "blueprints"}
	for i := 0; i < 10; i++ {
		repos = append(repos, fmt.Sprintf("edge%02d", i))
	}
	interrupted := 0
	for _, after := range []time.Duration{5 * time.Millisecond, 30 * time.Millisecond, 80 * time.Millisecond, 150 * time.Millisecond, 300 * time.Millisecond, 600 * time.Millisecond} {
		ctx, cancel := context.WithCancelCause(context.Background())
		timer := time.AfterFunc(after, func() { cancel(ErrInterrupted) })
		var out, errb bytes.Buffer
		code := Command(ctx, "run", []string{"--repos", w.repos, "-f", w.in}, &out, &errb)
		timer.Stop()
		cancel(nil)
		if code == ExitInterrupted {
			interrupted++
		} else if code != ExitOK {
			t.Fatalf("interrupted after %s: exit %d\n%s", after, code, errb.String())
		}
		w.stateFile() // reads
		for _, repo := range repos {
			for _, ref := range strings.Fields(w.gitOut(repo, "", "for-each-ref", "--format=%(refname)")) {
				if out, ok := w.verifyCommit(repo, ref, allowed); !ok {
					t.Fatalf("interrupted after %s: %s %s is not a commit pvctl signed: %s", after, repo, ref, out)
				}
			}
		}
		if code, out, _ := w.cmd("verify"); code != ExitOK {
			t.Fatalf("interrupted after %s: pvctl verify exit %d\n%s", after, code, out)
		}
	}
	t.Logf("%d of 6 runs interrupted", interrupted)
	if interrupted == 0 {
		t.Fatal("no run was interrupted: the test interrupts nothing")
	}
	w.rollOutGroupTo("blueprints.free5gc.v2")
}
