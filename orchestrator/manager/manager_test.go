package manager

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pvkit/pvkit"
	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/orchestrator/api"
	"github.com/pvkit/pvkit/orchestrator/reconcilers"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The controller's wiring (scheme, store indexes, both reconcilers, their
// watches and recorders) is built without a cluster: only Start talks to the
// API server.
func TestSetup(t *testing.T) {
	scheme, err := api.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(&rest.Config{Host: "http://127.0.0.1:1"}, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		MapperProvider: func(*rest.Config, *http.Client) (apimeta.RESTMapper, error) {
			m := apimeta.NewDefaultRESTMapper(nil)
			for gvk := range scheme.AllKnownTypes() {
				m.Add(gvk, apimeta.RESTScopeNamespace)
			}
			return m, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := Setup(context.Background(), mgr, reconcilers.Options{Workers: 4, ApproveByPolicy: true, ObserveInterval: time.Minute}); err != nil {
		t.Fatal(err)
	}
}

const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: dev
  cluster: {server: "https://127.0.0.1:6443"}
- name: prod
  cluster: {server: "https://127.0.0.1:7443"}
contexts:
- name: dev
  context: {cluster: dev, user: me}
- name: prod
  context: {cluster: prod, user: me}
current-context: dev
users:
- name: me
  user: {token: t}
`

// --kubeconfig and --context pick the cluster as kubectl does.
func TestRESTConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ context, host, err string }{
		{"", "https://127.0.0.1:6443", ""},
		{"prod", "https://127.0.0.1:7443", ""},
		{"staging", "", `loading the kubeconfig: context "staging" does not exist`},
	} {
		cfg, err := RESTConfig(path, tt.context)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("--context %q: error %v, want %q", tt.context, err, tt.err)
		case tt.err == "" && (err != nil || cfg.Host != tt.host):
			t.Errorf("--context %q: host %v (%v), want %s", tt.context, cfg, err, tt.host)
		}
	}
	if _, err := RESTConfig(filepath.Join(t.TempDir(), "missing"), ""); err == nil || !strings.Contains(err.Error(), "loading the kubeconfig:") {
		t.Errorf("a missing --kubeconfig: %v", err)
	}
}

// A kubeconfig file does not bring client-go's default limit of 5 requests
// a second: the controller leaves the limit to the API server unless
// --kube-api-qps sets one.
func TestRateLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		qps       float64
		burst     int
		wantQPS   float32
		wantBurst int
	}{{0, 0, -1, 0}, {50, 0, 50, 100}, {50, 60, 50, 60}, {0.5, 0, 0.5, 1}} {
		cfg, err := RESTConfig(path, "")
		if err != nil {
			t.Fatal(err)
		}
		RateLimit(cfg, tt.qps, tt.burst)
		if cfg.QPS != tt.wantQPS || cfg.Burst != tt.wantBurst {
			t.Errorf("--kube-api-qps %v --kube-api-burst %d: QPS %v, burst %d; want %v, %d", tt.qps, tt.burst, cfg.QPS, cfg.Burst, tt.wantQPS, tt.wantBurst)
		}
		// The client the config makes has no client-side limiter at qps 0.
		if tt.qps == 0 {
			hc, err := rest.HTTPClientFor(cfg)
			if err != nil {
				t.Fatal(err)
			}
			rc, err := rest.RESTClientForConfigAndClient(&rest.Config{Host: cfg.Host, QPS: cfg.QPS, ContentConfig: rest.ContentConfig{GroupVersion: &schema.GroupVersion{Version: "v1"}, NegotiatedSerializer: scheme.Codecs.WithoutConversion()}}, hc)
			if err != nil {
				t.Fatal(err)
			}
			if rc.GetRateLimiter() != nil {
				t.Errorf("--kube-api-qps 0: the client has a rate limiter")
			}
		}
	}
}

// --help prints the usage with examples on stdout and exits 0; a usage error
// exits 2.
func TestMainExitCodes(t *testing.T) {
	for _, tt := range []struct {
		args        []string
		code        int
		out, errOut string
	}{
		{[]string{"--help"}, 0, "Examples:", ""},
		{[]string{"-h"}, 0, "--context", ""},
		// Issue 22 #4: the error and a one-line hint, not the whole help.
		{[]string{"--nope"}, 2, "", "pvctl controller: unknown flag: --nope\nRun 'pvctl controller --help' for the flags.\n"},
		{[]string{"--worker", "2"}, 2, "", "pvctl controller: unknown flag: --worker\nRun 'pvctl controller --help' for the flags.\n"},
		{[]string{"--version"}, 0, pvkit.Version() + "\n", ""},
		{[]string{"extra"}, 2, "", `unexpected argument "extra"`},
		{[]string{"--readable-kinds", "ConfigMap,*.example.com", "--kubeconfig", "/nonexistent"}, 1, "", `pvctl controller: --readable-kinds: readable kind "*.example.com" must be Kind or Kind.group (a kind starts with a capital letter; no wildcards)`},
		{[]string{"--workers", "0", "--kubeconfig", "/nonexistent"}, 1, "", "pvctl controller: --workers: 0 is not between 1 and 64"},
		{[]string{"--workers", "65", "--kubeconfig", "/nonexistent"}, 1, "", "pvctl controller: --workers: 65 is not between 1 and 64"},
		{[]string{"--max-children-per-set", "0", "--kubeconfig", "/nonexistent"}, 1, "", "pvctl controller: --max-children-per-set: 0, want 1 or more"},
		{[]string{"--kube-api-qps", "-1", "--kubeconfig", "/nonexistent"}, 1, "", "pvctl controller: --kube-api-qps and --kube-api-burst: -1 and 0, want 0 or more"},
		{[]string{"--watch-namespace", "fleet,Team_A", "--kubeconfig", "/nonexistent"}, 1, "", `pvctl controller: --watch-namespace: "Team_A" is not a namespace name: a lowercase RFC 1123 label must consist of`},
		{[]string{"--watch-namespace", "fleet,fleet", "--kubeconfig", "/nonexistent"}, 1, "", `pvctl controller: --watch-namespace: "fleet" is named twice`},
		{[]string{"--watch-namespace", "a,,b", "--kubeconfig", "/nonexistent"}, 1, "", `pvctl controller: --watch-namespace: "" is not a namespace name`},
		{[]string{"--shard", "EU", "--kubeconfig", "/nonexistent"}, 1, "", `pvctl controller: --shard: "EU" is not a shard key: a lowercase RFC 1123 label must consist of`},
		{[]string{"--metrics-secure=maybe"}, 2, "", `pvctl controller: invalid argument "maybe" for "--metrics-secure" flag`},
		// Issue 44 #3: a certificate to serve metrics with goes with HTTPS,
		// and must be there.
		{[]string{"--metrics-cert-dir", "/nonexistent/certs", "--kubeconfig", "/nonexistent"}, 1, "", "pvctl controller: --metrics-cert-dir: stat /nonexistent/certs/tls.crt: no such file or directory (mount the Certificate's secret there: config/cert-manager)"},
		{[]string{"--metrics-cert-dir", "/tmp", "--metrics-secure=false", "--kubeconfig", "/nonexistent"}, 1, "", "pvctl controller: --metrics-cert-dir /tmp goes with --metrics-secure (HTTPS): plain HTTP serves no certificate"},
		{[]string{"--provenance-key", "/nonexistent/key", "--kubeconfig", "/nonexistent"}, 1, "", "pvctl controller: --provenance-key: reading the signing key: open /nonexistent/key: no such file or directory"},
		{[]string{"--provenance-allowed-signers", "/nonexistent/allowed", "--kubeconfig", "/nonexistent"}, 1, "", "pvctl controller: --provenance-allowed-signers: open /nonexistent/allowed: no such file or directory"},
		{[]string{"--health-cluster-servers", "10.0.0.1", "--kubeconfig", "/nonexistent"}, 1, "", `pvctl controller: --health-cluster-servers "10.0.0.1": an address is given as a network (10.0.0.1/32, or /128)`},
		{[]string{"--health-cluster-max-response", "100", "--kubeconfig", "/nonexistent"}, 1, "", "pvctl controller: --health-cluster-max-response: 100, want at least 65536 (an API server's discovery answers are larger)"},
		{[]string{"--reconcile-timeout", "1m", "--porch-timeout", "2m", "--kubeconfig", "/nonexistent"}, 1, "", "pvctl controller: --reconcile-timeout 1m0s and --porch-timeout 2m0s: want a reconcile of at least 10s, a request of at least 1s, and the request less than the reconcile"},
		{[]string{"--kube-api-qps", "fast"}, 2, "", `pvctl controller: invalid argument "fast" for "--kube-api-qps" flag`},
		{[]string{"--zap-log-level", "debug", "--nope"}, 2, "", "unknown flag: --nope"}, // zap's flags parse in the same style
	} {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), tt.args, &out, &errOut)
		if code != tt.code || !strings.Contains(out.String(), tt.out) || !strings.Contains(errOut.String(), tt.errOut) ||
			(code == 2 && strings.Count(errOut.String(), "\n") > 2) {
			t.Errorf("pvctl controller %v: exit %d, stdout %q, stderr %q; want %d, %q, %q", tt.args, code, out.String(), errOut.String(), tt.code, tt.out, tt.errOut)
		}
	}
}

// Issue 32 #2: --watch-namespace names the namespaces the cache (and so
// every read and reconcile) is limited to; empty is every namespace.
func TestParseNamespaces(t *testing.T) {
	for in, want := range map[string][]string{"": nil, " ": nil, "fleet": {"fleet"}, "b, a": {"a", "b"}} {
		got, err := ParseNamespaces(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseNamespaces(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// Issue 56 #1: a shard's informers list and watch sets and variants with
// its label selector (sent to the API server: another shard's objects never
// reach the process), and each shard elects its own leader.
func TestShardCacheAndLease(t *testing.T) {
	for _, tt := range []struct {
		o              Options
		selector, name string
	}{
		{Options{}, "!pvkit.dev/shard", "pvkit-controller.pvkit.dev"},
		{Options{Shard: "eu"}, "pvkit.dev/shard=eu", "pvkit-controller-eu.pvkit.dev"},
		{Options{Shard: "eu", LeaderID: "mine"}, "pvkit.dev/shard=eu", "mine"},
	} {
		shard, err := kit.ParseShard(tt.o.Shard)
		if err != nil {
			t.Fatal(err)
		}
		opts := CacheOptions(nil, shard)
		var kinds []string
		for obj, by := range opts.ByObject {
			kind := fmt.Sprintf("%T", obj)
			kinds = append(kinds, kind)
			if by.Label == nil || by.Label.String() != tt.selector {
				t.Errorf("shard %q: %s selector %v, want %q", tt.o.Shard, kind, by.Label, tt.selector)
			}
		}
		slices.Sort(kinds)
		if want := []string{"*v1alpha1.PackageVariant", "*v1alpha2.PackageVariantSet"}; !slices.Equal(kinds, want) {
			t.Errorf("shard %q: selected kinds %v, want %v", tt.o.Shard, kinds, want)
		}
		if got, want := UserAgent(shard), " shard/"+cmp.Or(tt.o.Shard, "-"); !strings.HasPrefix(got, "pvkit-controller/"+pvkit.Version()+" (") || !strings.HasSuffix(got, want) {
			t.Errorf("UserAgent(%q) = %q, want pvkit-controller/VERSION ... %s", tt.o.Shard, got, want)
		}
		if got := LeaseName(tt.o); got != tt.name {
			t.Errorf("LeaseName(%+v) = %q, want %q", tt.o, got, tt.name)
		}
	}
}

// The controller links neither pvctl's commands nor its local runtime
// (embedded cluster, git store, state file), nor the stores' test doubles.
func TestNoLocalCommandsLinked(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./orchestrator/manager")
	cmd.Dir = fntest.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"github.com/pvkit/pvkit/orchestrator/cli", "sigs.k8s.io/controller-runtime/pkg/client/fake",
		"github.com/pvkit/pvkit/orchestrator/local", "github.com/pvkit/pvkit/orchestrator/local/state",
		"github.com/pvkit/pvkit/orchestrator/store/gitstore", "github.com/pvkit/pvkit/orchestrator/store/memory",
		"github.com/pvkit/pvkit/orchestrator/store/fakestore"} {
		for _, dep := range strings.Fields(string(out)) {
			if dep == pkg {
				t.Errorf("orchestrator/manager depends on %s", pkg)
			}
		}
	}
}

type syncCache bool

func (s syncCache) WaitForCacheSync(ctx context.Context) bool {
	if !s {
		<-ctx.Done()
	}
	return bool(s)
}

// Issue 22 #2: /readyz is false until the informer caches have synced (it
// was a plain ping: a rollout passed with no synced cache).
func TestReadyzWaitsForTheCaches(t *testing.T) {
	req, _ := http.NewRequest(http.MethodGet, "/readyz", nil)
	if err := CacheSynced(syncCache(false))(req); err == nil || err.Error() != "the informer caches have not synced yet" {
		t.Fatalf("before the sync: %v", err)
	}
	if err := CacheSynced(syncCache(true))(req); err != nil {
		t.Fatalf("after the sync: %v", err)
	}
}
