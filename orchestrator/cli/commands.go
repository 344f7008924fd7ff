package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/gitstore"
	"github.com/pvkit/pvkit/pkg/validate"
	sigsyaml "sigs.k8s.io/yaml"
)

// Exit codes of the CLI commands.
const (
	ExitOK       = 0 // done; for run: every set and variant is Ready
	ExitNotReady = 1 // run: some set or variant is not Ready; any command: it failed
	ExitUsage    = 2 // bad flags or input; nothing was written
)

// Usage documents the local commands.
const Usage = `  pvctl run -f FILE|DIR... [flags]     reconcile PackageVariants and PackageVariantSets
                                       against local git repositories, then exit
                                       (--prune to remove, --dry-run to only print the plan)
  pvctl plan -f FILE|DIR... [--diff]   what run would change, writing nothing
  pvctl get [flags]                    list the package revisions of the local repositories
  pvctl publish --repo R --package P DIR [flags]
                                       publish DIR as the next revision of package P in R
  pvctl approve NAME... [flags]        propose and approve draft package revisions
`

// UsageFlags documents the flags every local command takes.
const UsageFlags = `Flags of run, get, publish and approve:
    --repos DIR       the directory of bare repositories (default ./repositories)
    --namespace NS    the namespace the embedded cluster serves (default "default")
`

// Command runs a local command (run, get, publish, approve) and returns its
// exit code.
func Command(ctx context.Context, name string, args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet(name, flag.ContinueOnError)
	flags.SetOutput(stderr)
	repos := flags.String("repos", "repositories", "the directory of bare repositories")
	namespace := flags.String("namespace", "default", "the namespace the embedded cluster serves")
	var run func() error
	var positional []string // the arguments that are not flags
	dryRun := name == "plan"
	switch name {
	case "run", "plan":
		var files stringList
		flags.Var(&files, "f", "a YAML file or directory of PackageVariants, PackageVariantSets, Repositories and the objects they inject or select (repeatable)")
		output := flags.String("o", "table", "output: table, or yaml (the sets and variants with their status)")
		statePath := flags.String("state", "", "the state file (default: REPOS/"+StateFile+")")
		var prune Prune
		flags.Var(&prune, "prune", "remove what the files no longer ask for (variants, sets' children, owned drafts); --prune=all also lifts the mass-deletion guard")
		flags.BoolVar(&dryRun, "dry-run", dryRun, "print what the run would change and write nothing (pvctl plan); exit 0 when nothing would change, 1 otherwise")
		diff := flags.Bool("diff", false, "with --dry-run: print the unified diff of each package revision the run would change")
		run = func() error {
			if *output != "table" && *output != "yaml" {
				return usageErr("-o must be table or yaml, not %q", *output)
			}
			if len(files) == 0 {
				return usageErr("run needs -f: the files are the whole desired state, so a run without them would remove every variant")
			}
			if *diff && !dryRun {
				return usageErr("--diff goes with --dry-run (pvctl plan --diff)")
			}
			rep, err := Run(ctx, RunOptions{Repos: *repos, Files: files, Namespace: *namespace, State: *statePath, Prune: prune, DryRun: dryRun, Diff: *diff})
			if err != nil {
				return err
			}
			if err := printReport(stdout, rep, *output); err != nil {
				return err
			}
			if dryRun {
				if len(rep.Changes) > 0 || len(rep.Held) > 0 {
					return errWouldChange
				}
				return nil
			}
			if !rep.AllReady() {
				return errNotReady
			}
			return nil
		}
	case "get":
		run = func() error { return get(*repos, *namespace, stdout) }
	case "publish":
		repo := flags.String("repo", "", "the repository (created if missing)")
		pkg := flags.String("package", "", "the package name (a path, like team/app)")
		run = func() error {
			if len(positional) != 1 || *repo == "" || *pkg == "" {
				return usageErr("publish needs --repo, --package and one directory")
			}
			return publish(*repos, *namespace, *repo, *pkg, positional[0], stdout)
		}
	case "approve":
		run = func() error {
			if len(positional) == 0 {
				return usageErr("approve needs the names of the package revisions")
			}
			return approve(ctx, *repos, *namespace, positional, stdout)
		}
	default:
		fmt.Fprintf(stderr, "pvctl: unknown command %q\n", name)
		return ExitUsage
	}
	// Flags may come after arguments too (pvctl approve NAME --repos DIR).
	for rest := args; ; {
		if err := flags.Parse(rest); err != nil {
			return ExitUsage
		}
		if flags.NArg() == 0 {
			break
		}
		positional = append(positional, flags.Arg(0))
		rest = flags.Args()[1:]
	}
	if name == "run" || name == "plan" || name == "get" {
		if len(positional) > 0 {
			fmt.Fprintf(stderr, "pvctl %s: unexpected arguments %q (files go after -f)\n", name, positional)
			return ExitUsage
		}
	}
	err := run()
	var ue *usageError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, errNotReady), errors.Is(err, errWouldChange):
		return ExitNotReady
	case errors.As(err, &ue) || IsInputError(err):
		fmt.Fprintf(stderr, "pvctl %s: %v\n", name, err)
		return ExitUsage
	}
	fmt.Fprintf(stderr, "pvctl %s: %v\n", name, err)
	return ExitNotReady
}

