package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Index names the Porch store needs on the PackageRevision cache.
const (
	// IndexPackage keys revisions by "<repository>/<package>".
	IndexPackage = "pvkit.dev/package"
	// IndexOwner keys revisions by each owner UID.
	IndexOwner = "pvkit.dev/owner"
)

// Indexer registers cache indexes (controller-runtime's FieldIndexer).
type Indexer interface {
	IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error
}

// SetupIndexes registers the PackageRevision indexes, so that listing a
// package's or an owner's revisions is served from the watch cache, never by
// a namespace-wide LIST (F7).
func SetupIndexes(ctx context.Context, ix Indexer) error {
	if err := ix.IndexField(ctx, &porchapi.PackageRevision{}, IndexPackage, func(o client.Object) []string {
		pr := o.(*porchapi.PackageRevision)
		return []string{pr.Spec.RepositoryName + "/" + pr.Spec.PackageName}
	}); err != nil {
		return err
	}
	return ix.IndexField(ctx, &porchapi.PackageRevision{}, IndexOwner, func(o client.Object) []string {
		var uids []string
		for _, ref := range o.GetOwnerReferences() {
			uids = append(uids, string(ref.UID))
		}
		return uids
	})
}

// Porch is the store on a Porch server: a controller-runtime client whose
// cache has the indexes of SetupIndexes (reads) and writes to the API.
type Porch struct {
	Client client.Client
}

var _ Store = (*Porch)(nil)

// ListRevisions implements Store.
func (p *Porch) ListRevisions(ctx context.Context, k PackageKey) ([]Revision, error) {
	var l porchapi.PackageRevisionList
	if err := p.Client.List(ctx, &l, client.InNamespace(k.Namespace), client.MatchingFields{IndexPackage: k.Repository + "/" + k.Package}); err != nil {
		return nil, err
	}
	return fromList(l.Items), nil
}

// ListOwned implements Store.
func (p *Porch) ListOwned(ctx context.Context, namespace, uid string) ([]Revision, error) {
	var l porchapi.PackageRevisionList
	if err := p.Client.List(ctx, &l, client.InNamespace(namespace), client.MatchingFields{IndexOwner: uid}); err != nil {
		return nil, err
	}
	return fromList(l.Items), nil
}

