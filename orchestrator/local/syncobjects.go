package local

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	porchconfig "github.com/nephio-project/porch/api/porchconfig/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/gitstore"
	"github.com/pvkit/pvkit/pkg/krm"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// What --sync reads from a published package and whether it applies it:
// each object checked as -f checks it (refused alone), a Repository served
// at once.

// objectsOf are the objects of a published revision as ConfigSync would
// apply them, parsed once per revision and version (a run's passes each
// sync again; a published revision does not change).
func (s *syncer) objectsOf(repo string, rev store.Revision) ([]*unstructured.Unstructured, error) {
	key := rev.Name + "@" + rev.ResourceVersion
	if objs, ok := s.parsed[key]; ok {
		return objs, nil
	}
	res, err := s.gs.GetResources(context.Background(), s.namespace, rev.Name)
	if err != nil {
		return nil, fmt.Errorf("--sync %s: reading %s: %w", repo, rev.Name, err)
	}
	var objs []*unstructured.Unstructured
	items, err := krm.FilesToItems(res.Files)
	if err != nil {
		s.warn("--sync %s: package %s revision %d is not synced: %v", repo, rev.Package, rev.Revision, err)
	}
	source := repo + "/" + rev.Package + "@v" + strconv.Itoa(rev.Revision)
	lineage := s.lineage(rev)
	for _, it := range items {
		u, ok := s.object(it.YNode(), source)
		if !ok {
			continue
		}
		if up, cycle := clonesItsLineage(u, lineage); cycle {
			s.warn("--sync: %s: %s %s is not applied: its upstream %s is the package it was synced from or one that package was cloned from, "+
				"so every sync would clone it again, without end", source, u.GetKind(), u.GetName(), up)
			continue
		}
		objs = append(objs, u)
	}
	s.parsed[key] = objs
	return objs, nil
}

// object is an item of a published package as ConfigSync would apply it:
// nil for the Kptfile, local config, and what is not an object of the
// run's namespace.
func (s *syncer) object(n *yaml.Node, source string) (*unstructured.Unstructured, bool) {
	apiVersion, kind := krm.TypeMeta(n)
	if apiVersion == "" || kind == "" || krm.Name(n) == "" || kind == "Kptfile" {
		return nil, false
	}
	if v, _ := krm.ScalarAt(n, "metadata", "annotations", "config.kubernetes.io/local-config"); v == "true" {
		return nil, false
	}
	b, err := krm.JSON(yaml.NewRNode(n))
	if err != nil {
		s.warn("--sync: %s: %s %s: %v", source, kind, krm.Name(n), err)
		return nil, false
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil { // integers as int64, as the cluster keeps them
		s.warn("--sync: %s: %s %s: %v", source, kind, krm.Name(n), err)
		return nil, false
	}
	for a := range u.GetAnnotations() {
		if krm.IsReaderAnnotation(a) {
			unstructured.RemoveNestedField(u.Object, "metadata", "annotations", a)
		}
	}
	serverSet(u)
	switch ns := u.GetNamespace(); {
	case ns == "":
		u.SetNamespace(s.namespace)
	case ns != s.namespace:
		s.warn("--sync: %s: %s %s is in namespace %q, not the run's %q: not applied", source, kind, u.GetName(), ns, s.namespace)
		return nil, false
	}
	// Each object is checked on its own, as -f checks it (the same
	// message, naming the package revision and the file), and a bad one is
	// refused alone, as ConfigSync refuses it; the rest is applied.
	probe := &input{files: map[string]string{}}
	if msg := probe.add(yaml.NewRNode(n).Copy(), source+": "+krm.Path(yaml.NewRNode(n)), 0, s.namespace); msg != "" {
		s.refuse(u, msg)
		return nil, false
	}
	// A package decides no storage: a synced Repository scoped to a
	// directory would be served from another repository's git directory
	// (its spec.git.repo's), so only the files (-f) register those.
	if dir, _, _ := unstructured.NestedString(u.Object, "spec", "git", "directory"); u.GroupVersionKind() == porchconfig.GroupVersion.WithKind("Repository") && strings.Trim(dir, "/") != "" {
		s.refuse(u, fmt.Sprintf("%s: Repository %q: `spec.git.directory` %q: a synced Repository is served from a git directory of its own; only a Repository the files give (-f) may be scoped to a directory of another",
			source, u.GetName(), dir))
		return nil, false
	}
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[SyncedFromAnnotation] = source
	u.SetAnnotations(ann)
	return u, true
}

// register serves a synced Repository as Porch would serve it once
// ConfigSync applied it (Nephio's cluster packages create the new cluster's
// repository so): its bare repository under --repos, created when missing
// for a deployment repository (one of another kind is refused, naming
// the path looked for),
// with its branch, spec.deployment and spec.git.directory, in the same run
// (a set that selects it finds it). One already served stays as it is
// (a change of its registration takes effect on the next run); nothing in
// git is ever removed.
func (s *syncer) register(u *unstructured.Unstructured) error {
	r := &porchconfig.Repository{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, r); err != nil {
		s.refuse(u, fmt.Sprintf("%s: Repository %q: %v", u.GetAnnotations()[SyncedFromAnnotation], u.GetName(), err))
		return nil
	}
	for _, open := range s.gs.Repositories() {
		if open.Name == r.Name {
			return nil
		}
	}
	if err := checkRepositoryObjects(&input{repositories: []*porchconfig.Repository{r},
		files: map[string]string{"Repository/" + r.Name: u.GetAnnotations()[SyncedFromAnnotation]}}); err != nil {
		s.refuse(u, err.Error())
		return nil
	}
	repo := registration(s.reposDir, r)
	created := false
	if !gitstore.IsBare(repo.GitDir) && !repo.Deployment {
		src := u.GetAnnotations()[SyncedFromAnnotation]
		s.refuse(u, absentRepository(&input{files: map[string]string{"Repository/" + r.Name: src}}, r, repo))
		return nil
	}
	if !gitstore.IsBare(repo.GitDir) {
		if err := gitstore.Init(repo.GitDir, repo.Branch); err != nil {
			return fmt.Errorf("--sync: Repository %s: %w", r.Name, err)
		}
		created = true
	}
	if err := s.gs.Add(repo); err != nil {
		return fmt.Errorf("--sync: Repository %s: %w", r.Name, err)
	}
	if created {
		s.j.note("created repository %s (synced from %s)", r.Name, u.GetAnnotations()[SyncedFromAnnotation])
	}
	return nil
}

// EventSyncRefused is the Warning Event of a synced object --sync does not
// apply (an object -f would refuse).
const EventSyncRefused = "SyncRefused"

// refuse warns of a synced object not applied, and records it as a
// Warning Event on that object.
func (s *syncer) refuse(u *unstructured.Unstructured, msg string) {
	full := "--sync: " + msg + "; not applied"
	if !s.warned[full] && s.events != nil {
		s.events.Event(u, "Warning", EventSyncRefused, msg+"; not applied")
	}
	s.warn("%s", full)
}
