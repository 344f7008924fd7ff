package kit

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type at time.Time

func (a at) Now() time.Time { return time.Time(a) }

func TestSet(t *testing.T) {
	t0, t1 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	var conds []metav1.Condition
	Set(&conds, 1, at(t0), "Ready", metav1.ConditionFalse, "Error", "a")
	Set(&conds, 2, at(t1), "Ready", metav1.ConditionFalse, "Error", "b")
	if c := conds[0]; !c.LastTransitionTime.Time.Equal(t0) || c.Message != "b" || c.ObservedGeneration != 2 {
		t.Fatalf("same status must keep the transition time: %+v", c)
	}
	Set(&conds, 3, at(t1), "Ready", metav1.ConditionTrue, "NoErrors", "ok")
	if c := conds[0]; !c.LastTransitionTime.Time.Equal(t1) || len(conds) != 1 {
		t.Fatalf("a new status must move the transition time: %+v", conds)
	}
}
