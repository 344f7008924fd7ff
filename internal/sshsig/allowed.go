package sshsig

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// An allowed_signers file as OpenSSH reads it (ssh-keygen(1), ALLOWED
// SIGNERS; sshsig.c): one key a line, `principals [options] key`, the
// principals a comma-separated list of patterns (`*`, `?`, a leading `!`
// negating one; quoted when it holds a space), the options
// `cert-authority`, `namespaces="..."`, `valid-after="..."` and
// `valid-before="..."` (YYYYMMDD[HHMM[SS]], with a trailing Z or UTC in
// UTC, else local time). An option OpenSSH does not know, one given twice,
// a time that does not parse or valid-before not after valid-after make
// OpenSSH refuse the file; so does pvkit, naming it, when the file is
// read.
type signerLine struct {
	n                       int
	principals              string
	key                     ssh.PublicKey
	ca                      bool
	namespaces              string
	hasNamespaces           bool
	validAfter, validBefore time.Time
}

func parseAllowedSigners(b []byte) ([]signerLine, error) {
	var out []signerLine
	for i, raw := range strings.Split(string(b), "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		l, err := parseSignerLine(i+1, line)
		if err != nil {
			return nil, fmt.Errorf("allowed signers, line %d: %w", i+1, err)
		}
		out = append(out, l)
	}
	return out, nil
}

func parseSignerLine(n int, line string) (signerLine, error) {
	l := signerLine{n: n}
	var rest string
	if strings.HasPrefix(line, `"`) { // a quoted principals list
		end := strings.Index(line[1:], `"`)
		if end < 0 {
			return l, fmt.Errorf("the principals' quote is not closed")
		}
		l.principals, rest = line[1:end+1], line[end+2:]
	} else {
		i := strings.IndexAny(line, " \t")
		if i < 0 {
			return l, fmt.Errorf("no key after the principals")
		}
		l.principals, rest = line[:i], line[i:]
	}
	key, _, options, _, err := ssh.ParseAuthorizedKey([]byte(strings.TrimSpace(rest)))
	if err != nil {
		return l, err
	}
	l.key = key
	seen := map[string]bool{}
	for _, o := range options {
		name, val, hasVal := strings.Cut(o, "=")
		name = strings.ToLower(name)
		if seen[name] {
			return l, fmt.Errorf("option %q is given twice (OpenSSH refuses the file)", name)
		}
		seen[name] = true
		val = strings.Trim(val, `"`)
		switch {
		case name == "cert-authority" && !hasVal:
			l.ca = true
		case name == "namespaces" && hasVal:
			l.namespaces, l.hasNamespaces = val, true
		case (name == "valid-after" || name == "valid-before") && hasVal:
			t, err := absoluteTime(val)
			if err != nil {
				return l, fmt.Errorf("option %s=%q: %w (OpenSSH refuses the file)", name, val, err)
			}
			if name == "valid-after" {
				l.validAfter = t
			} else {
				l.validBefore = t
			}
		default:
			return l, fmt.Errorf("unknown option %q (OpenSSH knows cert-authority, namespaces, valid-after and valid-before, and refuses the file)", o)
		}
	}
	if !l.validAfter.IsZero() && !l.validBefore.IsZero() && !l.validBefore.After(l.validAfter) {
		return l, fmt.Errorf("valid-before is not after valid-after (OpenSSH refuses the file)")
	}
	return l, nil
}

// absoluteTime parses YYYYMMDD, YYYYMMDDHHMM or YYYYMMDDHHMMSS, in UTC
// with a trailing Z or UTC, else in local time, as OpenSSH does.
func absoluteTime(s string) (time.Time, error) {
	loc := time.Local
	switch {
	case len(s) > 1 && strings.EqualFold(s[len(s)-1:], "Z"):
		s, loc = s[:len(s)-1], time.UTC
	case len(s) > 3 && strings.EqualFold(s[len(s)-3:], "UTC"):
		s, loc = s[:len(s)-3], time.UTC
	}
	layout := map[int]string{8: "20060102", 12: "200601021504", 14: "20060102150405"}[len(s)]
	if layout == "" {
		return time.Time{}, fmt.Errorf("not YYYYMMDD[HHMM[SS]][Z]")
	}
	t, err := time.ParseInLocation(layout, s, loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("not a time: %v", err)
	}
	return t, nil
}

// allowed checks that a line of the file lets identity ("": any) sign in
// namespace with key pub at time at, as OpenSSH checks it line by line: a
// line whose principals do not match, whose key is another (or a
// cert-authority line: it names a CA, never a plain key), whose
// namespaces exclude namespace or whose validity excludes at is passed
// over; the error names why the last line with this key was.
func allowed(lines []signerLine, pub ssh.PublicKey, identity, namespace string, at time.Time) error {
	why := ""
	for _, l := range lines {
		if identity != "" && !matchList(identity, l.principals) {
			continue
		}
		if !bytes.Equal(l.key.Marshal(), pub.Marshal()) {
			continue
		}
		switch {
		case l.ca:
			why = fmt.Sprintf("line %d names the key as a certificate authority (cert-authority), which signs certificates, not statements", l.n)
		case l.hasNamespaces && !matchList(namespace, l.namespaces):
			why = fmt.Sprintf("line %d: the key may sign %q, not %q", l.n, l.namespaces, namespace)
		case !l.validAfter.IsZero() && at.Before(l.validAfter):
			why = fmt.Sprintf("line %d: the key is not valid before %s (valid-after)", l.n, l.validAfter.UTC().Format(time.RFC3339))
		case !l.validBefore.IsZero() && at.After(l.validBefore):
			why = fmt.Sprintf("line %d: the key expired at %s (valid-before)", l.n, l.validBefore.UTC().Format(time.RFC3339))
		default:
			return nil
		}
	}
	if why != "" {
		return fmt.Errorf("allowed signers, %s", why)
	}
	return fmt.Errorf("the signature's key (%s %s) is not an allowed signer for %q", pub.Type(), ssh.FingerprintSHA256(pub), identity)
}

// matchList matches s against a comma-separated list of OpenSSH patterns
// (match_pattern_list): true when a pattern matches and no negated one
// (`!pattern`) does.
func matchList(s, patterns string) bool {
	got := false
	for _, p := range strings.Split(patterns, ",") {
		if neg, ok := strings.CutPrefix(p, "!"); ok {
			if matchPattern(s, neg) {
				return false
			}
			continue
		}
		got = got || matchPattern(s, p)
	}
	return got
}

// matchPattern is OpenSSH's match_pattern: `*` any run of characters, `?`
// one, everything else itself (no classes, no escapes; `/` is nothing
// special).
func matchPattern(s, p string) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			if p == "" {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if matchPattern(s[i:], p) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
			s, p = s[1:], p[1:]
		default:
			if s == "" || s[0] != p[0] {
				return false
			}
			s, p = s[1:], p[1:]
		}
	}
	return s == ""
}
