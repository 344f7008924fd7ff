package state

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Issue 42 #3: pvctl's controls are one map (Controls); a state file from
// before it (suspended, rollouts) is read into it and written without
// them.
func TestControlsFoldEarlierStateFiles(t *testing.T) {
	old := "suspended:\n- PackageVariant/app-staging\nrollouts:\n  app:\n    pvkit.dev/rollout-pause: \"true\"\n"
	s, err := Parse("pvctl-state.yaml", []byte(old))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]string{
		"PackageVariant/app-staging": {SuspendAnnotation: "true"},
		"PackageVariantSet/app":      {"pvkit.dev/rollout-pause": "true"},
	}
	if !reflect.DeepEqual(s.Controls, want) || s.Suspended != nil || s.Rollouts != nil {
		t.Fatalf("controls %v, suspended %v, rollouts %v", s.Controls, s.Suspended, s.Rollouts)
	}
	s.SetControl("PackageVariantSet/app", "pvkit.dev/rollout-pause", "")
	if _, ok := s.Controls["PackageVariantSet/app"]; ok {
		t.Fatalf("a control removed leaves its object's entry: %v", s.Controls)
	}
	path := filepath.Join(t.TempDir(), File)
	if err := s.Write(path); err != nil {
		t.Fatal(err)
	}
	back, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Controls, map[string]map[string]string{"PackageVariant/app-staging": {SuspendAnnotation: "true"}}) {
		t.Fatalf("written and read: %v", back.Controls)
	}
	bb, _ := os.ReadFile(path)
	b := string(bb)
	if strings.Contains(b, "suspended:") || strings.Contains(b, "rollouts:") {
		t.Fatalf("the earlier fields are written:\n%s", b)
	}
}
