package upstream

import (
	"strings"
	"testing"

	"github.com/pvkit/pvkit/pkg/api/meta"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
)

func TestConstraint(t *testing.T) {
	cases := []struct {
		c       string
		in, out []string
	}{
		{"1", []string{"1.0.0", "1.4.2", "v1.99.0"}, []string{"0.9.0", "2.0.0", "1.3.0-rc.1"}},
		{"v1", []string{"1.4.2"}, []string{"2.0.0"}},
		{"1.x", []string{"1.4.2"}, []string{"2.0.0"}},
		{"~1.2", []string{"1.2.0", "1.2.9"}, []string{"1.3.0", "1.1.9"}},
		{"~1.2.3", []string{"1.2.3", "1.2.4"}, []string{"1.2.2", "1.3.0"}},
		{"^1.2.3", []string{"1.2.3", "1.9.0"}, []string{"2.0.0", "1.2.2"}},
		{"^0.2.3", []string{"0.2.3", "0.2.9"}, []string{"0.3.0"}},
		{"^0.0.3", []string{"0.0.3"}, []string{"0.0.4"}},
		{">=1.2 <2", []string{"1.2.0", "1.9.9"}, []string{"1.1.9", "2.0.0"}},
		{">=1.2, <2", []string{"1.5.0"}, []string{"2.0.0"}},
		{"> 1.2", []string{"1.3.0"}, []string{"1.2.9"}},
		{">1.2.3", []string{"1.2.4"}, []string{"1.2.3"}},
		{"<=1.4", []string{"1.4.7"}, []string{"1.5.0"}},
		{"1.2 - 1.4", []string{"1.2.0", "1.4.9"}, []string{"1.5.0", "1.1.0"}},
		{"1 || 3", []string{"1.0.0", "3.1.0"}, []string{"2.0.0"}},
		{"!=1.2.3 >=1", []string{"1.2.4"}, []string{"1.2.3"}},
		{"*", []string{"0.0.1", "9.0.0"}, []string{"1.0.0-rc.1"}},
		{">=1.3.0-rc.1 <2", []string{"1.3.0-rc.1", "1.3.0-rc.2", "1.3.0", "1.4.0-rc.1"}, []string{"1.3.0-beta.1", "2.0.0"}},
		{"~>1.2", []string{"1.2.0", "1.2.9"}, []string{"1.3.0"}},
		{"=1.2.3", []string{"1.2.3", "1.2.3+build.1"}, []string{"1.2.4"}},
	}
	for _, tc := range cases {
		c, err := ParseConstraint(tc.c)
		if err != nil {
			t.Errorf("%q: %v", tc.c, err)
			continue
		}
		for _, s := range tc.in {
			if v, ok := ParseVersion(s); !ok || !c.Check(v) {
				t.Errorf("%q must contain %s", tc.c, s)
			}
		}
		for _, s := range tc.out {
			if v, ok := ParseVersion(s); !ok || c.Check(v) {
				t.Errorf("%q must not contain %s", tc.c, s)
			}
		}
	}
}

func TestConstraintErrors(t *testing.T) {
	for c, want := range map[string]string{
		"":                        `"": improper constraint: `,
		"1 ||":                    `"1 ||": improper constraint: `,
		"abc":                     `"abc": improper constraint: abc`,
		"1.2.3.4":                 `"1.2.3.4": improper constraint: 1.2.3.4`,
		"18446744073709551616":    `"18446744073709551616": constraint parser error`,
		strings.Repeat("1 ", 200): "is 400 characters long, at most 256",
	} {
		_, err := ParseConstraint(c)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", c, err, want)
		}
	}
	u := &pv.Upstream{Semver: "abc"}
	if got := strings.Join(CheckSemver(u), "; "); got != "`spec.upstream.semver` is not a semver range: \"abc\": improper constraint: abc" {
		t.Errorf("CheckSemver: %s", got)
	}
}

