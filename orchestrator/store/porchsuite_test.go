package store_test

import (
	"testing"

	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/memory"
	"github.com/pvkit/pvkit/orchestrator/store/storetest"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// porchHarness is the Porch store on a client that serves PackageRevisions
// and PackageRevisionResources as Porch's API does (memory.Client: the
// engine's semantics behind Porch's types, field-selected lists, Porch's
// errors); the seeding goes to the engine, as a person would publish and
// approve through Porch.
type porchHarness struct {
	*store.Porch
	fake *memory.Fake
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
		f := memory.NewFake()
		view := f.Client(fake.NewClientBuilder().WithScheme(runtime.NewScheme()).Build())
		return porchHarness{Porch: &store.Porch{Client: view}, fake: f}
	})
}
