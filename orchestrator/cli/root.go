package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/pvkit/pvkit/pkg/validate"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pvkit/pvkit/orchestrator/local"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/pvkit/pvkit/pkg/pvsexpand"
	"github.com/spf13/cobra"
)

// Options are what every local command shares.
type Options struct {
	Repos     string
	Namespace string
	Stdin     io.Reader
	Stdout    io.Writer
	Stderr    io.Writer
	// Color is --color: auto, always or never.
	Color string
}

// paint is the painter for stdout.
func (o *Options) paint() painter { return newPainter(o.Color, o.Stdout) }

// NewRoot returns pvctl's command tree with the local commands; the binary
// adds `controller` and `version`. Flags may come before or after arguments.
func NewRoot(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	o := &Options{Stdin: stdin, Stdout: stdout, Stderr: stderr}
	root := &cobra.Command{
		Use:   "pvctl",
		Short: "Package variants for kpt and Porch: the controller, and the same reconcile on a laptop",
		Long: `pvctl is pvkit's orchestrator. As a controller it reconciles PackageVariants and
PackageVariantSets against Porch; as a CLI it runs the same reconcile against local
git repositories laid out as Porch lays them out, and manages their package revisions
as porchctl does.

Exit codes: 0 done (run: every set and variant Ready; plan: nothing would change);
1 not Ready yet (a readiness gate, a transient error) or the command failed; 2 usage or
input error, nothing written; 3 plan: something would change, run: a removal held back
for want of --prune; 4 some set or variant is stalled (it waits for a change of its input).`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.PersistentFlags().StringVar(&o.Repos, "repos", "", "the directory of bare git repositories (default: $PVCTL_REPOS, else ./repositories); a namespace other than default has its own, REPOS/namespaces/NAMESPACE")
	root.PersistentFlags().StringVar(&o.Color, "color", "auto", "colour tables: auto (on a terminal, unless NO_COLOR is set), always or never")
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		// The namespace names a directory (ReposDir): checked as the
		// apiserver checks metadata.namespace, before anything is opened;
		// "" is the default namespace, as kubectl takes it.
		if o.Namespace == "" {
			o.Namespace = "default"
		}
		if msg := validate.DNS1123Label(o.Namespace); msg != "" {
			return usageErr("--namespace %s", msg)
		}
		o.Repos = ReposDir(o.Repos, o.Namespace)
		if !slices.Contains(colorChoices, o.Color) {
			return usageErr("--color must be auto, always or never, not %q", o.Color)
		}
		return nil
	}
	root.PersistentFlags().StringVarP(&o.Namespace, "namespace", "n", "default", "the namespace the embedded cluster serves")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err.Error()} })
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(runCommand(ctx, o, false), runCommand(ctx, o, true), getCommand(o), publishCommand(o), diffCommand(ctx, o), pullCommand(ctx, o), pushCommand(ctx, o), statusCommand(ctx, o), eventsCommand(ctx, o))
	for _, v := range lifecycleVerbs {
		root.AddCommand(lifecycleCommand(ctx, o, v))
	}
	return root
}

// ReposDir is the directory of a namespace's repositories: flag (or
// $PVCTL_REPOS, or ./repositories) for the default namespace, and its
// namespaces/NAMESPACE for any other, so that namespaces share nothing
// (repositories, drafts, owners, the state file), as in a cluster.
func ReposDir(flag, namespace string) string {
	dir := flag
	if dir == "" {
		dir = os.Getenv("PVCTL_REPOS")
	}
	if dir == "" {
		dir = "repositories"
	}
	if namespace != "" && namespace != "default" {
		dir = filepath.Join(dir, "namespaces", namespace)
	}
	return dir
}

// Command runs one local command (name and its arguments) and returns the
// exit code; main and the tests use it.
func Command(ctx context.Context, name string, args []string, stdout, stderr io.Writer) int {
	root := NewRoot(ctx, strings.NewReader(""), stdout, stderr)
	root.SetArgs(append([]string{name}, args...))
	return Execute(root, stderr)
}

