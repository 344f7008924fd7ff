package main

import (
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/pkg/configinject"
)

func TestGolden(t *testing.T) {
	fntest.Run(t, "testdata", "config-inject", configinject.Process)
}

// The same cases in the SDK's layout, run by the SDK's own harness
// (testhelpers.RunGoldenTests); PVKIT_UPDATE_GOLDEN=1 WRITE_GOLDEN_OUTPUT=1
// regenerates them.
func TestSDKLayout(t *testing.T) {
	fntest.RunSDKLayout(t, "testdata", fntest.SDKDir, "config-inject", configinject.Process)
}
