package kit

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

// Issue 56 #1: the shard's selector is what the informers send the API
// server; Owns agrees with it.
func TestShardSelectorAndOwns(t *testing.T) {
	for _, tt := range []struct {
		key, selector string
		owns          map[string]bool // label value ("-": no label) -> owned
	}{
		{"", "!pvkit.dev/shard", map[string]bool{"-": true, "a": false, "": false}},
		{"a", "pvkit.dev/shard=a", map[string]bool{"-": false, "a": true, "b": false, "": false}},
	} {
		s, err := ParseShard(tt.key)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Selector().String(); got != tt.selector {
			t.Errorf("shard %q: selector %q, want %q", tt.key, got, tt.selector)
		}
		for value, want := range tt.owns {
			l := map[string]string{"app": "x"}
			if value != "-" {
				l["pvkit.dev/shard"] = value
			}
			if got := s.Owns(l); got != want {
				t.Errorf("shard %q owns %v: %v, want %v", tt.key, l, got, want)
			}
			if got := s.Selector().Matches(labels.Set(l)); got != want {
				t.Errorf("shard %q selector matches %v: %v, want %v", tt.key, l, got, want)
			}
		}
	}
	var none *Shard
	if !none.Owns(map[string]string{"pvkit.dev/shard": "a"}) || !none.Owns(nil) {
		t.Error("no sharding must own everything")
	}
	if ShardName("") != "the unlabelled shard" || ShardName("eu") != "shard eu" {
		t.Error(ShardName(""), ShardName("eu"))
	}
}

func TestParseShardRefuses(t *testing.T) {
	for key, want := range map[string]string{
		"EU":                    `--shard: "EU" is not a shard key: a lowercase RFC 1123 label must consist of`,
		"eu.west":               `--shard: "eu.west" is not a shard key: must not contain dots`,
		"a_b":                   `--shard: "a_b" is not a shard key`,
		strings.Repeat("a", 64): `is not a shard key: must be no more than 63 characters`,
	} {
		if _, err := ParseShard(key); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseShard(%q) = %v, want %q", key, err, want)
		}
	}
}
