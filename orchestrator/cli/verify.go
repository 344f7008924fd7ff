package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/pvkit/pvkit/internal/sshsig"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/provenance"
	"github.com/spf13/cobra"
)

const verifyLong = `Check offline that each package revision's content is what its provenance record
(pvkit-provenance.yaml, written by pvkit with every draft it writes) says: every file's digest
by meaning, no file added or removed. With --allowed-signers (OpenSSH's allowed_signers
format), the record's SSH signature (namespace pvkit-provenance) must be by one of its keys.

With no NAME, every package revision that has a record is checked, the branch's
placeholder (REPO.PACKAGE.main: what the branch holds, what Config Sync applies) among
them, and the revisions without one are counted (a package pvkit adopted, or made before it recorded provenance).
A named revision without a record fails.

The signature verifies with OpenSSH alone too: write data.statement and data.signature
of the record to files, then
  ssh-keygen -Y verify -f allowed_signers -I ID -n pvkit-provenance -s signature < statement

Exit codes: 0 every revision checked holds; 1 one does not (each named with the files
that differ); 2 usage.`

// errNotVerified ends verify with exit 1 after it listed what failed.
var errNotVerified = errors.New("provenance not verified")

func verifyCommand(ctx context.Context, o *Options) *cobra.Command {
	var signers, identity string
	c := &cobra.Command{
		Use:   "verify [NAME...]",
		Short: "Check that package revisions are what their provenance records say (and who signed them)",
		Long:  verifyLong,
		Example: `  pvctl verify                                        # every revision with a record
  pvctl verify deployments.app-prod.v2 --allowed-signers allowed_signers`,
		ValidArgsFunction: revisionNames(o),
		RunE: func(_ *cobra.Command, a []string) error {
			var verify provenance.Verifier
			if signers != "" {
				allowed, err := os.ReadFile(signers)
				if err != nil {
					return usageErr("--allowed-signers: %v", err)
				}
				if err := sshsig.CheckAllowedSigners(allowed); err != nil {
					return usageErr("--allowed-signers: %s: %v", signers, err)
				}
				verify = func(stmt, sig []byte) (string, error) {
					return sshsig.Verify(stmt, sig, allowed, identity, provenance.SignatureNamespace)
				}
			} else if identity != "" {
				return usageErr("--identity goes with --allowed-signers")
			}
			return verifyRevisions(ctx, o, a, verify)
		},
	}
	c.Flags().StringVar(&signers, "allowed-signers", "", "OpenSSH allowed_signers file: the records must be signed by one of its keys")
	c.Flags().StringVar(&identity, "identity", "", "with --allowed-signers: the principal the signature must be made by (default: any of the file)")
	return c
}

// verifyRevisions checks the named revisions (every one with a record when
// none is named) and prints a line for each.
func verifyRevisions(ctx context.Context, o *Options, names []string, verify provenance.Verifier) error {
	s, err := openRepos(o.Repos, o.Namespace, false, o.Stderr)
	if err != nil {
		return err
	}
	var revs []store.Revision
	checked, failed, unrecorded := 0, 0, 0
	fail := func(name string, err error) {
		checked++
		failed++
		fmt.Fprintf(o.Stdout, "FAIL %s: %v\n", name, err)
	}
	for _, n := range names {
		rev, err := revision(s, o.Namespace, n)
		var ue *unreadableError
		if errors.As(err, &ue) { // not verified: nothing says what it holds
			fail(ue.skip.Revision.Name, fmt.Errorf("cannot be read: %v", ue.skip.Err))
			continue
		}
		if err != nil {
			return err
		}
		revs = append(revs, rev)
	}
	all := len(names) == 0
	if all {
		revs = s.All(o.Namespace)
		sort.Slice(revs, func(i, j int) bool { return revs[i].Name < revs[j].Name })
		for _, k := range s.Skipped() { // a ref that cannot be read hides nothing
			name := k.Revision.Name
			if name == "" {
				name = k.Repository + " " + k.Ref
			}
			fail(name, fmt.Errorf("cannot be read: %v", k.Err))
		}
	}
	for _, rev := range revs {
		res, err := s.GetResources(ctx, o.Namespace, rev.Name)
		if err != nil {
			return err
		}
		if _, ok := res.Files[provenance.FileName]; !ok && all {
			unrecorded++
			continue
		}
		checked++
		r, err := provenance.Check(res.Files, verify)
		if err == nil {
			err = r.Record.Describes(provenance.RevisionRef{Name: rev.Name, Repository: rev.Repository, Package: rev.Package, Workspace: rev.Workspace}, rev.Placeholder)
		}
		if err != nil {
			failed++
			fmt.Fprintf(o.Stdout, "FAIL %s: %v\n", rev.Name, err)
			continue
		}
		fmt.Fprintf(o.Stdout, "ok   %s: %s\n", rev.Name, vouchedFor(r))
	}
	fmt.Fprintf(o.Stdout, "%d checked, %d failed", checked, failed)
	if all {
		fmt.Fprintf(o.Stdout, ", %d without a record", unrecorded)
	}
	fmt.Fprintln(o.Stdout)
	if failed > 0 {
		return errNotVerified
	}
	if checked == 0 {
		return fmt.Errorf("no package revision has a provenance record")
	}
	return nil
}

// vouchedFor says what a verified record vouches for.
func vouchedFor(r *provenance.Result) string {
	bd := r.Record.Statement.Predicate.BuildDefinition
	v := bd.ExternalParameters.Variant
	out := fmt.Sprintf("%d files as recorded by variant %s/%s", len(r.Record.Statement.Subject), v.Namespace, v.Name)
	if v.Generation != 0 {
		out += fmt.Sprintf(" (generation %d)", v.Generation)
	}
	for _, d := range bd.ResolvedDependencies {
		if d.Name == "upstream" && d.Digest["gitCommit"] != "" {
			c := d.Digest["gitCommit"]
			if len(c) > 12 {
				c = c[:12]
			}
			out += " from upstream " + d.Annotations["ref"] + " at " + c
		}
	}
	if marked := r.Record.Marked(); len(marked) > 0 {
		var parts []string
		for _, name := range krm.SortedKeys(marked) {
			parts = append(parts, name+" ("+marked[name]+")")
		}
		out += "; not built by pvkit: " + strings.Join(parts, ", ")
	}
	if r.Signer != "" {
		out += "; signed by " + r.Signer
	} else if len(r.Record.Signature) == 0 {
		out += "; unsigned"
	} else {
		out += "; signature not checked (no --allowed-signers)"
	}
	return out
}
