package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// describeGroup lists a grouped set's children by target (rule
// package-groups): each target with the group revision its members come
// from, then each member's child and Ready. A target is at its members'
// group revision when every member is published there; while they are
// pinned to it and none is published there yet, it is moving to it; while
// some are published there and others not, or they are pinned to
// different revisions, it is mixed, naming the members not there.
func describeGroup(w io.Writer, f *fleet, s *pvsapi.PackageVariantSet, paint painter) {
	fmt.Fprintf(w, "Children by target (group %s of repository %s):\n", s.Spec.Group.Package, s.Spec.Group.Repo)
	byTarget := map[string][]pvapi.PackageVariant{}
	for _, v := range f.variants {
		if owner := metav1.GetControllerOf(&v); owner != nil && owner.UID == s.UID && v.Spec.Downstream != nil {
			byTarget[v.Spec.Downstream.Repo] = append(byTarget[v.Spec.Downstream.Repo], v)
		}
	}
	if len(byTarget) == 0 {
		fmt.Fprintln(w, "  (none)")
		return
	}
	targets := make([]string, 0, len(byTarget))
	for t := range byTarget {
		targets = append(targets, t)
	}
	sort.Strings(targets)
	for _, t := range targets {
		vs := byTarget[t]
		sort.Slice(vs, func(i, j int) bool { return vs[i].Name < vs[j].Name })
		at := vs[0].Annotations[v1alpha2.GroupRevisionAnnotation]
		var members, behind []string
		for _, v := range vs {
			if v.Annotations[v1alpha2.GroupRevisionAnnotation] != at {
				at = "mixed"
			}
			if !publishedAtPin(&v) {
				behind = append(behind, v.Labels[v1alpha2.MemberLabel])
			}
			ready, reason := "Unknown", ""
			for _, c := range v.Status.Conditions {
				if c.Type == kit.ConditionReady {
					ready, reason = string(c.Status), c.Reason
				}
			}
			members = append(members, strings.TrimSpace(fmt.Sprintf("%s (PackageVariant %s): Ready %s %s", v.Labels[v1alpha2.MemberLabel], v.Name, paint.ready(ready), reason)))
		}
		where := "at " + at
		switch {
		case at == "mixed":
			where = "mixed (its members pinned to different group revisions)"
		case len(behind) == len(vs):
			where = "moving to " + at + " (no member published there yet)"
		case len(behind) > 0:
			where = "mixed: at " + at + " but " + strings.Join(behind, ", ") + " (not published there yet)"
		}
		fmt.Fprintf(w, "  %s %s:\n", t, where)
		for _, m := range members {
			fmt.Fprintf(w, "    %s\n", m)
		}
	}
}

// publishedAtPin reports whether a member's child has a published target
// made from the upstream revision its spec is pinned to (its lock
// `<package>/v<N>`).
func publishedAtPin(v *pvapi.PackageVariant) bool {
	up := v.Spec.Upstream
	if up == nil || up.Revision <= 0 {
		return false
	}
	ref := fmt.Sprintf("%s/v%d", up.Package, up.Revision)
	for _, t := range v.Status.DownstreamTargets {
		if l := t.UpstreamLock; t.Lifecycle == "Published" && l != nil && (l.Ref == ref || strings.HasSuffix(l.Ref, "/"+ref)) {
			return true
		}
	}
	return false
}
