package tasks

import (
	"fmt"
	"strings"

	kptfilev1 "github.com/nephio-project/porch/pkg/kpt/api/kptfile/v1"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/kptfile"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Porch v1.5.3 rewrites the Kptfile whenever it changes it (the clone's
// name and upstream, an upgrade's lock, a draft's readiness gates and
// conditions): it decodes it into kpt's Kptfile type, refusing unknown
// fields, and encodes that type again (its field order, yaml's own
// quoting; comments are lost), then renders the package, which writes
// sequences compact. pvkit writes the same bytes
// (TestLocalCloneMatchesPorch compares them on a real Porch). A Kptfile
// the type cannot hold (a field kpt's type lacks) is edited as nodes
// instead, keeping what it has: pvkit does not fail where Porch would,
// and says so in the package's README (docs/behavior.md, clone shape).

// asPorch decodes a Kptfile as Porch does, lets edit change it and encodes
// it as Porch does; ok is false when Porch's type cannot hold it.
func asPorch(text string, edit func(*kptfilev1.KptFile)) (out string, ok bool, err error) {
	kf := &kptfilev1.KptFile{}
	d := yaml.NewDecoder(strings.NewReader(text))
	d.KnownFields(true)
	if err := d.Decode(kf); err != nil || kf.APIVersion != kptfilev1.KptFileGVK().GroupVersion().String() || kf.Kind != kptfilev1.KptFileKind {
		return text, false, nil
	}
	edit(kf)
	enc, err := yaml.MarshalWithOptions(kf, &yaml.EncoderOptions{SeqIndent: yaml.CompactSequenceStyle})
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", kptfile.FileName, err)
	}
	return string(enc), true, nil
}

// porchUpstream is the upstream and lock Porch records for a lock: the
// repository by its URL where the store knows it, the commit where known.
func porchUpstream(lock *store.Lock) (kptfilev1.Upstream, kptfilev1.UpstreamLock) {
	repo := lock.URL
	if repo == "" {
		repo = lock.Repository
	}
	return kptfilev1.Upstream{Type: kptfilev1.GitOrigin, Git: &kptfilev1.Git{Repo: repo, Directory: lock.Package, Ref: lock.Ref}},
		kptfilev1.UpstreamLock{Type: kptfilev1.GitOrigin, Git: &kptfilev1.GitLock{Repo: repo, Directory: lock.Package, Ref: lock.Ref, Commit: lock.Commit}}
}
