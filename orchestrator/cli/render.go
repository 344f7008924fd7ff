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
// published and fanned out. As kpt v1.0 does (rule: kpt-render-status), it
// writes the render status into the root Kptfile, on success and on
// failure; a failed render exits 1 and changes nothing else (with
// kpt.dev/save-on-render-failure, it saves what rendered). With
// --render-status=false it renders as kpt v1.0.0-beta.56 and Porch v1.5.3:
// no status, and a failed render writes nothing.
func renderCommand(ctx context.Context, o *Options) *cobra.Command {
	var rf renderFlags
	var dryRun bool
	renderStatus := true
	c := &cobra.Command{
		Use:   "render DIR",
		Short: "Render a package in place as kpt fn render does, with pvctl's function runtime (no registry needed for pvkit's and the catalog's functions)",
		Long: `Render a package in place as kpt fn render does: its Kptfile pipeline (subpackages
first, selectors, configPath, validators), with the functions run the ways pvctl run
runs them (pvkit's in process, the catalog's as executables, --function-runner,
docker or podman; exec: only with --allow-exec). As kpt v1.0 does, the root Kptfile
gets the render status (status.conditions[type=Rendered], status.renderStatus), also
when the render fails, which changes nothing else unless the Kptfile says
kpt.dev/save-on-render-failure: "true". --render-status=false renders as kpt
v1.0.0-beta.56 and Porch v1.5.3 do: no status, and a render that fails writes nothing.

Exit codes: 0 rendered; 1 the render failed (its status on standard error); 2 usage.`,
		Example: "  pvctl render examples/app    # the blueprint renders on its own, as Porch will render every clone",
		Args:    args(1, 1, "render needs one directory"),
		RunE: func(_ *cobra.Command, a []string) error {
			return runRender(ctx, o, &rf, a[0], dryRun, renderStatus)
		},
	}
	rf.add(c)
	c.Flags().BoolVar(&renderStatus, "render-status", true, "write kpt v1.0's render status into the root Kptfile and honour kpt.dev/save-on-render-failure (false: as kpt v1.0.0-beta.56 and Porch v1.5.3)")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "print the diff the render would make to DIR, and write nothing")
	_ = c.Flags().MarkHidden("no-render") // rendering is the verb
	return c
}

func runRender(ctx context.Context, o *Options, rf *renderFlags, dir string, dryRun, renderStatus bool) error {
	opts, err := rf.options()
	if err != nil {
		return err
	}
	opts.KptStatus = renderStatus
	if st, err := os.Stat(filepath.Join(dir, "Kptfile")); err != nil || !st.Mode().IsRegular() {
		return usageErr("%s: no Kptfile; pvctl render renders a kpt package", dir)
	}
	files, err := readDir(dir)
	if err != nil {
		return err
	}
	out, st, renderErr := opts.Render(ctx, files)
	if renderErr != nil {
		printRuns(o.Stderr, st.Runs)
		if out == nil {
			return fmt.Errorf("%s did not render (nothing was written): %w", dir, renderErr)
		}
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
		if renderErr != nil {
			fmt.Fprint(o.Stdout, d)
			return fmt.Errorf("%s did not render (dry run: nothing was written; the diff is what kpt v1.0 would leave): %w", dir, renderErr)
		}
		printSkipped(o.Stderr, st.Runs)
		fmt.Fprintf(o.Stdout, "%sRendered with %s (dry run: nothing was written).\n", d, plural(st.Executed(), "function"))
		return nil
	}
	changed, err := writeRendered(dir, files, out)
	if err != nil {
		return err
	}
	if renderErr != nil {
		what := "only the Kptfile's render status was written"
		if changed > 1 {
			what = fmt.Sprintf("%s saved with the Kptfile's render status (kpt.dev/save-on-render-failure)", plural(changed, "file"))
		}
		return fmt.Errorf("%s did not render (%s): %w", dir, what, renderErr)
	}
	printSkipped(o.Stderr, st.Runs)
	fmt.Fprintf(o.Stdout, "Successfully executed %s in %s; %s changed.\n", plural(st.Executed(), "function"), dir, plural(changed, "file"))
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

// printSkipped says, as kpt's main branch does, which steps a false
// `when` skipped.
func printSkipped(w io.Writer, runs []render.Run) {
	for _, r := range runs {
		if r.Skipped {
			fmt.Fprintf(w, "[SKIPPED] %q (when is false: %s)\n", r.Name(), r.When)
		}
	}
}

// printRuns writes what each function of a render did: its name and exit
// code, its results, the end of its standard error.
func printRuns(w io.Writer, runs []render.Run) {
	for _, r := range runs {
		if r.Skipped {
			fmt.Fprintf(w, "  %s: skipped (when is false: %s)\n", r.Name(), r.When)
			continue
		}
		if r.ExecutionError != "" {
			fmt.Fprintf(w, "  %s: not run: %s\n", r.Name(), r.ExecutionError)
			continue
		}
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

// checkRenders (rule: publish-what-git-holds) renders what a clone of a package would be, as Porch
// renders every clone (local.CloneRenders), unless --no-render. A package
// reaches a catalog the way git puts it there, and git renders nothing:
// Nephio's own blueprints render only once a variant has injected their
// WorkloadCluster and set their context, or name specializer images that
// run only in a cluster. So a clone that does not render is a warning
// naming the function and the reason, and what the clone will need; with
// strict (--check-render) it is an error and nothing is written.
func checkRenders(ctx context.Context, rf *renderFlags, strict bool, dir, pkg string, files map[string]string, warn io.Writer) error {
	opts, err := rf.options()
	if err != nil || opts == nil {
		return err
	}
	st, err := local.CloneRenders(ctx, opts, pkg, files)
	if err == nil {
		return nil
	}
	if strict {
		printRuns(warn, st.Runs)
		return fmt.Errorf("%s does not render as a clone of it would (Porch renders every clone, with a package context of its own): %w; nothing was published (--check-render)", dir, err)
	}
	fmt.Fprintf(warn, "warning: a clone of %s will not render as it is: %v\n", dir, err)
	printRuns(warn, st.Runs)
	for _, need := range local.CloneNeeds(files) {
		fmt.Fprintf(warn, "warning: a clone of %s will need %s\n", dir, need)
	}
	fmt.Fprintf(warn, "warning: published as it is (git renders nothing; Porch renders each clone once its variant has injected and set what it needs); --check-render refuses a package whose clone does not render\n")
	return nil
}
