package fakestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/api"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/porch"
	"github.com/pvkit/pvkit/orchestrator/store/tasks"
	"github.com/pvkit/pvkit/pkg/kptfile"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var prResource = schema.GroupResource{Group: "porch.kpt.dev", Resource: "packagerevisions"}

// Client is a controller-runtime client.Client view of the store, as
// Porch's API serves it: PackageRevisions and PackageRevisionResources come
// from the store, every other object from Base. It lets Porch's own
// reconcilers run on the same state as pvkit's, in benchmarks. Calls counts
// every API call made through it.
type Client struct {
	client.Client // Base: everything that is not Porch's
	store         *Store
	calls         map[string]int
}

// Client returns the view over base.
func (f *Store) Client(base client.Client) *Client {
	return &Client{Client: base, store: f, calls: map[string]int{}}
}

// Calls returns the API calls made through the view, by verb.
func (c *Client) Calls() map[string]int { return c.calls }

func (c *Client) count(verb string) { c.calls[verb]++ }

func toPorch(r store.Revision) porchapi.PackageRevision { return porch.ToAPI(r) }

func apiError(err error, name string) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return apierrors.NewNotFound(prResource, name)
	case errors.Is(err, store.ErrAlreadyExists):
		return apierrors.NewAlreadyExists(prResource, name)
	case errors.Is(err, store.ErrConflict):
		return apierrors.NewConflict(prResource, name, err)
	}
	return err
}

// Get implements client.Client.
func (c *Client) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.count("get")
	switch o := obj.(type) {
	case *porchapi.PackageRevision:
		for _, r := range c.store.All(key.Namespace) {
			if r.Name == key.Name {
				*o = c.withKptfileStatus(ctx, toPorch(r))
				return nil
			}
		}
		return apierrors.NewNotFound(prResource, key.Name)
	case *porchapi.PackageRevisionResources:
		res, err := c.store.GetResources(ctx, key.Namespace, key.Name)
		if err != nil {
			return apiError(err, key.Name)
		}
		*o = porchapi.PackageRevisionResources{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, ResourceVersion: res.ResourceVersion},
			Spec: porchapi.PackageRevisionResourcesSpec{Resources: res.Files}}
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// List implements client.Client (Porch revisions: the whole namespace).
func (c *Client) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	c.count("list")
	if l, ok := list.(*porchapi.PackageRevisionList); ok {
		lo := &client.ListOptions{}
		lo.ApplyOptions(opts)
		l.Items = nil
		for _, r := range c.store.All(lo.Namespace) {
			if matches(r, lo) {
				l.Items = append(l.Items, toPorch(r))
			}
		}
		return nil
	}
	return c.Client.List(ctx, list, opts...)
}

// matches applies the field selectors of porch.SetupIndexes' indexes, as a
// controller-runtime cache with those indexes does.
func matches(r store.Revision, lo *client.ListOptions) bool {
	if lo.FieldSelector == nil {
		return true
	}
	if v, ok := lo.FieldSelector.RequiresExactMatch(porch.IndexPackage); ok && v != r.Repository+"/"+r.Package {
		return false
	}
	if v, ok := lo.FieldSelector.RequiresExactMatch(porch.IndexOwner); ok && !r.OwnedBy(v) {
		return false
	}
	return true
}

// Create implements client.Client (a PackageRevision's first task makes it).
func (c *Client) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.count("create")
	pr, ok := obj.(*porchapi.PackageRevision)
	if !ok {
		return c.Client.Create(ctx, obj, opts...)
	}
	spec := store.DraftSpec{Namespace: pr.Namespace, Repository: pr.Spec.RepositoryName, Package: pr.Spec.PackageName,
		Workspace: pr.Spec.WorkspaceName, Labels: pr.Labels, Annotations: pr.Annotations}
	spec.Owners = api.Owners(pr.OwnerReferences)
	if len(pr.Spec.Tasks) != 1 {
		return fmt.Errorf("a new PackageRevision needs exactly one task")
	}
	switch t := pr.Spec.Tasks[0]; t.Type {
	case porchapi.TaskTypeClone:
		spec.Task = store.Task{Type: store.Clone, Upstream: t.Clone.Upstream.UpstreamRef.Name}
	case porchapi.TaskTypeEdit:
		spec.Task = store.Task{Type: store.Edit, Source: t.Edit.Source.Name}
	case porchapi.TaskTypeUpgrade:
		spec.Task = store.Task{Type: store.Upgrade, OldUpstream: t.Upgrade.OldUpstream.Name, NewUpstream: t.Upgrade.NewUpstream.Name, Local: t.Upgrade.LocalPackageRevisionRef.Name}
	default:
		return fmt.Errorf("unsupported task %q", t.Type)
	}
	rev, err := c.store.CreateDraft(ctx, spec)
	if err != nil {
		return apiError(err, pr.Name)
	}
	*pr = c.withKptfileStatus(ctx, toPorch(rev))
	return nil
}

