package main

import (
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/pkg/packagecontext"
)

func TestGolden(t *testing.T) {
	fntest.Run(t, "testdata", "package-context", packagecontext.Process)
}
