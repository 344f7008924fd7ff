package kit

import (
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Issue 20 #4: a Waiting outcome goes through Summarize like the others:
// it changes no condition, is no error, and says when to come back; and
// observedGeneration follows only an outcome that settles the generation.
func TestSummarizeOutcomes(t *testing.T) {
	ready := []metav1.Condition{{Type: ConditionReady, Status: metav1.ConditionTrue, Reason: "NoErrors", Message: "ok", ObservedGeneration: 1}}
	summary := func(conds *[]metav1.Condition) Summary {
		return Summary{Conditions: conds, Generation: 2, ReadyReason: "NoErrors", ReadyMessage: "ok", ErrorReason: "Error"}
	}
	conds := append([]metav1.Condition(nil), ready...)
	res := summary(&conds).Summarize(Wait(500*time.Millisecond, "waiting for the cache to show draft %s", "d"))
	if res.Waiting == nil || res.Waiting.After != 500*time.Millisecond || res.Err != nil || res.Observed() ||
		res.Waiting.Error() != "waiting for the cache to show draft d" {
		t.Fatalf("waiting: %+v", res)
	}
	if !equality.Semantic.DeepEqual(conds, ready) {
		t.Fatalf("a wait changed the conditions: %+v", conds)
	}
	for _, tc := range []struct {
		name     string
		err      error
		observed bool
	}{
		{"success", nil, true},
		{"stall", Stallf("UpstreamNotFound", "no upstream"), true},
		{"partial, not retried", &Partial{Reason: "TargetsFailed", Err: errors.New("1 target failed")}, true},
		{"partial, retried", &Partial{Reason: "TargetsFailed", Err: errors.New("1 target failed"), Retry: true}, false},
		{"transient", errors.New("porch is down"), false},
	} {
		conds := append([]metav1.Condition(nil), ready...)
		if got := summary(&conds).Summarize(tc.err).Observed(); got != tc.observed {
			t.Errorf("%s: observed %v, want %v", tc.name, got, tc.observed)
		}
	}
}