var (
	errNotReady    = errors.New("not every set and variant is Ready")
	errWouldChange = errors.New("the run would change something")
)

type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErr(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// printReport prints the changes and a table of the sets and variants, or
// the sets and variants as YAML.
func printReport(w io.Writer, rep *Report, output string) error {
	if output == "yaml" {
		b, err := sigsyaml.Marshal(state{Variants: rep.Variants, Sets: rep.Sets})
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	switch {
	case len(rep.Changes) == 0 && rep.DryRun:
		fmt.Fprintln(w, "Plan: no changes (dry run: nothing was written).")
	case len(rep.Changes) == 0:
		fmt.Fprintln(w, "No changes: every downstream package is up to date.")
	case rep.DryRun:
		fmt.Fprintf(w, "Plan (%d changes; dry run: nothing was written):\n", len(rep.Changes))
		for _, c := range rep.Changes {
			fmt.Fprintf(w, "  %s\n", c)
		}
	default:
		fmt.Fprintf(w, "Changes (%d):\n", len(rep.Changes))
		for _, c := range rep.Changes {
			fmt.Fprintf(w, "  %s\n", c)
		}
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tNAME\tREADY\tREASON\tDOWNSTREAM\tMESSAGE")
	for _, o := range rep.Objects {
		msg := o.Message
		if o.ReconcileErr != "" && !strings.Contains(msg, o.ReconcileErr) {
			msg = strings.TrimSpace(msg + " (" + o.ReconcileErr + ")")
		}
		if o.Deleting {
			msg = "being deleted: " + msg
		}
		down := strings.Join(o.Downstream, ",")
		if down == "" {
			down = "-"
		}
		if o.Ready == "True" && !o.Deleting {
			msg = ""
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", o.Kind, o.Name, o.Ready, o.Reason, down, strings.ReplaceAll(msg, "\n", " "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rep.Held) > 0 {
		fmt.Fprintf(w, "\nNot removed (%d): run again with --prune to remove them:\n", len(rep.Held))
		for _, h := range rep.Held {
			fmt.Fprintf(w, "  %s\n", h)
		}
	}
	for _, d := range rep.Diffs {
		fmt.Fprintf(w, "\n%s", d)
	}
	return nil
}

// openRepos opens every bare repository under dir; create makes dir when
// it is missing.
func openRepos(dir, namespace string, create bool) (*gitstore.Store, error) {
	if create {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	repos, err := gitstore.Discover(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no repositories directory %s (--repos; pvctl publish and pvctl run create it)", dir)
	}
	if err != nil {
		return nil, err
	}
	return gitstore.Open(namespace, repos)
}

// get prints every package revision, like porchctl rpkg get.
func get(dir, namespace string, w io.Writer) error {
	s, err := openRepos(dir, namespace, false)
	if err != nil {
		return err
	}
	revs := s.All(namespace)
	sort.Slice(revs, func(i, j int) bool { return revs[i].Name < revs[j].Name })
	latest := map[store.PackageKey]int{}
	for _, r := range revs {
		if r.Lifecycle.IsPublished() && r.Revision > latest[r.Key()] {
			latest[r.Key()] = r.Revision
		}
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPACKAGE\tWORKSPACE\tREVISION\tLATEST\tLIFECYCLE\tREPOSITORY\tUPSTREAM\tOWNER")
	for _, r := range revs {
		up, owner := "-", "-"
		if r.Lock != nil {
			up = r.Lock.Repository + ":" + r.Lock.Ref
		}
		var owners []string
		for _, o := range r.Owners {
			owners = append(owners, o.Kind+"/"+o.Name)
		}
		if len(owners) > 0 {
			owner = strings.Join(owners, ",")
		}
		isLatest := r.Lifecycle.IsPublished() && r.Revision == latest[r.Key()]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%t\t%s\t%s\t%s\t%s\n", r.Name, r.Package, r.Workspace, r.Revision, isLatest, r.Lifecycle, r.Repository, up, owner)
	}
	return tw.Flush()
}

// publish publishes a directory's files as the next revision of a package,
// creating the repository when it is missing.
func publish(dir, namespace, repo, pkg, src string, w io.Writer) error {
	// Names become paths (the repository's git directory, the package's
	// directory on main): checked before anything is created.
	if msg := validate.DNS1123Subdomain(repo); msg != "" {
		return usageErr("--repo %s", msg)
	}
	if msg := validate.PackagePath(pkg); msg != "" {
		return usageErr("--package %s", msg)
	}
	files, err := readDir(src)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return usageErr("%s holds no files", src)
	}
	s, err := openRepos(dir, namespace, true)
	if err != nil {
		return err
	}
	known := false
	for _, r := range s.Repositories() {
		known = known || r.Name == repo
	}
	if !known {
		r := gitstore.Repository{Name: repo, GitDir: filepath.Join(dir, repo+".git")}
		if err := gitstore.Init(r.GitDir, ""); err != nil {
			return err
		}
		if err := s.Add(r); err != nil {
			return err
		}
		fmt.Fprintf(w, "created repository %s (%s)\n", repo, r.GitDir)
	}
	rev, err := s.PublishFiles(namespace, repo, pkg, files)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "published %s: package %s revision %d in %s\n", rev.Name, pkg, rev.Revision, repo)
	return nil
}

// readDir reads the files below dir by relative path. A `.git` directory
// (the package's own clone) is skipped; a file named `.git`, a symbolic link
// or any other non-regular file is refused, naming its path: publishing
// follows nothing outside the directory.
func readDir(dir string) (map[string]string, error) {
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case d.Name() == ".git":
			return usageErr("%s: a file named .git cannot be published", path)
		case d.Type()&fs.ModeSymlink != 0:
			return usageErr("%s: is a symbolic link; publish copies regular files only", path)
		case !d.Type().IsRegular():
			return usageErr("%s: is not a regular file; publish copies regular files only", path)
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	return files, err
}

// approve proposes and approves revisions, as porchctl rpkg propose and
// approve do.
func approve(ctx context.Context, dir, namespace string, names []string, w io.Writer) error {
	s, err := openRepos(dir, namespace, false)
	if err != nil {
		return err
	}
	byName := map[string]store.Revision{}
	for _, r := range s.All(namespace) {
		byName[r.Name] = r
	}
	for _, name := range names {
		rev, ok := byName[name]
		if !ok {
			return fmt.Errorf("package revision %s: not found (pvctl get lists them)", name)
		}
		if rev.Lifecycle == store.Draft {
			rev.Lifecycle = store.Proposed
			if err := s.Update(ctx, rev); err != nil {
				return err
			}
		}
		pub, err := s.Approve(namespace, name)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "approved %s: package %s revision %d in %s\n", name, pub.Package, pub.Revision, pub.Repository)
	}
	return nil
}
