package main

import (
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/pkg/pipelineprepend"
)

func TestGolden(t *testing.T) {
	fntest.Run(t, "testdata", "pipeline-prepend", pipelineprepend.Process)
}
