package validate

import (
	"fmt"
	"regexp"
	"strings"
)

// imageRef is the grammar of a container image reference (the
// distribution project's): an optional registry (host components, an
// optional port), lower-case path components joined by '.', '_', "__" or
// dashes, then an optional tag and an optional digest.
var imageRef = func() *regexp.Regexp {
	const (
		host      = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
		registry  = host + `(?:\.` + host + `)*(?::[0-9]+)?`
		component = `[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*`
		tag       = `[\w][\w.-]{0,127}`
		digest    = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`
	)
	return regexp.MustCompile(`^(?:` + registry + `/)?` + component + `(?:/` + component + `)*(?::` + tag + `)?(?:@` + digest + `)?$`)
}()

// ImageRef checks a function's image: a container image reference, as kpt
// checks a Kptfile's before it renders. A value a container CLI would take
// for one of its flags ("--privileged") is not one.
func ImageRef(s string) string {
	switch {
	case s == "":
		return "must not be empty"
	case len(s) > 512:
		return fmt.Sprintf("must be at most 512 characters, found %d", len(s))
	case !imageRef.MatchString(s):
		return fmt.Sprintf("must be a container image reference ([REGISTRY/]PATH[:TAG][@DIGEST], lower-case path), found %q", s)
	}
	return ""
}

// Image is an image reference taken apart: the name (registry and path:
// everything before the tag and the digest), the tag and the digest.
type Image struct {
	Name, Tag, Digest string
}

// ParseImage takes an image reference apart: the digest after '@', the
// tag after the last ':' that follows the last '/' (a ':' before it is a
// registry's port). It is the one parse of image references pvkit has
// (validation, the catalog, the function runtime); it checks nothing:
// ImageRef does, on top of it.
func ParseImage(s string) Image {
	var img Image
	if i := strings.IndexByte(s, '@'); i >= 0 {
		s, img.Digest = s[:i], s[i+1:]
	}
	if i := strings.LastIndexByte(s, ':'); i > strings.LastIndexByte(s, '/') {
		s, img.Tag = s[:i], s[i+1:]
	}
	img.Name = s
	return img
}

// Suffix is the tag and digest as a reference writes them after the name
// (":tag", "@digest", ":tag@digest"; "" for neither).
func (i Image) Suffix() string {
	s := ""
	if i.Tag != "" {
		s = ":" + i.Tag
	}
	if i.Digest != "" {
		s += "@" + i.Digest
	}
	return s
}
