package local

import (
	"github.com/pvkit/pvkit/orchestrator/api"
	"github.com/pvkit/pvkit/orchestrator/embedded"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Scheme holds every type pvctl reads or writes (the orchestrator's).
func Scheme() (*runtime.Scheme, error) { return api.Scheme() }

// UID is the UID pvctl run gives an object (embedded.UID): the same for
// the same kind, namespace and name on every run.
func UID(kind, namespace, name string) types.UID { return embedded.UID(kind, namespace, name) }

// cluster is pvctl run's embedded API server (orchestrator/embedded), with
// the run's holds (pvctl run without --prune holds removals back) and
// notes.
type cluster = embedded.Cluster

// note records a change to a set or variant for the run's report.
type note func(format string, a ...any)

func newCluster(scheme *runtime.Scheme, pr *pruner, noteFn note, objs ...client.Object) *cluster {
	return embedded.New(embedded.Options{Scheme: scheme, Objects: objs, Hold: pr.hold, Note: noteFn})
}
