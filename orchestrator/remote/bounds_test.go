package remote

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pvkit/pvkit/internal/fntest"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// readKustomization reads flux-system/app of the cluster whose kubeconfig
// Secret points at server, through a Clusters as the controller makes it.
func readKustomization(t *testing.T, server string, o Options) error {
	t.Helper()
	if o.Servers == nil {
		o.Servers = loopback(t)
	}
	c := &Clusters{Secrets: secrets(t, secret("edge", kubeconfig(server))), Options: o}
	r, err := c.Reader(context.Background(), "fleet", "edge")
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("kustomize.toolkit.fluxcd.io/v1")
	u.SetKind("Kustomization")
	return r.Get(context.Background(), client.ObjectKey{Namespace: "flux-system", Name: "app"}, u)
}

// heapPeak samples the heap in use until stop is closed; the peak.
func heapPeak(stop <-chan struct{}) *atomic.Uint64 {
	var peak atomic.Uint64
	go func() {
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return &peak
}

// A server that streams one endless object (or endless discovery): the
// read is cut at the bound and fails naming it, long before its timeout,
// and the heap stays within a small multiple of the bound however much
// the server would send (it would send 1 GiB: HostileCap).
func TestEndlessAnswersAreCut(t *testing.T) {
	for _, c := range []struct {
		name string
		mode fntest.Hostile
	}{{"object", fntest.Endless}, {"discovery", fntest.EndlessDiscovery}} {
		t.Run(c.name, func(t *testing.T) {
			srv := fntest.HostileAPIServer(t, c.mode)
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			stop := make(chan struct{})
			peak := heapPeak(stop)
			start := time.Now()
			err := readKustomization(t, srv.URL, Options{Timeout: time.Minute})
			took := time.Since(start)
			close(stop)
			var tooLarge *ResponseTooLargeError
			if !errors.As(err, &tooLarge) || tooLarge.Limit != DefaultMaxResponse {
				t.Fatalf("an endless answer: %v", err)
			}
			if want := fmt.Sprintf("server %s answered more than %d bytes (pvkit reads at most that of one answer)", strings.TrimPrefix(srv.URL, "https://"), DefaultMaxResponse); !strings.Contains(err.Error(), want) && err.Error() != want {
				t.Errorf("said %q, want %q", err, want)
			}
			if took > 30*time.Second {
				t.Errorf("the read took %s: the bound, not the timeout, must end it", took)
			}
			grew := int64(peak.Load()) - int64(before.HeapInuse)
			if grew > 16*DefaultMaxResponse {
				t.Errorf("the heap grew %d bytes reading an endless answer; the bound is %d", grew, DefaultMaxResponse)
			}
			t.Logf("%s: cut after %s, the heap grew at most %d bytes, the server wrote %d", err, took, grew, srv.Written.Load())
			if srv.Written.Load() >= fntest.HostileCap {
				t.Errorf("the server wrote all %d bytes: the client read to the end", srv.Written.Load())
			}
		})
	}
}

// Errors from another cluster's server are said in pvkit's words: the
// status code and its standard text, the host; no byte of the body.
func TestServerWordsAreNotSaid(t *testing.T) {
	for _, c := range []struct {
		name string
		mode fntest.Hostile
		want string
	}{
		{"403", fntest.Forbidden, "answered 403 Forbidden"},
		{"500", fntest.Failing, "answered 500 Internal Server Error"},
		{"discovery 403", fntest.DiscoveryForbidden, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := fntest.HostileAPIServer(t, c.mode)
			err := readKustomization(t, srv.URL, Options{Timeout: 10 * time.Second})
			if err == nil {
				t.Fatal("read")
			}
			var re *ReadError
			if !errors.As(err, &re) || re.Host != strings.TrimPrefix(srv.URL, "https://") {
				t.Fatalf("not a ReadError of the server's host: %T %v", err, err)
			}
			msg := err.Error()
			t.Log(msg)
			for _, w := range strings.Fields(fntest.SecretWords) {
				if strings.Contains(msg, w) {
					t.Fatalf("the server's words %q in %q", w, msg)
				}
			}
			if !strings.HasPrefix(msg, "server "+re.Host+" ") || !strings.Contains(msg, c.want) {
				t.Errorf("said %q, want %q", msg, c.want)
			}
			if c.mode == fntest.Forbidden && !apierrors.IsForbidden(err) {
				t.Errorf("a 403 is no longer Forbidden to errors.As: %v", err)
			}
		})
	}
}

