package packagevariant

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/observe"

	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/orchestrator/api"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/embedded"
	"github.com/pvkit/pvkit/orchestrator/remote"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// edgeClusters is a Clusters of test: one reader per cluster, or an error.
type edgeClusters struct {
	readers map[string]client.Reader
	err     error
	failed  []string
}

func (c *edgeClusters) Reader(_ context.Context, namespace, cluster string) (client.Reader, error) {
	if c.err != nil {
		return nil, c.err
	}
	if r, ok := c.readers[cluster]; ok {
		return r, nil
	}
	return nil, &remote.KubeconfigError{Secret: namespace + "/" + remote.SecretName(cluster), Err: errors.New("not found")}
}

func (c *edgeClusters) Failed(namespace, cluster string) { c.failed = append(c.failed, cluster) }

// refusingReader answers every read as a stopped API server does.
type refusingReader struct{ client.Reader }

func (refusingReader) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return &url.Error{Op: "Get", URL: "https://127.0.0.1:6444/apis/example.com/v1/namespaces/flux-system/teams/deploy-sync",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
}

// Issue 58 #1 and #3 (rule health-from-the-clusters): a check that names
// a cluster reads its object there, in the check's namespace, never in
// the management cluster; a controller that reads no other cluster, a
// missing kubeconfig and a stopped API server are each named in the
// target's health (Unknown), the last one marked failed for the next
// read; the object's own words are in the health (reported); a variant
// waiting on another cluster comes back on the poll, not the observe
// interval.
func TestHealthFromAnotherCluster(t *testing.T) {
	// The same object in the management cluster must never be read.
	e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "ana"), team("deploy-sync", "local"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(strings.Replace(healthVariantYAML, "    nameExpr:", "    clusterExpr: downstream.repo\n    namespace: flux-system\n    nameExpr:", 1))
	e.mustReconcile("app-prod")
	pub, err := e.store.Approve(ns, e.downstream("app-prod")[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	health := func() pvapi.TargetHealth {
		t.Helper()
		e.mustReconcile("app-prod")
		ts := e.get("app-prod").Status.DownstreamTargets
		if len(ts) != 1 || ts[0].Health == nil {
			t.Fatalf("targets: %+v", ts)
		}
		return *ts[0].Health
	}
	const object = "cluster deploy: Team flux-system/deploy-sync"
	h := health() // no Clusters: this process reads no other cluster
	if h.Status != metav1.ConditionUnknown || h.Reason != pvapi.ReasonKubeconfigUnavailable || h.Object != object ||
		h.Message != "cannot read "+object+": the kubeconfig Secret default/deploy-kubeconfig: this controller reads no other cluster" {
		t.Fatalf("no clusters: %+v", h)
	}
	edges := &edgeClusters{readers: map[string]client.Reader{}}
	e.r.Clusters = edges
	if h = health(); h.Reason != pvapi.ReasonKubeconfigUnavailable || h.Message != "cannot read "+object+": the kubeconfig Secret default/deploy-kubeconfig: not found" {
		t.Fatalf("no Secret: %+v", h)
	}
	// The edge cluster holds the object, in flux-system, at an older
	// revision, Flux's words in its Ready condition.
	sync := team("deploy-sync", "edge")
	sync.SetNamespace("flux-system")
	sync.Object["status"] = map[string]any{"applied": "app-prod/v0", "conditions": []any{
		map[string]any{"type": "Ready", "status": "False", "reason": "HealthCheckFailed", "message": "Deployment/app/app: CrashLoopBackOff"}}}
	s, err := api.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	edges.readers["deploy"] = embedded.New(embedded.Options{Scheme: s, Objects: []client.Object{sync}})
	if h = health(); h.Status != metav1.ConditionFalse || h.Reason != pvapi.ReasonNotHealthy || h.Object != object ||
		h.Reported != "HealthCheckFailed: Deployment/app/app: CrashLoopBackOff" ||
		h.Message != object+" does not report "+pub.Name+": HealthCheckFailed: Deployment/app/app: CrashLoopBackOff" {
		t.Fatalf("at v0 on the edge: %+v", h)
	}
	// Waiting on another cluster: polled.
	e.r.ObserveInterval, e.r.Jitter = 5*time.Minute, func(time.Duration) time.Duration { return 0 }
	res, err := e.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "app-prod"}})
	if err != nil || res.RequeueAfter != observe.DefaultClusterPoll {
		t.Fatalf("a variant waiting on another cluster comes back after %s (%v), want %s", res.RequeueAfter, err, observe.DefaultClusterPoll)
	}
	// The edge reports the revision: True, and the cadence is the
	// observe interval again.
	sync.Object["status"] = map[string]any{"applied": "app-prod/v1"}
	edges.readers["deploy"] = embedded.New(embedded.Options{Scheme: s, Objects: []client.Object{sync}})
	if h = health(); h.Status != metav1.ConditionTrue || h.Message != object+" reports "+pub.Name {
		t.Fatalf("at v1 on the edge: %+v", h)
	}
	res, _ = e.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "app-prod"}})
	if res.RequeueAfter != 5*time.Minute {
		t.Fatalf("a healthy variant comes back after %s, want 5m", res.RequeueAfter)
	}
	// The edge's API server stops: ClusterUnreachable, the connection's
	// words, and the cluster marked failed (its Secret is read again).
	edges.readers["deploy"] = refusingReader{}
	if h = health(); h.Status != metav1.ConditionUnknown || h.Reason != pvapi.ReasonClusterUnreachable ||
		!strings.HasPrefix(h.Message, "cluster deploy (kubeconfig Secret default/deploy-kubeconfig) did not answer reading "+object+": ") ||
		!strings.HasSuffix(h.Message, ": refused the connection (connection refused)") || len(edges.failed) == 0 || edges.failed[0] != "deploy" {
		t.Fatalf("a stopped API server: %+v (failed %v)", h, edges.failed)
	}
	// A clusterExpr that gives no cluster name: CheckFailed, named.
	e.edit("app-prod", func(v *pvapi.PackageVariant) { v.Spec.Health.ClusterExpr = `"Edge_1"` })
	if h = health(); h.Reason != pvapi.ReasonCheckFailed ||
		h.Message != `spec.health.clusterExpr "\"Edge_1\"" gave Edge_1, not a cluster's name (a DNS subdomain, at most 242 bytes)` {
		t.Fatalf("a bad cluster name: %+v", h)
	}
}

