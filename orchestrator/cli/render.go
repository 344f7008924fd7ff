package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pvkit/pvkit/internal/atomicfile"

	"github.com/pvkit/pvkit/orchestrator/local"
	"github.com/pvkit/pvkit/pkg/render"
	"github.com/pvkit/pvkit/pkg/validate"
	"github.com/spf13/cobra"
)

// renderCommand is `pvctl render DIR`: kpt fn render's semantics (the
// Kptfile pipeline, subpackages first, selectors, validators; the package
// rewritten in place) with pvctl's runtime and function config, so that a
// blueprint can be checked on a laptop, with no registry, before it is
// published and fanned out. A failed render writes nothing and exits 1 with
// the render status; the files are written only when every function ran.
func renderCommand(ctx context.Context, o *Options) *cobra.Command {
	var rf renderFlags
	var dryRun bool
	c := &cobra.Command{
		Use:   "render DIR",
		Short: "Render a package in place as kpt fn render does, with pvctl's function runtime (no registry needed for pvkit's and the catalog's functions)",
		Long: `Render a package in place as kpt fn render does: its Kptfile pipeline (subpackages
first, selectors, configPath, validators), with the functions run the ways pvctl run
runs them (pvkit's in process, the catalog's as executables, --function-runner,
docker or podman; exec: only with --allow-exec). A render that fails writes nothing.

Exit codes: 0 rendered; 1 the render failed (its status on standard error); 2 usage.`,
		Example: "  pvctl render examples/app    # the blueprint renders on its own, as Porch will render every clone",
		Args:    args(1, 1, "render needs one directory"),
		RunE: func(_ *cobra.Command, a []string) error {
			return runRender(ctx, o, &rf, a[0], dryRun)
		},
	}
	rf.add(c)
	c.Flags().BoolVar(&dryRun, "dry-run", false, "print the diff the render would make to DIR, and write nothing")
	_ = c.Flags().MarkHidden("no-render") // rendering is the verb
	return c
}

func runRender(ctx context.Context, o *Options, rf *renderFlags, dir string, dryRun bool) error {
	opts, err := rf.options()
	if err != nil {
		return err
	}
	if st, err := os.Stat(filepath.Join(dir, "Kptfile")); err != nil || !st.Mode().IsRegular() {
		return usageErr("%s: no Kptfile; pvctl render renders a kpt package", dir)
	}
	files, err := readDir(dir)
	if err != nil {
		return err
	}
	out, st, err := opts.Render(ctx, files)
	if err != nil {
		printRuns(o.Stderr, st.Runs)
		return fmt.Errorf("%s did not render (nothing was written): %w", dir, err)
	}
	// What the functions wrote is the package's content, as untrusted as
	// the package: every path is checked before anything is written (no
	// .git look-alike, nothing outside DIR).
	for name, content := range out {
		if old, ok := files[name]; ok && old == content {
			continue
		}
		if msg := validate.FilePath(name); msg != "" {
			return fmt.Errorf("%s: the render wrote the file %q: file path %s; nothing was written", dir, name, msg)
		}
	}
	if dryRun {
		tmp, err := os.MkdirTemp("", "pvctl-render-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		d, err := local.UnifiedDiff(tmp, dir, dir, files, out)
		if err != nil {
			return err
		}
		fmt.Fprintf(o.Stdout, "%sRendered with %s (dry run: nothing was written).\n", d, plural(len(st.Runs), "function"))
		return nil
	}
	changed, err := writeRendered(dir, files, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Stdout, "Successfully executed %s in %s; %s changed.\n", plural(len(st.Runs), "function"), dir, plural(changed, "file"))
	return nil
}

// writeRendered writes the files a render changed or made, and removes
// the ones it emptied, as kpt fn render leaves a package; the number of
// files touched.
func writeRendered(dir string, before, after map[string]string) (int, error) {
	names := make([]string, 0, len(after))
	for n := range after {
		names = append(names, n)
	}
	sort.Strings(names)
	n := 0
	for _, name := range names {
		if old, ok := before[name]; ok && old == after[name] {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return n, err
		}
		if err := atomicfile.Write(p, []byte(after[name]), 0o644); err != nil {
			return n, err
		}
		n++
	}
	for name := range before {
		if _, kept := after[name]; !kept {
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// printRuns writes what each function of a render did: its name and exit
// code, its results, the end of its standard error.
func printRuns(w io.Writer, runs []render.Run) {
	for _, r := range runs {
		fmt.Fprintf(w, "  %s: exit code %d\n", r.Name(), r.ExitCode)
		for _, res := range r.Results {
			fmt.Fprintf(w, "    [%s] %s\n", res.Severity, res.Message)
		}
		if e := strings.TrimSpace(r.Stderr); e != "" && r.ExitCode != 0 {
			for _, l := range strings.Split(e, "\n") {
				fmt.Fprintf(w, "    %s\n", l)
			}
		}
	}
}

// checkRenders renders what a clone of a package would be, as Porch
// renders every clone (local.CloneRenders), unless --no-render: a render
// that fails is an error saying so, with each function's outcome; nothing
// is written.
func checkRenders(ctx context.Context, rf *renderFlags, dir, pkg string, files map[string]string, warn io.Writer) error {
	opts, err := rf.options()
	if err != nil || opts == nil {
		return err
	}
	if st, err := local.CloneRenders(ctx, opts, pkg, files); err != nil {
		printRuns(warn, st.Runs)
		return fmt.Errorf("%s does not render as a clone of it would (Porch renders every clone, with a package context of its own): %w; nothing was published (--no-render publishes it as it is)", dir, err)
	}
	return nil
}
