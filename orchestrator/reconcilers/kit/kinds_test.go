package kit

import (
	"testing"

	"github.com/pvkit/pvkit/pkg/krm"
)

func TestReadableKinds(t *testing.T) {
	var def ReadableKinds // the zero value is the default list
	team := "example.com"
	for _, tt := range []struct {
		k    ReadableKinds
		gvk  krm.GVK
		want bool
	}{
		{def, krm.GVK{APIVersion: "v1", Kind: "ConfigMap"}, true},
		{def, krm.GVK{APIVersion: "example.com/v1", Kind: "Team"}, true},
		{def, krm.GVK{APIVersion: "example.com/v2", Kind: "Team"}, true}, // any version
		{def, krm.GVK{APIVersion: "v1", Kind: "Secret"}, false},
		{def, krm.GVK{APIVersion: "other.com/v1", Kind: "Team"}, false},
	} {
		if got := tt.k.Allows(tt.gvk); got != tt.want {
			t.Errorf("Allows(%s) = %v", tt.gvk, got)
		}
	}
	if !def.AllowsKind(nil, "Team") || !def.AllowsKind(&team, "Team") || def.AllowsKind(nil, "Secret") {
		t.Error("AllowsKind")
	}
	if def.String() != "ConfigMap, Team.example.com" {
		t.Errorf("String() = %q", def.String())
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
		"the package has an injection point of kind v1 Secret, a kind pvkit may not read (allowed: ConfigMap, Team.example.com); an operator allows more with --readable-kinds and a matching RBAC rule" {
		t.Errorf("Refuse = %q", msg)
	}
}
