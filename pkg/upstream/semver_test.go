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
		{">=1.3.0-rc.1 <2", []string{"1.3.0-rc.1", "1.3.0-rc.2", "1.3.0"}, []string{"1.4.0-rc.1", "1.3.0-beta.1"}},
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
		"":                        `"" has an empty alternative`,
		"1 ||":                    `"1 ||" has an empty alternative`,
		"abc":                     `"abc" is not a version (1, 1.2, 1.2.3, v1.2.3-rc.1; x for any part)`,
		"1.2.3.4":                 `"1.2.3.4" is not a version`,
		"01.2":                    `"01.2" is not a version`,
		"!=1.2":                   `"!=1.2": != needs a whole version`,
		"<*":                      `"<*" with a wildcard is not a range`,
		"~>1":                     `">1" is not a version`,
		strings.Repeat("1 ", 200): "is 400 characters long, at most 256",
		// Issue 47 #10: the next version above a part at the bound wrapped
		// to 0 (<=18446744073709551615 was <0.0.0 and took nothing).
		"<=18446744073709551615":       `"<=18446744073709551615": 18446744073709551615 is the largest number a version part may have, and this range needs the next one`,
		"18446744073709551615":         "is the largest number a version part may have",
		">1.18446744073709551615":      `">1.18446744073709551615": 18446744073709551615 is the largest number`,
		"~1.2.18446744073709551615":    "",
		"^0.0.18446744073709551615":    `"^0.0.18446744073709551615": 18446744073709551615 is the largest number`,
		"18446744073709551616":         `"18446744073709551616" is not a version`,
		"1.18446744073709551615 - 2.x": "",
	} {
		if want == "" {
			continue
		}
		_, err := ParseConstraint(c)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", c, err, want)
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
