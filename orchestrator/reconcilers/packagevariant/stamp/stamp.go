// Package stamp is how the PackageVariant reconciler records where each
// draft it writes came from (rule provenance-record, pkg/provenance): the
// record's builder, the key that signs it and the allowed signers that
// check it (Provenance, from the flags --provenance-key and
// --provenance-allowed-signers), and the reconciler's questions of a
// draft's record (RecordedBy, Unstamped, Stale).
package stamp

import (
	"fmt"
	"os"

	"github.com/pvkit/pvkit"
	"github.com/pvkit/pvkit/internal/sshsig"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/provenance"
)

// Provenance is how the reconciler records where each draft it writes came
// from (rule provenance-record, pkg/provenance): the record's builder, and the
// key that signs it and the allowed signers that check it, when given.
type Provenance struct {
	// Builder names what wrote the record: "controller" or "pvctl".
	Builder string
	// Sign signs each statement (nil: unsigned).
	Sign provenance.Signer
	// Verify checks a statement's signature for the approval policy's
	// pvkit.dev/require-provenance (nil: the content is checked against the
	// statement, the signature is not).
	Verify provenance.Verifier
	// SignCommit signs a git commit's payload with the same key, in git's
	// own format (an SSH signature, namespace "git": `git verify-commit`
	// checks it); pvctl's git store signs every commit it writes with it
	// (nil: unsigned). On Porch, Porch writes the commits: the controller
	// signs records, not commits.
	SignCommit func(payload []byte) ([]byte, error)
}

// GitSignatureNamespace is the SSH signature namespace of git's signed
// commits (gpg.format=ssh).
const GitSignatureNamespace = "git"

// Stamp is files with the variant's provenance record for them; origins
// are the files whose content pvkit did not build (a person's edits it
// kept), which the record names so.
func (p Provenance) Stamp(v *pvapi.PackageVariant, d store.Revision, files map[string]string, origins provenance.Origins) (map[string]string, error) {
	builder := p.Builder
	if builder == "" {
		builder = "controller"
	}
	out, err := provenance.Stamp(files, provenance.Inputs{Variant: v.Core(), Generation: v.Generation, Builder: builder, Version: pvkit.Version(), Origins: origins,
		Revision: &provenance.RevisionRef{Name: d.Name, Repository: d.Repository, Package: d.Package, Workspace: d.Workspace}}, p.Sign)
	if err != nil {
		return nil, kit.Stall(pvapi.ReasonMutationFailed, fmt.Errorf("recording the provenance of the draft: %w", err))
	}
	return out, nil
}

// RecordedBy reports whether files hold a record of the variant (its UID)
// for the draft d that their content matches: a draft the variant just
// made needs no write when its upstream's record is not what it holds.
func RecordedBy(v *pvapi.PackageVariant, d store.Revision, files map[string]string) bool {
	rec, err := provenance.Read(files)
	if err != nil || rec.Statement.Predicate.BuildDefinition.ExternalParameters.Variant.UID != string(v.UID) || !rec.For(d.Name) {
		return false
	}
	return len(rec.Differences(files)) == 0
}

// Unstamped reports whether a draft is the variant's own as it last left
// it (its digest is the variant's last write of it) but carries no record
// of this draft: none, or another revision's (an upgrade's or an edit's
// source): the variant's first write of it did not land, so the record is
// written now. A draft whose own record went stale (Porch's render
// changed the package) is not unstamped: restamp writes it once, and a
// render that changes the package each time must not write forever.
func Unstamped(v *pvapi.PackageVariant, d store.Revision, files map[string]string, fp string) bool {
	if v.Target(d.Name).LastLeft(fp) != fp {
		return false
	}
	rec, err := provenance.Read(files)
	return err != nil || rec.Statement.Predicate.BuildDefinition.ExternalParameters.Variant.UID != string(v.UID) || !rec.For(d.Name)
}

// Stale reports whether Porch's render of a write changed what the
// record the write carried says (the Kptfile pipeline's functions changed
// the package): the record is then written again for the rendered files.
func Stale(files map[string]string) bool {
	rec, err := provenance.Read(files)
	return err == nil && len(rec.Differences(files)) > 0
}

// NewProvenance is the Provenance of a builder ("controller", "pvctl") with
// the signing key file keyFile (an OpenSSH private key without a
// passphrase; "": unsigned) and the allowed_signers file that checks
// signatures for pvkit.dev/require-provenance ("": none), the flags
// --provenance-key and --provenance-allowed-signers of the controller and
// pvctl run. A file that cannot be read or parsed is an error naming the
// flag and the file.
func NewProvenance(builder, keyFile, allowedSignersFile string) (Provenance, error) {
	p := Provenance{Builder: builder}
	if keyFile != "" {
		key, err := sshsig.LoadKey(keyFile)
		if err != nil {
			return p, fmt.Errorf("--provenance-key: %w", err)
		}
		p.Sign = func(stmt []byte) ([]byte, error) { return sshsig.Sign(stmt, key, provenance.SignatureNamespace) }
		p.SignCommit = func(payload []byte) ([]byte, error) { return sshsig.Sign(payload, key, GitSignatureNamespace) }
	}
	if allowedSignersFile != "" {
		allowed, err := os.ReadFile(allowedSignersFile)
		if err != nil {
			return p, fmt.Errorf("--provenance-allowed-signers: %w", err)
		}
		if err := sshsig.CheckAllowedSigners(allowed); err != nil {
			return p, fmt.Errorf("--provenance-allowed-signers: %s: %w", allowedSignersFile, err)
		}
		p.Verify = func(stmt, sig []byte) (string, error) {
			return sshsig.Verify(stmt, sig, allowed, "", provenance.SignatureNamespace)
		}
	}
	return p, nil
}
