package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/local"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/spf13/cobra"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	errNotReady    = errors.New("not every set and variant is Ready")
	errWouldChange = errors.New("the run would change something")
	errHeldBack    = errors.New("a removal was held back for want of --prune")
	errDiffers     = errors.New("the revisions differ")
	errStalled     = errors.New("a set or variant is stalled")
	errDrift       = errors.New("a variant's downstream package drifted")
	errStopped     = errors.New("interrupted")
)

// lifecycleVerb is one of porchctl's lifecycle commands.
type lifecycleVerb struct {
	name, short, example string
	do                   func(ctx context.Context, s *local.Repos, rev store.Revision) (string, error)
	// from are the lifecycles the verb acts on (completion offers those)
	from []store.Lifecycle
}

var lifecycleVerbs = []lifecycleVerb{
	{"propose", "Propose draft package revisions for approval", "  pvctl propose edge-useast1.app.packagevariant-1",
		func(ctx context.Context, s *local.Repos, rev store.Revision) (string, error) {
			switch rev.Lifecycle {
			case store.Proposed:
				return rev.Name + " is already proposed", nil
			case store.Draft:
				return "proposed " + rev.Name, local.SetLifecycle(ctx, s, rev, store.Proposed)
			}
			return "", fmt.Errorf("package revision %s is %s; only a Draft can be proposed", rev.Name, rev.Lifecycle)
		}, []store.Lifecycle{store.Draft}},
	{"approve", "Approve package revisions (proposing drafts first); refused while a readiness gate is not True",
		"  pvctl approve edge-useast1.app.packagevariant-1 edge-uswest1.app.packagevariant-1",
		func(ctx context.Context, s *local.Repos, rev store.Revision) (string, error) {
			if rev.Lifecycle.IsPublished() {
				return rev.Name + " is already published", nil
			}
			if err := local.CheckReady(ctx, s, rev); err != nil {
				return "", err
			}
			if rev.Lifecycle == store.Draft {
				if err := local.SetLifecycle(ctx, s, rev, store.Proposed); err != nil {
					return "", err
				}
			}
			s.SetApprover(approver())
			pub, err := s.Approve(rev.Namespace, rev.Name)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("approved %s: package %s revision %d in %s", rev.Name, pub.Package, pub.Revision, pub.Repository), nil
		}, []store.Lifecycle{store.Draft, store.Proposed}},
	{"reject", "Reject proposed package revisions (back to Draft), or a proposed deletion (back to Published)",
		"  pvctl reject edge-useast1.app.packagevariant-1",
		func(ctx context.Context, s *local.Repos, rev store.Revision) (string, error) {
			switch rev.Lifecycle {
			case store.Proposed:
				return "rejected " + rev.Name + " (Draft again)", local.SetLifecycle(ctx, s, rev, store.Draft)
			case store.DeletionProposed:
				return "rejected the deletion of " + rev.Name + " (Published again)", local.SetLifecycle(ctx, s, rev, store.Published)
			}
			return "", fmt.Errorf("package revision %s is %s; only a Proposed revision or a proposed deletion can be rejected", rev.Name, rev.Lifecycle)
		}, []store.Lifecycle{store.Proposed, store.DeletionProposed}},
	{"del", "Delete Draft, Proposed or DeletionProposed package revisions", "  pvctl del edge-useast1.app.packagevariant-1",
		func(ctx context.Context, s *local.Repos, rev store.Revision) (string, error) {
			if rev.Lifecycle == store.Published {
				return "", fmt.Errorf("package revision %s is Published: propose its deletion first (pvctl propose-delete %s)", rev.Name, rev.Name)
			}
			return "deleted " + rev.Name, s.Delete(ctx, rev.Namespace, rev.Name)
		}, []store.Lifecycle{store.Draft, store.Proposed, store.DeletionProposed}},
	{"propose-delete", "Propose published package revisions for deletion", "  pvctl propose-delete edge-useast1.app.packagevariant-1",
		func(ctx context.Context, s *local.Repos, rev store.Revision) (string, error) {
			switch rev.Lifecycle {
			case store.DeletionProposed:
				return rev.Name + " is already proposed for deletion", nil
			case store.Published:
				return "proposed the deletion of " + rev.Name, local.SetLifecycle(ctx, s, rev, store.DeletionProposed)
			}
			return "", fmt.Errorf("package revision %s is %s; only a Published revision can be proposed for deletion", rev.Name, rev.Lifecycle)
		}, []store.Lifecycle{store.Published}},
}

