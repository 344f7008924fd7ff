package pvsexpand

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"
)

const maxNameLength = 63

// ChildName is the name of the PackageVariant a set generates for a
// downstream: `<set>-<repo>-<package>` as in Porch (rule: porch-names); longer than 63
// characters it becomes the first 54 as they are (a trailing "-" stays),
// "-" and the first 8 hex digits of the SHA-1 of the full identifier, so a
// fleet Porch converged keeps its children's names. Only a cut ending in "."
// is trimmed: Porch's name would then have a label starting with "-", which
// the apiserver refuses. Rule porch-names: Porch uses the identifier even when
// it is not a valid object name (a nested package "a/b", upper case); pvkit
// then lower-cases it, turns every other character into "-" and always adds
// the hash, so two downstreams never share a name.
func ChildName(set, repo, pkg string) string {
	id := set + "-" + repo + "-" + pkg
	if validName(id) {
		if len(id) <= maxNameLength {
			return id
		}
		if n := id[:54] + "-" + hash(id); validName(n) {
			return n
		}
		return trimEnd(id[:54]) + "-" + hash(id)
	}
	s := sanitise(id)
	if len(s) > 54 {
		s = trimEnd(s[:54])
	}
	return s + "-" + hash(id)
}

func hash(id string) string {
	sum := sha1.Sum([]byte(id))
	return hex.EncodeToString(sum[:])[:8]
}

// validName reports whether s is a DNS-1123 subdomain made of labels that
// start and end with a letter or digit.
func validName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || !alnum(label[0]) || !alnum(label[len(label)-1]) {
			return false
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !alnum(c) && c != '-' {
				return false
			}
		}
	}
	return true
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// sanitise lower-cases s and turns runs of other characters into one "-".
func sanitise(s string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(s) {
		if c < 128 && alnum(byte(c)) {
			b.WriteRune(c)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.Trim(b.String(), "-")
}

// trimEnd drops trailing characters a name may not end with.
func trimEnd(s string) string { return strings.TrimRight(s, "-.") }
