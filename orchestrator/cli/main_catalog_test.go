package cli

import (
	"fmt"
	"os"
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
)

// TestMain makes the kpt catalog functions available to pvctl run's
// render (fntest.EnsureCatalog): the examples' pipelines use them.
func TestMain(m *testing.M) {
	if err := fntest.EnsureCatalog(); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
