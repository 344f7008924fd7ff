package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/pvkit/pvkit/internal/release"
	"github.com/spf13/cobra"
)

// verifyReleaseCommand checks a release directory offline before it is
// installed (internal/release.VerifyDist): the signature, every file,
// every image, the provenance.
func verifyReleaseCommand(o *Options) *cobra.Command {
	var signers, identity string
	c := &cobra.Command{
		Use:   "verify-release DIR",
		Short: "Check a release directory offline: its SSH signature, every file's checksum, the images' digests, the provenance",
		Long: `verify-release checks what make release wrote, before you install it: checksums.txt's
SSH signature (namespace pvkit-release) by a key the --allowed-signers file (OpenSSH's
allowed_signers format) lets --identity use; each file's sha256, and no file it does not
name; each image archive's blobs and the digest install.yaml names it by; the provenance
statement's subjects. The same signature verifies with OpenSSH alone:

  ssh-keygen -Y verify -f allowed_signers -I release@pvkit.dev -n pvkit-release -s dist/checksums.txt.sig < dist/checksums.txt
  (cd dist && sha256sum -c checksums.txt)`,
		Example: `  pvctl verify-release dist --allowed-signers allowed_signers --identity release@pvkit.dev`,
		Args:    args(1, 1, "verify-release needs the release directory"),
		RunE: func(_ *cobra.Command, a []string) error {
			if signers == "" {
				return usageErr("--allowed-signers is required: the file naming the keys you trust for releases (principal and public key a line)")
			}
			b, err := os.ReadFile(signers)
			if err != nil {
				return usageErr("--allowed-signers: %v", err)
			}
			v, err := release.VerifyDist(a[0], b, identity)
			if err != nil {
				return fmt.Errorf("%s: %w", a[0], err)
			}
			fmt.Fprintf(o.Stdout, "verified %s: signed by %s; %d files as checksums.txt lists them; images %s; provenance subjects match\n",
				a[0], v.Signer, v.Files, strings.Join(v.Images, ", "))
			return nil
		},
	}
	c.Flags().StringVar(&signers, "allowed-signers", "", "OpenSSH allowed_signers file with the release keys you trust")
	c.Flags().StringVar(&identity, "identity", "", "the principal the signature must be made by (default: any principal of --allowed-signers)")
	return c
}
