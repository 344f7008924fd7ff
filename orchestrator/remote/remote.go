// Package remote reads objects of other clusters for health checks that
// name one (spec.health.clusterExpr; rule health-from-the-clusters): a
// bounded set of clients, one per cluster, each made from the kubeconfig in
// the Secret `<cluster>-kubeconfig`, key `value`, in the variant's
// namespace (Cluster API's convention; its kubeconfig Secrets sit in the
// management cluster).
//
// What it assumes and bounds, so that months and thousands of clusters do
// not grow it:
//   - at most MaxClusters clients are held; the one used least recently is
//     forgotten when another is needed (it is made again from its Secret
//     when asked for);
//   - each request to a cluster has a Timeout (an API server that does not
//     answer holds a worker that long, not forever), each answer is cut at
//     MaxResponse bytes (one endless object cannot exhaust the
//     controller's memory), and each client has its own QPS and burst;
//   - a kubeconfig's server must be one Servers allows (loopback and
//     link-local refused unless listed), checked on every address dialled;
//   - a failed read is said in pvkit's words (ReadError: the host, a
//     status code, a timeout), never with the server's text;
//   - the Secret is read past any cache (the controller never watches
//     Secrets: its role names only the ones it may get), at most once per
//     Refresh for a cluster whose client works, and again at once after a
//     failed read (a rotated credential is picked up);
//   - a cluster is polled, not watched (a watch per cluster is a
//     connection per cluster held for months): the variant is read again
//     every ClusterPoll while its health from the cluster is not True.
//
// Errors say which: a *KubeconfigError names the Secret and why it gives
// no client; any other error is the cluster's own (connection refused,
// timeout, Unauthorized), said as such by the caller.
package remote

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/lru"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Defaults of Options.
const (
	DefaultMaxClusters = 256
	DefaultTimeout     = 10 * time.Second
	DefaultRefresh     = 10 * time.Minute
	// SecretSuffix and SecretKey are Cluster API's: the Secret
	// `<cluster>-kubeconfig` holds the kubeconfig under `value`.
	SecretSuffix = "-kubeconfig"
	SecretKey    = "value"
	// MaxKubeconfig bounds the kubeconfig read from a Secret (bytes).
	MaxKubeconfig = 1 << 20
)

// Options bound the clients held.
type Options struct {
	// MaxClusters is the most clients held at once (0: DefaultMaxClusters).
	MaxClusters int
	// Timeout bounds each request to a cluster (0: DefaultTimeout).
	Timeout time.Duration
	// Refresh is how long a working client is used before its Secret is
	// read again (0: DefaultRefresh).
	Refresh time.Duration
	// QPS and Burst of each cluster's client (0: 5 and 10).
	QPS   float32
	Burst int
	// MaxResponse bounds one answer, in bytes (0: DefaultMaxResponse).
	MaxResponse int64
	// Servers are the API servers a kubeconfig may name (nil: any but
	// loopback, link-local, unspecified and multicast addresses).
	Servers *Servers
}

// Clusters hands out a reader per cluster.
type Clusters struct {
	// Secrets reads the kubeconfig Secrets (the manager's API reader: past
	// the cache).
	Secrets client.Reader
	Options
	// Now is the clock (nil: time.Now); NewReader makes a cluster's reader
	// from its REST config (nil: controller-runtime's client, no cache).
	Now       func() time.Time
	NewReader func(*rest.Config) (client.Reader, error)

	mu   sync.Mutex
	held *lru.Cache // key -> *entry, the least recently used forgotten first
}

type key struct{ namespace, cluster string }

type entry struct {
	version     string // the Secret's resourceVersion
	reader      client.Reader
	read        time.Time
	failedSince time.Time
}

// KubeconfigError says why a cluster's kubeconfig gives no client: its
// Secret's (Secret: namespace/name), or pvctl's (Secret empty: Err says
// which flag or file).
type KubeconfigError struct {
	Secret string
	Err    error
}

func (e *KubeconfigError) Error() string {
	if e.Secret == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("the kubeconfig Secret %s: %v", e.Secret, e.Err)
}

func (e *KubeconfigError) Unwrap() error { return e.Err }

// SecretName is the Secret of a cluster's kubeconfig.
func SecretName(cluster string) string { return cluster + SecretSuffix }

func (c *Clusters) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Held is how many clients are held.
func (c *Clusters) Held() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cache().Len()
}

// cache is the held clients, made on first use with c.mu held.
func (c *Clusters) cache() *lru.Cache {
	if c.held == nil {
		max := c.MaxClusters
		if max <= 0 {
			max = DefaultMaxClusters
		}
		c.held = lru.New(max)
	}
	return c.held
}

// lookup is the client held for k (nil: none), now the most recently used.
func (c *Clusters) lookup(k key) *entry {
	if v, ok := c.cache().Get(k); ok {
		return v.(*entry)
	}
	return nil
}

