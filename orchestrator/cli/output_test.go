package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a buffer a watching command writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Issue 31 #5: status speaks the output contract: table (messages cut),
// wide (generations, messages whole), name, json and yaml (a List of the
// sets and variants, each with its apiVersion and kind; one named object
// alone), -l by the objects' labels.
func TestStatusOutputContract(t *testing.T) {
	w := newWS(t)
	w.write("lost.yaml", strings.Replace(missingUpstream, "name: lost", "name: lost\n  labels: {team: payments}", 1))
	w.run(ExitStalled)

	table := w.mustCmd(ExitOK, "status")
	wide := w.mustCmd(ExitOK, "status", "-o", "wide")
	contains(t, wide, "GENERATION", "OBSERVED")
	var cut, whole string
	for _, l := range strings.Split(table, "\n") {
		if strings.Contains(l, " lost ") {
			cut = l
		}
	}
	for _, l := range strings.Split(wide, "\n") {
		if strings.Contains(l, " lost ") {
			whole = l
		}
	}
	if !strings.HasSuffix(cut, "...") || len(whole) <= len(cut) || strings.HasSuffix(whole, "...") {
		t.Fatalf("the table cuts a long message, wide shows it whole:\n%s\n%s", cut, whole)
	}

	names := w.mustCmd(ExitOK, "status", "-o", "name")
	contains(t, names, "packagevariantset/app\n", "packagevariant/app-staging\n", "packagevariant/lost\n")

	var list struct {
		APIVersion, Kind string
		Items            []struct {
			APIVersion, Kind string
			Metadata         struct{ Name string }
		}
	}
	if err := json.Unmarshal([]byte(w.mustCmd(ExitOK, "status", "-o", "json")), &list); err != nil {
		t.Fatal(err)
	}
	if list.APIVersion != "v1" || list.Kind != "List" || len(list.Items) != strings.Count(names, "\n") ||
		list.Items[0].Kind != "PackageVariantSet" || list.Items[0].APIVersion != "config.porch.kpt.dev/v1alpha2" {
		t.Fatalf("status -o json: %+v", list)
	}
	contains(t, w.mustCmd(ExitOK, "status", "-o", "yaml"), "apiVersion: v1\nitems:\n", "kind: List\n")

	if got := w.mustCmd(ExitOK, "status", "-l", "team=payments", "-o", "name"); got != "packagevariant/lost\n" {
		t.Fatalf("status -l team=payments: %q", got)
	}
	if got := w.mustCmd(ExitOK, "status", "pv/lost", "-o", "name"); got != "packagevariant/lost\n" {
		t.Fatalf("status pv/lost -o name: %q", got)
	}
	one := w.mustCmd(ExitOK, "status", "pv/lost", "-o", "yaml")
	if !strings.HasPrefix(one, "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\n") {
		t.Fatalf("status pv/lost -o yaml is the object:\n%.300s", one)
	}
	code, _, errs := w.cmd("status", "-l", "team in (a")
	if code != ExitUsage || !strings.Contains(errs, "pvctl status: -l: ") {
		t.Fatalf("status -l team in (a: exit %d, %q", code, errs)
	}
	code, _, errs = w.cmd("status", "-o", "csv")
	if code != ExitUsage || !strings.Contains(errs, `pvctl status: -o must be table, wide, name, json, yaml, not "csv"`) {
		t.Fatalf("status -o csv: exit %d, %q", code, errs)
	}
}