// Issue 42 #8: ranges mean what Masterminds' semver (Flux's and Helm's)
// says. Where pvkit's own parser, before it, said otherwise, each case
// here has the verdict it gave and the one it gives now.
func TestMastermindsDifferential(t *testing.T) {
	for _, tc := range []struct {
		c, v        string
		before, now string // "in", "out" or "refused"
		what        string
	}{
		{"~>1.2", "1.2.5", "refused", "in", "~> is Masterminds' (and Ruby's) tilde"},
		{"01.2", "1.2.0", "refused", "in", "a leading zero is read as the number"},
		{"!=1.2", "1.2.5", "refused", "out", "!= with a partial version excludes the whole 1.2.x"},
		{"!=1.2", "1.3.0", "refused", "in", "!= with a partial version excludes the whole 1.2.x"},
		{"<*", "1.0.0", "refused", "out", "a range that takes nothing is taken (the variant then finds no upstream)"},
		{">=1.3.0-rc.1 <2", "1.4.0-rc.1", "out", "in", "a range that names a pre-release takes every pre-release in it, as Flux does"},
		{"<=18446744073709551615", "5.0.0", "refused", "in", "the largest part number needs no next one"},
		{"18446744073709551615", "18446744073709551615.0.0", "refused", "in", "the largest part number needs no next one"},
	} {
		c, err := ParseConstraint(tc.c)
		got := "refused"
		if err == nil {
			v, ok := ParseVersion(tc.v)
			if !ok {
				t.Fatalf("%s is not a version", tc.v)
			}
			got = map[bool]string{true: "in", false: "out"}[c.Check(v)]
		}
		if got != tc.now {
			t.Errorf("%q and %s: %s, want %s (%s; pvkit's own parser said %s)", tc.c, tc.v, got, tc.now, tc.what, tc.before)
		}
	}
}

func TestVersionOrder(t *testing.T) {
	order := []string{"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.1.0", "2.0.0"}
	for i := 1; i < len(order); i++ {
		a, _ := ParseVersion(order[i-1])
		b, _ := ParseVersion(order[i])
		if a.Compare(b) != -1 || b.Compare(a) != 1 {
			t.Errorf("%s must come before %s", order[i-1], order[i])
		}
	}
	for _, bad := range []string{"1.2", "v1", "main", "packagevariant-1", "1.2.3-", "1.2.3-a..b"} {
		if _, ok := ParseVersion(bad); ok {
			t.Errorf("%q is not a release version", bad)
		}
	}
}

// rule floating-versions: the newest published version in range is picked,
// a newer one outside it is ignored (and named), drafts never count.
func TestSelectSemver(t *testing.T) {
	pub := func(ws string, rev int) Candidate {
		return Candidate{Workspace: ws, Revision: rev, Lifecycle: meta.LifecyclePublished}
	}
	revs := []Candidate{pub("v1.3.0", 1), pub("v1.4.2", 2), pub("v2.0.0", 3), pub("main", -1),
		{Workspace: "v1.5.0", Lifecycle: meta.LifecycleDraft}, pub("v1.4.2", -1), pub("v1.4.10-rc.1", 4)}
	u := pv.Upstream{Repo: "catalog", Package: "app", Semver: "1"}
	if i := Select(u, revs); i != 1 {
		t.Fatalf("want v1.4.2 (revision 2), got %d", i)
	}
	if got := Ignored(u, revs); strings.Join(got, ",") != "v2.0.0" {
		t.Fatalf("ignored: %v", got)
	}
	u.Semver = "3"
	if i := Select(u, revs); i != -1 {
		t.Fatalf("nothing in range: got %d", i)
	}
	if got := Describe(u); got != `package "app" in repository "catalog", the newest published version in semver range "3"` {
		t.Fatal(got)
	}
	u.Semver, u.Revision = "[", 2
	if got := CheckSemver(&u); len(got) != 2 || !strings.Contains(got[0], "`spec.upstream.semver` is not a semver range: ") || !strings.Contains(got[1], "cannot be used with `revision` or `workspaceName`") {
		t.Fatalf("problems: %q", got)
	}
}

// Issue 47 #10: at the bound, what can be compared is, without wrapping.
func TestConstraintAtTheBound(t *testing.T) {
	for c, in := range map[string]string{
		">=18446744073709551615":     "18446744073709551615.0.0",
		"~1.2.18446744073709551615":  "1.2.18446744073709551615",
		"=18446744073709551615.1.1":  "18446744073709551615.1.1",
		"1.18446744073709551615 - 2": "1.18446744073709551615.7",
	} {
		cs, err := ParseConstraint(c)
		if err != nil {
			t.Errorf("%q: %v", c, err)
			continue
		}
		if v, ok := ParseVersion(in); !ok || !cs.Check(v) {
			t.Errorf("%q must contain %s", c, in)
		}
		if v, _ := ParseVersion("0.0.0"); cs.Check(v) {
			t.Errorf("%q must not contain 0.0.0", c)
		}
	}
}
