// Package store is what the orchestrator needs from Porch, behind one small
// interface: list a package's revisions, create a draft by clone, edit or
// upgrade, read and write a revision's files, update its metadata and
// lifecycle, delete it. The implementations are its subpackages, side by
// side: porch (Porch itself, on a controller-runtime client), memory (the
// in-memory engine that behaves like Porch), gitstore (local git
// repositories in Porch's layout, on that engine), and fakestore (the
// engine with call counts and faults, and a client that serves it as
// Porch's API does: test doubles only). All of them pass the shared suite
// (storetest); the Porch store runs it on fakestore.Client (field-selected
// lists, Porch's errors, Porch's render failure).
//
// Listing is per package (repository + package name), never the whole
// namespace (rule: no-namespace-list).
package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/pvkit/pvkit/orchestrator/api/render"
	"github.com/pvkit/pvkit/pkg/api/meta"
)

// Lifecycle of a package revision: pkg/api/meta's, the one type for it.
type Lifecycle = meta.Lifecycle

// The lifecycles, by their short names here.
const (
	Draft            = meta.LifecycleDraft
	Proposed         = meta.LifecycleProposed
	Published        = meta.LifecyclePublished
	DeletionProposed = meta.LifecycleDeletionProposed
)

// OwnerRef is an owner of a revision (pkg/api/meta's owner reference, the
// one type pvkit has for it).
type OwnerRef = meta.OwnerReference

// Lock records the upstream a revision was cloned or upgraded from, as
// Porch's status.upstreamLock does: the upstream repository and package and
// the git ref (`<package>/v<N>` for a published revision, else
// `<package>/<workspace>`, or `drafts/...`).
//
// URL and Commit are what Porch writes besides (rule porch-clone-shape):
// the Kptfile's upstream names the repository by its git URL, and the lock
// has the commit. A store that knows them sets them on the lock it gives
// a clone or upgrade; a lock read back from a Kptfile that names a URL has
// no Repository (it is matched by package and ref).
type Lock struct {
	Repository, Package, Ref string
	URL, Commit              string
}

// Revision returns the revision number in the ref (`.../v3` gives 3), or -1.
func (l *Lock) Revision() int {
	if l == nil {
		return -1
	}
	last := l.Ref[strings.LastIndexByte(l.Ref, '/')+1:]
	n, err := strconv.Atoi(strings.TrimPrefix(last, "v"))
	if err != nil || !strings.HasPrefix(last, "v") {
		return -1
	}
	return n
}

// LockFor is the lock a clone or upgrade from r records, its ref the short
// name of r's git ref as Porch records it: `<package>/v<N>` when r is
// published, `<package>/<tag>` for a tag Porch could not number (the
// catalog's podinfo-helm/v6.6.0; it was `v6.6.0`, a ref git does not
// have), the branch for Porch's branch placeholder,
// `drafts/<package>/<workspace>` otherwise.
func LockFor(r Revision) *Lock {
	ref := fmt.Sprintf("drafts/%s/%s", r.Package, r.Workspace)
	switch {
	case r.Lifecycle.IsPublished() && r.Revision > 0:
		ref = fmt.Sprintf("%s/v%d", r.Package, r.Revision)
	case r.Lifecycle.IsPublished() && r.Placeholder:
		// Revision -1: Porch's placeholder for the branch head, whose
		// workspace is the branch, and a clone of it is locked to the branch.
		ref = r.Workspace
	case r.Lifecycle.IsPublished():
		ref = r.Package + "/" + r.Workspace // a tag Porch could not number
	}
	return &Lock{Repository: r.Repository, Package: r.Package, Ref: ref}
}

// Matches reports whether the lock points at upstream revision r. A lock
// without a repository (Porch records the git URL, not the Repository) is
// compared by package and ref. A published revision numbered -1 is a branch
// (Porch's placeholder, workspace = branch: lock ref "main") or a tag Porch
// could not number (workspace v2.0.0: lock ref "app/v2.0.0"); both match.
// Porch's own controllers clone the `main` placeholder by default, so
// fleets they built are locked to it.
func (l *Lock) Matches(r Revision) bool {
	want := LockFor(r)
	if l == nil || (l.Repository != "" && l.Repository != want.Repository) || l.Package != want.Package {
		return false
	}
	// A repository scoped to a directory (Porch's spec.git.directory) names
	// the package relative to it and its refs with the whole path: the lock
	// of kindnet in /infra/capi has ref infra/capi/kindnet/v3.0.0.
	under := func(ref string) bool { return l.Ref == ref || strings.HasSuffix(l.Ref, "/"+ref) }
	if r.Lifecycle.IsPublished() && r.Revision < 0 {
		return l.Ref == r.Workspace || under(r.Package+"/"+r.Workspace)
	}
	return under(want.Ref)
}