// A hostile edge cluster, read through the controller's own remote
// clients (a kubeconfig Secret in the variant's namespace): an endless
// object is cut and named; a 403 or 500 with a text body is said as its
// status code, with no byte of the body in the target's health or in an
// Event; a server on loopback is refused unless the operator lists it.
func TestHostileClusterIsSaidInPvkitsWords(t *testing.T) {
	for _, c := range []struct {
		name     string
		mode     fntest.Hostile
		servers  []string
		reason   string
		contains string
	}{
		{"endless object", fntest.Endless, []string{"127.0.0.0/8"}, pvapi.ReasonClusterUnreachable, fmt.Sprintf("answered more than %d bytes (pvkit reads at most that of one answer)", remote.DefaultMaxResponse)},
		{"403 with a body", fntest.Forbidden, []string{"127.0.0.0/8"}, pvapi.ReasonClusterUnreachable, "answered 403 Forbidden"},
		{"500 with a body", fntest.Failing, []string{"127.0.0.0/8"}, pvapi.ReasonClusterUnreachable, "answered 500 Internal Server Error"},
		{"discovery 403", fntest.DiscoveryForbidden, []string{"127.0.0.0/8"}, pvapi.ReasonClusterUnreachable, "did not answer reading"},
		{"loopback by default", fntest.Forbidden, nil, pvapi.ReasonKubeconfigUnavailable, "is refused: a loopback address (the controller's own)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := fntest.HostileAPIServer(t, c.mode)
			secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: remote.SecretName("deploy")},
				Data: map[string][]byte{remote.SecretKey: []byte(fntest.Kubeconfig(srv.URL, "deploy"))}}
			e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "ana"), secret)
			servers, err := remote.ParseServers(c.servers)
			if err != nil {
				t.Fatal(err)
			}
			e.r.Clusters = &remote.Clusters{Secrets: e.client, Options: remote.Options{Servers: servers, Timeout: 20 * time.Second}}
			e.store.Publish(ns, "blueprints", "app", blueprint(t))
			e.variant(strings.Replace(healthVariantYAML, "    nameExpr:", "    clusterExpr: downstream.repo\n    namespace: flux-system\n    nameExpr:", 1))
			e.mustReconcile("app-prod")
			if _, err := e.store.Approve(ns, e.downstream("app-prod")[0].Name); err != nil {
				t.Fatal(err)
			}
			e.mustReconcile("app-prod")
			ts := e.get("app-prod").Status.DownstreamTargets
			if len(ts) != 1 || ts[0].Health == nil {
				t.Fatalf("targets: %+v", ts)
			}
			h := ts[0].Health
			if h.Status != metav1.ConditionUnknown || h.Reason != c.reason || !strings.Contains(h.Message, c.contains) {
				t.Fatalf("health: %+v\nwant %s %q", h, c.reason, c.contains)
			}
			said := h.Message + " " + h.Reported
			var evs corev1.EventList
			if err := e.client.List(context.Background(), &evs); err == nil {
				for _, ev := range evs.Items {
					said += " " + ev.Message
				}
			}
			for _, w := range strings.Fields(fntest.SecretWords) {
				if strings.Contains(said, w) {
					t.Fatalf("the server's words %q reached the status or an Event: %s", w, said)
				}
			}
		})
	}
}
