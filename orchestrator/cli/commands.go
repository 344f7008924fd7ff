package cli

import (
	"encoding/json"
	"fmt"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/stamp"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/pvkit/pvkit/orchestrator/local"
	"github.com/pvkit/pvkit/orchestrator/store"
	"k8s.io/apimachinery/pkg/labels"
	sigsyaml "sigs.k8s.io/yaml"
)

// Exit codes of the CLI commands (rule: pvctl-exit).
const (
	ExitOK       = 0 // done; for run: every set and variant is Ready; for plan: nothing would change
	ExitNotReady = 1 // run: some set or variant is not Ready yet (a readiness gate, a transient error); any command: it failed
	ExitUsage    = 2 // bad flags or input; nothing was written
	ExitChanges  = 3 // plan: something would change; run: a removal was held back for want of --prune
	ExitStalled  = 4 // run and plan: some set or variant is stalled: it waits for a change of its input (a paused rollout too)
	ExitDrift    = 5 // run: all else done, but some variant's downstream package changed behind its back (PublishedDrift)
	// ExitInterrupted: run and plan stopped by Ctrl-C or SIGTERM (128 + SIGINT, as a shell and kubectl
	// report it); run saved what it did.
	ExitInterrupted = 130
)

type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErr(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// RunOutput is `pvctl run -o yaml|json`: a kubectl List of the sets and
// variants with their status (items, each with its apiVersion and kind),
// and beside the items what the run changed (or, dry, would change), what
// it held back, its diffs and warnings.
type RunOutput struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   map[string]any `json:"metadata"`
	Items      []any          `json:"items"`
	DryRun     bool           `json:"dryRun,omitempty"`
	Changes    []string       `json:"changes"`
	NotRemoved []string       `json:"notRemoved,omitempty"`
	Diffs      []string       `json:"diffs,omitempty"`
	Warnings   []string       `json:"warnings,omitempty"`
	Notes      []string       `json:"notes,omitempty"`
	Drifts     []string       `json:"drifts,omitempty"`
}

func printReport(w io.Writer, rep *local.Report, output string, paint painter) error {
	if document(output) || output == outName {
		f := &fleet{sets: rep.Sets, variants: rep.Variants}
		objs := f.objects("", "", labels.Everything())
		if output == outName {
			for _, obj := range objs {
				fmt.Fprintln(w, obj.key())
			}
			return nil
		}
		items := make([]any, len(objs))
		for i, obj := range objs {
			items[i] = obj.obj
		}
		doc := RunOutput{APIVersion: "v1", Kind: "List", Metadata: map[string]any{"resourceVersion": ""}, Items: items,
			DryRun: rep.DryRun, Changes: orEmpty(rep.Changes), NotRemoved: rep.Held, Diffs: rep.Diffs, Warnings: rep.Warnings, Notes: rep.Notes, Drifts: rep.Drifts}
		return writeDoc(w, doc, output)
	}
	printChanges(w, rep)
	if err := printObjectTable(w, rep, output == outWide, paint); err != nil {
		return err
	}
	if ready, notReady, stalled := rep.Counts(); notReady > 0 {
		fmt.Fprintf(w, "\n%d of %d sets and variants Ready", ready, ready+notReady)
		if stalled > 0 {
			fmt.Fprintf(w, "; %d stalled (waiting for a change of the input)", stalled)
		}
		fmt.Fprintln(w, ".")
	}
	if len(rep.Held) > 0 {
		fmt.Fprintf(w, "\nNot removed (%d): run again with --prune to remove them:\n", len(rep.Held))
		for _, h := range rep.Held {
			fmt.Fprintf(w, "  %s\n", h)
		}
	}
	if len(rep.Drifts) > 0 {
		fmt.Fprintf(w, "\nDrift (%d): a downstream package changed behind its variant's back (rule content-drift; pvkit.dev/drift-policy says what to do):\n", len(rep.Drifts))
		for _, d := range rep.Drifts {
			fmt.Fprintf(w, "  %s\n", d)
		}
	}
	printNextGate(w, rep)
	for _, d := range rep.Diffs {
		fmt.Fprintf(w, "\n%s", d)
	}
	return nil
}