func lifecycleCommand(ctx context.Context, o *Options, v lifecycleVerb) *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:               v.name + " NAME...",
		Short:             v.short,
		Example:           v.example,
		Args:              args(1, -1, v.name+" needs the names of the package revisions"),
		ValidArgsFunction: revisionNamesIn(o, v.from...),
		RunE: func(_ *cobra.Command, names []string) error {
			if err := checkOutput(output, listOutputs); err != nil {
				return err
			}
			s, release, err := openLocked(o, v.name)
			if err != nil {
				return err
			}
			defer release()
			// Each name is acted on and reported, as porchctl and kubectl
			// do: a failure is reported and the next name is still done.
			failed := 0
			var done []store.Revision // as they were before
			ses := newLifecycleSession(o, s)
			for _, name := range names {
				msg, rev, err := ses.one(ctx, v, name)
				if err != nil {
					failed++
					fmt.Fprintf(o.Stderr, "pvctl %s: %v\n", v.name, err)
					continue
				}
				done = append(done, rev)
				switch output {
				case outName:
					fmt.Fprintln(o.Stdout, "packagerevision/"+rev.Name)
				case outTable, outWide:
					fmt.Fprintln(o.Stdout, msg)
				}
			}
			if document(output) {
				if err := printActedOn(o, done, output); err != nil {
					return err
				}
			}
			if failed > 0 {
				return &reportedError{fmt.Sprintf("%d of %d failed", failed, len(names))}
			}
			return nil
		},
	}
	outputFlag(c, &output, listOutputs, "what was done (table and wide), or the revisions acted on: name, or as they are now (a PackageRevisionList; a deleted one as it was)")
	return c
}

// printActedOn prints the revisions a lifecycle verb acted on as they are
// now, a deleted one as it was, as a PackageRevisionList.
func printActedOn(o *Options, done []store.Revision, output string) error {
	s, err := openRepos(o.Repos, o.Namespace, false, nil)
	if err != nil {
		return err
	}
	all := s.All(o.Namespace)
	now := make([]store.Revision, len(done))
	for i, r := range done {
		now[i] = r
		if j := slices.IndexFunc(all, func(a store.Revision) bool { return a.Name == r.Name }); j >= 0 {
			now[i] = all[j]
		}
	}
	return printRevisions(o.Stdout, now, all, output, true)
}

// lifecycleSession is one lifecycle command over many names: the
// revisions listed and the last run's state are read once, not once per
// name (448 approvals took 0.5 CPU s each, most of it listing every
// revision and reading the whole state again for each).
type lifecycleSession struct {
	o      *Options
	s      *local.Repos
	byName map[string]store.Revision // as listed when the command began
	used   map[string]bool           // acted on: a name given twice is listed again
	st     *state.State
}

func newLifecycleSession(o *Options, s *local.Repos) *lifecycleSession {
	ses := &lifecycleSession{o: o, s: s, byName: map[string]store.Revision{}, used: map[string]bool{}}
	for _, r := range s.All(o.Namespace) {
		ses.byName[r.Name] = r
	}
	return ses
}

// revision finds a named revision: from the listing made at the start,
// unless this command acted on it already (then as it is now).
func (ses *lifecycleSession) revision(name string) (store.Revision, error) {
	name = revisionArg(name)
	if r, ok := ses.byName[name]; ok && !ses.used[name] {
		ses.used[name] = true
		return r, nil
	}
	return revision(ses.s, ses.o.Namespace, name)
}

// state is the last run's state, read on first use.
func (ses *lifecycleSession) state() (*state.State, error) {
	if ses.st == nil {
		st, err := state.Read(filepath.Join(ses.o.Repos, state.File))
		if err != nil {
			return nil, err
		}
		ses.st = st
	}
	return ses.st, nil
}

// one applies a lifecycle verb to one named revision: what it did, and
// the revision as it was.
func (ses *lifecycleSession) one(ctx context.Context, v lifecycleVerb, name string) (string, store.Revision, error) {
	s := ses.s
	rev, err := ses.revision(name)
	if err != nil && v.name == "del" {
		var ue *unreadableError
		if errors.As(err, &ue) {
			rev = ue.skip.Revision
		}
		msg, err := deleteUnreadable(s, err)
		return msg, rev, err
	}
	if err != nil {
		return "", rev, err
	}
	if (v.name == "approve" || v.name == "propose") && !rev.Lifecycle.IsPublished() {
		st, err := ses.state()
		if err != nil {
			return "", rev, err
		}
		if err := variantDone(st, rev); err != nil {
			return "", rev, err
		}
	}
	msg, err := v.do(ctx, s, rev)
	if err == nil && v.name == "reject" && rev.Lifecycle == store.Proposed {
		err = ses.recordRejection(rev)
	}
	return msg, rev, err
}

// recordRejection makes a rejection seen by the next run: a
// variant knows a draft was rejected when it read it Proposed and then
// Draft again, and a person who proposes and rejects between two runs
// leaves it nothing to read Proposed. Its target in the state is set to
// what a controller watching would have read (Proposed), so that the next
// run reads the rejection. A revision no variant of the state owns is left.
func (ses *lifecycleSession) recordRejection(rev store.Revision) error {
	st, err := ses.state()
	if err != nil {
		return err
	}
	changed := false
	for i := range st.Variants {
		v := &st.Variants[i]
		if !rev.OwnedBy(string(v.UID)) {
			continue
		}
		for j := range v.Status.DownstreamTargets {
			if t := &v.Status.DownstreamTargets[j]; t.Name == rev.Name && t.Lifecycle != string(store.Proposed) {
				t.Lifecycle, changed = string(store.Proposed), true
			}
		}
	}
	if !changed {
		return nil
	}
	if err := st.Write(filepath.Join(ses.o.Repos, state.File)); err != nil {
		return fmt.Errorf("rejected %s, but recording it in the state for the next run failed: %w", rev.Name, err)
	}
	return nil
}

