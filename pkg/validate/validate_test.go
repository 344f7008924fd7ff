package validate

import (
	"fmt"
	"strings"
	"testing"
)

func TestChecks(t *testing.T) {
	long := strings.Repeat("a", 64)
	for _, tt := range []struct {
		name  string
		check func(string) string
		in    string
		ok    bool
	}{
		{"subdomain", DNS1123Subdomain, "edge-useast1.app", true},
		{"subdomain", DNS1123Subdomain, "../evil", false},
		{"subdomain", DNS1123Subdomain, "../../x", false},
		{"subdomain", DNS1123Subdomain, "Upper", false},
		{"subdomain", DNS1123Subdomain, "a..b", false},
		{"subdomain", DNS1123Subdomain, "-a", false},
		{"subdomain", DNS1123Subdomain, "", false},
		{"subdomain", DNS1123Subdomain, strings.Repeat("a.", 127), false},
		{"qualified", QualifiedName, "app.kubernetes.io/name", true},
		{"qualified", QualifiedName, "env", true},
		{"qualified", QualifiedName, "Team_1.x", true},
		{"qualified", QualifiedName, "bad key", false},
		{"qualified", QualifiedName, "/x", false},
		{"qualified", QualifiedName, "a/b/c", false},
		{"qualified", QualifiedName, "UPPER.io/x", false},
		{"qualified", QualifiedName, long, false},
		{"label value", LabelValue, "", true},
		{"label value", LabelValue, "prod-1", true},
		{"label value", LabelValue, "a b", false},
		{"label value", LabelValue, long, false},
		{"package", PackagePath, "app", true},
		{"package", PackagePath, "team/app-v2", true},
		{"package", PackagePath, "../../../tmp/pwn", false},
		{"package", PackagePath, "/abs", false},
		{"package", PackagePath, "a//b", false},
		{"package", PackagePath, "a/./b", false},
		{"package", PackagePath, "a/.git/b", false},
		{"package", PackagePath, "infra/capi/cluster-capi-kind", true},
		{"package", PackagePath, "a,b", false}, // Porch: DNS-1123 labels only
		{"package", PackagePath, "a\nb", false},
		{"package", PackagePath, "", false},
		// Issue 18 #11: each passed the old rule and then broke git or Porch.
		{"package", PackagePath, "a.lock", false},
		{"package", PackagePath, ".hidden", false},
		{"package", PackagePath, "a@{b", false},
		{"package", PackagePath, "A", false},
		{"package", PackagePath, "ü", false},
		{"package", PackagePath, "HEAD", false},
		{"package", PackagePath, "-x", false},
		{"package", PackagePath, "@", false},
		{"package", PackagePath, "team/" + long, false},
		{"file", FilePath, "Kptfile", true},
		{"file", FilePath, "sub/dir/.gitignore", true},
		{"file", FilePath, ".github/workflows/x.yaml", true},
		{"file", FilePath, "README.md", true},
		// Issue 18 #1: a package file that makes a checkout a repository.
		{"file", FilePath, ".git/config", false},
		{"file", FilePath, "app/.git/HEAD", false},
		{"file", FilePath, "app/.GIT/config", false},
		{"file", FilePath, "app/.git./config", false},
		{"file", FilePath, "app/.git /config", false},
		{"file", FilePath, "GIT~1/config", false},
		{"file", FilePath, "../x", false},
		{"file", FilePath, "a/../x", false},
		{"file", FilePath, "/etc/passwd", false},
		{"file", FilePath, "a//b", false},
		{"file", FilePath, "a\\b", false},
		{"file", FilePath, "a\x00b", false},
		{"file", FilePath, "", false},
	} {
		if msg := tt.check(tt.in); (msg == "") != tt.ok {
			t.Errorf("%s(%q) = %q, want ok=%v", tt.name, tt.in, msg, tt.ok)
		}
	}
	if got := Labels("spec.labels", map[string]string{"ok": "v", "bad key": "v", "k": "bad value"}); len(got) != 2 ||
		got[0] != "`spec.labels` key must be a qualified name (at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, with an optional DNS subdomain prefix and '/'), found \"bad key\"" ||
		!strings.HasPrefix(got[1], "`spec.labels.k` must be a label value") {
		t.Errorf("Labels = %q", got)
	}
	if got := Annotations("metadata.annotations", map[string]string{"a b": "anything at all"}); len(got) != 1 {
		t.Errorf("Annotations = %q", got)
	}
}

