package local

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pvkit/pvkit/orchestrator/local/state"
)

// dryRun runs o on a scratch copy of the repositories directory (and the
// state file) and reports what the run would do; the real directory is only
// read. With o.Diff, the report carries the unified diff of every package
// revision the run would create, change or delete.
func dryRun(ctx context.Context, o RunOptions) (*Report, error) {
	tmp, err := os.MkdirTemp("", "pvctl-plan-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	scratch := filepath.Join(tmp, "repos")
	if err := copyTree(o.Repos, scratch); err != nil {
		return nil, fmt.Errorf("copying %s for the plan: %w", o.Repos, err)
	}
	statePath := filepath.Join(scratch, state.File)
	if o.State != "" && o.State != filepath.Join(o.Repos, state.File) {
		statePath = filepath.Join(tmp, "state.yaml")
		if b, err := os.ReadFile(o.State); err == nil {
			if err := os.WriteFile(statePath, b, 0o644); err != nil {
				return nil, err
			}
		} else if !os.IsNotExist(err) {
			return nil, err
		}
	}
	real := o
	o.Repos, o.State, o.DryRun, o.Progress = scratch, statePath, false, nil
	rep, err := Run(ctx, o)
	if err != nil {
		return nil, err
	}
	rep.DryRun = true
	for i, c := range rep.Changes {
		rep.Changes[i] = conditional(c)
	}
	if real.Diff {
		if rep.Diffs, err = diffRevisions(real.Repos, scratch, real.Namespace, tmp); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// copyTree copies a directory of regular files (bare git repositories and
// the state file); a missing directory copies to nothing.
func copyTree(src, dst string) error {
	if _, err := os.Stat(src); os.IsNotExist(err) {
		return nil
	}
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case !d.Type().IsRegular():
			return fmt.Errorf("%s: not a regular file", path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// diffRevisions diffs every revision whose files differ between the
// repositories in before and after, as `git diff` shows it.
func diffRevisions(before, after, namespace, tmp string) ([]string, error) {
	files := func(dir string) (map[string]map[string]string, error) {
		out := map[string]map[string]string{}
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			return out, nil
		}
		s, err := OpenRepos(dir, namespace, false)
		if err != nil {
			return nil, err
		}
		for _, r := range s.All(namespace) {
			res, err := s.GetResources(context.Background(), namespace, r.Name)
			if err != nil {
				return nil, err
			}
			out[r.Name] = res.Files
		}
		return out, nil
	}
	old, err := files(before)
	if err != nil {
		return nil, err
	}
	now, err := files(after)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for n := range old {
		names[n] = true
	}
	for n := range now {
		names[n] = true
	}
	var sorted []string
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	var diffs []string
	for _, n := range sorted {
		d, err := UnifiedDiff(tmp, n, old[n], now[n])
		if err != nil {
			return nil, err
		}
		if d != "" {
			diffs = append(diffs, d)
		}
	}
	return diffs, nil
}

// UnifiedDiff is `git diff --no-index` of two versions of a revision's
// files, paths shown as <revision>/<file>.
func UnifiedDiff(tmp, name string, a, b map[string]string) (string, error) {
	if maps.Equal(a, b) {
		return "", nil
	}
	dir, err := os.MkdirTemp(tmp, "diff-")
	if err != nil {
		return "", err
	}
	write := func(side string, files map[string]string) error {
		root := filepath.Join(dir, side, name)
		if err := os.MkdirAll(root, 0o755); err != nil {
			return err
		}
		for f, content := range files {
			p := filepath.Join(root, filepath.FromSlash(f))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	if err := write("a", a); err != nil {
		return "", err
	}
	if err := write("b", b); err != nil {
		return "", err
	}
	cmd := exec.Command("git", "diff", "--no-index", "--no-color", "--no-ext-diff", "--no-prefix", "a", "b")
	cmd.Dir = dir
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		err = nil // differences found
	}
	if err != nil {
		return "", fmt.Errorf("git diff: %w", err)
	}
	return string(out), nil
}

// conditional rewrites a change the scratch run made ("created draft X")
// as what a run would do ("would create draft X"): a plan did nothing.
func conditional(change string) string {
	verb, rest, _ := strings.Cut(change, " ")
	if v, ok := map[string]string{"created": "create", "updated": "update", "deleted": "delete", "removed": "remove", "approved": "approve", "released": "release", "synced": "sync"}[verb]; ok {
		return "would " + v + " " + rest
	}
	return change
}