// reportedError is a failure whose details were printed already; the
// command says only how many of its names failed.
type reportedError struct{ msg string }

func (e *reportedError) Error() string { return e.msg }

// openRevision opens the repositories and finds one revision by name.
func openRevision(o *Options, name string) (*local.Repos, store.Revision, error) {
	s, err := openRepos(o.Repos, o.Namespace, false, o.Stderr)
	if err != nil {
		return nil, store.Revision{}, err
	}
	rev, err := revision(s, o.Namespace, name)
	return s, rev, err
}

// variantDone refuses to propose or approve a draft whose PackageVariant
// (in the state file of pvctl run) is not Ready for a reason that means its
// mutation may not have run (MutationFailed, KindNotAllowed, an error): such
// a draft can look finished (cloned, but not specialised) and be published
// by mistake (nephio#615). A stale draft (StaleDraft, UpgradeConflict: its
// upstream moved on and it was not upgraded in place) was mutated, and may
// be approved; a draft no variant of the state owns is the user's.
func variantDone(st *state.State, rev store.Revision) error {
	for _, owner := range rev.Owners {
		if owner.Kind != "PackageVariant" {
			continue
		}
		for _, v := range st.Variants {
			if string(v.UID) != owner.UID {
				continue
			}
			c := apimeta.FindStatusCondition(v.Status.Conditions, pvapi.ConditionReady)
			if c == nil || c.Status == metav1.ConditionTrue || c.Reason == pvapi.ReasonStaleDraft || c.Reason == pvapi.ReasonUpgradeConflict {
				return nil
			}
			return fmt.Errorf("package revision %s is not ready: its PackageVariant %s is not Ready (%s: %s), so its mutation may not have run; fix it and run pvctl run until it is Ready",
				rev.Name, v.Name, c.Reason, c.Message)
		}
	}
	return nil
}

// Unreadable is the lifecycle `get` shows for a revision whose ref cannot
// be read (local.Repos.Skipped).
const Unreadable store.Lifecycle = "Unreadable"

// revisionArg is a revision name as a command takes it: bare, or in the
// form `get -o name` and kubectl print it (packagerevision/NAME,
// packagerevisions.porch.kpt.dev/NAME), so that their output pipes into
// every verb.
func revisionArg(name string) string {
	if kind, rest, ok := strings.Cut(name, "/"); ok {
		switch kind {
		case "packagerevision", "packagerevisions", "packagerevision.porch.kpt.dev", "packagerevisions.porch.kpt.dev":
			return rest
		}
	}
	return name
}

func revision(s *local.Repos, namespace, name string) (store.Revision, error) {
	name = revisionArg(name)
	for _, r := range s.All(namespace) {
		if r.Name == name {
			return r, nil
		}
	}
	if k, ok := unreadable(s, name); ok {
		return store.Revision{}, &unreadableError{k}
	}
	return store.Revision{}, fmt.Errorf("package revision %s: not found (pvctl get lists them)", name)
}

// unreadable finds a revision the store could not read, by name.
func unreadable(s *local.Repos, name string) (local.Skip, bool) {
	for _, k := range s.Skipped() {
		if k.Revision.Name == name {
			return k, true
		}
	}
	return local.Skip{}, false
}

// unreadableError: a command named a revision whose ref cannot be read.
type unreadableError struct{ skip local.Skip }

func (e *unreadableError) Error() string {
	how := "pvctl del " + e.skip.Revision.Name + " removes it"
	if e.skip.Revision.Lifecycle.IsPublished() {
		how = "remove its tag with git (git tag -d " + strings.TrimPrefix(e.skip.Ref, "refs/tags/") + " in the repository)"
	}
	return fmt.Sprintf("package revision %s cannot be read (%s: %v); %s", e.skip.Revision.Name, e.skip.Ref, e.skip.Err, how)
}

// deleteUnreadable is `del` of a draft or proposed revision the store
// cannot read: its branch goes.
func deleteUnreadable(s *local.Repos, err error) (string, error) {
	var ue *unreadableError
	if !errors.As(err, &ue) || ue.skip.Revision.Lifecycle.IsPublished() {
		return "", err
	}
	k, derr := s.DeleteUnreadable(ue.skip.Revision.Name)
	if derr != nil {
		return "", derr
	}
	return fmt.Sprintf("deleted %s (it could not be read: %v)", k.Revision.Name, k.Err), nil
}
