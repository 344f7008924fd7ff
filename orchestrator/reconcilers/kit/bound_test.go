package kit

import (
	"strings"
	"testing"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
)

// Issue 27 #7: a condition's or an Event's message is at most MaxMessage
// characters (the apiserver refuses a longer condition), however long what
// it reports (a function's stderr), and says what it left out.
func TestMessagesBounded(t *testing.T) {
	long := strings.Repeat("é", 50_000) + "the end"
	var conds []metav1.Condition
	Set(&conds, 1, nil, "Ready", metav1.ConditionFalse, "RenderFailed", long)
	got := conds[0].Message
	if n := utf8.RuneCountInString(got); n > MaxMessage || !strings.HasSuffix(got, " ... (17279 characters left out)") {
		t.Fatalf("condition message: %d characters, ending %q", n, got[len(got)-40:])
	}
	if !utf8.ValidString(got) {
		t.Fatal("the cut split a character")
	}
	short := "render failed: exit code 1"
	Set(&conds, 1, nil, "Ready", metav1.ConditionFalse, "RenderFailed", short)
	if conds[0].Message != short {
		t.Fatalf("a short message changed: %q", conds[0].Message)
	}

	rec := record.NewFakeRecorder(2)
	Events{Recorder: rec}.Warning(nil, "RenderFailed", "%s", long)
	ev := <-rec.Events
	if n := utf8.RuneCountInString(ev); n > MaxMessage+len("Warning RenderFailed ") || !strings.HasSuffix(ev, "characters left out)") {
		t.Fatalf("event: %d characters", n)
	}
}
