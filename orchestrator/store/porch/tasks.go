package porch

import (
	"fmt"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store"
)

// apiTask is a task as Porch's spec.tasks has it: the one conversion to
// it (a create, a revision's tasks as Porch shows them). An upgrade merges
// resources (Porch's default, resource-merge).
func apiTask(t store.Task) (porchapi.Task, error) {
	task := porchapi.Task{Type: porchapi.TaskType(t.Type)}
	switch t.Type {
	case store.Clone:
		task.Clone = &porchapi.PackageCloneTaskSpec{Upstream: porchapi.UpstreamPackage{UpstreamRef: &porchapi.PackageRevisionRef{Name: t.Upstream}}}
	case store.Edit:
		task.Edit = &porchapi.PackageEditTaskSpec{Source: &porchapi.PackageRevisionRef{Name: t.Source}}
	case store.Upgrade:
		task.Upgrade = &porchapi.PackageUpgradeTaskSpec{OldUpstream: porchapi.PackageRevisionRef{Name: t.OldUpstream},
			NewUpstream: porchapi.PackageRevisionRef{Name: t.NewUpstream}, LocalPackageRevisionRef: porchapi.PackageRevisionRef{Name: t.Local},
			Strategy: porchapi.ResourceMerge}
	default:
		return porchapi.Task{}, fmt.Errorf("unknown task type %q", t.Type)
	}
	return task, nil
}

// tasksOf are Porch's spec.tasks as the store's tasks: the clone, edit and
// upgrade tasks (an init or another kind is not one pvkit makes, and left
// out).
func tasksOf(tasks []porchapi.Task) []store.Task {
	var out []store.Task
	for _, t := range tasks {
		switch {
		case t.Clone != nil && t.Clone.Upstream.UpstreamRef != nil:
			out = append(out, store.Task{Type: store.Clone, Upstream: t.Clone.Upstream.UpstreamRef.Name})
		case t.Edit != nil && t.Edit.Source != nil:
			out = append(out, store.Task{Type: store.Edit, Source: t.Edit.Source.Name})
		case t.Upgrade != nil:
			out = append(out, store.Task{Type: store.Upgrade, OldUpstream: t.Upgrade.OldUpstream.Name, NewUpstream: t.Upgrade.NewUpstream.Name,
				Local: t.Upgrade.LocalPackageRevisionRef.Name})
		}
	}
	return out
}
