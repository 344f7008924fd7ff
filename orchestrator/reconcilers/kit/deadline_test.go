package kit

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A reconcile's deadline: the steps' context ends at it; an outcome that
// ended there is a Transient DeadlineExceeded naming the bound and what was
// under way; the finish step's context outlives it; a process that stops
// (its context cancelled) is not a deadline.
func TestDeadline(t *testing.T) {
	d := NewDeadline(context.Background(), 20*time.Millisecond)
	work, cancel := d.Work()
	defer cancel()
	<-work.Done()
	out := d.Overrun(work, errors.New("creating the draft: context deadline exceeded"))
	var tr *Transient
	if !errors.As(out, &tr) || tr.Reason != ReasonDeadlineExceeded ||
		out.Error() != "the reconcile passed its deadline of 20ms (--reconcile-timeout) and stopped; it is retried: creating the draft: context deadline exceeded" {
		t.Fatalf("overrun: %v", out)
	}
	if w := d.Overrun(work, Wait(time.Second, "waiting for the cache")); !strings.HasSuffix(w.Error(), ": waiting for the cache") {
		t.Fatalf("a wait at the deadline: %v", w)
	}
	if d.Overrun(work, nil) != nil {
		t.Fatal("a reconcile that finished at its deadline is no error")
	}
	fctx, fcancel := d.Finish()
	defer fcancel()
	if fctx.Err() != nil {
		t.Fatal("the finish step's context ended with the steps'")
	}
	// Before the deadline, an outcome is as it was.
	d2 := NewDeadline(context.Background(), time.Hour)
	w2, c2 := d2.Work()
	defer c2()
	plain := errors.New("plain")
	if d2.Overrun(w2, plain) != plain {
		t.Fatal("an outcome before the deadline was changed")
	}
	// A stopping process is not a deadline: its outcome is as it was, and
	// the finish step does not outlive it.
	parent, stop := context.WithCancel(context.Background())
	d3 := NewDeadline(parent, 20*time.Millisecond)
	w3, c3 := d3.Work()
	defer c3()
	<-w3.Done()
	stop()
	if d3.Overrun(w3, plain) != plain {
		t.Fatal("a stopped process's outcome was called a deadline")
	}
	f3, c := d3.Finish()
	defer c()
	if f3.Err() == nil {
		t.Fatal("the finish step outlived a stopped process")
	}
	if NewDeadline(context.Background(), 0).Timeout != DefaultReconcileTimeout {
		t.Fatal("no default")
	}
}
