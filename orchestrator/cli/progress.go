package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// progress shows a run as it happens on a terminal: one live line (changes
// so far), cleared at the end. Off a terminal it shows nothing: the report
// on stdout lists every change once (one stream per change),
// and an interrupted run still prints it, saying it stopped.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	count int
	last  string
}

// progressWriter is the progress of a run written to w (stderr).
func progressWriter(w io.Writer) *progress {
	if w == nil {
		return nil
	}
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &progress{w: w, tty: tty}
}

// change reports one change.
func (p *progress) Change(line string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count++
	if p.tty {
		p.last = line
		fmt.Fprintf(p.w, "\r\033[K%d changes: %s", p.count, line)
	}
}

// done ends the live line.
func (p *progress) Done() {
	if p != nil && p.tty && p.count > 0 {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
