package cli

// pvctl rollout status|pause|resume|undo|hold|release|skip SET: a set's staged
// rollout (rule: staged-rollouts), against a cluster (--kubeconfig,
// --context: the set's annotations) or on the last run's state (recorded
// there; each pvctl run gives the set the annotations). Both sides end in
// the same set reconciler (pkg/rollout).

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/local"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariantset"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/rollout"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func rolloutCommand(ctx context.Context, o *Options) *cobra.Command {
	root := &cobra.Command{
		Use:   "rollout",
		Short: "A set's staged rollout: status, pause, resume, undo, hold, release, skip",
		Long: `A PackageVariantSet with spec.rollout moves its children to a new upstream revision
wave by wave. pvctl rollout shows where it stands and gives the operator's controls:
pause and resume, undo (every child back to the rollout's from revision at once: the fast
way back), hold a child (it keeps its upstream: maintenance) and release it, skip a failed
child (the rollout stops waiting for it).

Against a cluster (--kubeconfig or --context) the controls are annotations on the set
(pvkit.dev/rollout-pause, pvkit.dev/rollout-undo, pvkit.dev/rollout-hold,
pvkit.dev/rollout-skip); without them
they are recorded in the last run's state and every pvctl run gives them to the set
(a set's file that sets one of them wins).`,
	}
	var cf clusterFlags
	var output string
	var all bool
	status := &cobra.Command{
		Use:               "status SET",
		Short:             "Where a set's rollout stands: target, phase, each wave's state and counts, what blocks it",
		Args:              args(1, 1, "rollout status takes one set"),
		ValidArgsFunction: rolloutArgs(o, false, false),
		RunE:              func(_ *cobra.Command, a []string) error { return o.rolloutStatus(ctx, cf, output, a[0], all) },
	}
	status.Flags().BoolVar(&all, "all", false, "with -o wide: every child's line (by default the waves under way, the failed and the others not healthy, and a count of the rest)")
	status.Flags().StringVarP(&output, "output", "o", "", "wide: also each child's health as its cluster reports it, in the cluster's words; json or yaml: the set's status.rollout")
	cf.add(status)
	root.AddCommand(status)
	for _, c := range rolloutControls() {
		var ccf clusterFlags
		cmd := &cobra.Command{
			Use:               c.use,
			Short:             c.short,
			ValidArgsFunction: rolloutArgs(o, c.children, c.wave),
			Args: func(_ *cobra.Command, a []string) error {
				switch {
				case c.wave && len(a) >= 1 && len(a) <= 2:
				case len(a) < 1 || (!c.children && !c.wave && len(a) != 1) || (c.children && len(a) < 2):
					return usageErr("usage: pvctl rollout %s", c.use)
				}
				return nil
			},
			RunE: func(self *cobra.Command, a []string) error {
				check := knownChildren
				switch {
				case strings.HasPrefix(c.use, "skip "):
					check = failedChildren
				case c.wave:
					check = anyWave
				}
				change := c.change
				if c.wave {
					change = func(cur map[string]string, w []string, set *pvsapi.PackageVariantSet) (map[string]string, string, error) {
						latest, err := o.upstreamNow(ctx, ccf, set)
						return approveWaveChange(cur, w, set, latest, err)
					}
				}
				return o.rolloutControl(ctx, ccf, "rollout "+self.Name(), a[0], a[1:], check, change)
			},
		}
		ccf.add(cmd)
		root.AddCommand(cmd)
	}
	return root
}

// rolloutControlVerb is one of pvctl rollout's control verbs: its usage, and
// the change it makes to the set's rollout annotations (given the current
// ones and the children named), with what to say of it.
type rolloutControlVerb struct {
	use, short string
	children   bool
	wave       bool // an optional WAVE instead of children
	change     func(cur map[string]string, children []string, set *pvsapi.PackageVariantSet) (map[string]string, string, error)
}