// Update implements client.Client.
func (c *Client) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.count("update")
	switch o := obj.(type) {
	case *porchapi.PackageRevision:
		rev := store.Revision{Namespace: o.Namespace, Name: o.Name, Lifecycle: store.Lifecycle(o.Spec.Lifecycle), Labels: o.Labels, Annotations: o.Annotations,
			Owners: api.Owners(o.OwnerReferences)}
		if err := c.patchKptfile(ctx, o); err != nil {
			return apiError(err, o.Name)
		}
		return apiError(c.store.Update(ctx, rev), o.Name)
	case *porchapi.PackageRevisionResources:
		rs, err := c.store.UpdateResources(ctx, o.Namespace, o.Name, store.Resources{Files: o.Spec.Resources, ResourceVersion: o.ResourceVersion})
		if errors.Is(err, store.ErrRenderFailed) { // Porch's answer: an internal error, no results
			return apierrors.NewInternalError(fmt.Errorf("\nError occurred rendering package in kpt function pipeline.\nPackage has NOT been pushed to remote.\nDetails: %s", rs.Err))
		}
		if err != nil {
			return apiError(err, o.Name)
		}
		res, err := c.store.GetResources(ctx, o.Namespace, o.Name)
		if err != nil {
			return apiError(err, o.Name)
		}
		o.ResourceVersion, o.Spec.Resources = res.ResourceVersion, res.Files // Porch answers with the rendered files
		return renderStatusInto(rs, &o.Status.RenderStatus)
	}
	return c.Client.Update(ctx, obj, opts...)
}

// withKptfileStatus adds what Porch reads from a revision's Kptfile:
// spec.readinessGates and status.conditions (List leaves them out: nothing
// pvkit lists needs them, and it saves parsing every Kptfile).
func (c *Client) withKptfileStatus(ctx context.Context, pr porchapi.PackageRevision) porchapi.PackageRevision {
	kf := c.kptfile(ctx, pr.Namespace, pr.Name)
	if kf == nil {
		return pr
	}
	gates, _ := kf.ReadinessGates()
	for _, g := range gates {
		pr.Spec.ReadinessGates = append(pr.Spec.ReadinessGates, porchapi.ReadinessGate{ConditionType: g})
	}
	conds, _ := kf.Conditions()
	for _, cd := range conds {
		pr.Status.Conditions = append(pr.Status.Conditions, porchapi.Condition{Type: cd.Type, Status: porchapi.ConditionStatus(cd.Status), Reason: cd.Reason, Message: cd.Message})
	}
	return pr
}

func (c *Client) kptfile(ctx context.Context, namespace, name string) *kptfile.Kptfile {
	res, err := c.store.GetResources(ctx, namespace, name)
	if err != nil {
		return nil
	}
	kf, _ := kptfile.FromFiles(res.Files)
	return kf
}

// patchKptfile does what Porch does when a draft's PackageRevision is
// updated: its spec.readinessGates and status.conditions are written into
// the Kptfile (Porch replaces the lists when they are not empty; this
// merges, the same for a client that sends them back whole, as pvkit does).
func (c *Client) patchKptfile(ctx context.Context, pr *porchapi.PackageRevision) error {
	if len(pr.Spec.ReadinessGates) == 0 && len(pr.Status.Conditions) == 0 {
		return nil
	}
	res, err := c.store.GetResources(ctx, pr.Namespace, pr.Name)
	if err != nil {
		return err
	}
	for _, r := range c.store.All(pr.Namespace) {
		if r.Name == pr.Name && r.Lifecycle != store.Draft {
			return nil // Porch patches drafts only
		}
	}
	var gates []string
	for _, g := range pr.Spec.ReadinessGates {
		gates = append(gates, g.ConditionType)
	}
	var conds []kptfile.Condition
	for _, cd := range pr.Status.Conditions {
		conds = append(conds, kptfile.Condition{Type: cd.Type, Status: string(cd.Status), Reason: cd.Reason, Message: cd.Message})
	}
	before := res.Files[kptfile.FileName]
	out, err := tasks.WithGates(res.Files, gates, conds)
	if err != nil {
		return err
	}
	if out[kptfile.FileName] == before {
		return nil
	}
	_, err = c.store.UpdateResources(ctx, pr.Namespace, pr.Name, res)
	return err
}

// Delete implements client.Client.
func (c *Client) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	c.count("delete")
	if pr, ok := obj.(*porchapi.PackageRevision); ok {
		return apiError(c.store.Delete(ctx, pr.Namespace, pr.Name), pr.Name)
	}
	return c.Client.Delete(ctx, obj, opts...)
}

// Status counts status writes, which go to Base.
func (c *Client) Status() client.SubResourceWriter {
	c.count("status")
	return c.Client.Status()
}

// SubResource serves Porch's approval subresource of PackageRevisions (an
// update to Published approves a Proposed revision); any other goes to Base.
func (c *Client) SubResource(sub string) client.SubResourceClient {
	if sub == "approval" {
		return approval{c}
	}
	return c.Client.SubResource(sub)
}

type approval struct{ c *Client }

func (a approval) Get(context.Context, client.Object, client.Object, ...client.SubResourceGetOption) error {
	return errors.New("get of the approval subresource is not served")
}

func (a approval) Create(context.Context, client.Object, client.Object, ...client.SubResourceCreateOption) error {
	return errors.New("create of the approval subresource is not served")
}

func (a approval) Patch(context.Context, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
	return errors.New("patch of the approval subresource is not served")
}

func (a approval) Update(ctx context.Context, obj client.Object, _ ...client.SubResourceUpdateOption) error {
	a.c.count("approve")
	pr, ok := obj.(*porchapi.PackageRevision)
	if !ok || pr.Spec.Lifecycle != porchapi.PackageRevisionLifecyclePublished {
		return apierrors.NewBadRequest("the approval subresource takes a PackageRevision with lifecycle Published")
	}
	rev, err := a.c.store.ApproveRevision(ctx, pr.Namespace, pr.Name)
	if err != nil {
		return apiError(err, pr.Name)
	}
	*pr = a.c.withKptfileStatus(ctx, toPorch(rev))
	return nil
}

// Store returns the store the view serves.
func (c *Client) Store() *Store { return c.store }

// renderStatusInto converts the store's render status to Porch's (same JSON).
func renderStatusInto(in store.RenderStatus, out *porchapi.RenderStatus) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
