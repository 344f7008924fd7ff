package main

import (
	"bytes"
	"strings"
	"testing"
)

const input = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n" +
	"functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data: {team: payments}\n"

// The function is the link's name, or the first argument.
func TestDispatch(t *testing.T) {
	for _, tt := range []struct {
		self string
		args []string
	}{{"set-labels-v0.2", nil}, {"pvkit-catalog", []string{"set-labels-v0.2"}}, {"set-annotations-v0.1", nil}} {
		var out, errb bytes.Buffer
		if code := run(tt.self, tt.args, strings.NewReader(input), &out, &errb); code != 0 || !strings.Contains(out.String(), "team: payments") {
			t.Fatalf("%s %v: exit %d\n%s\n%s", tt.self, tt.args, code, out.String(), errb.String())
		}
	}
}

// --list names every behaviour, --config starts with its header, and an
// unknown name is a usage error listing the names --list gives.
func TestListConfigAndUnknown(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run("pvkit-catalog", []string{"--list"}, nil, &out, &errb); code != 0 || !strings.Contains(out.String(), "set-labels-v0.1\n") {
		t.Fatalf("--list: %d %q", code, out.String())
	}
	names := strings.Fields(out.String())
	out.Reset()
	if code := run("pvkit-catalog", []string{"--config"}, nil, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "# pvkit's catalog functions") {
		t.Fatalf("--config: %d %q", code, out.String())
	}
	out.Reset()
	code := run("pvkit-catalog", []string{"set-label"}, strings.NewReader(input), &out, &errb)
	want := `pvkit-catalog: no function "set-label": run it as one of ` + strings.Join(names, ", ") +
		` (an executable of that name, or the name as the first argument), or with --list or --config` + "\n"
	if code != 2 || errb.String() != want || out.Len() != 0 || len(names) < 10 {
		t.Fatalf("exit %d, stderr %q\nwant %q", code, errb.String(), want)
	}
}
