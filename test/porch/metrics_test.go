package porch

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// metricsClient scrapes the controller's HTTPS metrics endpoint, whose
// certificate is self-signed (controller-runtime's default when none is
// mounted): what is checked is the caller's token.
var metricsClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

var (
	readerOnce  sync.Once
	readerToken string
	readerErr   error
)

// scraperToken is the token of a ServiceAccount allowed to get /metrics:
// bound to config/rbac's pvkit-metrics-reader, as an operator binds their
// Prometheus's.
func scraperToken(t *testing.T) string {
	t.Helper()
	readerOnce.Do(func() {
		for _, args := range [][]string{
			{"-n", "pvkit-system", "create", "serviceaccount", "metrics-scraper"},
			{"create", "clusterrolebinding", "metrics-scraper", "--clusterrole", "pvkit-metrics-reader", "--serviceaccount", "pvkit-system:metrics-scraper"},
			{"-n", "pvkit-system", "create", "serviceaccount", "not-a-scraper"},
		} {
			if out, err := kubectl("", args...); err != nil && !strings.Contains(err.Error(), "AlreadyExists") {
				readerErr = fmt.Errorf("%v: %s", err, out)
				return
			}
		}
		readerToken, readerErr = kubectl("", "-n", "pvkit-system", "create", "token", "metrics-scraper", "--duration", "1h")
		readerToken = strings.TrimSpace(readerToken)
	})
	if readerErr != nil {
		t.Fatal(readerErr)
	}
	return readerToken
}

// getMetrics GETs /metrics with token ("" sends none).
func getMetrics(t *testing.T, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "https://"+metricsAddr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := metricsClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// Issue 32 #2 and #5: the controller, run with its ServiceAccount's rights
// (config/rbac, the metrics authentication role included), serves metrics
// over HTTPS only to a token the API server authenticates and authorizes:
// an anonymous scrape is 401, a made-up token refused, a ServiceAccount
// without pvkit-metrics-reader 403, one bound to it 200 with pvkit's series; plain HTTP is no answer.
func TestSecureMetrics(t *testing.T) {
	t.Parallel()         // its own namespace and repositories; the stack and the controller are shared (issue 48 #4)
	newEnv(t, "metrics") // the stack (or a skip) and the controller
	good := scraperToken(t)
	if code, body := getMetrics(t, ""); code != http.StatusUnauthorized {
		t.Errorf("an anonymous scrape: %d %q, want 401", code, body)
	}
	// A token the API server cannot read at all: controller-runtime v0.22.4
	// answers 500 "Authentication failed" (its TokenReview errs, measured
	// on this stack), a refusal all the same.
	if code, body := getMetrics(t, "not-a-token"); code != http.StatusUnauthorized && code != http.StatusInternalServerError || strings.Contains(body, "pvkit_") {
		t.Errorf("a scrape with a made-up token: %d %q, want it refused", code, body)
	}
	other, err := kubectl("", "-n", "pvkit-system", "create", "token", "not-a-scraper", "--duration", "10m")
	if err != nil {
		t.Fatal(err)
	}
	if code, body := getMetrics(t, strings.TrimSpace(other)); code != http.StatusForbidden {
		t.Errorf("a scrape by a ServiceAccount not bound to pvkit-metrics-reader: %d %q, want 403", code, body)
	}
	code, body := getMetrics(t, good)
	if code != http.StatusOK || !strings.Contains(body, "pvkit_reconcile_duration_seconds") {
		t.Errorf("a scrape by metrics-scraper: %d, want 200 with pvkit's series; got %.300q", code, body)
	}
	if resp, err := http.Get("http://" + metricsAddr + "/metrics"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("plain HTTP /metrics answered 200")
		}
	}
}