// The servers a kubeconfig Secret may name: loopback and link-local
// refused by default, allowed when a listed network holds them; with
// entries, only a matching name or a listed network; a name that
// resolves to loopback refused when dialled; proxy-url refused unless
// its host is listed.
func TestKubeconfigServersRefused(t *testing.T) {
	parse := func(entries ...string) *Servers {
		s, err := ParseServers(entries)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	withProxy := func(server, proxy string) string {
		return strings.Replace(kubeconfig(server), "insecure-skip-tls-verify: true}", fmt.Sprintf("insecure-skip-tls-verify: true, proxy-url: %q}", proxy), 1)
	}
	refusal := " (the controller's --health-cluster-servers says which servers a kubeconfig Secret may name)"
	for _, c := range []struct {
		name, kubeconfig string
		servers          *Servers
		want             string // "" when allowed
	}{
		{"loopback", kubeconfig("https://127.0.0.1:6443"), nil, "address 127.0.0.1 is refused: a loopback address (the controller's own)" + refusal},
		{"loopback v6", kubeconfig("https://[::1]:6443"), nil, "address ::1 is refused: a loopback address (the controller's own)" + refusal},
		{"localhost", kubeconfig("https://localhost:6443"), nil, "host localhost is refused: the controller's own loopback" + refusal},
		{"metadata service", kubeconfig("http://169.254.169.254/latest"), nil, "address 169.254.169.254 is refused: a link-local address (the node's, such as a metadata service)" + refusal},
		{"unspecified", kubeconfig("https://0.0.0.0:6443"), nil, "address 0.0.0.0 is refused: not a server's address" + refusal},
		{"private by default", kubeconfig("https://10.1.2.3:6443"), nil, ""},
		{"a name by default", kubeconfig("https://edge-01.example.com:6443"), nil, ""},
		{"loopback listed", kubeconfig("https://127.0.0.1:6443"), parse("127.0.0.0/8"), ""},
		{"outside the networks", kubeconfig("https://10.1.2.3:6443"), parse("192.168.0.0/16"), "address 10.1.2.3 is refused: in no network listed" + refusal},
		{"a pattern", kubeconfig("https://edge-01.edge.example.com:6443"), parse("*.edge.example.com"), ""},
		{"not the pattern", kubeconfig("https://edge-01.example.com:6443"), parse("*.edge.example.com"), "host edge-01.example.com is refused: it matches no host pattern listed" + refusal},
		{"the suffix alone", kubeconfig("https://edge.example.com:6443"), parse("*.edge.example.com"), "host edge.example.com is refused: it matches no host pattern listed" + refusal},
		{"proxy", withProxy("https://10.1.2.3:6443", "http://10.9.9.9:3128"), nil, "proxy-url 10.9.9.9:3128 is refused: a proxy dials what pvkit cannot check; list its host to allow it" + refusal},
		{"proxy listed", withProxy("https://10.1.2.3:6443", "http://10.9.9.9:3128"), parse("10.9.9.9/32", "10.1.0.0/16"), ""},
		{"proxy listed, server not", withProxy("https://10.1.2.3:6443", "http://10.9.9.9:3128"), parse("10.9.9.9/32"), "address 10.1.2.3 is refused: in no network listed" + refusal},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := &Clusters{Secrets: secrets(t, secret("edge", c.kubeconfig)), Options: Options{Servers: c.servers}, NewReader: fakeReaders(new([]*rest.Config))}
			_, err := cl.Reader(context.Background(), "fleet", "edge")
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || err.Error() != "the kubeconfig Secret fleet/edge-kubeconfig: key \"value\": "+c.want):
				t.Fatalf("got %v\nwant %s", err, c.want)
			}
			var ke *KubeconfigError
			if c.want != "" && !errors.As(err, &ke) {
				t.Fatalf("not a KubeconfigError: %T", err)
			}
		})
	}
	// A name the pattern allows that resolves to loopback is refused when
	// dialled: the name cannot lead the controller to its own loopback.
	srv := fntest.HostileAPIServer(t, fntest.Forbidden)
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	err := readKustomization(t, "https://localhost:"+port, Options{Servers: parse("localhost")})
	var refused *ServerRefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "is refused: a loopback address (the controller's own)") {
		t.Fatalf("a listed name that resolves to loopback: %v", err)
	}
}

// Flag entries that are not a name, a pattern or a network are refused,
// named.
func TestParseServersRefusals(t *testing.T) {
	for entry, want := range map[string]string{
		"10.0.0.0/33":  `--health-cluster-servers "10.0.0.0/33": not a network (CIDR, as 10.20.0.0/16)`,
		"10.1.2.3":     `--health-cluster-servers "10.1.2.3": an address is given as a network (10.1.2.3/32, or /128)`,
		"https://edge": `--health-cluster-servers "https://edge": not a network`,
		"a*b":          `--health-cluster-servers "a*b": want a host name, a *.suffix pattern, or a network (CIDR)`,
		"*.":           `--health-cluster-servers "*.": want a host name, a *.suffix pattern, or a network (CIDR)`,
	} {
		if _, err := ParseServers([]string{entry}); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v, want %s", entry, err, want)
		}
	}
}