// rolloutControls are pvctl rollout's control verbs.
func rolloutControls() []rolloutControlVerb {
	return []rolloutControlVerb{
		{"pause SET", "Pause a set's rollout: no child moves until resumed (those moved stay)", false, false, func(map[string]string, []string, *pvsapi.PackageVariantSet) (map[string]string, string, error) {
			return map[string]string{packagevariantset.RolloutPauseAnnotation: "true"}, "paused", nil
		}},
		{"resume SET", "Resume a paused or undone rollout (an undone one starts again from wave one, its waves waiting for approval again)", false, false, resumeChange},
		{"undo SET", "Undo a set's rollout: every child back to the rollout's from revision at once (it says which first)", false, false, undoChange},
		{"approve SET [WAVE[@TARGET]]", "Approve a wave's drafts as one decision (default: the open wave of the rollout the status shows, refused when the upstream has moved past it; @TARGET names the rollout): the next run approves its children's finished drafts", false, true, nil},
		{"hold SET CHILD...", "Hold children: they keep their upstream whatever the rollout does", true, false, listChange(packagevariantset.RolloutHoldAnnotation, true, "held")},
		{"release SET CHILD...", "Release held children: the rollout moves them with their wave", true, false, listChange(packagevariantset.RolloutHoldAnnotation, false, "released")},
		{"skip SET CHILD...", "Skip failed children: the rollout stops waiting for them and goes on", true, false, listChange(packagevariantset.RolloutSkipAnnotation, true, "skipped")},
		{"unskip SET CHILD...", "Undo a skip: the rollout waits for the children again", true, false, listChange(packagevariantset.RolloutSkipAnnotation, false, "unskipped")},
	}
}

