package pvsexpand

import "testing"

func TestChildName(t *testing.T) {
	tests := []struct{ set, repo, pkg, want string }{
		{"example", "cluster-01", "foo", "example-cluster-01-foo"},
		// Porch v1.5.3's own verified example (PVSCT:145).
		{"my-pvs", "dnrepo4", "supersupersuperloooooooooooooooooooooooooooooooooooooooooooooooooongpkgname",
			"my-pvs-dnrepo4-supersupersuperlooooooooooooooooooooooo-bec36506"},
		// Valid names keep their dots, as in Porch.
		{"s", "r", "a.b", "s-r-a.b"},
		// Invalid names are sanitised and always hashed (rule: porch-names).
		{"s", "r", "a/b", "s-r-a-b-" + hash("s-r-a/b")},
		{"s", "r", "a-b", "s-r-a-b"},
		{"S", "Repo", "Pkg_1", "s-repo-pkg-1-" + hash("S-Repo-Pkg_1")},
		// A cut ending in "-" stays as it is, as in Porch (rule: porch-names): "--" before the hash.
		{"long-set-name", "cluster-repository-01", "package-name-that-is-quite-a-bit-long",
			"long-set-name-cluster-repository-01-package-name-that-" + "-" + hash("long-set-name-cluster-repository-01-package-name-that-is-quite-a-bit-long")},
		// A cut ending in "." is trimmed before the hash: Porch's name would be invalid.
		{"x", "r", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbbbb",
			"x-r-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-" + hash("x-r-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbbbb")},
	}
	for _, tt := range tests {
		got := ChildName(tt.set, tt.repo, tt.pkg)
		if got != tt.want {
			t.Errorf("ChildName(%q, %q, %q) = %q, want %q", tt.set, tt.repo, tt.pkg, got, tt.want)
		}
		if !validName(got) || len(got) > maxNameLength {
			t.Errorf("ChildName(%q, %q, %q) = %q is not a valid name of at most 63 characters", tt.set, tt.repo, tt.pkg, got)
		}
	}
}