// Same reports whether two locks name the same upstream revision: the same
// package and ref, one of them perhaps relative to a repository's
// directory (Porch's spec.git.directory: ref infra/capi/kindnet/v3.0.0 and
// kindnet/v3.0.0), a draft's ref never a published one's, and the
// repository and commit equal where both know them. Nil is the same as
// nothing.
func (l *Lock) Same(o *Lock) bool {
	if l == nil || o == nil {
		return false
	}
	under := func(a, b string) bool {
		if strings.HasPrefix(a, "drafts/") != strings.HasPrefix(b, "drafts/") {
			return false // a draft's ref is never a published revision's
		}
		return a == b || strings.HasSuffix(a, "/"+b) || strings.HasSuffix(b, "/"+a)
	}
	return under(l.Package, o.Package) && under(l.Ref, o.Ref) &&
		(l.Repository == "" || o.Repository == "" || l.Repository == o.Repository) && (l.Commit == "" || o.Commit == "" || l.Commit == o.Commit)
}

// Revision is a package revision.
type Revision struct {
	Namespace, Name                string
	Repository, Package, Workspace string
	Revision                       int // 0 until published
	Lifecycle                      Lifecycle
	Owners                         []OwnerRef
	Labels, Annotations            map[string]string
	Lock                           *Lock
	ResourceVersion                string
	// Created is when the revision was created (zero: unknown; Porch's
	// creationTimestamp), for approval.nephio.org/delay.
	Created time.Time
	// Placeholder: Porch's branch placeholder (revision -1, workspace = the
	// repository's branch), the package as the branch's head holds it
	// (rule content-drift compares it with the newest published revision).
	Placeholder bool
	// Content identifies the revision's files where the store knows it
	// without reading them (the git store: the git tree id of the
	// package's directory): equal non-empty Contents are equal files; ""
	// when not known (Porch, the memory store).
	Content string
	// Commit is the git commit a branch placeholder's content is at, or
	// the commit that published a numbered revision (its tag's), where the
	// store knows it (the git store; Porch v1.5.3: the revision's resource
	// version, which its git cache makes the commit); "" otherwise.
	Commit string
	// Branch is the repository's branch a published revision is on
	// (Porch: its Repository's spec.git.branch, main by default; the git
	// store's), "" where not known.
	Branch string
	// PublishedBy is who approved a published revision, where the store
	// knows it: Porch's status.publishedBy (the identity of the approval's
	// request); pvctl approve's git identity ("Name <email>"), "pvctl run
	// (approval by policy)" for run's approvals; "" otherwise (a revision
	// published before pvkit recorded it, a seeded publish). A person's
	// edit found in the revision is recorded as approved by it.
	PublishedBy string
	// Tasks are the tasks that made the revision, as Porch's spec.tasks
	// lists them (the clone, edit or upgrade of a draft); none where the
	// store does not know them (a revision published from git).
	Tasks []Task
	// Unreadable, when not "", says why the store lists a branch
	// placeholder whose package it cannot read (a Kptfile that does not
	// parse, a symbolic link, a file over the bounds): nothing on the
	// branch hides from drift. Its files cannot be read
	// (GetResources fails with ErrUnreadable).
	Unreadable string
}

// OwnedBy reports whether uid owns the revision.
func (r *Revision) OwnedBy(uid string) bool {
	for _, o := range r.Owners {
		if o.UID == uid {
			return true
		}
	}
	return false
}

// Key identifies a package in a namespace.
func (r *Revision) Key() PackageKey {
	return PackageKey{Namespace: r.Namespace, Repository: r.Repository, Package: r.Package}
}

// PackageKey identifies a package: namespace, repository, package name.
type PackageKey struct {
	Namespace, Repository, Package string
}

func (k PackageKey) String() string { return k.Namespace + "/" + k.Repository + "/" + k.Package }

// TaskType is how a draft is made.
type TaskType string

const (
	Clone   TaskType = "clone"
	Edit    TaskType = "edit"
	Upgrade TaskType = "upgrade"
)

// Task makes a draft: clone Upstream; edit Source; upgrade Local from
// OldUpstream to NewUpstream (a three-way merge keeping local changes).
type Task struct {
	Type                            TaskType
	Upstream                        string
	Source                          string
	OldUpstream, NewUpstream, Local string
}

