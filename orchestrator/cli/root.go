package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pvkit/pvkit/orchestrator/local"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/validate"
	"github.com/spf13/cobra"
)

// Options are what every local command shares.
type Options struct {
	Repos string
	// ReposNamed: --repos or $PVCTL_REPOS named the repositories directory
	// (else it is ./repositories, wherever pvctl was started).
	ReposNamed bool
	Namespace  string
	Stdin      io.Reader
	Stdout     io.Writer
	Stderr     io.Writer
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
for want of --prune; 4 some set or variant is stalled (it waits for a change of its input, or a set's rollout is paused);
5 run: a variant's downstream package changed behind its back (a drift, reported) and nothing else is wrong.`,
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
		o.ReposNamed = o.Repos != "" || os.Getenv("PVCTL_REPOS") != ""
		o.Repos = ReposDir(o.Repos, o.Namespace)
		if !slices.Contains(colorChoices, o.Color) {
			return usageErr("--color must be auto, always or never, not %q", o.Color)
		}
		return nil
	}
	root.PersistentFlags().StringVarP(&o.Namespace, "namespace", "n", "default", "the namespace the embedded cluster serves")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err.Error()} })
	// An unknown command is a usage error of the root command's own (cobra
	// reports it as text only).
	root.Args = cobra.ArbitraryArgs
	root.RunE = func(c *cobra.Command, a []string) error {
		if len(a) > 0 {
			return usageErr("unknown command %q for %q", a[0], c.CommandPath())
		}
		return c.Help()
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(runCommand(ctx, o, false), runCommand(ctx, o, true), getCommand(ctx, o), publishCommand(ctx, o), diffCommand(ctx, o), pullCommand(ctx, o), pushCommand(ctx, o), renderCommand(ctx, o), statusCommand(ctx, o), eventsCommand(ctx, o),
		copyCommand(ctx, o), cloneCommand(ctx, o))
	for _, v := range lifecycleVerbs {
		root.AddCommand(lifecycleCommand(ctx, o, v))
	}
	root.AddCommand(controlCommands(ctx, o)...)
	root.AddCommand(rolloutCommand(ctx, o), verifyReleaseCommand(o), verifyCommand(ctx, o))
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
	case errors.Is(err, errDrift):
		return ExitDrift
	case errors.Is(err, errStopped):
		return ExitInterrupted
	}
	prefix := "pvctl"
	if cmd != nil && cmd != root {
		// The whole path: "pvctl rollout pause", not "pvctl pause".
		prefix += strings.TrimPrefix(cmd.CommandPath(), root.Name())
	}
	fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
	var ue *usageError
	if errors.As(err, &ue) || local.IsInputError(err) {
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
func revisionNames(o *Options) cobra.CompletionFunc { return revisionNamesIn(o) }

// revisionNamesIn completes the names of the revisions in these
// lifecycles (every revision when none is named), not yet on the line.
func revisionNamesIn(o *Options, lifecycles ...store.Lifecycle) cobra.CompletionFunc {
	return func(_ *cobra.Command, given []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		s, err := openRepos(o.Repos, o.Namespace, false, nil)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, r := range s.All(o.Namespace) {
			if strings.HasPrefix(r.Name, prefix) && !slices.Contains(given, r.Name) && (len(lifecycles) == 0 || slices.Contains(lifecycles, r.Lifecycle)) {
				out = append(out, r.Name)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// fleetNames completes the KIND/NAME of a set or variant of the last run
// (packagevariant/NAME, packagevariantset/NAME, or pv/ and pvs/ as typed).
func fleetNames(o *Options) cobra.CompletionFunc {
	return func(_ *cobra.Command, given []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		st, err := state.Read(filepath.Join(o.Repos, state.File))
		if err != nil || len(given) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		pv, pvs := "packagevariant/", "packagevariantset/"
		switch {
		case strings.HasPrefix(prefix, "pvs/"):
			pv, pvs = "", "pvs/"
		case strings.HasPrefix(prefix, "pv/"):
			pv, pvs = "pv/", ""
		}
		var out []cobra.Completion
		add := func(kind, name string) {
			if kind != "" && strings.HasPrefix(kind+name, prefix) {
				out = append(out, kind+name)
			}
		}
		for _, s := range st.Sets {
			add(pvs, s.Name)
		}
		for _, v := range st.Variants {
			add(pv, v.Name)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeFlag completes a flag's value from values (read when completing).
func completeFlag(c *cobra.Command, flag string, values func() []string) {
	_ = c.RegisterFlagCompletionFunc(flag, func(_ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		for _, v := range values() {
			if strings.HasPrefix(v, prefix) {
				out = append(out, v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
}

// repoNames are the repositories --repos serves, for completion.
func repoNames(o *Options) []string {
	return revisionFields(o, func(r store.Revision) string { return r.Repository })
}

// packageNames are the packages of the repositories, for completion.
func packageNames(o *Options) []string {
	return revisionFields(o, func(r store.Revision) string { return r.Package })
}

// revisionFields is one field of every revision --repos serves, each
// value once, sorted.
func revisionFields(o *Options, field func(store.Revision) string) []string {
	s, err := openRepos(o.Repos, o.Namespace, false, nil)
	if err != nil {
		return nil
	}
	var out []string
	for _, r := range s.All(o.Namespace) {
		out = append(out, field(r))
	}
	slices.Sort(out)
	return slices.Compact(out)
}
