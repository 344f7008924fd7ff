package pvsexpand

import (
	"regexp"
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
)

// Issue 20 #6: pkg/ reads no wall clock and sets no deadline: the callers
// (the controller, the binaries) set them, so what a function computes does
// not depend on how fast the machine is, only on its input and the
// caller's context.
func TestNoWallClockInPkg(t *testing.T) {
	clock := regexp.MustCompile(`time\.(Now|Since|Until|After|Tick|NewTimer|NewTicker)\(|context\.With(Timeout|Deadline)\(`)
	found, err := fntest.CodeMatches("..", clock, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s: a wall clock or deadline in pkg/", f)
	}
}
