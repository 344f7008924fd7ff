// Package validate checks names and keys as the Kubernetes apiserver and
// Porch check them, without depending on apimachinery (the functions stay
// small). Each check returns "" when the value is valid, else what is wrong,
// phrased to follow the field: "`metadata.name` " + msg.
package validate

import (
	"fmt"
	"strings"
)

// DNS1123Subdomain checks an object name: at most 253 characters, lower-case
// letters, digits, '-' and '.', each dot-separated part starting and ending
// with a letter or digit. Repository, PackageVariant and most object names.
func DNS1123Subdomain(s string) string {
	switch {
	case s == "":
		return "must not be empty"
	case len(s) > 253:
		return fmt.Sprintf("must be at most 253 characters, found %d", len(s))
	}
	for _, part := range strings.Split(s, ".") {
		if !dnsLabel(part) {
			return fmt.Sprintf("must be a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', starting and ending with a letter or digit), found %q", s)
		}
	}
	return ""
}

// DNS1123Label checks a namespace (or any name the apiserver takes as a
// DNS-1123 label): "" when valid, else why not.
func DNS1123Label(s string) string {
	if dnsLabel(s) {
		return ""
	}
	return fmt.Sprintf("must be a DNS-1123 label (at most 63 lower-case letters, digits or '-', starting and ending with a letter or digit), found %q", s)
}

func dnsLabel(s string) bool {
	if s == "" || len(s) > 63 || !lowerAlnum(s[0]) || !lowerAlnum(s[len(s)-1]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !lowerAlnum(c) && c != '-' {
			return false
		}
	}
	return true
}

func lowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

func alnum(c byte) bool { return lowerAlnum(c) || c >= 'A' && c <= 'Z' }

// QualifiedName checks a label or annotation key: an optional DNS-1123
// subdomain prefix and "/", then a name of at most 63 characters of letters,
// digits, '-', '_' and '.', starting and ending with a letter or digit.
func QualifiedName(s string) string {
	prefix, name, hasPrefix := strings.Cut(s, "/")
	if !hasPrefix {
		prefix, name = "", s
	} else if prefix == "" {
		return fmt.Sprintf("must have a prefix before '/', found %q", s)
	} else if msg := DNS1123Subdomain(prefix); msg != "" {
		return fmt.Sprintf("must have a DNS-1123 subdomain as its prefix, found %q", s)
	}
	if !qualifiedPart(name) {
		return fmt.Sprintf("must be a qualified name (at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, with an optional DNS subdomain prefix and '/'), found %q", s)
	}
	return ""
}

