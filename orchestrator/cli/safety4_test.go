package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
)

// Regression cases of the fifth attack pass (issue 47, docs/security.md
// "round four"): each failed on the code before it.

// Issue 47 #7: the lock was opened following a link, and its target
// truncated; a repository linked into --repos was skipped unsaid
// ("holds 1 entries and no bare repository").
func TestLockAndRepositoryLinksRefused(t *testing.T) {
	t.Run("lock is a link", func(t *testing.T) {
		w := newWS(t)
		victim := filepath.Join(t.TempDir(), "victim")
		if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
			t.Fatal(err)
		}
		lock := filepath.Join(w.repos, ".pvctl.lock")
		_ = os.Remove(lock)
		if err := os.Symlink(victim, lock); err != nil {
			t.Fatal(err)
		}
		before := strings.Join(w.revisions(), "\n")
		code, _, errs := w.cmd("run", "-f", w.in)
		if code != ExitUsage || !strings.Contains(errs, lock+" is a symbolic link") {
			t.Fatalf("run: exit %d, %q", code, errs)
		}
		if b, _ := os.ReadFile(victim); string(b) != "precious" {
			t.Fatalf("the link's target was written: %q", b)
		}
		if after := strings.Join(w.revisions(), "\n"); after != before {
			t.Fatalf("run wrote:\n%s", after)
		}
	})
	t.Run("lock is a FIFO", func(t *testing.T) {
		w := newWS(t)
		lock := filepath.Join(w.repos, ".pvctl.lock")
		_ = os.Remove(lock)
		if err := syscall.Mkfifo(lock, 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs := w.cmd("run", "-f", w.in)
		if code != ExitUsage || !strings.Contains(errs, "the lock "+lock+" is not a regular file") {
			t.Fatalf("run: exit %d, %q", code, errs)
		}
	})
	t.Run("repository is a link", func(t *testing.T) {
		w := newWS(t)
		moved := filepath.Join(t.TempDir(), "blueprints.git")
		if err := os.Rename(filepath.Join(w.repos, "blueprints.git"), moved); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(w.repos, "blueprints.git")
		if err := os.Symlink(moved, link); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"publish", "--repo", "blueprints", "--package", "other", filepath.Join(fntest.RepoRoot(), "examples", "app")},
			{"run", "-f", w.in},
			{"get"},
		} {
			code, _, errs := w.cmd(args[0], args[1:]...)
			if code != ExitUsage || !strings.Contains(errs, link+" is a symbolic link") || strings.Contains(errs, "no bare repository") {
				t.Fatalf("%s: exit %d, %q", args[0], code, errs)
			}
		}
	})
}

// Issue 47 #11: a run started from the wrong directory created
// ./repositories and a second fleet there, with only a warning. It starts
// one only where told to: --repos (or $PVCTL_REPOS) naming a new
// directory.
func TestRunStartsAFleetOnlyWhereTold(t *testing.T) {
	w := newWS(t)
	elsewhere := t.TempDir()
	t.Chdir(elsewhere)
	t.Setenv("PVCTL_REPOS", "")
	var out, errb strings.Builder
	code := Command(context.Background(), "run", []string{"-f", w.in}, &out, &errb)
	if code != ExitUsage || !strings.Contains(errb.String(), "no repositories directory repositories in "+elsewhere+", and none named: run starts a fleet only where it is told to") {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Fatalf("the refused run made %v", entries)
	}
	// A plan writes nothing: it still plans, and names the directory.
	errb.Reset()
	if code := Command(context.Background(), "plan", []string{"-f", w.in}, &out, &errb); code == ExitUsage ||
		!strings.Contains(errb.String(), "warning: the repositories directory repositories did not exist") {
		t.Fatalf("plan: exit %d\n%s", code, errb.String())
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Fatalf("the plan made %v", entries)
	}
	// Named, by the flag or the environment, a new directory is a new fleet.
	for _, named := range []struct{ flag, env string }{{flag: "repositories"}, {env: filepath.Join(elsewhere, "from-env")}} {
		t.Setenv("PVCTL_REPOS", named.env)
		args := []string{"-f", w.in}
		if named.flag != "" {
			args = append(args, "--repos", named.flag)
		}
		errb.Reset()
		if code := Command(context.Background(), "run", args, &out, &errb); code == ExitUsage || !strings.Contains(errb.String(), "did not exist: this run creates it") {
			t.Fatalf("run %v (PVCTL_REPOS=%q): exit %d\n%s", args, named.env, code, errb.String())
		}
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "repositories", "edge-useast1.git")); err != nil {
		t.Fatal(err)
	}
}
