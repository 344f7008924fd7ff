package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pvkit/pvkit"
	"github.com/pvkit/pvkit/orchestrator/local"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/provenance"
)

// rebuilder is pvctl verify --rebuild's: how drafts render, and the
// counts for the summary.
type rebuilder struct {
	render              *local.Render
	rebuilt, impossible int
}

// maxRebuildLines bounds the differences named for one revision.
const maxRebuildLines = 20

// rebuild builds rev again from its record and says how it went: the
// words added to the revision's line, and whether it held. A record from
// before records carried a rebuild's inputs holds unless the revision was
// named (named: the user asked for its rebuild). An error is one that
// stops verify (the store unreadable), not a verdict.
func (rb *rebuilder) rebuild(ctx context.Context, s *local.Repos, namespace string, rev store.Revision, files map[string]string, named bool) (string, bool, error) {
	res, err := local.Rebuild(ctx, local.RebuildOptions{Store: s.Store, Namespace: namespace, Render: rb.render, Version: pvkit.Version()}, rev, files)
	switch {
	case errors.Is(err, provenance.ErrNoRecord):
		return "", false, nil
	case errors.Is(err, provenance.ErrNoParameters):
		rb.impossible++
		return "; cannot be rebuilt: " + err.Error(), !named, nil
	case err != nil:
		rb.impossible++
		return "; cannot be rebuilt: " + err.Error(), false, nil
	}
	rb.rebuilt++
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
	if res.Version != "" && !res.OK() {
		fmt.Fprintf(&b, " (recorded by pvkit %s, rebuilt by %s)", res.Version, pvkit.Version())
	}
	lines := append(append([]string(nil), res.Problems...), func() []string {
		out := make([]string, 0, len(res.Differences))
		for _, c := range res.Differences {
			out = append(out, c.String())
		}
		return out
	}()...)
	for i, l := range lines {
		if i == maxRebuildLines {
			fmt.Fprintf(&b, "\n       and %d more", len(lines)-i)
			break
		}
		b.WriteString("\n       " + l)
	}
	return b.String(), res.OK(), nil
}
