package upstream

// Floating versions (rule: floating-versions): spec.upstream.semver names a
// range of versions, as Flux's GitRepository spec.ref.semver and Helm's
// chart versions do, and the variant follows the newest published revision
// whose workspace (a catalog's tag: v1.4.2, 1.4.2) is in it.
//
// The constraint language is the one Flux and Helm users write (Masterminds'
// semver, the common part):
//
//   - a comparison: =, !=, >, >=, <, <= and a version (1, 1.2, 1.2.3, a
//     leading v allowed);
//   - a bare version: 1 is >=1.0.0 <2.0.0, 1.2 is >=1.2.0 <1.3.0, 1.2.3 is
//     =1.2.3; x, X or * as a part: 1.x is 1, * is any version;
//   - ~1.2.3: >=1.2.3 <1.3.0 (~1: >=1.0.0 <2.0.0);
//   - ^1.2.3: >=1.2.3 <2.0.0 (^0.2.3: >=0.2.3 <0.3.0; ^0.0.3: =0.0.3);
//   - a hyphen range: 1.2 - 1.4 is >=1.2.0 <=1.4.x;
//   - terms separated by spaces or commas must all hold; || separates
//     alternatives.
//
// A pre-release (1.3.0-rc.1) is in a range only when a comparison of the
// range names a pre-release of the same major.minor.patch, as in npm, Helm
// and Flux; build metadata (+...) is ignored.

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
)

// Version is a semantic version read from a workspace or tag name.
type Version struct {
	Major, Minor, Patch uint64
	Pre                 []string // pre-release identifiers; none for a release
}

// ParseVersion reads v1.2.3, 1.2.3, v1.2.3-rc.1 and v1.2.3+build (all three
// numbers needed, as in a release tag); ok false for anything else.
func ParseVersion(s string) (Version, bool) {
	v, parts, ok := parsePartial(strings.TrimPrefix(s, "v"))
	return v, ok && parts == 3
}

// parsePartial reads up to three numeric parts; parts is how many were
// given, a wildcard (x, X, *) ending them.
func parsePartial(s string) (v Version, parts int, ok bool) {
	if s == "" {
		return v, 0, false
	}
	if i := strings.IndexByte(s, '+'); i >= 0 {
		s = s[:i]
	}
	var pre string
	if i := strings.IndexByte(s, '-'); i >= 0 {
		s, pre = s[:i], s[i+1:]
		if pre == "" {
			return v, 0, false
		}
	}
	fields := strings.Split(s, ".")
	if len(fields) > 3 {
		return v, 0, false
	}
	nums := []*uint64{&v.Major, &v.Minor, &v.Patch}
	for i, f := range fields {
		if isWild(f) {
			for _, rest := range fields[i+1:] {
				if !isWild(rest) {
					return v, 0, false // 1.x.3
				}
			}
			if pre != "" {
				return v, 0, false
			}
			return v, i, true
		}
		if f == "" || (len(f) > 1 && f[0] == '0') {
			return v, 0, false
		}
		n, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return v, 0, false
		}
		*nums[i] = n
		parts = i + 1
	}
	if pre != "" {
		if parts != 3 {
			return v, 0, false
		}
		v.Pre = strings.Split(pre, ".")
		for _, id := range v.Pre {
			if id == "" {
				return v, 0, false
			}
		}
	}
	return v, parts, true
}

func isWild(f string) bool { return f == "x" || f == "X" || f == "*" }

func (v Version) String() string {
	s := fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
	if len(v.Pre) > 0 {
		s += "-" + strings.Join(v.Pre, ".")
	}
	return s
}

