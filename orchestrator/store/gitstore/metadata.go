package gitstore

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/pvkit/pvkit/internal/atomicfile"

	"github.com/pvkit/pvkit/orchestrator/store"
)

// MetadataFile holds, in a repository's git directory, what Porch keeps in
// the cluster rather than in git: each revision's owners, labels,
// annotations and, for a draft pvkit created, its creation time, by
// revision name. No git push reaches it: a draft's creation time is not
// what a commit says (a commit's time is its author's word).
const MetadataFile = "pvkit-metadata.json"

type metadata struct {
	Revisions map[string]revMeta `json:"revisions"`
}

type revMeta struct {
	Owners      []store.OwnerRef  `json:"owners,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	// Created is when the store created the draft (RFC 3339, to the
	// nanosecond: a delay is measured from it).
	Created string `json:"created,omitempty"`
	// PublishedBy is who approved the revision (store.Revision.PublishedBy).
	PublishedBy string `json:"publishedBy,omitempty"`
	// Tasks made the revision (store.Revision.Tasks), as Porch keeps them.
	Tasks []taskMeta `json:"tasks,omitempty"`
}

// taskMeta is a store.Task as the metadata file keeps it.
type taskMeta struct {
	Type        store.TaskType `json:"type"`
	Upstream    string         `json:"upstream,omitempty"`
	Source      string         `json:"source,omitempty"`
	OldUpstream string         `json:"oldUpstream,omitempty"`
	NewUpstream string         `json:"newUpstream,omitempty"`
	Local       string         `json:"local,omitempty"`
}

func (m revMeta) tasks() []store.Task {
	var out []store.Task
	for _, t := range m.Tasks {
		out = append(out, store.Task{Type: t.Type, Upstream: t.Upstream, Source: t.Source, OldUpstream: t.OldUpstream, NewUpstream: t.NewUpstream, Local: t.Local})
	}
	return out
}

// created is the creation time recorded, zero when none is.
func (m revMeta) created() time.Time {
	t, err := time.Parse(time.RFC3339Nano, m.Created)
	if err != nil {
		return time.Time{}
	}
	return t
}

func (m revMeta) owners() []store.OwnerRef { return m.Owners }

func readMetadata(gitDir string) (*metadata, error) {
	m := &metadata{Revisions: map[string]revMeta{}}
	path := filepath.Join(gitDir, MetadataFile)
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	return parseMetadata(path, b)
}

// parseMetadata reads a metadata file's content.
func parseMetadata(path string, b []byte) (*metadata, error) {
	m := &metadata{}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if m.Revisions == nil {
		m.Revisions = map[string]revMeta{}
	}
	return m, nil
}

// set records rev's metadata (none is no entry) and writes the file.
func (m *metadata) set(gitDir string, rev store.Revision) error {
	e := revMeta{Owners: rev.Owners, Labels: rev.Labels, Annotations: rev.Annotations, PublishedBy: rev.PublishedBy}
	for _, t := range rev.Tasks {
		e.Tasks = append(e.Tasks, taskMeta{Type: t.Type, Upstream: t.Upstream, Source: t.Source, OldUpstream: t.OldUpstream, NewUpstream: t.NewUpstream, Local: t.Local})
	}
	if !rev.Created.IsZero() {
		e.Created = rev.Created.UTC().Format(time.RFC3339Nano)
	}
	if len(e.Owners) == 0 && len(e.Labels) == 0 && len(e.Annotations) == 0 && e.Created == "" && e.PublishedBy == "" && len(e.Tasks) == 0 {
		return m.remove(gitDir, rev.Name)
	}
	prev, had := m.Revisions[rev.Name]
	m.Revisions[rev.Name] = e
	if err := m.write(gitDir); err != nil {
		if had {
			m.Revisions[rev.Name] = prev
		} else {
			delete(m.Revisions, rev.Name)
		}
		return err
	}
	return nil
}

// remove forgets a revision's metadata.
func (m *metadata) remove(gitDir, name string) error {
	prev, had := m.Revisions[name]
	if !had {
		return nil
	}
	delete(m.Revisions, name)
	if err := m.write(gitDir); err != nil {
		m.Revisions[name] = prev
		return err
	}
	return nil
}

// write replaces the file atomically; keys are sorted (encoding/json).
func (m *metadata) write(gitDir string) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(gitDir, MetadataFile), append(b, '\n'), 0o644)
}
