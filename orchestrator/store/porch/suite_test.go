package porch_test

import (
	"testing"

	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/fakestore"
	"github.com/pvkit/pvkit/orchestrator/store/porch"
	"github.com/pvkit/pvkit/orchestrator/store/storetest"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// porchHarness is the Porch store on a client that serves PackageRevisions
// and PackageRevisionResources as Porch's API does (fakestore.Client: the
// engine's semantics behind Porch's types, field-selected lists, Porch's
// errors); the seeding goes to the engine, as a person would publish and
// approve through Porch.
type porchHarness struct {
	*porch.Store
	fake *fakestore.Store
}

func (h porchHarness) AddRepository(namespace, name string) { h.fake.AddRepository(namespace, name) }
func (h porchHarness) Publish(namespace, repo, pkg string, files map[string]string) store.Revision {
	return h.fake.Publish(namespace, repo, pkg, files)
}
func (h porchHarness) Approve(namespace, name string) (store.Revision, error) {
	return h.fake.Approve(namespace, name)
}

// The shared store suite runs against the Porch store too, so the store the
// controller uses is held to the same semantics as the in-memory and git
// stores.
func TestPorchStoreSuite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		f := fakestore.New()
		view := f.Client(fake.NewClientBuilder().WithScheme(runtime.NewScheme()).Build())
		return porchHarness{Store: &porch.Store{Client: view}, fake: f}
	})
}
