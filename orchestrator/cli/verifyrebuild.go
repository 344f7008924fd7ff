package cli

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/pvkit/pvkit"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/local"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/provenance"
)

// rebuilder is pvctl verify --rebuild's: how drafts render, the counts
// for the summary, and each rebuild by the files it was of: a branch's
// placeholder holds what its newest published revision holds, and is not
// built twice. Safe for concurrent use.
type rebuilder struct {
	render *local.Render
	// variants are the fleet's variants now (the last run's state), by
	// namespace/name: a rebuild runs the functions of the live spec, not
	// the record's word alone.
	variants map[string]*pvapi.PackageVariant

	mu                  sync.Mutex
	rebuilt, impossible int
	byFiles             map[[sha256.Size]byte]*rebuildOnce
}

// rebuildOnce is one rebuild's outcome, made once.
type rebuildOnce struct {
	once     sync.Once
	more     string
	held     bool
	possible bool // rebuilt (as opposed to: cannot be rebuilt)
	counted  bool // a record that reads (one without is verify's own failure)
}

// maxRebuildLines bounds the differences named for one revision.
const maxRebuildLines = 20

// rebuild builds rev again from its record and says how it went: the
// words added to the revision's line, and whether it held. A record from
// before records carried a rebuild's inputs holds unless the revision was
// named (named: the user asked for its rebuild). An error is one that
// stops verify (the store unreadable), not a verdict.
func (rb *rebuilder) rebuild(ctx context.Context, s *local.Repos, namespace string, rev store.Revision, files map[string]string, named bool) (string, bool, error) {
	key := local.FilesKey(files)
	rb.mu.Lock()
	if rb.byFiles == nil {
		rb.byFiles = map[[sha256.Size]byte]*rebuildOnce{}
	}
	r := rb.byFiles[key]
	if r == nil {
		r = &rebuildOnce{}
		rb.byFiles[key] = r
	}
	rb.mu.Unlock()
	r.once.Do(func() { rb.once(ctx, s, namespace, rev, files, named, r) })
	rb.mu.Lock()
	defer rb.mu.Unlock()
	switch {
	case !r.counted:
	case r.possible:
		rb.rebuilt++
	default:
		rb.impossible++
	}
	return r.more, r.held, nil
}

// once rebuilds one package and sets r.
func (rb *rebuilder) once(ctx context.Context, s *local.Repos, namespace string, rev store.Revision, files map[string]string, named bool, r *rebuildOnce) {
	if _, err := provenance.Read(files); err != nil {
		return // not counted: verify's line says why the record does not read
	}
	r.counted = true
	res, err := local.Rebuild(ctx, local.RebuildOptions{Store: s.Store, Namespace: namespace, Render: rb.render, Version: pvkit.Version(), Variants: rb.variants}, rev, files)
	switch {
	case errors.Is(err, provenance.ErrNoParameters):
		r.more, r.held = "; cannot be rebuilt: "+err.Error(), !named
		return
	case err != nil:
		r.more = "; cannot be rebuilt: " + err.Error()
		return
	}
	r.possible, r.held = true, res.OK()
	r.more = describeRebuild(res)
}

// describeRebuild is a rebuild's words on the revision's line: from what,
// the verdict, the record's word for a person's files, and each
// difference on a line of its own (at most maxRebuildLines).
func describeRebuild(res *local.Rebuilt) string {
	var b strings.Builder
	if res.OK() {
		b.WriteString("; rebuilt from " + res.From + ": the same")
	} else {
		b.WriteString("; rebuilt from " + res.From + ": not what its inputs give")
	}
	if len(res.Explained) > 0 {
		var parts []string
		for _, f := range krm.SortedKeys(res.Explained) {
			parts = append(parts, f+" ("+res.Explained[f]+")")
		}
		b.WriteString(", except the record's own word for " + strings.Join(parts, ", "))
	}
	if len(res.StandIns) > 0 {
		b.WriteString(" (the cluster's other " + strings.Join(res.StandIns, ", ") + " objects as the package says it had them)")
	}
	if res.Version != "" && !res.OK() {
		fmt.Fprintf(&b, " (recorded by pvkit %s, rebuilt by %s)", res.Version, pvkit.Version())
	}
	lines := append([]string(nil), res.Problems...)
	for _, c := range res.Differences {
		lines = append(lines, c.String())
	}
	for i, l := range lines {
		if i == maxRebuildLines {
			fmt.Fprintf(&b, "\n       and %d more", len(lines)-i)
			break
		}
		b.WriteString("\n       " + l)
	}
	return b.String()
}

// liveVariants are the variants of the last run's state in repos, by
// namespace/name (none when no run wrote one).
func liveVariants(repos string) (map[string]*pvapi.PackageVariant, error) {
	st, err := state.Read(filepath.Join(repos, state.File))
	if err != nil {
		return nil, err
	}
	out := map[string]*pvapi.PackageVariant{}
	for i := range st.Variants {
		v := &st.Variants[i]
		out[v.Namespace+"/"+v.Name] = v
	}
	return out, nil
}
