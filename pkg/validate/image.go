package validate

import (
	"fmt"
	"regexp"
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
