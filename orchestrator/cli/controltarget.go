package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/local"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// controlTarget is where a control verb (pvctl suspend and resume, pvctl
// rollout pause, resume, hold, release, skip) lays its annotations: a
// cluster's set or variant, or the last run's state file (its Controls,
// which every pvctl run gives the object). Each verb is one function over
// it: it reads the annotations the control sees, is told
// which of them the object's own file sets, and applies its changes.
type controlTarget struct {
	kind, name string
	// key is kind/name in lower case, for messages.
	key string
	// The cluster's object and client, or the state file and what it
	// holds of the object.
	c     client.Client
	obj   client.Object
	st    *state.State
	path  string
	file  map[string]string // the state's object's annotations: its file's
	close func()
}

// openControl finds a control's object: on the cluster (cf set) or in the
// last run's state (locked for verb until close).
func (o *Options) openControl(ctx context.Context, cf clusterFlags, verb, kind, name string) (*controlTarget, error) {
	t := &controlTarget{kind: kind, name: name, key: strings.ToLower(kind) + "/" + name, close: func() {}}
	if cf.set() {
		c, obj, _, err := clusterTarget(ctx, o, cf, kind, name)
		if err != nil {
			return nil, err
		}
		t.c, t.obj = c, obj
		return t, nil
	}
	release, err := local.Lock(o.Repos, verb)
	if err != nil {
		return nil, err
	}
	t.path = filepath.Join(o.Repos, state.File)
	if t.st, err = state.Read(t.path); err != nil {
		release()
		return nil, err
	}
	found := false
	for _, v := range t.st.Variants {
		if kind == "PackageVariant" && v.Name == name {
			found, t.file = true, v.Annotations
		}
	}
	for _, s := range t.st.Sets {
		if kind == "PackageVariantSet" && s.Name == name {
			found, t.file = true, s.Annotations
		}
	}
	if !found {
		release()
		return nil, fmt.Errorf("%s: not found in the last run's state (pvctl status lists them)", t.key)
	}
	t.close = release
	return t, nil
}

// cluster reports whether the target is a cluster's object.
func (t *controlTarget) cluster() bool { return t.c != nil }

// current is an annotation as the control sees it: the cluster object's,
// or the state's control.
func (t *controlTarget) current(annotation string) string {
	if t.cluster() {
		return t.obj.GetAnnotations()[annotation]
	}
	return t.st.Controls[state.ControlKey(t.kind, t.name)][annotation]
}

// fromFile is the value the object's own file sets for an annotation
// (the state file only: in a cluster there is no file to tell apart).
func (t *controlTarget) fromFile(annotation string) (string, bool) {
	if t.cluster() {
		return "", false
	}
	v, ok := t.file[annotation]
	return v, ok
}

// apply writes changes (a value "" removes the annotation): a merge patch
// of the cluster's object, or the state file.
func (t *controlTarget) apply(ctx context.Context, changes map[string]string) error {
	if t.cluster() {
		patch := map[string]*string{}
		for k, v := range changes {
			if v == "" {
				patch[k] = nil
			} else {
				patch[k] = &v
			}
		}
		return annotate(ctx, t.c, t.obj, patch)
	}
	for k, v := range changes {
		t.st.SetControl(state.ControlKey(t.kind, t.name), k, v)
	}
	return t.st.Write(t.path)
}

// set and variants are the target set and the variants beside it (for a
// rollout control's checks of the children it names).
func (t *controlTarget) set(ctx context.Context, namespace string) (*pvsapi.PackageVariantSet, []pvapi.PackageVariant, error) {
	if t.cluster() {
		var list pvapi.PackageVariantList
		if err := t.c.List(ctx, &list, client.InNamespace(namespace)); err != nil {
			return nil, nil, fmt.Errorf("listing the children of %s: %w", t.key, err)
		}
		return t.obj.(*pvsapi.PackageVariantSet), list.Items, nil
	}
	i := slices.IndexFunc(t.st.Sets, func(s pvsapi.PackageVariantSet) bool { return s.Name == t.name })
	return &t.st.Sets[i], t.st.Variants, nil
}
