package main

import (
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/pkg/pvsexpand"
)

func TestGolden(t *testing.T) {
	fntest.Run(t, "testdata", "pvs-expand", pvsexpand.Process)
}
