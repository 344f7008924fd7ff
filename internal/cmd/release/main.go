// Command release writes a release into a directory (make release):
// the manifests (internal/release), the images as OCI archives named by
// digest in them, an SBOM per binary and image, the provenance statement,
// checksums.txt and, given a key, its SSH signature. make release builds
// the binaries first (the pvctl ones into the directory, the images' into
// --images-from); it writes nothing unless every manifest builds.
//
//	go run ./internal/cmd/release --version v0.1.0 --image-repo ghcr.io/pvkit --out dist \
//	  --images-from .cache/release-bin --commit "$(git rev-parse HEAD)" --epoch "$(git log -1 --format=%ct)" \
//	  --signing-key ~/.ssh/pvkit-release
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pvkit/pvkit/internal/release"
)

func main() {
	var o release.DistOptions
	var imagesFrom, epoch string
	flag.StringVar(&o.Root, "root", ".", "the repository root")
	flag.StringVar(&o.Version, "version", "", "the release, vX.Y.Z; VERSION must say it and CHANGELOG.md have its section")
	flag.StringVar(&o.ImageRepo, "image-repo", "pvkit", "the images' prefix: IMAGE_REPO/controller:VERSION")
	flag.StringVar(&o.Out, "out", "dist", "the directory to write into")
	flag.StringVar(&imagesFrom, "images-from", "", "a directory of the images' static linux/amd64 binaries (pvkit-controller and one per function); none: no images")
	flag.StringVar(&o.Source, "source", "https://github.com/pvkit/pvkit", "the source repository, for the provenance")
	flag.StringVar(&o.Commit, "commit", "", "the commit built, for the provenance")
	flag.StringVar(&epoch, "epoch", "0", "the commit's time in Unix seconds: every image file's time and the images' creation")
	flag.StringVar(&o.SigningKey, "signing-key", "", "an SSH private key to sign checksums.txt with (ssh-keygen -Y sign); none: unsigned")
	check := flag.Bool("check", false, "only check that VERSION and CHANGELOG.md describe the release")
	flag.Parse()
	if flag.NArg() > 0 {
		fail(2, fmt.Errorf("unexpected argument %q", flag.Arg(0)))
	}
	sec, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		fail(2, fmt.Errorf("--epoch %q: %w", epoch, err))
	}
	o.Epoch = time.Unix(sec, 0)
	if err := release.Check(o.Options); err != nil {
		fail(1, err)
	}
	if *check {
		return
	}
	if imagesFrom != "" {
		o.ImageBinaries = map[string]string{"controller": filepath.Join(imagesFrom, "pvkit-controller")}
		for _, fn := range release.Functions {
			o.ImageBinaries[fn] = filepath.Join(imagesFrom, fn)
		}
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		fail(1, err)
	}
	if err := release.Dist(o); err != nil {
		fail(1, err)
	}
	fmt.Printf("wrote %s\n", o.Out)
}

func fail(code int, err error) {
	fmt.Fprintln(os.Stderr, "release:", err)
	os.Exit(code)
}
