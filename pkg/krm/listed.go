package krm

import (
	"fmt"
	"strings"
)

// Listed joins names with ", " for a message: at most max of them, and
// the count of the rest ("a, b and 3 more"), so that a message stays short
// whatever the fleet.
func Listed(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:max], ", "), len(names)-max)
}
