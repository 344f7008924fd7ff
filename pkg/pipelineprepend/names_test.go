package pipelineprepend

import "testing"

func TestOwns(t *testing.T) {
	tests := []struct {
		owner, name string
		want        bool
	}{
		{"my-pv", "PackageVariant.my-pv.set-ns.0", true},
		{"my-pv", "PackageVariant.my-pv..12", true},
		{"my.pv", "PackageVariant.my.pv.set.ns.0", true},
		{"my.pv", "PackageVariant.my.pv..3", true},
		{"my-pv", "PackageVariant.my-pv.a.b.c.7", true},
		{"my-pv", "PackageVariant.my-pv-2.set-ns.0", false},
		{"my-pv", "PackageVariant.other.set-ns.0", false},
		{"my-pv", "PackageVariant.my-pv.set-ns.x", false},
		{"my-pv", "PackageVariant.my-pv.set-ns.", false},
		{"my-pv", "PackageVariant.my-pv.set-ns.-1", false},
		{"my-pv", "PackageVariant.my-pv.0", false},
		{"my-pv", "packagevariant.my-pv.set-ns.0", false},
		{"my-pv", "set-ns", false},
		{"my-pv", "", false},
	}
	for _, tt := range tests {
		if got := Owns(tt.owner, tt.name); got != tt.want {
			t.Errorf("Owns(%q, %q) = %v, want %v", tt.owner, tt.name, got, tt.want)
		}
	}
}

func TestFunctionNameIsOwned(t *testing.T) {
	for _, owner := range []string{"pv", "my.pv", "a.b.c"} {
		for _, fn := range []string{"", "set-ns", "set.ns", "a.1"} {
			name := FunctionName(owner, fn, 4)
			if !Owns(owner, name) {
				t.Errorf("Owns(%q, FunctionName(%q, %q, 4) = %q) = false", owner, owner, fn, name)
			}
		}
	}
	if got := FunctionName("my-pv", "", 1); got != "PackageVariant.my-pv..1" {
		t.Errorf("unnamed function name = %q", got)
	}
}
