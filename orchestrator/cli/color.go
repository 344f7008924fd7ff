package cli

import (
	"io"
	"os"
)

// painter colours a table cell on a terminal: `--color auto` (the default)
// colours when stdout is a terminal and NO_COLOR (no-color.org) is unset or
// empty; always and never decide outright. Every code has the same width
// (5 bytes, and 4 for the reset), so a column painted throughout stays
// aligned by tabwriter.
type painter struct{ on bool }

const (
	green  = "\x1b[32m"
	red    = "\x1b[31m"
	yellow = "\x1b[33m"
	plain  = "\x1b[39m" // the default colour: same width as the others
	reset  = "\x1b[0m"
)

func (p painter) paint(code, s string) string {
	if !p.on {
		return s
	}
	return code + s + reset
}

// header paints a header cell of a painted column the default colour, so
// that it is as wide, in bytes, as the cells under it.
func (p painter) header(s string) string { return p.paint(plain, s) }

// ready paints a Ready status: True green, False red, anything else yellow.
func (p painter) ready(s string) string {
	switch s {
	case "True":
		return p.paint(green, s)
	case "False":
		return p.paint(red, s)
	}
	return p.paint(yellow, s)
}

// warn paints an event type: Warning yellow, others plain.
func (p painter) warn(s string) string {
	if s == "Warning" {
		return p.paint(yellow, s)
	}
	return p.paint(plain, s)
}

// colorChoices are --color's values.
var colorChoices = []string{"auto", "always", "never"}

// newPainter decides from --color, NO_COLOR and whether w is a terminal.
func newPainter(flag string, w io.Writer) painter {
	switch flag {
	case "always":
		return painter{on: true}
	case "never":
		return painter{}
	}
	if os.Getenv("NO_COLOR") != "" {
		return painter{}
	}
	f, ok := w.(*os.File)
	if !ok {
		return painter{}
	}
	st, err := f.Stat()
	return painter{on: err == nil && st.Mode()&os.ModeCharDevice != 0}
}
