// Package porch is the store on a Porch server: PackageRevisions read from
// the controller's watch cache through two indexes (per package, per owner;
// rule: no-namespace-list), PackageRevisionResources read and written
// directly (never cached), drafts created with Porch's clone, edit and
// upgrade tasks, approval through Porch's approval subresource. It is the
// one place that converts between Porch's PackageRevision and the store's
// Revision (FromAPI, ToAPI). It passes the shared store suite
// (store/storetest) on fakestore.Client, a client that serves the in-memory
// engine as Porch's API does.
package porch
