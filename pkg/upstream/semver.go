package upstream

// Floating versions (rule: floating-versions): spec.upstream.semver names a
// range of versions, as Flux's GitRepository spec.ref.semver and Helm's
// chart versions do, and the variant follows the newest published revision
// whose workspace (a catalog's tag: v1.4.2, 1.4.2) is in it.
//
// The constraint language is Masterminds' semver (v3), the library Flux
// and Helm link, so a range means here what it means there: comparisons
// (=, !=, >, >=, <, <=), a bare or partial version (1 is >=1.0.0 <2.0.0,
// 1.x the same, * any), ~ and ~> (~1.2.3: >=1.2.3 <1.3.0), ^ (^1.2.3:
// >=1.2.3 <2.0.0), hyphen ranges (1.2 - 1.4), terms separated by spaces or
// commas that must all hold, and || between alternatives. A pre-release
// (1.3.0-rc.1) is in a range only when the range names a pre-release, as
// in Flux and Helm; build metadata (+...) is ignored.
//
// pvkit adds one check on top: a constraint is at most
// MaxConstraintLength characters (it comes from a user's object). The
// differential test (TestMastermindsDifferential) names where this differs
// from pvkit's earlier parser of its own.

import (
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
)

// Version is a semantic version read from a workspace or tag name.
type Version struct{ v *semver.Version }

// ParseVersion reads v1.2.3, 1.2.3, v1.2.3-rc.1 and v1.2.3+build (all three
// numbers needed, as in a release tag); ok false for anything else.
func ParseVersion(s string) (Version, bool) {
	v, err := semver.StrictNewVersion(strings.TrimPrefix(s, "v"))
	if err != nil {
		return Version{}, false
	}
	return Version{v}, true
}

// String is the version without a leading v.
func (v Version) String() string {
	if v.v == nil {
		return ""
	}
	return v.v.String()
}

// Prerelease reports whether the version is a pre-release.
func (v Version) Prerelease() bool { return v.v != nil && v.v.Prerelease() != "" }

// Compare is -1, 0 or 1 as v is before, the same as or after o in
// semantic version order (build metadata ignored); the zero Version is
// before every other.
func (v Version) Compare(o Version) int {
	switch {
	case v.v == nil && o.v == nil:
		return 0
	case v.v == nil:
		return -1
	case o.v == nil:
		return 1
	}
	return v.v.Compare(o.v)
}

// Constraint is a semver range.
type Constraint struct {
	text string
	c    *semver.Constraints
}

func (c *Constraint) String() string { return c.text }

// MaxConstraintLength bounds a constraint's text (it comes from a user's
// object; a range is a few terms).
const MaxConstraintLength = 256

// ParseConstraint reads a semver range; its error is Masterminds' words on
// it.
func ParseConstraint(s string) (*Constraint, error) {
	if len(s) > MaxConstraintLength {
		return nil, fmt.Errorf("is %d characters long, at most %d", len(s), MaxConstraintLength)
	}
	c, err := semver.NewConstraint(s)
	if err != nil {
		return nil, fmt.Errorf("%q: %v", s, err)
	}
	return &Constraint{text: s, c: c}, nil
}

// Check reports whether v is in the range.
func (c *Constraint) Check(v Version) bool { return v.v != nil && c.c.Check(v.v) }

// WorkspaceVersion is the version a revision's workspace names (a
// catalog's tag, v1.4.2 or 1.4.2, or a directory-scoped one's last part,
// infra/v1.4.2), if any.
func WorkspaceVersion(workspace string) (Version, bool) {
	return ParseVersion(workspace[strings.LastIndexByte(workspace, '/')+1:])
}

// CheckSemver returns the problems of an upstream's semver field: a range
// that does not parse, or one given with revision or workspaceName.
func CheckSemver(u *pv.Upstream) []string {
	if u == nil || u.Semver == "" {
		return nil
	}
	var out []string
	if _, err := ParseConstraint(u.Semver); err != nil {
		out = append(out, fmt.Sprintf("`spec.upstream.semver` is not a semver range: %v", err))
	}
	if u.Revision != 0 || u.WorkspaceName != "" {
		out = append(out, "`spec.upstream.semver` follows a range of versions: it cannot be used with `revision` or `workspaceName`")
	}
	return out
}
