package health

import (
	"context"
	"fmt"
	"strings"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
)

// MaxReported bounds what a target's health carries of the cluster's
// words, in bytes (the rest is cut, with "…").
const MaxReported = 512

// Reported is what the object says in the cluster's words: the check's
// message expression (a string, over the condition's variables), or by
// default the reason and message of the object's Ready condition (Flux,
// Config Sync's RootSync has none: its Syncing condition, then its
// errorSummary, either with its first error's own text), else its Healthy
// condition, else Argo CD's status.health ("Degraded: ..."), "" when the
// object says nothing of the kind. At most MaxReported bytes, on one line.
func Reported(ctx context.Context, c *pv.HealthCheck, v Variant, object map[string]any, rev Revision) (string, error) {
	if c.Message == "" {
		return bound(defaultReported(object)), nil
	}
	p, err := compile(messageKind, c.Message)
	if err != nil {
		return "", fmt.Errorf("message %v", err)
	}
	vars := v.vars()
	vars["object"], vars["revision"] = object, rev.value()
	out, _, err := p.ContextEval(ctx, vars)
	if err != nil {
		return "", fmt.Errorf("message %q: %v", c.Message, err)
	}
	s, ok := out.Value().(string)
	if !ok {
		return "", fmt.Errorf("message %q gave %v, not a string", c.Message, out.Value())
	}
	return bound(s), nil
}

// agentConditions are the condition types of the GitOps agents' objects
// whose words a health says, in the order they are read: Flux's and most
// controllers' readiness, Argo CD's and others' health, Config Sync's
// syncing (other controllers' types, not pvkit's: pvapi names pvkit's).
var agentConditions = []string{"Ready", "Healthy", "Syncing"}

// defaultReported reads the object's own words, as the controllers that
// keep these kinds write them.
func defaultReported(object map[string]any) string {
	status, _ := object["status"].(map[string]any)
	if status == nil {
		return ""
	}
	conds, _ := status["conditions"].([]any)
	syncErr := firstSyncError(status)
	for _, want := range agentConditions {
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if t, _ := m["type"].(string); t != want {
				continue
			}
			said := join(str(m["reason"]), str(m["message"]))
			if syncErr != "" && !strings.Contains(said, syncErr) {
				said = join(said, syncErr)
			}
			return said
		}
	}
	if h, _ := status["health"].(map[string]any); h != nil { // Argo CD's Application
		return join(str(h["status"]), str(h["message"]))
	}
	if sync, _ := status["sync"].(map[string]any); sync != nil { // Config Sync's RootSync
		if e, _ := sync["errorSummary"].(map[string]any); e != nil {
			return join(fmt.Sprintf("%v sync error(s) at %s", e["totalCount"], str(sync["commit"])), syncErr)
		}
	}
	return ""
}

// firstSyncError is Config Sync's own text of a RootSync's (or RepoSync's)
// first error (status.sync.errors[0].errorMessage: "KNV2009: ..."), ""
// when it reports none.
func firstSyncError(status map[string]any) string {
	sync, _ := status["sync"].(map[string]any)
	errs, _ := sync["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	first, _ := errs[0].(map[string]any)
	return str(first["errorMessage"])
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func join(reason, message string) string {
	switch {
	case reason == "":
		return message
	case message == "":
		return reason
	}
	return reason + ": " + message
}

// bound keeps s to one line of at most MaxReported bytes, cut at a rune.
func bound(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= MaxReported {
		return s
	}
	cut := MaxReported - len("…")
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
