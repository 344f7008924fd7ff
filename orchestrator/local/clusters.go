package local

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/pvkit/pvkit/orchestrator/api"
	"github.com/pvkit/pvkit/orchestrator/embedded"
	"github.com/pvkit/pvkit/orchestrator/remote"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// clusters are the other clusters of a pvctl run (rule
// health-from-the-clusters): the objects its files put on each
// (ClusterAnnotation), or a kubeconfig context per cluster (--cluster
// NAME=CONTEXT), read with the user's own credentials, each request
// bounded by remote.DefaultTimeout and each answer by
// remote.DefaultMaxResponse. A cluster named by neither reads as
// KubeconfigUnavailable, saying how to give it.
type clusters struct {
	objects  map[string][]client.Object
	contexts map[string]string
	// kubeconfig is the file the contexts are in ("": kubectl's rules,
	// $KUBECONFIG then ~/.kube/config).
	kubeconfig string

	mu      sync.Mutex
	readers map[string]client.Reader
}

func newClusters(objects map[string][]client.Object, contexts map[string]string, kubeconfig string) *clusters {
	return &clusters{objects: objects, contexts: contexts, kubeconfig: kubeconfig, readers: map[string]client.Reader{}}
}

// Reader implements packagevariant.Clusters.
func (c *clusters) Reader(ctx context.Context, namespace, cluster string) (client.Reader, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.readers[cluster]; ok {
		return r, nil
	}
	var r client.Reader
	switch context, named := c.contexts[cluster]; {
	case named:
		var err error
		if r, err = contextReader(c.kubeconfig, context); err != nil {
			return nil, &remote.KubeconfigError{Err: fmt.Errorf("--cluster %s=%s: %v", cluster, context, err)}
		}
	case c.objects[cluster] != nil:
		s, err := api.Scheme()
		if err != nil {
			return nil, err
		}
		r = embedded.New(embedded.Options{Scheme: s, Objects: c.objects[cluster]})
	default:
		return nil, &remote.KubeconfigError{
			Err: fmt.Errorf("pvctl has no objects of cluster %s: give them in files annotated %s: %s, or name a kubeconfig context with --cluster %s=CONTEXT", cluster, ClusterAnnotation, cluster, cluster)}
	}
	c.readers[cluster] = r
	return r, nil
}

// Source implements packagevariant.ClusterSource: the context a
// cluster is read through, or pvctl's files.
func (c *clusters) Source(namespace, cluster string) string {
	if ctx, ok := c.contexts[cluster]; ok {
		return fmt.Sprintf("context %s of your kubeconfig", ctx)
	}
	return "the objects pvctl's files give for it"
}

// Failed implements packagevariant.Clusters: the next read makes the
// context's client again.
func (c *clusters) Failed(namespace, cluster string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.contexts[cluster]; ok {
		delete(c.readers, cluster)
	}
}

// contextReader is a reader of a kubeconfig context, bounded as the
// controller's clients of other clusters are.
func contextReader(kubeconfig, context string) (client.Reader, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, err
	}
	// The user's own kubeconfig: its servers are theirs to choose (no
	// remote.Servers bound), but every answer is bounded in time and
	// bytes, and said in pvkit's words, as the controller's are.
	remote.Bound(cfg, remote.DefaultTimeout, remote.DefaultMaxResponse)
	cfg.UserAgent = "pvctl (health)"
	return remote.NewReader(cfg)
}

// CheckContexts refuses --cluster contexts the kubeconfig (kubectl's
// rules: $KUBECONFIG, ~/.kube/config; or the file given) does not have,
// naming each and the contexts it has: a typo is a usage error before
// anything runs, not a health that reads KubeconfigUnavailable.
func CheckContexts(contexts map[string]string, kubeconfig string) error {
	if len(contexts) == 0 {
		return nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	raw, err := rules.Load()
	if err != nil {
		return fmt.Errorf("--cluster: reading the kubeconfig: %v", err)
	}
	for _, name := range sortedKeys(contexts) {
		if _, ok := raw.Contexts[contexts[name]]; !ok {
			have := sortedKeys(raw.Contexts)
			if len(have) == 0 {
				have = []string{"none"}
			}
			return fmt.Errorf("--cluster %s=%s: the kubeconfig has no context %q (it has: %s)", name, contexts[name], contexts[name], strings.Join(have, ", "))
		}
	}
	return nil
}

// ParseClusters reads --cluster values, NAME=CONTEXT each.
func ParseClusters(values []string) (map[string]string, error) {
	out := map[string]string{}
	for _, v := range values {
		name, context, ok := strings.Cut(v, "=")
		if !ok || name == "" || context == "" {
			return nil, fmt.Errorf("--cluster %q: want NAME=CONTEXT (a cluster a health check names, and a context of your kubeconfig)", v)
		}
		if prev, dup := out[name]; dup && prev != context {
			return nil, fmt.Errorf("--cluster %s is given twice (%s and %s)", name, prev, context)
		}
		out[name] = context
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