// Compare orders versions by semver precedence: -1, 0 or 1.
func (v Version) Compare(o Version) int {
	for _, p := range [][2]uint64{{v.Major, o.Major}, {v.Minor, o.Minor}, {v.Patch, o.Patch}} {
		if p[0] != p[1] {
			if p[0] < p[1] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(v.Pre) == 0 && len(o.Pre) == 0:
		return 0
	case len(v.Pre) == 0:
		return 1
	case len(o.Pre) == 0:
		return -1
	}
	for i := 0; i < len(v.Pre) && i < len(o.Pre); i++ {
		a, b := v.Pre[i], o.Pre[i]
		an, aerr := strconv.ParseUint(a, 10, 64)
		bn, berr := strconv.ParseUint(b, 10, 64)
		switch {
		case aerr == nil && berr == nil && an != bn:
			if an < bn {
				return -1
			}
			return 1
		case aerr == nil && berr != nil:
			return -1
		case aerr != nil && berr == nil:
			return 1
		case aerr != nil && a != b:
			if a < b {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(v.Pre) < len(o.Pre):
		return -1
	case len(v.Pre) > len(o.Pre):
		return 1
	}
	return 0
}

// comparison is one term of a constraint: op and version.
type comparison struct {
	op string // =, !=, >, >=, <, <=
	v  Version
}

func (c comparison) holds(v Version) bool {
	d := v.Compare(c.v)
	switch c.op {
	case "=":
		return d == 0
	case "!=":
		return d != 0
	case ">":
		return d > 0
	case ">=":
		return d >= 0
	case "<":
		return d < 0
	}
	return d <= 0
}

// Constraint is a parsed semver range: alternatives of conjunctions.
type Constraint struct {
	text string
	alts [][]comparison
}

func (c *Constraint) String() string { return c.text }

// MaxConstraintLength bounds a constraint's text (it comes from a user's
// object; a range is a few terms).
const MaxConstraintLength = 256

// ParseConstraint reads a semver range; its error names the term it could
// not read.
func ParseConstraint(s string) (*Constraint, error) {
	if len(s) > MaxConstraintLength {
		return nil, fmt.Errorf("is %d characters long, at most %d", len(s), MaxConstraintLength)
	}
	c := &Constraint{text: s}
	for _, alt := range strings.Split(s, "||") {
		terms := strings.Fields(strings.ReplaceAll(alt, ",", " "))
		if len(terms) == 0 {
			return nil, fmt.Errorf("%q has an empty alternative", s)
		}
		var conj []comparison
		for i := 0; i < len(terms); i++ {
			if i+2 < len(terms) && terms[i+1] == "-" { // hyphen range
				lo, err := expand(">=", terms[i])
				if err != nil {
					return nil, err
				}
				hi, err := expand("<=", terms[i+2])
				if err != nil {
					return nil, err
				}
				conj = append(append(conj, lo...), hi...)
				i += 2
				continue
			}
			t := terms[i]
			op := ""
			for _, o := range []string{">=", "<=", "!=", ">", "<", "=", "~", "^"} {
				if strings.HasPrefix(t, o) {
					op, t = o, t[len(o):]
					break
				}
			}
			if t == "" && i+1 < len(terms) { // "> 1.2": the operator alone
				i++
				t = terms[i]
			}
			cs, err := expand(op, t)
			if err != nil {
				return nil, err
			}
			conj = append(conj, cs...)
		}
		c.alts = append(c.alts, conj)
	}
	return c, nil
}

// expand turns one term (operator and possibly partial version) into
// comparisons of full versions.
func expand(op, s string) ([]comparison, error) {
	if s == "*" || s == "x" || s == "X" {
		if op == "" || op == "=" || op == ">=" || op == "~" || op == "^" {
			return []comparison{{">=", Version{}}}, nil
		}
		return nil, fmt.Errorf("%q with a wildcard is not a range", op+s)
	}
	v, parts, ok := parsePartial(strings.TrimPrefix(s, "v"))
	if !ok {
		return nil, fmt.Errorf("%q is not a version (1, 1.2, 1.2.3, v1.2.3-rc.1; x for any part)", s)
	}
	// next is the first version above the given parts: 1.2 → 1.3.0. A
	// part at the largest number has none: it would wrap to 0 (<=
	// 18446744073709551615 was <0.0.0, a range of nothing, silently).
	var overflow error
	next := func(parts int) Version {
		if p := []uint64{v.Major, v.Minor, v.Patch}[parts-1]; p == math.MaxUint64 {
			overflow = fmt.Errorf("%q: %d is the largest number a version part may have, and this range needs the next one", op+s, p)
		}
		switch parts {
		case 1:
			return Version{Major: v.Major + 1}
		case 2:
			return Version{Major: v.Major, Minor: v.Minor + 1}
		}
		return Version{Major: v.Major, Minor: v.Minor, Patch: v.Patch + 1}
	}
	cs, err := expandTo(op, s, v, parts, next)
	if err == nil && overflow != nil {
		return nil, overflow
	}
	return cs, err
}

// expandTo is expand's comparisons for a parsed version; next is the first
// version above given parts.
func expandTo(op, s string, v Version, parts int, next func(int) Version) ([]comparison, error) {
	lo := comparison{">=", v}
	switch op {
	case "", "=":
		if parts == 3 {
			return []comparison{{"=", v}}, nil
		}
		return []comparison{lo, {"<", next(parts)}}, nil
	case "!=":
		if parts != 3 {
			return nil, fmt.Errorf("%q: != needs a whole version", op+s)
		}
		return []comparison{{"!=", v}}, nil
	case ">":
		if parts == 3 {
			return []comparison{{">", v}}, nil
		}
		return []comparison{{">=", next(parts)}}, nil
	case ">=":
		return []comparison{lo}, nil
	case "<":
		return []comparison{{"<", v}}, nil
	case "<=":
		if parts == 3 {
			return []comparison{{"<=", v}}, nil
		}
		return []comparison{{"<", next(parts)}}, nil
	case "~":
		if parts == 1 {
			return []comparison{lo, {"<", next(1)}}, nil
		}
		return []comparison{lo, {"<", next(2)}}, nil
	case "^":
		switch {
		case v.Major > 0 || parts == 1:
			return []comparison{lo, {"<", next(1)}}, nil
		case v.Minor > 0 || parts == 2:
			return []comparison{lo, {"<", next(2)}}, nil
		}
		return []comparison{lo, {"<", next(3)}}, nil
	}
	return nil, fmt.Errorf("%q has an unknown operator", op+s)
}

// Check reports whether v is in the range.
func (c *Constraint) Check(v Version) bool {
	for _, conj := range c.alts {
		ok := true
		for _, t := range conj {
			if !t.holds(v) {
				ok = false
				break
			}
		}
		if ok && (len(v.Pre) == 0 || preAllowed(conj, v)) {
			return true
		}
	}
	return false
}

// preAllowed: a pre-release is in a range only when a comparison names a
// pre-release of the same major.minor.patch.
func preAllowed(conj []comparison, v Version) bool {
	for _, t := range conj {
		if len(t.v.Pre) > 0 && t.v.Major == v.Major && t.v.Minor == v.Minor && t.v.Patch == v.Patch {
			return true
		}
	}
	return false
}

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