// fromList converts a list, sorted by name: an informer cache lists in its
// map's order, and the reconcilers' drafts, targets and logs should not.
func fromList(items []porchapi.PackageRevision) []Revision {
	out := make([]Revision, 0, len(items))
	for i := range items {
		out = append(out, FromPorch(&items[i]))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// FromPorch converts a PackageRevision: the one conversion from Porch's API
// (the Porch store, the memory store's API view). Porch's lock names the
// upstream's git repository by URL, not by Repository object, so
// Lock.Repository is empty and locks are compared by package and ref.
func FromPorch(pr *porchapi.PackageRevision) Revision {
	r := Revision{Namespace: pr.Namespace, Name: pr.Name, Repository: pr.Spec.RepositoryName, Package: pr.Spec.PackageName,
		Workspace: pr.Spec.WorkspaceName, Revision: pr.Spec.Revision, Lifecycle: Lifecycle(pr.Spec.Lifecycle),
		Labels: pr.Labels, Annotations: pr.Annotations, ResourceVersion: pr.ResourceVersion, Created: pr.CreationTimestamp.Time,
		Owners: OwnersFromAPI(pr.OwnerReferences)}
	if r.Lifecycle == "" {
		r.Lifecycle = Draft
	}
	if l := pr.Status.UpstreamLock; l != nil && l.Git != nil {
		r.Lock = &Lock{Package: l.Git.Directory, Ref: l.Git.Ref}
	}
	return r
}

// ToPorch is a revision as Porch's API shows it: the one conversion to it
// (the memory store's API view, pvctl get -o yaml). The lock's repository
// is written as the git repo, where Porch has the repository's URL.
func ToPorch(r Revision) porchapi.PackageRevision {
	pr := porchapi.PackageRevision{
		TypeMeta: metav1.TypeMeta{APIVersion: porchapi.SchemeGroupVersion.String(), Kind: "PackageRevision"},
		ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: r.Name, Labels: r.Labels, Annotations: r.Annotations,
			ResourceVersion: r.ResourceVersion, OwnerReferences: OwnerRefsToAPI(r.Owners)},
		Spec: porchapi.PackageRevisionSpec{PackageName: r.Package, RepositoryName: r.Repository, WorkspaceName: r.Workspace,
			Revision: r.Revision, Lifecycle: porchapi.PackageRevisionLifecycle(r.Lifecycle)},
	}
	if !r.Created.IsZero() {
		pr.CreationTimestamp = metav1.NewTime(r.Created)
	}
	if r.Lock != nil {
		pr.Status.UpstreamLock = &porchapi.UpstreamLock{Type: porchapi.OriginType("git"), Git: &porchapi.GitLock{Repo: r.Lock.Repository, Directory: r.Lock.Package, Ref: r.Lock.Ref}}
	}
	return pr
}

// OwnerRefsToAPI converts owners to Kubernetes owner references.
func OwnerRefsToAPI(owners []OwnerRef) []metav1.OwnerReference {
	var out []metav1.OwnerReference
	for _, o := range owners {
		c := o.Controller
		out = append(out, metav1.OwnerReference{APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name, UID: types.UID(o.UID), Controller: &c})
	}
	return out
}

// OwnersFromAPI converts Kubernetes owner references to owners.
func OwnersFromAPI(refs []metav1.OwnerReference) []OwnerRef {
	var out []OwnerRef
	for _, o := range refs {
		out = append(out, OwnerRef{APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name, UID: string(o.UID), Controller: o.Controller != nil && *o.Controller})
	}
	return out
}

// CreateDraft implements Store.
func (p *Porch) CreateDraft(ctx context.Context, s DraftSpec) (Revision, error) {
	task := porchapi.Task{Type: porchapi.TaskType(s.Task.Type)}
	switch s.Task.Type {
	case Clone:
		task.Clone = &porchapi.PackageCloneTaskSpec{Upstream: porchapi.UpstreamPackage{UpstreamRef: &porchapi.PackageRevisionRef{Name: s.Task.Upstream}}}
	case Edit:
		task.Edit = &porchapi.PackageEditTaskSpec{Source: &porchapi.PackageRevisionRef{Name: s.Task.Source}}
	case Upgrade:
		task.Upgrade = &porchapi.PackageUpgradeTaskSpec{OldUpstream: porchapi.PackageRevisionRef{Name: s.Task.OldUpstream},
			NewUpstream: porchapi.PackageRevisionRef{Name: s.Task.NewUpstream}, LocalPackageRevisionRef: porchapi.PackageRevisionRef{Name: s.Task.Local},
			Strategy: porchapi.ResourceMerge}
	default:
		return Revision{}, fmt.Errorf("unknown task type %q", s.Task.Type)
	}
	pr := &porchapi.PackageRevision{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, OwnerReferences: OwnerRefsToAPI(s.Owners), Labels: s.Labels, Annotations: s.Annotations},
		Spec: porchapi.PackageRevisionSpec{PackageName: s.Package, RepositoryName: s.Repository, WorkspaceName: s.Workspace,
			Lifecycle: porchapi.PackageRevisionLifecycleDraft, Tasks: []porchapi.Task{task}},
	}
	if err := p.Client.Create(ctx, pr); err != nil {
		return Revision{}, wrap(err)
	}
	if err := p.pendingGates(ctx, pr, s.ReadinessGates); err != nil {
		return FromPorch(pr), fmt.Errorf("created %s/%s, but could not set its readiness gates %v: %w", pr.Namespace, pr.Name, s.ReadinessGates, err)
	}
	return FromPorch(pr), nil
}

// pendingGates adds the readiness gates, each with a False condition, to a
// draft just created: Porch v1.5.3 ignores them in a create, and writes a
// draft's spec.readinessGates and status.conditions into its Kptfile on
// update (replacing the lists, so the package's own are sent along). pr
// is the create's answer; a conflict (Porch's background refresh moved the
// draft on) is retried on a fresh read.
func (p *Porch) pendingGates(ctx context.Context, pr *porchapi.PackageRevision, gates []string) error {
	if len(gates) == 0 {
		return nil
	}
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if attempt > 0 {
			if err = p.Client.Get(ctx, client.ObjectKeyFromObject(pr), pr); err != nil {
				return wrap(err)
			}
		}
		for _, g := range gates {
			if !slices.ContainsFunc(pr.Spec.ReadinessGates, func(r porchapi.ReadinessGate) bool { return r.ConditionType == g }) {
				pr.Spec.ReadinessGates = append(pr.Spec.ReadinessGates, porchapi.ReadinessGate{ConditionType: g})
			}
			if !slices.ContainsFunc(pr.Status.Conditions, func(c porchapi.Condition) bool { return c.Type == g }) {
				pr.Status.Conditions = append(pr.Status.Conditions, porchapi.Condition{Type: g, Status: porchapi.ConditionFalse,
					Reason: PendingReason, Message: PendingMessage})
			}
		}
		if err = p.Client.Update(ctx, pr); !apierrors.IsConflict(err) {
			return wrap(err)
		}
	}
	return wrap(err)
}

// GetResources implements Store.
func (p *Porch) GetResources(ctx context.Context, namespace, name string) (Resources, error) {
	var prr porchapi.PackageRevisionResources
	if err := p.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &prr); err != nil {
		return Resources{}, wrap(err)
	}
	if prr.Spec.Resources == nil {
		return Resources{}, fmt.Errorf("package revision %s/%s has no resources", namespace, name)
	}
	return Resources{Files: prr.Spec.Resources, ResourceVersion: prr.ResourceVersion, Origin: &prr}, nil
}

