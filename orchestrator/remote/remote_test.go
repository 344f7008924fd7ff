package remote

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// loopback allows the tests' own servers, on loopback, as an operator
// lists a network.
func loopback(t *testing.T) *Servers {
	t.Helper()
	s, err := ParseServers([]string{"127.0.0.0/8", "::1/128"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// kubeconfig is a kubeconfig of server with a token, its data inline.
func kubeconfig(server string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: edge
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: pvkit
  user: {token: abc}
contexts:
- name: edge
  context: {cluster: edge, user: pvkit}
current-context: edge
`, server)
}

func secret(cluster, value string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: SecretName(cluster)},
		Data: map[string][]byte{SecretKey: []byte(value)}}
}

func secrets(t *testing.T, objs ...client.Object) *countingReader {
	t.Helper()
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return &countingReader{Reader: fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()}
}

type countingReader struct {
	client.Reader
	gets int
}

func (c *countingReader) Get(ctx context.Context, k client.ObjectKey, o client.Object, opts ...client.GetOption) error {
	c.gets++
	return c.Reader.Get(ctx, k, o, opts...)
}

// fakeReaders makes a reader per config without a connection, and records
// the configs it was given.
func fakeReaders(configs *[]*rest.Config) func(*rest.Config) (client.Reader, error) {
	return func(cfg *rest.Config) (client.Reader, error) {
		*configs = append(*configs, cfg)
		return fake.NewClientBuilder().Build(), nil
	}
}

// Issue 58 #1 and its acceptance (the bounds): at most MaxClusters
// clients are held, the least recently used forgotten; each client's
// config carries the request timeout and rate limits; a held client is
// reused without reading its Secret again until Refresh passes.
func TestHeldClustersAreBounded(t *testing.T) {
	var objs []client.Object
	for i := 0; i < 5; i++ {
		objs = append(objs, secret(fmt.Sprintf("edge-%d", i), kubeconfig("https://127.0.0.1:1")))
	}
	sr := secrets(t, objs...)
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	var configs []*rest.Config
	c := &Clusters{Secrets: sr, Options: Options{MaxClusters: 3, Timeout: 7 * time.Second, Servers: loopback(t)}, Now: func() time.Time { return now }, NewReader: fakeReaders(&configs)}
	ctx := context.Background()
	get := func(i int) client.Reader {
		t.Helper()
		r, err := c.Reader(ctx, "fleet", fmt.Sprintf("edge-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	first := get(0)
	for i := 1; i < 5; i++ {
		now = now.Add(time.Second)
		get(i)
		if h := c.Held(); h > 3 {
			t.Fatalf("%d clients held, at most 3", h)
		}
	}
	if c.Held() != 3 {
		t.Fatalf("held %d, want 3", c.Held())
	}
	if len(configs) != 5 {
		t.Fatalf("%d clients made, want 5", len(configs))
	}
	for _, cfg := range configs {
		if cfg.Timeout != 7*time.Second || cfg.QPS != 5 || cfg.Burst != 10 {
			t.Fatalf("a client's bounds: timeout %s, qps %v, burst %d", cfg.Timeout, cfg.QPS, cfg.Burst)
		}
	}
	// edge-4 is held: asked again it is the same client, its Secret not read.
	gets := sr.gets
	again := get(4)
	if sr.gets != gets || len(configs) != 5 {
		t.Fatalf("a held client's Secret read again (%d reads) or the client made again (%d)", sr.gets-gets, len(configs))
	}
	// edge-0 was the least recently used: forgotten, made again.
	if get(0) == first || len(configs) != 6 {
		t.Fatal("edge-0, forgotten, was not made again")
	}
	// Past Refresh the Secret is read again; unchanged, the client stays.
	now = now.Add(DefaultRefresh + time.Second)
	gets = sr.gets
	if get(4) != again || sr.gets != gets+1 {
		t.Fatalf("past the refresh: the same client %v, Secret reads %d", get(4) == again, sr.gets-gets)
	}
}

// A server that does not answer holds a read no longer than the timeout,
// and the error says so (the connection's words, for ClusterUnreachable).
func TestRequestsTimeOut(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-time.After(10 * time.Second):
		}
	}))
	defer srv.Close()
	defer close(release)
	c := &Clusters{Secrets: secrets(t, secret("slow", kubeconfig(srv.URL))), Options: Options{Timeout: 300 * time.Millisecond, Servers: loopback(t)}}
	r, err := c.Reader(context.Background(), "fleet", "slow")
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("kustomize.toolkit.fluxcd.io/v1")
	u.SetKind("Kustomization")
	start := time.Now()
	err = r.Get(context.Background(), client.ObjectKey{Namespace: "flux-system", Name: "app"}, u)
	took := time.Since(start)
	if err == nil || !strings.HasSuffix(err.Error(), " did not answer within the timeout") {
		t.Fatalf("a read of a server that does not answer: %v", err)
	}
	if took > 5*time.Second {
		t.Fatalf("the read took %s with a timeout of 300ms", took)
	}
}

// Refusals, each naming the Secret and why: missing, without the key,
// not a kubeconfig, one that runs a command or names a file of the
// controller's.
func TestKubeconfigRefusals(t *testing.T) {
	execConfig := strings.Replace(kubeconfig("https://127.0.0.1:1"), "user: {token: abc}", "user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh}}", 1)
	fileCA := strings.Replace(kubeconfig("https://127.0.0.1:1"), "insecure-skip-tls-verify: true", "certificate-authority: /etc/ssl/ca.crt", 1)
	tokenFile := strings.Replace(kubeconfig("https://127.0.0.1:1"), "user: {token: abc}", "user: {tokenFile: /var/run/secrets/token}", 1)
	noKey := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "nokey-kubeconfig"}, Data: map[string][]byte{"kubeconfig": []byte("x")}}
	c := &Clusters{Secrets: secrets(t, noKey, secret("garbage", "{{{"), secret("exec", execConfig), secret("fileca", fileCA), secret("tokenfile", tokenFile), secret("big", strings.Repeat("#", MaxKubeconfig+1)))}
	for cluster, want := range map[string]string{
		"missing":   "the kubeconfig Secret fleet/missing-kubeconfig: not found (Cluster API makes it with the cluster; pvkit reads key \"value\")",
		"nokey":     "the kubeconfig Secret fleet/nokey-kubeconfig: has no key \"value\" (Cluster API's; the Secret has 1 other key(s))",
		"garbage":   "the kubeconfig Secret fleet/garbage-kubeconfig: key \"value\": not a kubeconfig",
		"exec":      "the kubeconfig Secret fleet/exec-kubeconfig: key \"value\": user \"pvkit\" runs a command or an auth provider for its credential; pvkit takes certificates and tokens only",
		"fileca":    "the kubeconfig Secret fleet/fileca-kubeconfig: key \"value\": cluster \"edge\" names a file of the controller's file system (certificate-authority)",
		"tokenfile": "the kubeconfig Secret fleet/tokenfile-kubeconfig: key \"value\": user \"pvkit\" names files of the controller's file system",
		"big":       "the kubeconfig Secret fleet/big-kubeconfig: key \"value\" is 1048577 bytes, at most 1048576",
	} {
		_, err := c.Reader(context.Background(), "fleet", cluster)
		var ke *KubeconfigError
		if !errors.As(err, &ke) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v\nwant %s", cluster, err, want)
		}
	}
	if c.Held() != 0 {
		t.Errorf("%d clients held after refusals", c.Held())
	}
}

// After a failed read the next Reader reads the Secret again and makes a
// new client (a rotated credential, a moved server).
func TestSecretReadAgainAfterAFailure(t *testing.T) {
	sr := secrets(t, secret("edge", kubeconfig("https://127.0.0.1:1")))
	var configs []*rest.Config
	c := &Clusters{Secrets: sr, NewReader: fakeReaders(&configs), Options: Options{Servers: loopback(t)}}
	if _, err := c.Reader(context.Background(), "fleet", "edge"); err != nil {
		t.Fatal(err)
	}
	c.Failed("fleet", "edge")
	if _, err := c.Reader(context.Background(), "fleet", "edge"); err != nil {
		t.Fatal(err)
	}
	if sr.gets != 2 || len(configs) != 2 {
		t.Fatalf("after a failure: %d Secret reads, %d clients made; want 2 and 2", sr.gets, len(configs))
	}
}
