package approval

import (
	"strings"
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	ready := Facts{Now: now, Created: now.Add(-time.Hour), VariantReady: true, GatesTrue: true}
	with := func(f Facts, ann map[string]string) Facts { f.Annotations = ann; return f }
	initial := map[string]string{PolicyAnnotation: Initial}
	always := map[string]string{PolicyAnnotation: Always}
	for _, c := range []struct {
		name    string
		f       Facts
		approve bool
		why     string
		err     string
	}{
		{"no policy", ready, false, "no approval.nephio.org/policy annotation", ""},
		{"initial, first revision", with(ready, initial), true, "policy initial met", ""},
		{"initial, already published", func() Facts { f := with(ready, initial); f.PublishedExists = true; return f }(), false, "policy initial: the package has a published revision already", ""},
		{"always, already published", func() Facts { f := with(ready, always); f.PublishedExists = true; return f }(), true, "policy always met", ""},
		{"gates False", func() Facts { f := with(ready, always); f.GatesTrue = false; return f }(), false, "a readiness gate is not True", ""},
		{"variant not Ready", func() Facts { f := with(ready, always); f.VariantReady = false; return f }(), false, "its PackageVariant is not Ready", ""},
		{"a person's edit", func() Facts { f := with(ready, always); f.EditedByPerson = true; return f }(), false, "a person changed it", ""},
		{"provenance does not hold", func() Facts {
			f := with(ready, always)
			f.EditedByPerson, f.ProvenanceProblem = true, "the package differs from its provenance statement (pvkit-provenance.yaml): a.yaml (modified)"
			return f
		}(), false, "pvkit.dev/require-provenance: the package differs from its provenance statement (pvkit-provenance.yaml): a.yaml (modified); approve it by hand", ""},
		// Issue 55 #1: a person's newer revision is a person's to replace.
		{"replaces a person's revision", func() Facts {
			f := with(ready, always)
			f.PublishedExists, f.Replaces = true, "d.app.scale-up (revision 2)"
			return f
		}(), false, "a person decides whose content wins: publishing it would replace d.app.scale-up (revision 2)", ""},
		{"delay not met", with(ready, map[string]string{PolicyAnnotation: Initial, DelayAnnotation: "2h"}), false, "approval.nephio.org/delay 2h0m0s: created 1h0m0s ago", ""},
		{"delay met", with(ready, map[string]string{PolicyAnnotation: Initial, DelayAnnotation: "30m"}), true, "policy initial met", ""},
		// Issue 27 #4: an unknown creation time never satisfies a delay.
		{"delay, creation unknown", func() Facts {
			f := with(ready, map[string]string{PolicyAnnotation: Always, DelayAnnotation: "1m"})
			f.Created = time.Time{}
			return f
		}(), false, "approval.nephio.org/delay 1m0s: the draft's creation time is unknown", ""},
		{"no delay, creation unknown", func() Facts { f := with(ready, always); f.Created = time.Time{}; return f }(), true, "policy always met", ""},
		{"unknown policy", with(ready, map[string]string{PolicyAnnotation: "sometimes"}), false, "", `invalid approval.nephio.org/policy annotation "sometimes": want "initial" or "always"`},
		{"bad delay", with(ready, map[string]string{PolicyAnnotation: Initial, DelayAnnotation: "soon"}), false, "", `invalid approval.nephio.org/delay annotation "soon": time: invalid duration "soon"`},
		{"negative delay", with(ready, map[string]string{PolicyAnnotation: Initial, DelayAnnotation: "-1m"}), false, "", "a delay must be 0 or more"},
	} {
		d, err := Decide(c.f)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err = %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || d.Approve != c.approve || !strings.HasPrefix(d.Why, c.why) {
			t.Errorf("%s: %+v, %v; want approve=%v, %q", c.name, d, err, c.approve, c.why)
		}
	}
}

func TestEditedSince(t *testing.T) {
	for _, c := range []struct {
		last, now string
		want      bool
	}{{"", "sha256:a", true}, {"sha256:a", "sha256:a", false}, {"sha256:a", "sha256:b", true}} {
		if got := EditedSince(c.last, c.now); got != c.want {
			t.Errorf("EditedSince(%q, %q) = %v", c.last, c.now, got)
		}
	}
}