// Reader is a reader of cluster's API server for a variant in namespace:
// the one held, or one made from the cluster's Secret.
func (c *Clusters) Reader(ctx context.Context, namespace, cluster string) (client.Reader, error) {
	k := key{namespace, cluster}
	now := c.now()
	c.mu.Lock()
	e := c.lookup(k)
	fresh := e != nil && e.failedSince.IsZero() && now.Sub(e.read) < c.refresh()
	c.mu.Unlock()
	if fresh {
		return e.reader, nil
	}
	var s corev1.Secret
	name := namespace + "/" + SecretName(cluster)
	if err := c.Secrets.Get(ctx, client.ObjectKey{Namespace: namespace, Name: SecretName(cluster)}, &s); err != nil {
		if apierrors.IsNotFound(err) {
			err = fmt.Errorf("not found (Cluster API makes it with the cluster; pvkit reads key %q)", SecretKey)
		}
		c.forget(k)
		return nil, &KubeconfigError{Secret: name, Err: err}
	}
	if e != nil && e.version == s.ResourceVersion && e.failedSince.IsZero() {
		c.mu.Lock()
		e.read = now
		c.mu.Unlock()
		return e.reader, nil
	}
	r, err := c.readerFor(&s)
	if err != nil {
		c.forget(k)
		return nil, &KubeconfigError{Secret: name, Err: err}
	}
	c.hold(k, &entry{version: s.ResourceVersion, reader: r, read: now})
	return r, nil
}

// Failed records that a read through cluster's reader failed: the next
// Reader reads its Secret again (a rotated credential, a moved server).
func (c *Clusters) Failed(namespace, cluster string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.lookup(key{namespace, cluster}); e != nil && e.failedSince.IsZero() {
		e.failedSince = c.now()
	}
}

func (c *Clusters) forget(k key) {
	c.mu.Lock()
	c.cache().Remove(k)
	c.mu.Unlock()
}

// hold keeps e, forgetting the least recently used client when full.
func (c *Clusters) hold(k key, e *entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cache().Add(k, e)
}

func (c *Clusters) refresh() time.Duration {
	if c.Refresh > 0 {
		return c.Refresh
	}
	return DefaultRefresh
}

// readerFor makes a reader from a Secret's kubeconfig, with the bounds.
func (c *Clusters) readerFor(s *corev1.Secret) (client.Reader, error) {
	b, ok := s.Data[SecretKey]
	switch {
	case !ok:
		return nil, fmt.Errorf("has no key %q (Cluster API's; the Secret has %d other key(s))", SecretKey, len(s.Data))
	case len(b) > MaxKubeconfig:
		return nil, fmt.Errorf("key %q is %d bytes, at most %d", SecretKey, len(b), MaxKubeconfig)
	}
	cfg, err := RESTConfig(b)
	if err != nil {
		return nil, fmt.Errorf("key %q: %v", SecretKey, err)
	}
	if err := c.bound(cfg); err != nil {
		return nil, fmt.Errorf("key %q: %w", SecretKey, err)
	}
	if c.NewReader != nil {
		return c.NewReader(cfg)
	}
	return NewReader(cfg)
}

// RESTConfig is the REST config of a kubeconfig's current context. A
// kubeconfig that runs a command for its credential (exec, auth-provider)
// is refused: a Secret any namespace's author may write must not make the
// controller run a program.
func RESTConfig(kubeconfig []byte) (*rest.Config, error) {
	raw, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("not a kubeconfig: %v", err)
	}
	for name, u := range raw.AuthInfos {
		if u.Exec != nil || u.AuthProvider != nil {
			return nil, fmt.Errorf("user %q runs a command or an auth provider for its credential; pvkit takes certificates and tokens only", name)
		}
		if u.TokenFile != "" || u.ClientCertificate != "" || u.ClientKey != "" {
			return nil, fmt.Errorf("user %q names files of the controller's file system; a kubeconfig in a Secret carries its data", name)
		}
	}
	for name, cl := range raw.Clusters {
		if cl.CertificateAuthority != "" {
			return nil, fmt.Errorf("cluster %q names a file of the controller's file system (certificate-authority); a kubeconfig in a Secret carries its data", name)
		}
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*raw, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// bound sets the request timeout, the rate limits and the answer bound,
// and holds the connections to the servers allowed.
func (c *Clusters) bound(cfg *rest.Config) error {
	cfg.QPS, cfg.Burst = c.QPS, c.Burst
	Bound(cfg, c.Timeout, c.MaxResponse)
	cfg.UserAgent = "pvkit-controller (health)"
	servers := c.Servers
	if servers == nil {
		servers = &Servers{}
	}
	return servers.Hold(cfg, cfg.Timeout)
}
