package kit

import (
	"fmt"
	"strings"

	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Shard is the shard a controller process reconciles (pvkit-controller
// --shard KEY), as Flux shards its controllers: the PackageVariantSets and
// PackageVariants labelled pvkit.dev/shard=KEY, or, with no key, those
// without the label. The manager's informers list and watch only those (a
// server-side label selector: the others are never in its cache, so never
// reconciled or written by it). A nil *Shard is no sharding (pvctl run's
// embedded cluster): everything.
type Shard struct {
	Key string
}

// ParseShard reads --shard: empty is the unlabelled shard; a key is a
// lowercase DNS label (it names the shard's Lease too).
func ParseShard(key string) (*Shard, error) {
	if key != "" {
		if errs := validation.IsDNS1123Label(key); len(errs) > 0 {
			return nil, fmt.Errorf("--shard: %q is not a shard key: %s", key, strings.Join(errs, "; "))
		}
	}
	return &Shard{Key: key}, nil
}

// Selector is the label selector of the shard's objects:
// pvkit.dev/shard=KEY, or !pvkit.dev/shard for the unlabelled shard.
func (s *Shard) Selector() labels.Selector {
	op, values := selection.Equals, []string{s.Key}
	if s.Key == "" {
		op, values = selection.DoesNotExist, nil
	}
	req, err := labels.NewRequirement(v1alpha2.ShardLabel, op, values)
	if err != nil { // unreachable: the label and a key ParseShard took are valid
		panic(fmt.Sprintf("shard selector %q: %v", s.Key, err))
	}
	return labels.NewSelector().Add(*req)
}

// Owns says whether an object with these labels is the shard's; every
// object is when there is no sharding (nil).
func (s *Shard) Owns(l map[string]string) bool {
	if s == nil {
		return true
	}
	v, ok := l[v1alpha2.ShardLabel]
	if s.Key == "" {
		return !ok
	}
	return ok && v == s.Key
}

// Name is how messages name the shard: "shard KEY", or "the unlabelled
// shard".
func (s *Shard) Name() string { return ShardName(s.Key) }

// ShardName names the shard of a label value ("": the unlabelled shard).
func ShardName(key string) string {
	if key == "" {
		return "the unlabelled shard"
	}
	return "shard " + key
}
