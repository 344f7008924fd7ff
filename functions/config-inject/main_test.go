package main

import (
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/pkg/configinject"
)

func TestGolden(t *testing.T) {
	fntest.Run(t, "testdata", "config-inject", configinject.Process)
}