func qualifiedPart(s string) bool {
	if s == "" || len(s) > 63 || !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !alnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// LabelValue checks a label value: empty, or at most 63 letters, digits, '-',
// '_' and '.', starting and ending with a letter or digit.
func LabelValue(s string) string {
	if s == "" || qualifiedPart(s) {
		return ""
	}
	return fmt.Sprintf("must be a label value (empty, or at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit), found %q", s)
}

// PackagePath checks a package path as Porch does (its ValidPkgRevObjName):
// '/'-separated segments, each a DNS-1123 label (lower-case letters, digits
// and '-', starting and ending with a letter or digit, at most 63
// characters). So no segment is empty, ".", "..", ".git", hidden, "HEAD", or
// anything a git ref or a directory name would read otherwise ("a.lock",
// "a@{b", "-x"). Porch joins the path with dots into object names; pvkit
// keeps its own names within 253 characters where it builds them.
func PackagePath(s string) string {
	switch {
	case s == "":
		return "must not be empty"
	case len(s) > 1024:
		return fmt.Sprintf("must be at most 1024 characters, found %d", len(s))
	case strings.HasPrefix(s, "/"):
		return fmt.Sprintf("must be a relative path, found %q", s)
	}
	for _, seg := range strings.Split(s, "/") {
		switch {
		case seg == "":
			return fmt.Sprintf("must not have an empty segment, found %q", s)
		case seg == "." || seg == "..":
			return fmt.Sprintf("must not have a %q segment, found %q", seg, s)
		case !dnsLabel(seg):
			return fmt.Sprintf("must be '/'-separated DNS-1123 labels (lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters each), as Porch requires; segment %q is not, in %q", seg, s)
		}
	}
	return ""
}

// FilePath (rule: no-dotgit) checks the path of a file inside a package,
// wherever pvkit reads
// one from git or Porch or writes one to git, Porch or a directory: relative,
// '/'-separated, no empty, "." or ".." segment, no control character or
// backslash, no segment git would take for its own directory (GitDirName:
// ".git" in any case, HFS+ and NTFS spellings), which would turn a checkout
// into a repository whose configuration runs commands, and no .gitmodules in
// any spelling (GitModulesName).
func FilePath(s string) string {
	switch {
	case s == "":
		return "must not be empty"
	case len(s) > 4096:
		return fmt.Sprintf("must be at most 4096 characters, found %d", len(s))
	case strings.HasPrefix(s, "/"):
		return fmt.Sprintf("must be a relative path, found %q", s)
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f || c == '\\' {
			return fmt.Sprintf("must not contain %q, found %q", c, s)
		}
	}
	for _, seg := range strings.Split(s, "/") {
		switch seg {
		case "":
			return fmt.Sprintf("must not have an empty segment, found %q", s)
		case ".", "..":
			return fmt.Sprintf("must not have a %q segment, found %q", seg, s)
		}
		if GitDirName(seg) {
			return fmt.Sprintf("must not have a segment git reads as its own directory (%q), found %q", seg, s)
		}
		if GitModulesName(seg) {
			return fmt.Sprintf("must not have a segment git reads as its .gitmodules (%q), found %q", seg, s)
		}
	}
	return ""
}

// GitDirName reports whether a path segment names git's own directory on
// some file system, as git itself refuses such names in a tree (fsck's
// hasDotgit; core.protectHFS and core.protectNTFS, on by default on macOS
// and Windows):
//   - ".git" in any case (case-insensitive file systems);
//   - HFS+: ".git" with code points HFS+ ignores anywhere in it (U+200C to
//     U+200F, U+202A to U+202E, U+206A to U+206F, U+FEFF);
//   - NTFS: ".git" or its 8.3 short name "git~1", followed only by spaces
//     and dots (which Windows drops), or by a ':' (an alternate data
//     stream: ".git::$INDEX_ALLOCATION" is the directory itself).
//
// A checkout that holds such a name on that file system holds a .git
// directory whose configuration runs commands.
func GitDirName(seg string) bool {
	return hfsFold(seg) == ".git" || ntfsName(seg, ".git", "git~1", "")
}

// GitModulesName reports whether a path segment is ".gitmodules" in any
// spelling git refuses or reads as it (the same HFS+ and NTFS forms, and
// the short names "gitmod~1" to "gitmod~4" and Windows' hashed
// "gi7eba~N"). git reads submodule URLs from it, and fsck refuses a
// .gitmodules it cannot trust; no kpt package holds one, so pvkit refuses
// it in every spelling.
func GitModulesName(seg string) bool {
	return hfsFold(seg) == ".gitmodules" || ntfsName(seg, ".gitmodules", "gitmod~", "gi7eba~")
}

// hfsFold is seg as HFS+ compares it: the code points it ignores removed,
// ASCII letters in lower case.
func hfsFold(seg string) string {
	var b strings.Builder
	for _, r := range seg {
		switch {
		case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
			continue
		case r >= 'A' && r <= 'Z':
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ntfsName reports whether seg is, on NTFS, the file long (".git"), its
// short name (short: "git~1" exactly, or with shortN, a prefix followed by
// a digit from 1 to 4), or hashed (a prefix followed by any digit from 1
// to 9), each followed only by spaces and dots up to its end or a ':'.
func ntfsName(seg, long, short, hashed string) bool {
	l := strings.ToLower(seg)
	rest := ""
	switch {
	case strings.HasPrefix(l, long):
		rest = l[len(long):]
	case strings.HasSuffix(short, "~") && len(l) > len(short) && strings.HasPrefix(l, short) && l[len(short)] >= '1' && l[len(short)] <= '4':
		rest = l[len(short)+1:]
	case !strings.HasSuffix(short, "~") && strings.HasPrefix(l, short):
		rest = l[len(short):]
	case hashed != "" && len(l) > len(hashed) && strings.HasPrefix(l, hashed) && l[len(hashed)] >= '1' && l[len(hashed)] <= '9':
		rest = l[len(hashed)+1:]
	default:
		return false
	}
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case ' ', '.':
		case ':':
			return true
		default:
			return false
		}
	}
	return true
}

// Labels checks a map of labels: every key a qualified name and every value
// a label value. It returns one message per problem, keys in order, each
// naming the field under field ("metadata.labels").
func Labels(field string, m map[string]string) []string {
	var out []string
	for _, k := range sorted(m) {
		if msg := QualifiedName(k); msg != "" {
			out = append(out, fmt.Sprintf("`%s` key %s", field, msg))
		}
		if msg := LabelValue(m[k]); msg != "" {
			out = append(out, fmt.Sprintf("`%s.%s` %s", field, k, msg))
		}
	}
	return out
}

// Annotations checks the keys of a map of annotations, and their size
// together.
func Annotations(field string, m map[string]string) []string {
	var out []string
	size := 0
	for _, k := range sorted(m) {
		if msg := QualifiedName(k); msg != "" {
			out = append(out, fmt.Sprintf("`%s` key %s", field, msg))
		}
		size += len(k) + len(m[k])
	}
	if size > MaxAnnotationsSize {
		out = append(out, fmt.Sprintf("`%s` are %d bytes together (keys and values), at most %d, as the API server bounds them", field, size, MaxAnnotationsSize))
	}
	return out
}

// MaxAnnotationsSize bounds an object's annotations, keys and values
// together, as the API server does (apimachinery's
// TotalAnnotationSizeLimitB).
const MaxAnnotationsSize = 256 << 10

func sorted(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ { // insertion sort: no sort import for a few keys
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}
