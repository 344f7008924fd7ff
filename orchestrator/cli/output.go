package cli

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
)

// The output contract: every verb that lists or reports
// takes -o table (the default), wide (more columns, messages whole), name
// (KIND/NAME a line, as kubectl -o name), json or yaml (a kubectl List:
// apiVersion v1, kind List, items, each item an object with its apiVersion
// and kind; one named object alone is that object). -l selects by labels
// where the objects have them, as -o yaml shows them.
const (
	outTable = "table"
	outWide  = "wide"
	outName  = "name"
	outJSON  = "json"
	outYAML  = "yaml"
)

// listOutputs are the formats of a verb that lists.
var listOutputs = []string{outTable, outWide, outName, outJSON, outYAML}

// outputFlag registers -o with its formats, the first the default, and
// completes them.
func outputFlag(c *cobra.Command, p *string, formats []string, what string) {
	c.Flags().StringVarP(p, "output", "o", formats[0], strings.Join(formats, ", ")+": "+what)
	_ = c.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return formats, cobra.ShellCompDirectiveNoFileComp
	})
}

// checkOutput refuses a format the verb does not have.
func checkOutput(output string, formats []string) error {
	if !slices.Contains(formats, output) {
		return usageErr("-o must be %s, not %q", strings.Join(formats, ", "), output)
	}
	return nil
}

// document: -o json or yaml.
func document(output string) bool { return output == outJSON || output == outYAML }

// kubeList is a List as kubectl prints one.
type kubeList struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   map[string]any `json:"metadata"`
	Items      []any          `json:"items"`
}

// writeList writes items as a List in json or yaml.
func writeList(w io.Writer, items []any, output string) error {
	if items == nil {
		items = []any{}
	}
	return writeDoc(w, kubeList{APIVersion: "v1", Kind: "List", Metadata: map[string]any{"resourceVersion": ""}, Items: items}, output)
}

// messageWidth is how much of a message a table shows; -o wide shows it
// whole.
const messageWidth = 100

// message is a message for a table cell: one line, cut at messageWidth
// runes (with "...") unless wide.
func message(msg string, wide bool) string {
	msg = strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", " ")), " ")
	if wide || utf8.RuneCountInString(msg) <= messageWidth {
		return msg
	}
	r := []rune(msg)
	return string(r[:messageWidth-3]) + "..."
}

// asJSON is a value's JSON, watch's signature of an object.
func asJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// shortHash is a stable short name part for things that have no name of
// their own (events).
func shortHash(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return fmt.Sprintf("%x", h[:5])
}

// watchInterval is how often -w reads again.
var watchInterval = time.Second

// watch is -w: every watchInterval, until ctx is done (Ctrl-C), it reads
// the objects again (load) and prints (show) those that are new or changed
// since it last read them, each identified by key and compared by sig.
func watch[T any](ctx context.Context, last []T, key, sig func(T) string, load func() ([]T, error), show func([]T) error) error {
	seen := map[string]string{}
	for _, v := range last {
		seen[key(v)] = sig(v)
	}
	t := time.NewTicker(watchInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		now, err := load()
		if err != nil {
			return err
		}
		var changed []T
		for _, v := range now {
			if s := sig(v); seen[key(v)] != s {
				seen[key(v)] = s
				changed = append(changed, v)
			}
		}
		if len(changed) > 0 {
			if err := show(changed); err != nil {
				return err
			}
		}
	}
}
