package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pvkit/pvkit/internal/fntest"
)

// imagesEnabled is set by `make test` when `docker info` works (after
// `make images` built the images from the current code).
func imagesEnabled(t *testing.T) {
	if os.Getenv("PVKIT_IMAGE_TESTS") == "" {
		t.Skip("image tests need PVKIT_IMAGE_TESTS=1 and fresh images (make test sets both when Docker works)")
	}
}

// TestImages runs every kpt case again with the functions' images and
// requires exactly the exec runs' results: the same package, byte for byte,
// the same kpt output, and the same failures.
func TestImages(t *testing.T) {
	needKpt(t)
	imagesEnabled(t)
	for _, c := range cases {
		c := c
		c.images, c.expect = true, c.name
		if c.pkg == "examples/render/app" {
			c.pkg = "examples/render-images/app" // its pipeline names the images
		}
		t.Run(c.name, func(t *testing.T) { runCase(t, c) })
	}
}

// The image example differs from the exec example only in exec/image lines,
// so the image render is checked against the exec render's expectations.
func TestRenderExamplesAgree(t *testing.T) {
	needKpt(t)
	execs := fntest.ReadTree(t, filepath.Join(repoRoot, "examples", "render", "app"))
	images := fntest.ReadTree(t, filepath.Join(repoRoot, "examples", "render-images", "app"))
	for k, v := range images {
		images[k] = fromImages(v)
	}
	for _, m := range []map[string]string{execs, images} { // their kpt e2e runner cases differ by design
		for k := range m {
			if strings.HasPrefix(k, ".expected/") {
				delete(m, k)
			}
		}
	}
	if diff := cmp.Diff(execs, images); diff != "" {
		t.Fatalf("examples/render-images/app must be examples/render/app with images (-exec +images):\n%s", diff)
	}
	if !strings.Contains(fntest.ReadTree(t, filepath.Join(repoRoot, "examples", "render-images", "app"))["Kptfile"], "image: pvkit/config-inject:dev") {
		t.Fatal("examples/render-images/app does not use the images")
	}
}
