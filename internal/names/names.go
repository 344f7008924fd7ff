// Package names says lists of names in messages: every name up to a
// bound, then how many more, so that a message stays short whatever the
// fleet.
package names

import (
	"fmt"
	"strings"
)

// Listed joins names with ", ": at most max of them, and the count of the
// rest ("a, b and 3 more").
func Listed(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:max], ", "), len(names)-max)
}
