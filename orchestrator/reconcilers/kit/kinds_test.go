package kit

import (
	"testing"

	"github.com/pvkit/pvkit/pkg/krm"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestReadableKinds(t *testing.T) {
	var def ReadableKinds // the zero value is the default list
	team := "example.com"
	withTeam, err := ParseReadableKinds([]string{"ConfigMap", "Team.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		k    ReadableKinds
		gvk  krm.GVK
		want bool
	}{
		{def, krm.GVK{APIVersion: "v1", Kind: "ConfigMap"}, true},
		// Issue 29 #5: the examples' kind is not a default.
		{def, krm.GVK{APIVersion: "example.com/v1", Kind: "Team"}, false},
		{withTeam, krm.GVK{APIVersion: "example.com/v1", Kind: "Team"}, true},
		{withTeam, krm.GVK{APIVersion: "example.com/v2", Kind: "Team"}, true}, // any version
		{def, krm.GVK{APIVersion: "v1", Kind: "Secret"}, false},
		{withTeam, krm.GVK{APIVersion: "other.com/v1", Kind: "Team"}, false},
	} {
		if got := tt.k.Allows(tt.gvk); got != tt.want {
			t.Errorf("%s: Allows(%s) = %v", tt.k, tt.gvk, got)
		}
	}
	if def.AllowsKind(nil, "Team") || !withTeam.AllowsKind(nil, "Team") || !withTeam.AllowsKind(&team, "Team") || withTeam.AllowsKind(nil, "Secret") {
		t.Error("AllowsKind")
	}
	if def.String() != "ConfigMap" || withTeam.String() != "ConfigMap, Team.example.com" {
		t.Errorf("String() = %q, %q", def, withTeam)
	}
	k, err := ParseReadableKinds([]string{"Secret", " Cluster.infra.example.com ", ""})
	if err != nil || !k.Allows(krm.GVK{APIVersion: "v1", Kind: "Secret"}) || k.Allows(krm.GVK{APIVersion: "v1", Kind: "ConfigMap"}) ||
		!k.Allows(krm.GVK{APIVersion: "infra.example.com/v1beta1", Kind: "Cluster"}) {
		t.Errorf("explicit list: %v, %v", k, err)
	}
	for _, bad := range []string{"*", "*.example.com", "configmap", "v1/ConfigMap", "Config Map"} {
		if _, err := ParseReadableKinds([]string{bad}); err == nil {
			t.Errorf("%q must be refused", bad)
		}
	}
	if msg := def.Refuse("KindNotAllowed", "the package has an injection point of kind v1 Secret").Error(); msg !=
		"the package has an injection point of kind v1 Secret, a kind pvkit may not read (allowed: ConfigMap); an operator allows more with --readable-kinds and a matching RBAC rule" {
		t.Errorf("Refuse = %q", msg)
	}

	// A host says how its user allows more (pvctl: its own flag, no RBAC);
	// a kind allowed later (pvctl's --sync) is allowed to every copy, a
	// Secret never so.
	local := withTeam.WithHint("pvctl run --readable-kinds names more")
	if msg := local.Refuse("KindNotAllowed", "x").Error(); msg != "x, a kind pvkit may not read (allowed: ConfigMap, Team.example.com); pvctl run --readable-kinds names more" {
		t.Errorf("Refuse with a hint = %q", msg)
	}
	local.Allow(schema.GroupKind{Group: "infra.example.com", Kind: "Cluster"})
	local.Allow(schema.GroupKind{Kind: "Secret"})
	if !withTeam.Allows(krm.GVK{APIVersion: "infra.example.com/v1", Kind: "Cluster"}) || withTeam.Allows(krm.GVK{APIVersion: "v1", Kind: "Secret"}) {
		t.Errorf("after Allow: %s", withTeam)
	}
	def.Allow(schema.GroupKind{Kind: "Anything"}) // the zero value has no list to add to
	if def.String() != "ConfigMap" {
		t.Errorf("the default list changed: %s", def)
	}
}
