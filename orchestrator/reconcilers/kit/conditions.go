package kit

// Condition bookkeeping: an injectable clock, and setting a condition so that
// its transition time changes only when its status does.

import (
	"fmt"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Clock is time, injected so that tests need no real time.
type Clock interface{ Now() time.Time }

// Real is the real clock.
type Real struct{}

// Now implements Clock.
func (Real) Now() time.Time { return time.Now() }

// Fixed is a clock stopped at one instant, for tests and golden status.
type Fixed time.Time

// Now implements Clock.
func (f Fixed) Now() time.Time { return time.Time(f) }

// Set sets a condition for an object of the given generation. The transition
// time is the clock's now when the status changes, else kept; a nil clock is
// the real one.
func Set(conds *[]metav1.Condition, generation int64, clock Clock, typ string, status metav1.ConditionStatus, reason, msg string) {
	if clock == nil {
		clock = Real{}
	}
	c := metav1.Condition{Type: typ, Status: status, Reason: reason, Message: BoundMessage(msg), ObservedGeneration: generation,
		LastTransitionTime: metav1.NewTime(clock.Now())}
	if cur := meta.FindStatusCondition(*conds, typ); cur != nil && cur.Status == status {
		c.LastTransitionTime = cur.LastTransitionTime
	}
	meta.SetStatusCondition(conds, c)
}

// MaxMessage is the longest condition or Event message pvkit writes: the
// apiserver refuses a condition whose message is longer (metav1.Condition,
// maxLength 32768), and a function's stderr can be any length.
const MaxMessage = 32768

// BoundMessage is msg cut to MaxMessage characters, saying how many were
// left out.
func BoundMessage(msg string) string {
	if len(msg) <= MaxMessage || utf8.RuneCountInString(msg) <= MaxMessage {
		return msg
	}
	r := []rune(msg)
	keep := MaxMessage - 40 // the note is at most 40 characters
	return string(r[:keep]) + fmt.Sprintf(" ... (%d characters left out)", len(r)-keep)
}