// Execute runs a command tree and maps its outcome to an exit code,
// printing `pvctl COMMAND: error` for failures.
func Execute(root *cobra.Command, stderr io.Writer) int {
	cmd, err := root.ExecuteC()
	if err == nil {
		return ExitOK
	}
	switch {
	case errors.Is(err, errNotReady), errors.Is(err, errDiffers):
		return ExitNotReady
	case errors.Is(err, errWouldChange), errors.Is(err, errHeldBack):
		return ExitChanges
	case errors.Is(err, errStalled):
		return ExitStalled
	}
	prefix := "pvctl"
	if cmd != nil && cmd != root {
		prefix += " " + cmd.Name()
	}
	fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
	var ue *usageError
	if errors.As(err, &ue) || local.IsInputError(err) || strings.HasPrefix(err.Error(), "unknown command") {
		return ExitUsage
	}
	return ExitNotReady
}

// args checks positional arguments as a usage error with a message.
func args(min, max int, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, a []string) error {
		if len(a) < min || (max >= 0 && len(a) > max) {
			return usageErr("%s", what)
		}
		return nil
	}
}

// revisionNames completes package revision names from --repos.
func revisionNames(o *Options) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		s, err := openRepos(o.Repos, o.Namespace, false, nil)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, r := range s.All(o.Namespace) {
			if strings.HasPrefix(r.Name, prefix) {
				out = append(out, r.Name)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

func runCommand(ctx context.Context, o *Options, plan bool) *cobra.Command {
	var files []string
	var output, statePath string
	var prune local.Prune
	maxChildren := pvsexpand.DefaultMaxChildren
	var readable, syncRepos []string
	var rf renderFlags
	var timeout time.Duration
	dryRun, diff := plan, false
	c := &cobra.Command{
		Use:   "run -f FILE|DIR|- ...",
		Short: "Reconcile PackageVariants and PackageVariantSets against local git repositories, then exit",
		Long: `Run the controllers' reconcile once against the repositories in --repos. The files
are the whole desired state: variants, sets, Repository objects (their labels are what
sets select) and the objects variants inject and sets select.

Nothing is removed without --prune: variants or sets gone from the files, children a set
no longer selects, owned drafts of an old downstream are listed under "Not removed" and
the run exits 1. A set that would lose more than half of its children (and more than one)
stalls with MassDeletion even with --prune; files that no longer give more than half of
the variants of the last run (and more than one) stop the run before it does anything.
--prune=all lifts both guards. A set may have at most --max-children-per-set children.`,
		Example: `  pvctl run -f examples/local                 # create and update; remove nothing
  pvctl run -f examples/local --prune         # also remove what the files no longer ask for
  pvctl run -f examples/local --dry-run --diff  # the plan and each package's diff; write nothing
  cat variants.yaml | pvctl run -f -`,
		Args: func(_ *cobra.Command, a []string) error {
			if len(a) > 0 {
				return usageErr("unexpected arguments %q (files go after -f)", a)
			}
			return nil
		},
		RunE: func(*cobra.Command, []string) error {
			if output != "table" && output != "yaml" && output != "json" {
				return usageErr("-o must be table, yaml or json, not %q", output)
			}
			if maxChildren < 1 {
				return usageErr("--max-children-per-set: %d, want 1 or more", maxChildren)
			}
			if len(files) == 0 {
				return usageErr("run needs -f: the files are the whole desired state, so a run without them would remove every variant")
			}
			if diff && !dryRun {
				return usageErr("--diff goes with --dry-run (pvctl plan --diff)")
			}
			if plan && !dryRun {
				return usageErr("plan never writes: --dry-run=false goes with pvctl run")
			}
			var stdin []byte
			for _, f := range files {
				if f == "-" {
					b, err := io.ReadAll(o.Stdin)
					if err != nil {
						return err
					}
					stdin = b
				}
			}
			rendering, err := rf.options()
			if err != nil {
				return err
			}
			if timeout < 0 {
				return usageErr("--timeout must not be negative, found %s", timeout)
			}
			ctx := ctx
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeoutCause(ctx, timeout, fmt.Errorf("the run's --timeout (%s) passed", timeout))
				defer cancel()
			}
			rep, err := local.Run(ctx, local.RunOptions{Repos: o.Repos, Files: files, Namespace: o.Namespace, State: statePath,
				Prune: prune, DryRun: dryRun, Diff: diff, Stdin: stdin, Progress: progressWriter(o.Stderr), MaxChildren: maxChildren, ReadableKinds: readable,
				Render: rendering, Sync: syncRepos})
			if err != nil {
				return err
			}
			for _, w := range rep.Warnings {
				fmt.Fprintf(o.Stderr, "warning: %s\n", w)
			}
			if err := printReport(o.Stdout, rep, output, o.paint()); err != nil {
				return err
			}
			if rep.Unsettled != "" {
				if dryRun {
					fmt.Fprintf(o.Stderr, "pvctl plan: %s; the plan is incomplete (nothing was written)\n", rep.Unsettled)
				} else {
					fmt.Fprintf(o.Stderr, "pvctl run: %s; what it did is saved, run again to go on\n", rep.Unsettled)
				}
				return errNotReady
			}
			_, notReady, stalled := rep.Counts()
			switch {
			case stalled > 0:
				return errStalled
			case dryRun && (len(rep.Changes) > 0 || len(rep.Held) > 0):
				return errWouldChange
			case dryRun:
				return nil
			case notReady > 0:
				return errNotReady
			case len(rep.Held) > 0:
				return errHeldBack
			}
			return nil
		},
	}
	if plan {
		c.Use, c.Short = "plan -f FILE|DIR|- ...", "Print what pvctl run would change, and write nothing (run --dry-run)"
		c.Example = `  pvctl plan -f examples/local           # exit 0: nothing would change; 3: something would; 4: something is stalled
  pvctl plan -f examples/local --diff    # with the unified diff of each package revision`
	}
	f := c.Flags()
	f.StringArrayVarP(&files, "filename", "f", nil, "a YAML file, a directory of them, or - for standard input (repeatable)")
	f.StringVarP(&output, "output", "o", "table", "table, yaml or json (json and yaml: the change list and the sets and variants with their status)")
	f.StringVar(&statePath, "state", "", "the state file (default: REPOS/"+state.File+")")
	f.Var(&prune, "prune", "remove what the files no longer ask for; --prune=all also lifts the mass-deletion guard")
	f.Lookup("prune").NoOptDefVal = "true"
	f.BoolVar(&dryRun, "dry-run", plan, "print what the run would change and write nothing")
	f.StringSliceVar(&readable, "readable-kinds", nil, "more kinds (Kind or Kind.group) variants may inject and sets may select, besides ConfigMap, Team.example.com and the kinds of the objects in the files (a Secret only when named here)")
	f.IntVar(&maxChildren, "max-children-per-set", maxChildren, "PackageVariants one PackageVariantSet may have; a set asking for more stalls with TooManyChildren")
	f.BoolVar(&diff, "diff", false, "with --dry-run: the unified diff of each package revision the run would change")
	f.StringArrayVar(&syncRepos, "sync", nil, "REPO: apply the published packages of this repository to the embedded cluster, as ConfigSync would, so that the variants and sets they nest are reconciled in the same run (repeatable)")
	f.DurationVar(&timeout, "timeout", 30*time.Minute, "stop the run after this long (0: never), saving what it did; each draft's render has its own deadline (--render-timeout)")
	rf.add(c)
	return c
}

func publishCommand(o *Options) *cobra.Command {
	var repo, pkg string
	c := &cobra.Command{
		Use:     "publish --repo REPO --package PACKAGE DIR",
		Short:   "Publish a directory as the next revision of a package (creating the repository if missing)",
		Example: "  pvctl publish --repo blueprints --package app examples/app",
		Args:    args(1, 1, "publish needs --repo, --package and one directory"),
		RunE: func(_ *cobra.Command, a []string) error {
			if repo == "" || pkg == "" {
				return usageErr("publish needs --repo, --package and one directory")
			}
			return publish(o.Repos, o.Namespace, repo, pkg, a[0], o.Stdout, o.Stderr)
		},
	}
	c.Flags().StringVar(&repo, "repo", "", "the repository (created if missing)")
	c.Flags().StringVar(&pkg, "package", "", "the package name (a path, like team/app)")
	return c
}
