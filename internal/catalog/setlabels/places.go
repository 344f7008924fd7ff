package setlabels

import (
	"sort"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// The places labels go, as paths from the map that holds them. "create"
// adds a key that is not there; "update" only changes a key that is.
const (
	create = true
	update = false
)

// kindOf matches an object as the catalog's function does: an empty group
// or version matches any.
type kindOf struct{ group, version, kind string }

func (k kindOf) of(o *fn.KubeObject) bool { return o.IsGVK(k.group, k.version, k.kind) }

func anyOf(o *fn.KubeObject, kinds ...kindOf) bool {
	for _, k := range kinds {
		if k.of(o) {
			return true
		}
	}
	return false
}

var (
	service     = kindOf{"", "v1", "Service"}
	replication = kindOf{"", "v1", "ReplicationController"}
	deployment  = kindOf{"", "", "Deployment"}
	replicaSet  = kindOf{"", "", "ReplicaSet"}
	daemonSet   = kindOf{"", "", "DaemonSet"}
	statefulSet = kindOf{"apps", "", "StatefulSet"}
	job         = kindOf{"batch", "", "Job"}
	cronJob     = kindOf{"batch", "", "CronJob"}
	pdb         = kindOf{"policy", "", "PodDisruptionBudget"}
	netpol      = kindOf{"networking.k8s.io", "", "NetworkPolicy"}
)

// object labels one object: its metadata, its selectors, then what its spec
// holds (pod template, job template, volume claim templates, network policy
// peers).
func (s *SetLabels) object(o *fn.KubeObject) error {
	if err := s.set(&o.SubObject, create, "metadata", "labels"); err != nil {
		return err
	}
	if err := s.selectors(o); err != nil {
		return err
	}
	spec := o.GetMap("spec")
	if spec == nil {
		return nil
	}
	if anyOf(o, replication, deployment, replicaSet, daemonSet, statefulSet, job) {
		if err := s.podTemplate(spec.GetMap("template")); err != nil {
			return nil // v0.2.x stops at a template it cannot label, silently
		}
	}
	if cronJob.of(o) {
		if err := s.jobTemplate(spec.GetMap("jobTemplate")); err != nil {
			return err
		}
	}
	if statefulSet.of(o) {
		claims, _, err := spec.NestedSlice("volumeClaimTemplates")
		if err != nil {
			return err
		}
		for _, c := range claims {
			if err := s.set(c, create, "metadata", "labels"); err != nil {
				return err
			}
			if err := s.set(c, update, "selector", "matchLabels"); err != nil {
				return err
			}
		}
	}
	if netpol.of(o) {
		return s.peers(spec)
	}
	return nil
}

// selectors are the object's own selectors.
func (s *SetLabels) selectors(o *fn.KubeObject) error {
	top := &o.SubObject
	if anyOf(o, service, replication) {
		if err := s.set(top, create, "spec", "selector"); err != nil {
			return err
		}
	}
	switch {
	case anyOf(o, deployment, replicaSet, daemonSet, statefulSet):
		if err := s.set(top, create, "spec", "selector", "matchLabels"); err != nil {
			return err
		}
	case anyOf(o, job, pdb):
		if err := s.set(top, update, "spec", "selector", "matchLabels"); err != nil {
			return err
		}
	}
	if netpol.of(o) {
		return s.set(top, update, "spec", "podSelector", "matchLabels")
	}
	return nil
}

// jobTemplate is a CronJob's: its metadata, its selector, its pod template.
func (s *SetLabels) jobTemplate(t *fn.SubObject) error {
	spec, err := s.template(t)
	if spec == nil || err != nil {
		return err
	}
	if err := s.set(spec, update, "selector", "matchLabels"); err != nil {
		return err
	}
	return s.podTemplate(spec.GetMap("template"))
}

// podTemplate labels a pod template's metadata and the label selectors of
// its spec's topology spread constraints and (see the package doc) its
// affinity.
func (s *SetLabels) podTemplate(t *fn.SubObject) error {
	spec, err := s.template(t)
	if spec == nil || err != nil {
		return err
	}
	for _, c := range spec.GetSlice("topologySpreadConstraints") {
		if err := s.set(c, update, "labelSelector", "matchLabels"); err != nil {
			return err
		}
	}
	affinity := spec.GetMap("affinity")
	if affinity == nil {
		return nil
	}
	for _, kind := range []string{"podAffinity", "podAntiAffinity"} {
		if affinity.GetMap(kind) == nil {
			continue
		}
		for _, term := range affinity.GetSlice("preferredDuringSchedulingIgnoredDuringExecution") {
			if err := s.set(term.GetMap("podAffinityTerm"), update, "labelSelector", "matchLabels"); err != nil {
				return err
			}
		}
		for _, term := range affinity.GetSlice("requiredDuringSchedulingIgnoredDuringExecution") {
			if err := s.set(term, update, "labelSelector", "matchLabels"); err != nil {
				return err
			}
		}
	}
	return nil
}

// peers are a NetworkPolicy's ingress sources and egress destinations.
func (s *SetLabels) peers(spec *fn.SubObject) error {
	for _, rule := range []struct{ rules, peers string }{{"ingress", "from"}, {"egress", "to"}} {
		for _, r := range spec.GetSlice(rule.rules) {
			for _, p := range r.GetSlice(rule.peers) {
				if err := s.set(p, update, "podSelector", "matchLabels"); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// template labels a template's metadata and returns its spec (nil when
// there is no template or no spec).
func (s *SetLabels) template(t *fn.SubObject) (*fn.SubObject, error) {
	if t == nil {
		return nil, nil
	}
	if err := s.set(t, create, "metadata", "labels"); err != nil {
		return nil, err
	}
	return t.GetMap("spec"), nil
}

// set puts each label, in sorted key order, into the map at path under o:
// a key already there with another value is changed; a missing one is added
// only with create. Every label counts, changed or not (the function's
// "set N labels" result counts so).
func (s *SetLabels) set(o *fn.SubObject, create bool, path ...string) error {
	if o == nil {
		return nil
	}
	keys := make([]string, 0, len(s.Labels))
	for k := range s.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		field := append(append([]string{}, path...), k)
		old, found, err := o.NestedString(field...)
		if err != nil {
			return err
		}
		if (found && old != s.Labels[k]) || (!found && create) {
			if err := o.SetNestedString(s.Labels[k], field...); err != nil {
				return err
			}
		}
		s.count++
	}
	return nil
}
