package cli

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/pvkit/pvkit/internal/sshsig"
	"github.com/pvkit/pvkit/orchestrator/local"
	"github.com/pvkit/pvkit/orchestrator/store"
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

With --rebuild, each revision is also built again from what its record names: the
upstream at the recorded commit, the variant's recorded spec, the injected objects as the
package holds them (each checked against the digest the record has of what was read),
through the controller's own reconcilers and the drafts' render (the flags of pvctl run:
--function-config, --no-render...), and compared with the package by meaning. Every
field that differs is named; a file the record says a person edited (an upgrade kept
the edit) or pvkit adopted is named as such and does not fail. A record written before
records carried a rebuild's inputs still verifies; it is said it cannot be rebuilt (a
named revision then fails).

Exit codes: 0 every revision checked holds; 1 one does not (each named with the files,
objects and fields that differ); 2 usage.`

// errNotVerified ends verify with exit 1 after it listed what failed.
var errNotVerified = errors.New("provenance not verified")

func verifyCommand(ctx context.Context, o *Options) *cobra.Command {
	var signers, identity string
	var rebuild bool
	var rf renderFlags
	c := &cobra.Command{
		Use:   "verify [NAME...]",
		Short: "Check that package revisions are what their provenance records say (and who signed them)",
		Long:  verifyLong,
		Example: `  pvctl verify                                        # every revision with a record
  pvctl verify deployments.app-prod.v2 --allowed-signers allowed_signers
  pvctl verify --rebuild                              # and each built again from its recorded inputs`,
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
			var rb *rebuilder
			if rebuild {
				r, err := rf.options()
				if err != nil {
					return err
				}
				live, err := liveVariants(o.Repos)
				if err != nil {
					return err
				}
				rb = &rebuilder{render: r, variants: live}
			}
			return verifyRevisions(ctx, o, a, verify, rb)
		},
	}
	rf.add(c)
	c.Flags().BoolVar(&rebuild, "rebuild", false, "build each revision again from the upstream commit, the variant's spec and the injected objects its record names, and compare")
	c.Flags().StringVar(&signers, "allowed-signers", "", "OpenSSH allowed_signers file: the records must be signed by one of its keys")
	c.Flags().StringVar(&identity, "identity", "", "with --allowed-signers: the principal the signature must be made by (default: any of the file)")
	return c
}

// verifyRevisions checks the named revisions (every one with a record when
// none is named) and prints a line for each.
func verifyRevisions(ctx context.Context, o *Options, names []string, verify provenance.Verifier, rb *rebuilder) error {
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
	var jobs []verifyJob
	for _, rev := range revs {
		res, err := s.GetResources(ctx, o.Namespace, rev.Name)
		if err != nil {
			return err
		}
		if _, ok := res.Files[provenance.FileName]; !ok && all {
			unrecorded++
			continue
		}
		jobs = append(jobs, verifyJob{rev: rev, files: res.Files})
	}
	results, err := verifyAll(ctx, s, o.Namespace, jobs, verify, rb, !all)
	if err != nil {
		return err
	}
	for i, r := range results {
		checked++
		if !r.ok {
			failed++
			fmt.Fprintf(o.Stdout, "FAIL %s: %s\n", jobs[i].rev.Name, r.line)
			continue
		}
		fmt.Fprintf(o.Stdout, "ok   %s: %s\n", jobs[i].rev.Name, r.line)
	}
	fmt.Fprintf(o.Stdout, "%d checked, %d failed", checked, failed)
	if all {
		fmt.Fprintf(o.Stdout, ", %d without a record", unrecorded)
	}
	if rb != nil {
		fmt.Fprintf(o.Stdout, ", %d rebuilt, %d cannot be rebuilt", rb.rebuilt, rb.impossible)
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

// verifyJob is a revision to verify, and its files.
type verifyJob struct {
	rev   store.Revision
	files map[string]string
}

// verifyResult is a revision's line and whether it holds.
type verifyResult struct {
	line string
	ok   bool
}

// verifyAll verifies the jobs, rebuilding with as many at a time as the
// process may run threads (GOMAXPROCS: each rebuild is CPU, its renders
// most of it), and gives their results in the jobs' order. The first
// error that stops verify stops it.
func verifyAll(ctx context.Context, s *local.Repos, namespace string, jobs []verifyJob, verify provenance.Verifier, rb *rebuilder, named bool) ([]verifyResult, error) {
	out := make([]verifyResult, len(jobs))
	workers := 1
	if rb != nil {
		workers = min(runtime.GOMAXPROCS(0), len(jobs))
	}
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				line, ok, err := verifyOne(ctx, s, namespace, jobs[i].rev, jobs[i].files, verify, rb, named)
				if err != nil {
					errs <- err
					return
				}
				out[i] = verifyResult{line: line, ok: ok}
			}
		}()
	}
	var err error
feed:
	for _, i := range dispatchOrder(jobs, rb != nil) {
		select {
		case next <- i:
		case err = <-errs:
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err == nil && len(errs) > 0 {
		err = <-errs
	}
	return out, err
}

// dispatchOrder is the order jobs are handed to the workers: when
// rebuilding, the first job of each package content before the others
// (a branch's placeholder holds what its published revision holds, and
// sorts beside it: the second would wait on the first's rebuild, and the
// workers would take turns instead of working together).
func dispatchOrder(jobs []verifyJob, rebuild bool) []int {
	order := make([]int, 0, len(jobs))
	var later []int
	seen := map[[sha256.Size]byte]bool{}
	for i, j := range jobs {
		if k := local.FilesKey(j.files); rebuild && seen[k] {
			later = append(later, i)
		} else {
			seen[k] = true
			order = append(order, i)
		}
	}
	return append(order, later...)
}

// verifyOne checks one revision's files against their record (and
// rebuilds it, with rb): the words of its line and whether it holds.
func verifyOne(ctx context.Context, s *local.Repos, namespace string, rev store.Revision, files map[string]string, verify provenance.Verifier, rb *rebuilder, named bool) (string, bool, error) {
	r, err := provenance.Check(files, verify)
	if err == nil {
		err = r.Record.Describes(provenance.RevisionRef{Name: rev.Name, Repository: rev.Repository, Package: rev.Package, Workspace: rev.Workspace}, rev.Placeholder)
	}
	line, ok := "", err == nil
	if err != nil {
		line = err.Error()
	} else {
		line = vouchedFor(r)
	}
	if rb == nil {
		return line, ok, nil
	}
	more, held, err := rb.rebuild(ctx, s, namespace, rev, files, named)
	return line + more, ok && held, err
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
	if marked := r.Record.MarkedOrigins(); len(marked) > 0 {
		var parts []string
		for _, name := range slices.Sorted(maps.Keys(marked)) {
			parts = append(parts, name+" ("+marked[name].String()+")")
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