func TestImageRef(t *testing.T) {
	for _, ok := range []string{
		"gcr.io/kpt-fn/set-namespace:v0.4.1",
		"ghcr.io/kptdev/krm-functions-catalog/apply-replacements:v0.1.1",
		"localhost:5000/pvkit/package-context",
		"example.com/pvkit/config-inject@sha256:" + strings.Repeat("a", 64),
		"ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4.5@sha256:" + strings.Repeat("0", 64),
		"set-namespace", "my_org/fn__x", "a-b--c/d",
	} {
		if msg := ImageRef(ok); msg != "" {
			t.Errorf("ImageRef(%q) = %q, want valid", ok, msg)
		}
	}
	for bad, want := range map[string]string{
		"":                       "must not be empty",
		"--privileged":           `found "--privileged"`,
		"-v=/:/host":             `found "-v=/:/host"`,
		"gcr.io/kpt-fn/Upper:v1": `found "gcr.io/kpt-fn/Upper:v1"`,
		"gcr.io/kpt-fn/x:v1 -v":  `found "gcr.io/kpt-fn/x:v1 -v"`,
		"gcr.io//x":              `found "gcr.io//x"`,
		"x@sha256:abc":           `found "x@sha256:abc"`,
		strings.Repeat("a", 513): "must be at most 512 characters, found 513",
	} {
		if msg := ImageRef(bad); !strings.Contains(msg, want) {
			t.Errorf("ImageRef(%q) = %q, want %q", bad, msg, want)
		}
	}
}

// Issue 27 #6: every segment git refuses as its own directory or as its
// .gitmodules, in the HFS+ and NTFS spellings (fsck's hasDotgit,
// core.protectHFS, core.protectNTFS), is refused; names that only look
// alike are not.
func TestGitLookAlikes(t *testing.T) {
	refused := map[string]string{
		".git":                    "directory",
		".\u200cgit":              "directory",
		".g\u200dit":              "directory",
		".gi\u200et":              "directory",
		".git\u200f":              "directory",
		"\u202a.git":              "directory",
		".G\u202eIT":              "directory",
		".gi\u206at":              "directory",
		".git\u206f":              "directory",
		"\ufeff.git":              "directory",
		".git::$INDEX_ALLOCATION": "directory",
		".git:":                   "directory",
		".GIT:stream":             "directory",
		"git~1:":                  "directory",
		"GIT~1 . :x":              "directory",
		".git . .":                "directory",
		".gitmodules":             "gitmodules",
		".GITMODULES":             "gitmodules",
		".gitmodules ":            "gitmodules",
		".gitmodules::$DATA":      "gitmodules",
		".gitmod\u200cules":       "gitmodules",
		"gitmod~1":                "gitmodules",
		"GITMOD~4.":               "gitmodules",
		"gi7eba~9":                "gitmodules",
		"gi7eba~1:x":              "gitmodules",
	}
	for seg, what := range refused {
		msg := FilePath("app/" + seg + "/x.yaml")
		want := map[string]string{"directory": "reads as its own directory", "gitmodules": "reads as its .gitmodules"}[what]
		if !strings.Contains(msg, want) || !strings.Contains(msg, fmt.Sprintf("%q", seg)) {
			t.Errorf("FilePath(app/%q/x.yaml) = %q, want %q naming the segment", seg, msg, want)
		}
	}
	for _, seg := range []string{".github", ".gitignore", ".gitattributes", ".git-crypt", "git~2", "git~10", "gitmod~5", "gitmodules", ".gitmodulesx", "gi7eba~0", "x.git", "\u200c"} {
		if msg := FilePath("app/" + seg); msg != "" {
			t.Errorf("FilePath(app/%q) = %q, want ok", seg, msg)
		}
	}
}
