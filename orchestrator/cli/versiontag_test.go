package cli

import "testing"

// publish --tag takes a semantic version as Masterminds reads it
// strictly, with or without its v; never a revision's own vN.
func TestVersionTags(t *testing.T) {
	for tag, want := range map[string]bool{
		"v1.4.2": true, "1.4.2": true, "v1.4.2-rc.1": true, "1.4.2+build.7": true,
		"v1": false, "v1.4": false, "v01.4.2": false, "1.4.2-": false, "latest": false, "v1.4.2-x..y": false,
		"v1.4.2-" + "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa": false, // 65 characters of pre-release
	} {
		if got := isVersionTag(tag); got != want {
			t.Errorf("isVersionTag(%q) = %v, want %v", tag, got, want)
		}
	}
}
