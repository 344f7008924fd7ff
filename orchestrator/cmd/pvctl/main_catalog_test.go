package main

import (
	"testing"

	"github.com/pvkit/pvkit/orchestrator/fnruntime"

	"github.com/pvkit/pvkit/internal/fntest"
)

// TestMain makes the kpt catalog functions available to pvctl run's
// render: the examples' pipelines use them.
func TestMain(m *testing.M) {
	fnruntime.ServeCatalogIfWorker() // this binary runs pvkit's catalog functions, as pvctl does
	fntest.MainWithCatalog(m)
}
