package main

import (
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/pkg/packagecontext"
)

func TestGolden(t *testing.T) {
	fntest.Run(t, "testdata", "package-context", packagecontext.Process)
}

// The same cases in the SDK's layout, run by the SDK's own harness
// (testhelpers.RunGoldenTests); PVKIT_UPDATE_GOLDEN=1 WRITE_GOLDEN_OUTPUT=1
// regenerates them.
func TestSDKLayout(t *testing.T) {
	fntest.RunSDKLayout(t, "testdata", fntest.SDKDir, "package-context", packagecontext.Process)
}