// printChanges prints a run's changes (or that there were none) and its
// notes.
func printChanges(w io.Writer, rep *local.Report) {
	switch {
	case len(rep.Changes) == 0 && rep.DryRun:
		fmt.Fprintln(w, "Plan: no changes (dry run: nothing was written).")
	case len(rep.Changes) == 0 && rep.AllReady():
		fmt.Fprintln(w, "No changes: every downstream package is up to date.")
	case len(rep.Changes) == 0:
		fmt.Fprintln(w, "No changes.")
	case rep.DryRun:
		fmt.Fprintf(w, "Plan (%s; dry run: nothing was written):\n", plural(len(rep.Changes), "change"))
		for _, c := range rep.Changes {
			fmt.Fprintf(w, "  %s\n", c)
		}
	default:
		fmt.Fprintf(w, "Changes (%d):\n", len(rep.Changes))
		for _, c := range rep.Changes {
			fmt.Fprintf(w, "  %s\n", c)
		}
	}
	if len(rep.Notes) > 0 {
		fmt.Fprintln(w, "Notes:")
		for _, n := range rep.Notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
	fmt.Fprintln(w)
}

// printObjectTable prints a run's sets and variants, a row each.
func printObjectTable(w io.Writer, rep *local.Report, wide bool, paint painter) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "KIND\tNAME\t%s\tREASON\tDOWNSTREAM\tMESSAGE\n", paint.header("READY"))
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", o.Kind, o.Name, paint.ready(string(o.Ready)), o.Reason, down, message(msg, wide))
	}
	return tw.Flush()
}

// openRepos opens the repositories directory (local.OpenRepos) and prints
// a warning for every ref it could not read as a revision.
func openRepos(dir, namespace string, create bool, warn io.Writer) (*local.Repos, error) {
	s, err := local.OpenRepos(dir, namespace, create)
	if err != nil {
		return nil, err
	}
	warnSkipped(warn, s)
	if key := os.Getenv(ProvenanceKeyEnv); key != "" {
		p, err := stamp.NewProvenance("pvctl", key, "")
		if err != nil {
			return nil, usageErr("$%s: %v", ProvenanceKeyEnv, err)
		}
		s.Store.SignCommits(p.SignCommit)
	}
	return s, nil
}

// ProvenanceKeyEnv names the key every pvctl verb that writes a commit
// signs it with (approve, publish, push and the rest; run's --provenance-key
// defaults to it): one key for the records and the commits.
const ProvenanceKeyEnv = "PVCTL_PROVENANCE_KEY"

// openLocked takes the writers' lock of --repos for a verb that writes
// (one that exists: nothing is created) and opens its repositories; the
// caller releases the lock.
func openLocked(o *Options, verb string) (*local.Repos, func(), error) {
	release, err := lockRepos(o.Repos, verb, false)
	if err != nil {
		return nil, nil, err
	}
	s, err := openRepos(o.Repos, o.Namespace, false, o.Stderr)
	if err != nil {
		release()
		return nil, nil, err
	}
	return s, release, nil
}

// lockRepos takes the writers' lock of a repositories directory
// (local.Lock) for a verb that writes; without create, a directory that is
// not there is not made (opening it then says so).
func lockRepos(dir, verb string, create bool) (func(), error) {
	if _, err := os.Stat(dir); !create && os.IsNotExist(err) {
		return func() {}, nil
	}
	return local.Lock(dir, verb)
}

// warnSkipped prints a warning for every ref of Porch's layout the store
// could not read as a revision.
func warnSkipped(warn io.Writer, s *local.Repos) {
	if warn == nil {
		return
	}
	for _, k := range s.Skipped() {
		fmt.Fprintf(warn, "warning: %s\n", k)
	}
	for _, a := range s.Absent() {
		fmt.Fprintf(warn, "warning: %s\n", a)
	}
}

// plural is "1 change" or "N changes".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// orEmpty is s, or an empty list where s is nil: JSON says [] for no
// changes, not null.
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// latestPublished is a package's published revision with the highest number.
func latestPublished(s *local.Repos, namespace, repo, pkg string) (store.Revision, bool) {
	var best store.Revision
	for _, r := range s.All(namespace) {
		if r.Repository == repo && r.Package == pkg && r.Lifecycle.IsPublished() && r.Revision > best.Revision {
			best = r
		}
	}
	return best, best.Revision > 0
}

// writeDoc writes v as indented JSON (output "json") or as YAML.
func writeDoc(w io.Writer, v any, output string) error {
	var b []byte
	var err error
	if output == "json" {
		b, err = json.MarshalIndent(v, "", "  ")
		b = append(b, '\n')
	} else {
		b, err = sigsyaml.Marshal(v)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