// Issue 31 #5: status -w and events -w print what changes after the list,
// until interrupted (exit 0): a variant that becomes Ready, a new event.
func TestWatch(t *testing.T) {
	defer func(d time.Duration) { watchInterval = d }(watchInterval)
	watchInterval = 50 * time.Millisecond
	w := newWS(t)
	w.write("lost.yaml", missingUpstream)
	w.run(ExitStalled)

	ctx, cancel := context.WithCancel(context.Background())
	var status, events, errs syncBuffer
	var wg sync.WaitGroup
	codes := make([]int, 2)
	wg.Add(2)
	go func() {
		defer wg.Done()
		codes[0] = Command(ctx, "status", []string{"--repos", w.repos, "-w", "-o", "name"}, &status, &errs)
	}()
	go func() {
		defer wg.Done()
		codes[1] = Command(ctx, "events", []string{"--repos", w.repos, "-w"}, &events, &errs)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(status.String(), "packagevariant/lost\n") || !strings.Contains(events.String(), "UpstreamNotFound") {
		if time.Now().After(deadline) {
			t.Fatalf("the first listing did not come:\n%s\n%s\n%s", status.String(), events.String(), errs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	before := strings.Count(status.String(), "packagevariant/lost\n")
	w.remove("lost.yaml")
	w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in, "--prune")
	w.write("late.yaml", strings.ReplaceAll(missingUpstream, "name: lost", "name: late"))
	w.run(ExitStalled)
	for !strings.Contains(status.String(), "packagevariant/late\n") || !strings.Contains(events.String(), "packagevariant/late") {
		if time.Now().After(deadline) {
			t.Fatalf("the change was not watched:\n%s\n%s\n%s", status.String(), events.String(), errs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	if codes[0] != ExitOK || codes[1] != ExitOK || strings.Count(status.String(), "packagevariant/lost\n") != before {
		t.Fatalf("exit %v; lost printed again after it went:\n%s\n%s", codes, status.String(), errs.String())
	}
	if strings.Count(events.String(), "LAST SEEN") != 1 {
		t.Fatalf("events -w repeats its header:\n%s", events.String())
	}
}

// Issue 31 #5: get --lifecycle filters by lifecycle (any case, repeated or
// comma-separated); a wrong one is a usage error naming them; get -w
// prints a revision again when it changes, with no second header.
func TestGetLifecycleAndWatch(t *testing.T) {
	defer func(d time.Duration) { watchInterval = d }(watchInterval)
	watchInterval = 50 * time.Millisecond
	w := newWS(t)
	w.run(ExitOK)
	drafts := w.mustCmd(ExitOK, "get", "--lifecycle", "draft", "-o", "name")
	if n := strings.Count(drafts, "packagerevision/"); n != 3 || strings.Contains(drafts, "blueprints.") {
		t.Fatalf("get --lifecycle draft:\n%s", drafts)
	}
	first := strings.TrimPrefix(strings.Split(drafts, "\n")[0], "packagerevision/")
	if got := w.mustCmd(ExitOK, "get", "--lifecycle", "Published,Proposed", "-o", "name"); strings.Contains(got, "packagevariant-1") || !strings.Contains(got, "blueprints.app.v1") {
		t.Fatalf("get --lifecycle Published,Proposed:\n%s", got)
	}
	code, _, errs := w.cmd("get", "--lifecycle", "Drafted")
	if code != ExitUsage || !strings.Contains(errs, `pvctl get: --lifecycle "Drafted": want Draft, Proposed, Published, DeletionProposed, Unreadable`) {
		t.Fatalf("get --lifecycle Drafted: exit %d, %q", code, errs)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	done := make(chan int)
	go func() { done <- Command(ctx, "get", []string{"--repos", w.repos, "-w"}, &out, &errb) }()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), first) {
		if time.Now().After(deadline) {
			t.Fatalf("no listing:\n%s%s", out.String(), errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	w.mustCmd(ExitOK, "propose", first)
	for strings.Count(out.String(), first) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the proposal was not watched:\n%s%s", out.String(), errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != ExitOK || strings.Count(out.String(), "LIFECYCLE") != 1 || !strings.Contains(out.String(), "Proposed") {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
}

// Issue 31 #5: the lifecycle verbs speak the contract: -o name prints the
// revisions acted on, -o json a PackageRevisionList of them as they are now.
func TestLifecycleVerbOutput(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	names := strings.Fields(strings.ReplaceAll(w.mustCmd(ExitOK, "get", "--lifecycle", "Draft", "-o", "name"), "packagerevision/", ""))
	if got := w.mustCmd(ExitOK, "propose", "-o", "name", names[0], names[1]); got != "packagerevision/"+names[0]+"\npackagerevision/"+names[1]+"\n" {
		t.Fatalf("propose -o name: %q", got)
	}
	var list struct {
		Kind  string
		Items []struct {
			Metadata struct{ Name string }
			Spec     struct{ Lifecycle string }
		}
	}
	if err := json.Unmarshal([]byte(w.mustCmd(ExitOK, "approve", "-o", "json", names[0])), &list); err != nil {
		t.Fatal(err)
	}
	if list.Kind != "PackageRevisionList" || len(list.Items) != 1 || list.Items[0].Metadata.Name != names[0] || list.Items[0].Spec.Lifecycle != "Published" {
		t.Fatalf("approve -o json: %+v", list)
	}
	if got := w.mustCmd(ExitOK, "del", "-o", "name", names[2]); got != "packagerevision/"+names[2]+"\n" {
		t.Fatalf("del -o name: %q", got)
	}
}

// complete is what `pvctl __complete ARGS` offers.
func (w *ws) complete(args ...string) []string {
	w.t.Helper()
	code, out, errs := w.cmd("__complete", args...)
	if code != ExitOK {
		w.t.Fatalf("__complete %v: exit %d %s", args, code, errs)
	}
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if l != "" && !strings.HasPrefix(l, ":") && !strings.HasPrefix(l, "Completion ended") {
			got = append(got, l)
		}
	}
	return got
}

// Issue 31 #5: completion offers what the verb takes: KIND/NAME of the
// sets and variants, the revisions in the lifecycles a verb acts on, and
// flag values.
func TestCompletion(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	complete := w.complete
	has := func(got []string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Fatalf("completions %v lack %q", got, w)
			}
		}
	}
	has(complete("status", ""), "packagevariantset/app", "packagevariant/app-staging")
	if got := complete("events", "pvs/"); len(got) != 1 || got[0] != "pvs/app" {
		t.Fatalf("events pvs/: %v", got)
	}
	drafts := complete("propose", "")
	if len(drafts) != 3 || slices.ContainsFunc(drafts, func(s string) bool { return strings.HasPrefix(s, "blueprints.") }) {
		t.Fatalf("propose completes the drafts: %v", drafts)
	}
	if got := complete("propose-delete", ""); !slices.Contains(got, "blueprints.app.v1") || slices.Contains(got, drafts[0]) {
		t.Fatalf("propose-delete completes the published: %v", got)
	}
	has(complete("get", "-o", ""), "table", "wide", "name", "json", "yaml")
	has(complete("get", "--lifecycle", "D"), "Draft", "DeletionProposed")
	has(complete("get", "--repo", ""), "blueprints", "edge-useast1")
	has(complete("diff", drafts[0], "--against", "blue"), "blueprints.app.v1")
}

// Issue 31 #5: diff --against takes any revision: what changed between two.
func TestDiffAgainstRevision(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	draft := strings.TrimPrefix(strings.Split(w.mustCmd(ExitOK, "get", "--lifecycle", "Draft", "-o", "name"), "\n")[0], "packagerevision/")
	code, out, errs := w.cmd("diff", draft, "--against", "blueprints.app.v1")
	if code != ExitNotReady || !strings.HasPrefix(out, "# blueprints.app.v1 -> "+draft+"\n") || !strings.Contains(out, "package-context.yaml") {
		t.Fatalf("diff --against blueprints.app.v1: exit %d\n%s%s", code, out, errs)
	}
}
