// Command release writes a release's manifests into a directory (make
// release): install.yaml, install-without-crds.yaml and
// function-runner-config.yaml (internal/release). It writes nothing unless
// every one of them builds.
//
//	go run ./internal/cmd/release --version v0.1.0 --image-repo ghcr.io/pvkit --out dist
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pvkit/pvkit/internal/release"
)

func main() {
	var o release.Options
	var out string
	flag.StringVar(&o.Root, "root", ".", "the repository root")
	flag.StringVar(&o.Version, "version", "", "the release, vX.Y.Z; VERSION must say it and CHANGELOG.md have its section")
	flag.StringVar(&o.ImageRepo, "image-repo", "pvkit", "the images' prefix: IMAGE_REPO/controller:VERSION")
	flag.StringVar(&out, "out", "dist", "the directory to write into")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "release: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	arts, err := release.Manifests(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
	for _, a := range arts {
		if err := os.WriteFile(filepath.Join(out, a.Name), a.Data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "release:", err)
			os.Exit(1)
		}
		fmt.Printf("wrote %s\n", filepath.Join(out, a.Name))
	}
}
