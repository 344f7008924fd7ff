package local

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/provenance"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// dryRun runs o on a scratch copy of the repositories directory (and the
// state file) and reports what the run would do; the real directory is only
// read. With o.Diff, the report carries the unified diff of every package
// revision the run would create, change or delete.
func dryRun(ctx context.Context, o RunOptions) (*Report, error) {
	if err := CheckReposDir(o.Repos); err != nil {
		return nil, err
	}
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
	o.Repos, o.State, o.DryRun, o.Progress, o.realRepos = scratch, statePath, false, nil, o.Repos
	rep, err := Run(ctx, o)
	if err != nil {
		return nil, err
	}
	rep.DryRun = true
	for i, w := range rep.Warnings { // they name the real directory, not the plan's copy
		rep.Warnings[i] = strings.ReplaceAll(w, scratch, real.Repos)
	}
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
// the state file); a missing directory copies to nothing. A file under a
// git `objects` directory is linked, not copied: git writes an object once
// and never changes it (a new pack is a new file), so the scratch copy and
// the real one can share it; plan of a fleet of 500 repositories copied
// every object (76 s). Where a link cannot be made (another file
// system), the file is copied.
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
		if underObjects(rel) && os.Link(path, target) == nil {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// underObjects: a path inside a bare repository's objects directory
// (`<name>.git/objects/...`: its loose objects and packs), not its info
// (alternates, packs list) and never a ref that happens to be named
// objects.
func underObjects(rel string) bool {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i := 1; i+1 < len(parts)-1; i++ {
		if strings.HasSuffix(parts[i-1], ".git") && parts[i] == "objects" && parts[i+1] != "info" {
			return true
		}
	}
	return false
}

// diffRevisions diffs every revision whose files differ between the
// repositories in before and after, as `git diff` shows it. A revision a
// run would create in a package that has a published revision (an edit
// or upgrade draft) is diffed against the latest of them, what it
// changes; a clone, a package of its own, against nothing.
func diffRevisions(before, after, namespace, tmp string) ([]string, error) {
	type snapshot struct {
		files map[string]map[string]string
		revs  map[string]store.Revision
	}
	read := func(dir string) (snapshot, error) {
		out := snapshot{files: map[string]map[string]string{}, revs: map[string]store.Revision{}}
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			return out, nil
		}
		s, err := OpenRepos(dir, namespace, false)
		if err != nil {
			return out, err
		}
		for _, r := range s.All(namespace) {
			res, err := s.GetResources(context.Background(), namespace, r.Name)
			if err != nil {
				return out, err
			}
			out.files[r.Name], out.revs[r.Name] = res.Files, r
		}
		return out, nil
	}
	old, err := read(before)
	if err != nil {
		return nil, err
	}
	now, err := read(after)
	if err != nil {
		return nil, err
	}
	// base is what a new revision changes: its package's latest published
	// revision before the run ("" for none).
	base := func(r store.Revision) string {
		best := ""
		for n, o := range old.revs {
			if o.Key() == r.Key() && o.Lifecycle.IsPublished() && o.Revision > 0 && (best == "" || o.Revision > old.revs[best].Revision) {
				best = n
			}
		}
		return best
	}
	names := map[string]bool{}
	for n := range old.files {
		names[n] = true
	}
	for n := range now.files {
		names[n] = true
	}
	var diffs []string
	for _, n := range slices.Sorted(maps.Keys(names)) {
		from, fromName := old.files[n], n
		if _, had := old.files[n]; !had {
			if b := base(now.revs[n]); b != "" {
				from, fromName = old.files[b], b
			}
		}
		d, err := UnifiedDiff(tmp, fromName, n, from, resigned(from, now.files[n]))
		if err != nil {
			return nil, err
		}
		if d != "" {
			diffs = append(diffs, d)
		}
	}
	return diffs, nil
}

// unsignedNote stands in a plan's diff for the signature a run without
// --provenance-key does not make: the diff would show it removed.
const unsignedNote = "(signed again when written with --provenance-key; this plan has no key)"

// resigned is files with, in its provenance record, the signature the
// record before it had replaced by unsignedNote when the plan wrote it
// unsigned (a plan of a signed fleet without the key showed
// every signature removed). Anything else is as the plan wrote it.
func resigned(before, files map[string]string) map[string]string {
	old, now := before[provenance.FileName], files[provenance.FileName]
	if old == "" || now == "" {
		return files
	}
	on, err1 := yaml.Parse(old)
	nn, err2 := yaml.Parse(now)
	if err1 != nil || err2 != nil {
		return files
	}
	if sig, _ := krm.ScalarAt(on.YNode(), "data", "signature"); sig == "" {
		return files
	}
	if sig, _ := krm.ScalarAt(nn.YNode(), "data", "signature"); sig != "" {
		return files
	}
	if err := nn.PipeE(yaml.LookupCreate(yaml.MappingNode, "data"), yaml.SetField("signature", yaml.NewStringRNode(unsignedNote))); err != nil {
		return files
	}
	text, err := nn.String()
	if err != nil {
		return files
	}
	out := maps.Clone(files)
	out[provenance.FileName] = text
	return out
}

// UnifiedDiff is `git diff --no-index` of two versions of a package's
// files, paths shown as <fromName>/<file> and <toName>/<file> (a file
// that is new, or gone, as /dev/null on its other side).
func UnifiedDiff(tmp, fromName, toName string, a, b map[string]string) (string, error) {
	if maps.Equal(a, b) {
		return "", nil
	}
	dir, err := os.MkdirTemp(tmp, "diff-")
	if err != nil {
		return "", err
	}
	write := func(side string, files map[string]string) error {
		root := filepath.Join(dir, side)
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
	return relabel(string(out), fromName, toName), nil
}

// relabel names the sides of git's output by revision: git diff
// --no-index shows the directories it was given ("a/f", "b/f"; a new
// file's header has "b/f" twice).
func relabel(diff, fromName, toName string) string {
	side := func(p, name string) string {
		if p == "/dev/null" {
			return p
		}
		_, rel, _ := strings.Cut(p, "/")
		return name + "/" + rel
	}
	lines := strings.SplitAfter(diff, "\n")
	header := false // between a "diff --git" line and its first hunk
	for i, l := range lines {
		body := strings.TrimSuffix(l, "\n")
		nl := l[len(body):]
		switch {
		case strings.HasPrefix(body, "@@"):
			header = false
		case strings.HasPrefix(body, "diff --git "):
			header = true
			paths := strings.Fields(strings.TrimPrefix(body, "diff --git "))
			if len(paths) == 2 {
				_, rel, _ := strings.Cut(paths[1], "/")
				lines[i] = "diff --git " + fromName + "/" + rel + " " + toName + "/" + rel + nl
			}
		case header && strings.HasPrefix(body, "--- "):
			lines[i] = "--- " + side(strings.TrimPrefix(body, "--- "), fromName) + nl
		case header && strings.HasPrefix(body, "+++ "):
			lines[i] = "+++ " + side(strings.TrimPrefix(body, "+++ "), toName) + nl
		}
	}
	return strings.Join(lines, "")
}

// conditional rewrites a change the scratch run made ("created draft X")
// as what a run would do ("would create draft X"): a plan did nothing.
func conditional(change string) string {
	verb, rest, _ := strings.Cut(change, " ")
	if v, ok := map[string]string{"created": "create", "updated": "update", "deleted": "delete", "removed": "remove", "approved": "approve", "released": "release", "synced": "sync", "upgraded": "upgrade", "proposed": "propose"}[verb]; ok {
		return "would " + v + " " + rest
	}
	return change
}