// DraftSpec asks for a new draft.
type DraftSpec struct {
	Namespace, Repository, Package, Workspace string
	Owners                                    []OwnerRef
	Labels, Annotations                       map[string]string
	Task                                      Task
	// ReadinessGates are condition types the draft carries from its
	// creation, each with a False condition (reason Pending), so that it is
	// not approvable until its owner sets them True (the mutation chain does,
	// in the write that finishes the draft). The stores that write files
	// themselves put them in the draft's first commit; Porch ignores a new
	// PackageRevision's readiness gates, so the Porch store writes them with
	// an update right after the create.
	ReadinessGates []string
}

// The condition a store writes for each readiness gate a new draft is
// created with (DraftSpec.ReadinessGates).
const (
	PendingReason  = "Pending"
	PendingMessage = "set when the draft was created; True once its owner has finished it"
)

// Resources are a revision's files.
type Resources struct {
	Files           map[string]string
	ResourceVersion string
	// Origin is the store's own copy of what GetResources read (the Porch
	// store: the PackageRevisionResources object), so that writing back what
	// was just read is one API request, not a read and a write. Stores that
	// need nothing leave it nil; an update without it reads first.
	Origin any
}

// RenderStatus is Porch's render outcome after an update: each function's
// results, the exit code and the error, as Porch's PackageRevisionResources
// status has them (same JSON), carried whole into the variant's status.
type RenderStatus = render.RenderStatus

// Store is Porch, as the orchestrator uses it.
type Store interface {
	// ListRevisions lists the revisions of one package.
	ListRevisions(ctx context.Context, key PackageKey) ([]Revision, error)
	// ListOwned lists the revisions in a namespace owned by uid.
	ListOwned(ctx context.Context, namespace, uid string) ([]Revision, error)
	// CreateDraft creates a draft; an existing workspace is ErrAlreadyExists.
	CreateDraft(ctx context.Context, spec DraftSpec) (Revision, error)
	// GetResources reads a revision's files.
	GetResources(ctx context.Context, namespace, name string) (Resources, error)
	// UpdateResourcesRendered writes a draft's files (optimistic on
	// ResourceVersion) and returns Porch's render outcome with the
	// revision as it is afterwards: its files (Porch renders the package
	// and answers with the result) and its new version, so that a caller
	// can check the result without reading it again. (The stores also
	// have UpdateResources, the same without the answer, for their own
	// tests and helpers: no reconciler wants less.)
	UpdateResourcesRendered(ctx context.Context, namespace, name string, res Resources) (RenderStatus, Resources, error)
	// Update writes a revision's owners, labels, annotations and lifecycle.
	Update(ctx context.Context, rev Revision) error
	// Delete deletes a revision.
	Delete(ctx context.Context, namespace, name string) error
	// ApproveRevision publishes a Proposed revision with the next number
	// (Porch: its approval subresource), for approval by policy.
	ApproveRevision(ctx context.Context, namespace, name string) (Revision, error)
	// Read reads a revision directly, past any cache (ErrNotFound when it
	// does not exist). The reconcilers list from an informer cache, which
	// Porch can leave without a revision for a long time (a watch event it
	// did not send); Read is what settles whether it is there.
	Read(ctx context.Context, namespace, name string) (Revision, error)
}

// Errors the stores return (wrapped).
var (
	ErrNotFound      = errors.New("not found")
	ErrAlreadyExists = errors.New("already exists")
	ErrConflict      = errors.New("conflict")
	// ErrNoResources: the revision is listed but holds no files at all (Porch
	// v1.5.3 leaves such a draft when its create fails half-way and the
	// rollback cannot delete the draft's branch).
	ErrNoResources = errors.New("has no resources")
	// ErrRenderFailed: the package's Kptfile pipeline failed to render after
	// an update, so the files were not written (Porch: "Package has NOT been
	// pushed to remote"). UpdateResourcesRendered then returns what it knows of the
	// render together with the error.
	ErrRenderFailed = errors.New("render failed")
	// ErrUnreadable: the store lists the revision (Revision.Unreadable) but
	// cannot read its files: a branch whose package does not load.
	ErrUnreadable = errors.New("unreadable")
)

// RevisionName is Porch's name of a revision: `<repo>.<package>.<workspace>`.
func RevisionName(repo, pkg, workspace string) string {
	return fmt.Sprintf("%s.%s.%s", repo, strings.ReplaceAll(pkg, "/", "."), workspace)
}

// Overlay is base with add's entries over it (labels or annotations a
// revision gets), a new map; base itself when add is empty.
func Overlay(base, add map[string]string) map[string]string {
	if len(add) == 0 {
		return base
	}
	out := maps.Clone(base)
	if out == nil {
		out = make(map[string]string, len(add))
	}
	maps.Copy(out, add)
	return out
}

// IsCommit reports whether s is a git commit id (40 lower-case hex digits).
func IsCommit(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