// listChange adds (add) or removes the children named to or from a
// comma-separated list annotation, kept sorted.
func listChange(key string, add bool, verb string) func(cur map[string]string, children []string, _ *pvsapi.PackageVariantSet) (map[string]string, string, error) {
	return func(cur map[string]string, children []string, _ *pvsapi.PackageVariantSet) (map[string]string, string, error) {
		var names []string
		for _, n := range strings.Split(cur[key], ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
		for _, c := range children {
			if add && !slices.Contains(names, c) {
				names = append(names, c)
			} else if !add {
				names = slices.DeleteFunc(names, func(n string) bool { return n == c })
			}
		}
		slices.Sort(names)
		out := map[string]string{key: strings.Join(names, ",")}
		// The verb names itself, then the list it leaves.
		return out, fmt.Sprintf("%s %s (%s: %s)", verb, strings.Join(children, ", "), key, strings.Join(names, ",")), nil
	}
}

// anyWave leaves the wave's name to the change (approveWaveChange).
func anyWave(string, *pvsapi.PackageVariantSet, []pvapi.PackageVariant, []string) error { return nil }

// resumeChange is rollout resume: the pause and the undo lifted. After an
// undo it says that the target's waves wait for a person's approval again
// (the undo withdrew them).
func resumeChange(cur map[string]string, _ []string, set *pvsapi.PackageVariantSet) (map[string]string, string, error) {
	out := map[string]string{packagevariantset.RolloutPauseAnnotation: "", packagevariantset.RolloutUndoAnnotation: ""}
	if r := set.Status.Rollout; r != nil && r.UndoneOnFailure && cur[packagevariantset.RolloutUndoAnnotation] == "" {
		// Undone by itself on failure: a retry, once, with the target's
		// wave approvals withdrawn as an undo's are.
		out[packagevariantset.RolloutRetryAnnotation] = r.Target.Name + "@" + retryStamp()
		var kept []string
		for _, e := range strings.Split(cur[packagevariantset.RolloutApproveAnnotation], ",") {
			if _, t, _ := strings.Cut(strings.TrimSpace(e), "@"); e != "" && t != r.Target.Name {
				kept = append(kept, strings.TrimSpace(e))
			}
		}
		out[packagevariantset.RolloutApproveAnnotation] = strings.Join(kept, ",")
		return out, fmt.Sprintf("retried: %s, undone on failure, rolls out again from wave one (%s), each wave waiting for a person's approval again", r.Target.Name, out[packagevariantset.RolloutRetryAnnotation]), nil
	}
	if t := cur[packagevariantset.RolloutUndoAnnotation]; t != "" {
		return out, fmt.Sprintf("resumed: %s rolls out again from wave one, each wave waiting for a person's approval again (pvctl rollout approve; the undo withdrew the earlier ones)", t), nil
	}
	return out, "resumed", nil
}

// undoChange is rollout undo (rule: rollout-undo): the undo annotation
// names the rollout's target, so that it cannot undo a later one, and the
// target's wave approvals are withdrawn (they would approve
// its drafts again once resumed, the release going out with nobody
// deciding); what it says is the plan: which children go back, to what.
func undoChange(cur map[string]string, _ []string, set *pvsapi.PackageVariantSet) (map[string]string, string, error) {
	r := set.Status.Rollout
	if r == nil || r.From == nil {
		return nil, "", fmt.Errorf("packagevariantset %s has no rollout to undo: its status names no revision it rolled out from (a set's first revision is not rolled out)", set.Name)
	}
	var moved []string
	for _, w := range r.Waves {
		if w.Moved > 0 {
			moved = append(moved, fmt.Sprintf("wave %s: %d moved", w.Name, w.Moved))
		}
	}
	if len(moved) == 0 {
		moved = append(moved, "no child moved yet")
	}
	out := map[string]string{packagevariantset.RolloutUndoAnnotation: r.Target.Name}
	var kept, withdrawn []string
	for _, e := range strings.Split(cur[packagevariantset.RolloutApproveAnnotation], ",") {
		switch w, t, _ := strings.Cut(strings.TrimSpace(e), "@"); {
		case e == "":
		case t == r.Target.Name:
			withdrawn = append(withdrawn, w)
		default:
			kept = append(kept, strings.TrimSpace(e))
		}
	}
	said := ""
	if len(withdrawn) > 0 {
		out[packagevariantset.RolloutApproveAnnotation] = strings.Join(kept, ",")
		said = fmt.Sprintf("; the approvals of waves %s at %s are withdrawn", strings.Join(withdrawn, ", "), r.Target.Name)
	}
	return out, fmt.Sprintf("undo of %s: every child goes back to %s at once (%s)%s; pvctl rollout resume rolls %s out again from wave one, each wave waiting for a person's approval",
		r.Target.Name, r.From.Name, strings.Join(moved, ", "), said, r.Target.Name), nil
}

// rolloutStatus prints where a set's rollout stands (-o wide: with each
// child's health in its cluster's words; json, yaml: status.rollout).
func (o *Options) rolloutStatus(ctx context.Context, cf clusterFlags, output, name string, all bool) error {
	set, err := o.readSet(ctx, cf, name)
	if err != nil {
		return err
	}
	switch output {
	case "json", "yaml":
		if set.Status.Rollout == nil {
			return writeDoc(o.Stdout, map[string]any{}, output)
		}
		return writeDoc(o.Stdout, set.Status.Rollout, output)
	case "", "wide":
	default:
		return usageErr("-o must be wide, json or yaml, not %q", output)
	}
	printRollout(o.Stdout, set)
	if output == "wide" {
		children, err := o.readChildren(ctx, cf, set)
		if err != nil {
			return err
		}
		printHealth(o.Stdout, set, children, all)
	}
	if !cf.set() {
		return o.printPending(set)
	}
	return nil
}

// readSet reads one set from the cluster or the last run's state.
func (o *Options) readSet(ctx context.Context, cf clusterFlags, name string) (*pvsapi.PackageVariantSet, error) {
	if cf.set() {
		c, err := ClusterClient(cf.kubeconfig, cf.context)
		if err != nil {
			return nil, err
		}
		obj, err := clusterObject(ctx, c, o.Namespace, "PackageVariantSet", name)
		if err != nil {
			return nil, err
		}
		return obj.(*pvsapi.PackageVariantSet), nil
	}
	st, err := state.Read(filepath.Join(o.Repos, state.File))
	if err != nil {
		return nil, err
	}
	for i := range st.Sets {
		if st.Sets[i].Name == name {
			return &st.Sets[i], nil
		}
	}
	return nil, fmt.Errorf("packagevariantset %s: not found in the last run's state (pvctl status lists them)", name)
}

// rolloutControl changes a set's rollout annotations (controlTarget: the
// cluster's set, or the last run's state). An empty value removes the key.
func (o *Options) rolloutControl(ctx context.Context, cf clusterFlags, verb, name string, children []string, check childCheck,
	change func(map[string]string, []string, *pvsapi.PackageVariantSet) (map[string]string, string, error)) error {
	t, err := o.openControl(ctx, cf, verb, "PackageVariantSet", name)
	if err != nil {
		return err
	}
	defer t.close()
	set, variants, err := t.set(ctx, o.Namespace)
	if err != nil {
		return err
	}
	if err := check(t.key, set, variants, children); err != nil {
		return err
	}
	cur := map[string]string{}
	for _, k := range local.RolloutControlKeys {
		if v := t.current(k); v != "" {
			cur[k] = v
		}
	}
	next, what, err := change(cur, children, set)
	if err != nil {
		return err
	}
	for k := range next {
		if v, ok := t.fromFile(k); ok && cur[k] == "" {
			return fmt.Errorf("%s sets %s itself (%q) in its file: edit the file", t.key, k, v)
		}
	}
	if err := t.apply(ctx, next); err != nil {
		return err
	}
	if t.cluster() {
		fmt.Fprintf(o.Stdout, "%s rollout %s\n", t.key, what)
	} else {
		fmt.Fprintf(o.Stdout, "%s rollout %s: the next pvctl run applies it\n", t.key, what)
	}
	return nil
}

// childCheck refuses children a control does not apply to.
type childCheck func(key string, set *pvsapi.PackageVariantSet, variants []pvapi.PackageVariant, names []string) error

// knownChildren refuses a child name that is not one of the set's
// children (a typo would hold or skip nothing, silently).
func knownChildren(key string, set *pvsapi.PackageVariantSet, variants []pvapi.PackageVariant, names []string) error {
	mine := map[string]bool{}
	for _, v := range variants {
		if owner := metav1.GetControllerOf(&v); owner != nil && owner.Kind == "PackageVariantSet" && owner.UID == set.UID {
			mine[v.Name] = true
		}
	}
	for _, n := range names {
		if !mine[n] {
			return fmt.Errorf("%s has no child %q (pvctl status lists its PackageVariants)", key, n)
		}
	}
	return nil
}

// failedChildren refuses, besides what knownChildren refuses, a child the
// rollout does not list as failed: a skip applies to failed children only
// (a skip of a canary that never failed used to make it "done"). When the
// status names only some of the failed children (status.rollout.
// failedCount), one it does not name is let through: the rollout applies
// the skip once the child has failed.
func failedChildren(key string, set *pvsapi.PackageVariantSet, variants []pvapi.PackageVariant, names []string) error {
	if err := knownChildren(key, set, variants, names); err != nil {
		return err
	}
	r := set.Status.Rollout
	failed := map[string]bool{}
	if r != nil {
		for _, f := range r.Failed {
			n, _, _ := strings.Cut(f, ": ")
			failed[n] = true
		}
		for _, n := range r.Skipped {
			failed[n] = true
		}
	}
	if r != nil && r.FailedCount > len(r.Failed) {
		return nil
	}
	for _, n := range names {
		if !failed[n] {
			return fmt.Errorf("%s: child %q has not failed in the rollout (status.rollout.failed; pvctl rollout status); a skip applies to failed children only: hold it to keep it back", key, n)
		}
	}
	return nil
}

// printRollout writes a set's rollout as a short report.
// printPending says which rollout controls pvctl recorded for the set that
// the last run has not applied yet (they apply at the next pvctl run): a
// control asked for reads as pending, not as done.
func (o *Options) printPending(set *pvsapi.PackageVariantSet) error {
	st, err := state.Read(filepath.Join(o.Repos, state.File))
	if err != nil {
		return err
	}
	key := state.ControlKey("PackageVariantSet", set.Name)
	want, applied := st.Controls[key], set.Annotations
	if st.Applied != nil { // what the last run applied (the saved annotations never carry the controls)
		applied = st.Applied[key]
	}
	var pending []string
	for _, k := range local.RolloutControlKeys {
		if v, ok := want[k]; ok && applied[k] != v {
			pending = append(pending, fmt.Sprintf("%s=%q", k, v))
		} else if !ok && applied[k] != "" {
			pending = append(pending, fmt.Sprintf("%s removed", k))
		}
	}
	if len(pending) > 0 {
		fmt.Fprintf(o.Stdout, "  pending (the next pvctl run applies them): %s\n", strings.Join(pending, ", "))
	}
	return nil
}

func printRollout(w io.Writer, set *pvsapi.PackageVariantSet) {
	r := set.Status.Rollout
	if set.Spec.Rollout == nil || r == nil {
		fmt.Fprintf(w, "PackageVariantSet %s has no staged rollout (spec.rollout)\n", set.Name)
		return
	}
	from := ""
	if r.From != nil {
		from = " from " + r.From.Name
	}
	fmt.Fprintf(w, "PackageVariantSet %s: %s, target %s%s\n", set.Name, r.Phase, r.Target.Name, from)
	if r.Message != "" {
		fmt.Fprintf(w, "  %s\n", r.Message)
	}
	if u := r.UndoProgress; u != nil && r.From != nil {
		fmt.Fprintf(w, "  undo: %d of %d children back at %s (published and Ready there), %d pinned to it, %d on their way\n",
			u.Done, u.Children, r.From.Name, u.Back, u.Children-u.Done)
	}
	if h := r.Window; h != nil {
		until := ""
		if h.Until != "" {
			until = " (until " + h.Until + ")"
		}
		fmt.Fprintf(w, "  held by a window: %s%s\n", h.Reason, until)
	}
	for _, wv := range r.Waves {
		counts := fmt.Sprintf("%d/%d moved, %d done", wv.Moved, len(wv.Members), wv.Done)
		if wv.Failed > 0 {
			counts += fmt.Sprintf(", %d failed", wv.Failed)
		}
		if wv.Skipped > 0 {
			counts += fmt.Sprintf(", %d skipped", wv.Skipped)
		}
		fmt.Fprintf(w, "  wave %-12s %-9s %s\n", wv.Name, wv.State, counts)
		if len(wv.Waiting) > 0 {
			fmt.Fprintf(w, "    waiting: %s\n", waitingSince(wv.Waiting))
		}
	}
	if n := r.Next; n != nil {
		fmt.Fprintf(w, "  next gate: %s at %s\n", n.What, n.At)
	}
	for _, l := range []struct {
		what  string
		names []string
	}{{"failed", r.Failed}, {"held", r.Held}, {"skipped", r.Skipped}} {
		if len(l.names) > 0 {
			more := ""
			if l.what == "failed" && r.FailedCount > len(r.Failed) {
				more = fmt.Sprintf("; and %d more", r.FailedCount-len(r.Failed))
			}
			fmt.Fprintf(w, "  %s: %s%s\n", l.what, strings.Join(l.names, "; "), more)
		}
	}
}

// waitingSince names a wave's waiting members with the time each was
// moved, the longest waiting first: at most MaxListed, and the count of
// the rest.
func waitingSince(ms []v1alpha2.WaitingMember) string {
	ms = slices.Clone(ms)
	slices.SortStableFunc(ms, func(a, b v1alpha2.WaitingMember) int {
		switch {
		case a.Since == b.Since:
			return strings.Compare(a.Name, b.Name)
		case a.Since == "":
			return 1
		case b.Since == "":
			return -1
		}
		return strings.Compare(a.Since, b.Since) // RFC 3339 in UTC: the text sorts as the time
	})
	var out []string
	for _, m := range ms {
		if m.Since == "" {
			out = append(out, m.Name)
		} else {
			out = append(out, fmt.Sprintf("%s (since %s)", m.Name, m.Since))
		}
	}
	return krm.Listed(out, rollout.MaxListed)
}

// retryStamp makes each rollout retry a value of its own (the rollout acts
// on a value once): the time, to the second (a variable for tests).
var retryStamp = func() string { return time.Now().UTC().Format(time.RFC3339) }
