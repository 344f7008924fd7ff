package fntest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// Hostile is how HostileAPIServer answers the read of an object.
type Hostile int

const (
	// Endless streams one object that never ends (up to HostileCap bytes,
	// so that the test stops by itself whatever the client does).
	Endless Hostile = iota
	// Forbidden answers 403 with a text body (Secret words).
	Forbidden
	// Failing answers 500 with a text body (Secret words).
	Failing
	// DiscoveryForbidden answers every discovery request 403 with a text
	// body (Secret words).
	DiscoveryForbidden
	// EndlessDiscovery streams the group list without end.
	EndlessDiscovery
)

// SecretWords are the words a hostile server puts in its bodies: none of
// them may reach a status, an Event or an info log.
const SecretWords = "INTERNAL-SERVICE-SECRET token=hunter2"

// HostileCap bounds what an endless answer writes (bytes).
const HostileCap = 1 << 30

// HostileServer is a TLS server on loopback that serves enough discovery
// for Flux's Kustomization (kustomize.toolkit.fluxcd.io/v1) and the
// examples' Team (example.com/v1) and answers the read of any object as
// its mode says. Written counts the bytes of the
// endless answers written.
type HostileServer struct {
	URL     string
	Written atomic.Int64
}

// HostileAPIServer starts a HostileServer, stopped when the test ends.
func HostileAPIServer(t *testing.T, mode Hostile) *HostileServer {
	t.Helper()
	h := &HostileServer{}
	text := func(w http.ResponseWriter, code int) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(code)
		fmt.Fprintf(w, "%s: the internal service at /admin answered\n", SecretWords)
	}
	endless := func(w http.ResponseWriter, r *http.Request, head string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		n, _ := w.Write([]byte(head))
		h.Written.Add(int64(n))
		chunk := []byte(strings.Repeat("a", 64<<10))
		for h.Written.Load() < HostileCap && r.Context().Err() == nil {
			n, err := w.Write(chunk)
			h.Written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		discovery := r.URL.Path == "/api" || r.URL.Path == "/apis" || strings.Count(r.URL.Path, "/") <= 3
		switch {
		case discovery && mode == DiscoveryForbidden:
			text(w, http.StatusForbidden)
		case r.URL.Path == "/apis" && mode == EndlessDiscovery:
			endless(w, r, `{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"`)
		case r.URL.Path == "/api":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"127.0.0.1"}]}`)
		case r.URL.Path == "/apis":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"kustomize.toolkit.fluxcd.io","versions":[{"groupVersion":"kustomize.toolkit.fluxcd.io/v1","version":"v1"}],"preferredVersion":{"groupVersion":"kustomize.toolkit.fluxcd.io/v1","version":"v1"}},`+
				`{"name":"example.com","versions":[{"groupVersion":"example.com/v1","version":"v1"}],"preferredVersion":{"groupVersion":"example.com/v1","version":"v1"}}]}`)
		case r.URL.Path == "/apis/example.com/v1":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"example.com/v1","resources":[{"name":"teams","singularName":"team","namespaced":true,"kind":"Team","verbs":["get","list"]}]}`)
		case r.URL.Path == "/api/v1":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"v1","resources":[]}`)
		case r.URL.Path == "/apis/kustomize.toolkit.fluxcd.io/v1":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"kustomize.toolkit.fluxcd.io/v1","resources":[{"name":"kustomizations","singularName":"kustomization","namespaced":true,"kind":"Kustomization","verbs":["get","list"]}]}`)
		case mode == Forbidden:
			text(w, http.StatusForbidden)
		case mode == Failing:
			text(w, http.StatusInternalServerError)
		default:
			endless(w, r, `{"apiVersion":"kustomize.toolkit.fluxcd.io/v1","kind":"Kustomization","metadata":{"name":"app","namespace":"flux-system"},"status":{"x":"`)
		}
	}))
	t.Cleanup(srv.Close)
	h.URL = srv.URL
	return h
}

// Kubeconfig is a kubeconfig of server (TLS not verified: a test's own
// server) with a token, its data inline, context name.
func Kubeconfig(server, name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: %[2]s
  cluster: {server: %[1]q, insecure-skip-tls-verify: true}
users:
- name: pvkit
  user: {token: abc}
contexts:
- name: %[2]s
  context: {cluster: %[2]s, user: pvkit}
current-context: %[2]s
`, server, name)
}
