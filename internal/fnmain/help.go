package fnmain

import (
	"fmt"
	"strings"
)

// Help is a function's --help text, from the sections of its README that
// kpt's catalog marks for its generated docs (mdtogo): the first sentence
// of `<!--mdtogo:Short-->`, the `<!--mdtogo:Long-->` text (what it does,
// how to run it, its config kinds and every field) and the
// `<!--mdtogo:Examples-->`, each ended by `<!--mdtogo-->`, laid out as a
// cobra command's help is. `kpt fn doc` runs the function with --help and
// prints what it says; the binary carries its README (go:embed), so the two
// never disagree. A README without the three sections is an error naming
// the one missing.
func Help(name, readme string) (string, error) {
	var parts [3]string
	for i, marker := range []string{"Short", "Long", "Examples"} {
		start := "<!--mdtogo:" + marker + "-->"
		_, rest, ok := strings.Cut(readme, start)
		if !ok {
			return "", fmt.Errorf("%s's README has no %s section", name, start)
		}
		body, _, ok := strings.Cut(rest, "<!--mdtogo-->")
		if !ok {
			return "", fmt.Errorf("%s's README: the %s section does not end (<!--mdtogo-->)", name, start)
		}
		parts[i] = strings.TrimSpace(body)
	}
	short := strings.Join(strings.Fields(parts[0]), " ")
	if i := strings.Index(short, ". "); i >= 0 {
		short = short[:i+1]
	}
	return fmt.Sprintf("%s\n\n%s\n\nUsage:\n  kpt fn eval --image pvkit/%s:dev --fn-config CONFIG DIR\n  %s --help\n\nExamples:\n\n%s\n", short, parts[1], name, name, parts[2]), nil
}

// wantsHelp reports whether the arguments ask for the help (kpt fn doc
// runs the image with --help).
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "--help" || a == "-h" {
			return true
		}
	}
	return false
}