// UpdateResources implements Store.
//
// An update of what GetResources returned sends that object back with the
// new files and no second read: Porch refuses it with a Conflict when the
// revision changed since (its resourceVersion check), as the read would have.
func (p *Porch) UpdateResources(ctx context.Context, namespace, name string, res Resources) (RenderStatus, error) {
	rs, _, err := p.UpdateResourcesRendered(ctx, namespace, name, res)
	return rs, err
}

// UpdateResourcesRendered implements Rendering: Porch answers an update
// with the rendered files and the new resourceVersion.
func (p *Porch) UpdateResourcesRendered(ctx context.Context, namespace, name string, res Resources) (RenderStatus, Resources, error) {
	var prr porchapi.PackageRevisionResources
	if o, ok := res.Origin.(*porchapi.PackageRevisionResources); ok && o.Namespace == namespace && o.Name == name &&
		res.ResourceVersion != "" && o.ResourceVersion == res.ResourceVersion {
		o.DeepCopyInto(&prr)
	} else {
		if err := p.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &prr); err != nil {
			return RenderStatus{}, Resources{}, wrap(err)
		}
		if res.ResourceVersion != "" && prr.ResourceVersion != res.ResourceVersion {
			return RenderStatus{}, Resources{}, fmt.Errorf("package revision %s/%s changed since version %s: %w", namespace, name, res.ResourceVersion, ErrConflict)
		}
	}
	prr.Spec.Resources = res.Files
	if err := p.Client.Update(ctx, &prr); err != nil {
		if isRenderFailure(err) {
			// Porch v1.5.3 fails the update and drops the render results from
			// its answer: the error text is all there is to report.
			return RenderStatus{Err: err.Error()}, Resources{}, errors.Join(ErrRenderFailed, err)
		}
		return RenderStatus{}, Resources{}, wrap(err)
	}
	rs, err := renderStatusOf(prr.Status.RenderStatus)
	if err != nil {
		return rs, Resources{}, err
	}
	return rs, Resources{Files: prr.Spec.Resources, ResourceVersion: prr.ResourceVersion, Origin: &prr}, nil
}

// renderFailureText is how Porch's error for a failed render begins its
// explanation (pkg/task's renderError, v1.5.3).
const renderFailureText = "Error occurred rendering package in kpt function pipeline"

func isRenderFailure(err error) bool {
	return apierrors.IsInternalError(err) && strings.Contains(err.Error(), renderFailureText)
}

// renderStatusOf carries Porch's render status over whole: the types have
// the same JSON, so every function's results and the exit code survive.
func renderStatusOf(in porchapi.RenderStatus) (RenderStatus, error) {
	var out RenderStatus
	b, err := json.Marshal(in)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		return RenderStatus{}, fmt.Errorf("reading Porch's render status: %w", err)
	}
	return out, nil
}

// Update implements Store.
func (p *Porch) Update(ctx context.Context, rev Revision) error {
	var pr porchapi.PackageRevision
	if err := p.Client.Get(ctx, client.ObjectKey{Namespace: rev.Namespace, Name: rev.Name}, &pr); err != nil {
		return wrap(err)
	}
	if rev.ResourceVersion != "" && pr.ResourceVersion != rev.ResourceVersion {
		return fmt.Errorf("package revision %s/%s changed since version %s: %w", rev.Namespace, rev.Name, rev.ResourceVersion, ErrConflict)
	}
	pr.OwnerReferences = OwnerRefsToAPI(rev.Owners)
	pr.Labels, pr.Annotations = rev.Labels, rev.Annotations
	pr.Spec.Lifecycle = porchapi.PackageRevisionLifecycle(rev.Lifecycle)
	return wrap(p.Client.Update(ctx, &pr))
}

// ApproveRevision implements Approving: a Proposed revision is published
// through Porch's approval subresource, as porchctl approve does.
func (p *Porch) ApproveRevision(ctx context.Context, namespace, name string) (Revision, error) {
	var pr porchapi.PackageRevision
	if err := p.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &pr); err != nil {
		return Revision{}, wrap(err)
	}
	if pr.Spec.Lifecycle != porchapi.PackageRevisionLifecycleProposed {
		return Revision{}, fmt.Errorf("package revision %s/%s is %s: only a Proposed revision can be approved", namespace, name, pr.Spec.Lifecycle)
	}
	pr.Spec.Lifecycle = porchapi.PackageRevisionLifecyclePublished
	if err := p.Client.SubResource("approval").Update(ctx, &pr); err != nil {
		return Revision{}, wrap(err)
	}
	return FromPorch(&pr), nil
}

// Delete implements Store.
func (p *Porch) Delete(ctx context.Context, namespace, name string) error {
	pr := &porchapi.PackageRevision{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	return wrap(p.Client.Delete(ctx, pr))
}

// wrap maps API errors to the store's.
func wrap(err error) error {
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return errors.Join(ErrNotFound, err)
	case apierrors.IsAlreadyExists(err):
		return errors.Join(ErrAlreadyExists, err)
	case apierrors.IsConflict(err):
		return errors.Join(ErrConflict, err)
	}
	return err
}
