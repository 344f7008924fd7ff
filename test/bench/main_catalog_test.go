package bench

import (
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
)

// TestMain makes the kpt catalog functions available to pvctl run's
// render: the examples' pipelines use them.
func TestMain(m *testing.M) { fntest.MainWithCatalog(m) }
