// Package upstream is the one rule that picks a PackageVariant's upstream
// revision (rule: upstream-selection), used by the PackageVariant reconciler and by pvs-expand
// alike. It is pure: callers hand it the revisions of the upstream package.
//
// The rule, by what spec.upstream names:
//
//   - workspaceName: the revision in that workspace, whatever its lifecycle
//     (a Draft only when named so). With revision too, that revision must
//     also carry the number: every field given must match, so a typo never
//     silently picks something else (Porch v1.5.3 ignores revision).
//   - revision alone: the Published (or DeletionProposed) revision with that
//     number; never a Draft or Proposed one (Porch's `revision: 0` matched
//     any Draft).
//   - revision -1: the branch placeholder, as Porch v1.5.3 selects it (its
//     revision -1, whose workspace is the repository's branch, `main`);
//     with workspaceName too, that must be the branch's name.
//   - neither: the latest published revision, followed as newer ones are
//     published (a floating "latest"; Porch hard-codes the branch "main").
//   - semver (a pvkit extension; rule: floating-versions): the published
//     revision whose workspace is the newest version in the range
//     (semver.go), followed as newer ones in range are published; one
//     outside the range is never picked. Of two revisions of one version
//     (a tag and its numbered revision), the higher number.
//
// Any other negative revision is never a match.
package upstream

import (
	"fmt"

	"github.com/pvkit/pvkit/pkg/api/meta"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
)

// Candidate is what the rule reads of one revision of the upstream package.
type Candidate struct {
	Workspace string
	Revision  int // 0 until published
	Lifecycle meta.Lifecycle
}

// Published reports Published or DeletionProposed, as Porch does.
func (c Candidate) Published() bool { return c.Lifecycle.IsPublished() }

// Select returns the index in revs of the revision u names, or -1 when none
// does (yet). revs are the revisions of u's repository and package.
func Select(u pv.Upstream, revs []Candidate) int {
	if u.Semver != "" {
		c, err := ParseConstraint(u.Semver)
		if err != nil {
			return -1 // validation names it
		}
		i, _ := selectSemver(c, revs)
		return i
	}
	best := -1
	for i, c := range revs {
		switch {
		case u.Revision == -1:
			if c.Revision == -1 && (u.WorkspaceName == "" || c.Workspace == u.WorkspaceName) {
				return i
			}
		case u.Revision < 0:
			return -1
		case u.WorkspaceName != "":
			if c.Workspace == u.WorkspaceName && (u.Revision == 0 || c.Revision == u.Revision) {
				return i
			}
		case u.Revision > 0:
			if c.Revision == u.Revision && c.Published() {
				return i
			}
		default:
			if c.Published() && c.Revision > 0 && (best < 0 || c.Revision > revs[best].Revision) {
				best = i
			}
		}
	}
	return best
}

// selectSemver is the semver rule: the index of the newest published
// revision in range (-1: none), and its version.
func selectSemver(c *Constraint, revs []Candidate) (int, Version) {
	best, bestV := -1, Version{}
	for i, r := range revs {
		if !r.Published() {
			continue
		}
		v, ok := WorkspaceVersion(r.Workspace)
		if !ok || !c.Check(v) {
			continue
		}
		if d := v.Compare(bestV); best < 0 || d > 0 || (d == 0 && r.Revision > revs[best].Revision) {
			best, bestV = i, v
		}
	}
	return best, bestV
}

// Ignored lists, for a semver upstream, the published versions newer than
// the one picked that the range leaves out (v2.0.0 for `1`; pre-releases
// are not releases and not listed), newest first:
// what a plan says it does not take.
func Ignored(u pv.Upstream, revs []Candidate) []string {
	if u.Semver == "" {
		return nil
	}
	c, err := ParseConstraint(u.Semver)
	if err != nil {
		return nil
	}
	_, picked := selectSemver(c, revs)
	var out []Version
	seen := map[string]bool{}
	for _, r := range revs {
		v, ok := WorkspaceVersion(r.Workspace)
		if !r.Published() || !ok || v.Prerelease() || c.Check(v) || v.Compare(picked) <= 0 || seen[v.String()] {
			continue
		}
		seen[v.String()] = true
		out = append(out, v)
	}
	sortVersions(out)
	names := make([]string, len(out))
	for i, v := range out {
		names[i] = "v" + v.String()
	}
	return names
}

func sortVersions(vs []Version) {
	for i := 1; i < len(vs); i++ {
		for j := i; j > 0 && vs[j].Compare(vs[j-1]) > 0; j-- {
			vs[j], vs[j-1] = vs[j-1], vs[j]
		}
	}
}

// Describe names what u asks for, for messages: `package "app" in
// repository "blueprints", published revision 2`.
func Describe(u pv.Upstream) string {
	s := fmt.Sprintf("package %q in repository %q", u.Package, u.Repo)
	switch {
	case u.Revision == -1 && u.WorkspaceName != "":
		return s + fmt.Sprintf(", the branch placeholder (revision -1) of branch %q", u.WorkspaceName)
	case u.Revision == -1:
		return s + ", the branch placeholder (revision -1)"
	case u.WorkspaceName != "" && u.Revision != 0:
		return s + fmt.Sprintf(" with workspace %q and revision %d", u.WorkspaceName, u.Revision)
	case u.WorkspaceName != "":
		return s + fmt.Sprintf(" with workspace %q", u.WorkspaceName)
	case u.Revision != 0:
		return s + fmt.Sprintf(", published revision %d", u.Revision)
	case u.Semver != "":
		return s + fmt.Sprintf(", the newest published version in semver range %q", u.Semver)
	}
	return s + ", latest published revision"
}
