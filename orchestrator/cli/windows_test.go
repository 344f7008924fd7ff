package cli

import (
	"strings"
	"testing"
)

// Issue 57 #3's acceptance with pvctl (rule rollout-windows): a deny
// window covering the run's clock (--now) holds the canary wave, and
// pvctl rollout status says which window and until when; a run with the
// clock out of it opens the wave. A bad --now is refused, named.
func TestWindowsLocally(t *testing.T) {
	w := rolloutWS(t)
	w.rolloutSpec(`    windows:
    - {name: freeze, kind: deny, schedule: "0 18 * * fri", duration: 62h, timeZone: Europe/Berlin}
`)
	w.publishV2()
	friday := "2026-11-27T19:00:00Z" // 20:00 in Berlin, in the freeze
	out := w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in, "--now", friday)
	if strings.Contains(out, "created draft") {
		t.Fatalf("a draft in a deny window:\n%s", out)
	}
	st := w.mustCmd(ExitOK, "rollout", "status", "app")
	contains(t, st, `wave canary does not open: in deny window "freeze" (0 18 * * fri for 62h, Europe/Berlin) until 2026-11-30T07:00:00Z`)
	contains(t, st, "held by a window: in deny window")
	contains(t, w.mustCmd(ExitOK, "rollout", "status", "app", "-o", "json"), `"until": "2026-11-30T07:00:00Z"`)
	// Monday 08:00 in Berlin: out of the freeze, the canary moves.
	out = w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in, "--now", "2026-11-30T07:00:00Z")
	if n := strings.Count(out, "created draft"); n != 1 || !strings.Contains(out, "fleet-07") {
		t.Fatalf("out of the window: want the canary's draft alone:\n%s", out)
	}
	if st := w.mustCmd(ExitOK, "rollout", "status", "app"); strings.Contains(st, "held by a window") {
		t.Fatalf("out of the window, still held:\n%s", st)
	}
	code, _, errs := w.cmd("run", "-f", w.in, "--now", "friday")
	if code != ExitUsage {
		t.Fatalf("a bad --now: exit %d, want %d", code, ExitUsage)
	}
	contains(t, errs, `--now "friday" is not an RFC 3339 instant such as 2026-11-27T18:00:00Z`)
}
