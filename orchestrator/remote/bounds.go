package remote

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultMaxResponse bounds one answer read from another cluster (bytes,
// after decompression): an object an API server stores is at most 1.5
// MiB, and a cluster's discovery documents are smaller; an answer past it
// is cut and the read fails, named. A server that streams one endless
// object killed the controller (out of memory within seconds) before.
const DefaultMaxResponse = 4 << 20

// ResponseTooLargeError is an answer cut at the bound.
type ResponseTooLargeError struct{ Limit int64 }

func (e *ResponseTooLargeError) Error() string {
	return fmt.Sprintf("answered more than %d bytes (pvkit reads at most that of one answer)", e.Limit)
}

// limitedTransport cuts every response body at limit bytes.
type limitedTransport struct {
	next  http.RoundTripper
	limit int64
}

func (t *limitedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > t.limit {
		resp.Body.Close()
		return nil, &ResponseTooLargeError{Limit: t.limit}
	}
	resp.Body = &limitedBody{body: resp.Body, left: t.limit, limit: t.limit}
	return resp, nil
}

// WrappedRoundTripper lets client-go reach the transport below (to cancel
// a request).
func (t *limitedTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

// limitedBody reads at most left bytes of body, then fails: a body that
// goes on is not read to its end.
type limitedBody struct {
	body  io.ReadCloser
	left  int64
	limit int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells an answer of exactly the bound from a
		// longer one.
		var one [1]byte
		if n, err := b.body.Read(one[:]); n > 0 {
			return 0, &ResponseTooLargeError{Limit: b.limit}
		} else if err != nil {
			return 0, err
		}
		return 0, nil
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.body.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.body.Close() }

// ReadError is a failed read of another cluster said in pvkit's words:
// the server's host and what its answer was (a status code and its
// standard text, a timeout, a refused connection, a certificate not
// trusted, an answer too large), never the text the server sent. A
// kubeconfig's author chooses the server, so a server's words would let
// them read an internal service's answers in a variant's status. The
// error it wraps (Unwrap) keeps the rest for errors.Is and As (NotFound
// stays NotFound) and for a debug log.
type ReadError struct {
	Host string
	Err  error
}

func (e *ReadError) Error() string { return "server " + e.Host + " " + Describe(e.Err) }
func (e *ReadError) Unwrap() error { return e.Err }

// Describe is what pvkit says of an error reading another cluster:
// fixed words for what kind of failure it was, nothing the server wrote.
// A *ReadError is said whole.
func Describe(err error) string {
	var (
		re       *ReadError
		tooLarge *ResponseTooLargeError
		refused  *ServerRefusedError
		status   apierrors.APIStatus
		dns      *net.DNSError
		netErr   net.Error
		unknown  x509.UnknownAuthorityError
		host     x509.HostnameError
		invalid  x509.CertificateInvalidError
		verify   *tls.CertificateVerificationError
	)
	switch {
	case errors.As(err, &re):
		return re.Error()
	case errors.As(err, &tooLarge):
		return tooLarge.Error()
	case errors.As(err, &refused):
		return refused.Error()
	case errors.As(err, &status) && status.Status().Code != 0:
		code := int(status.Status().Code)
		return fmt.Sprintf("answered %d %s", code, http.StatusText(code))
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "did not answer within the timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused the connection (connection refused)"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "closed the connection"
	case errors.As(err, &dns):
		return "has a name that does not resolve"
	case errors.As(err, &unknown), errors.As(err, &host), errors.As(err, &invalid), errors.As(err, &verify):
		return "presented a certificate the kubeconfig does not trust"
	case errors.Is(err, context.Canceled):
		return "was not read to the end (the reconcile was cancelled)"
	}
	return "did not answer as an API server does"
}

// serverReader is a client of another cluster whose errors are ReadErrors.
type serverReader struct {
	client.Reader
	host string
}

func (r *serverReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := r.Reader.Get(ctx, key, obj, opts...); err != nil {
		return &ReadError{Host: r.host, Err: err}
	}
	return nil
}

func (r *serverReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := r.Reader.List(ctx, list, opts...); err != nil {
		return &ReadError{Host: r.host, Err: err}
	}
	return nil
}

// Bound sets cfg's bounds for a reader of another cluster: the request
// timeout, the rate limits and every answer cut at maxResponse bytes (0:
// DefaultMaxResponse).
func Bound(cfg *rest.Config, timeout time.Duration, maxResponse int64) {
	cfg.Timeout = timeout
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.QPS <= 0 {
		cfg.QPS = 5
	}
	if cfg.Burst <= 0 {
		cfg.Burst = 10
	}
	if maxResponse <= 0 {
		maxResponse = DefaultMaxResponse
	}
	wrap := cfg.WrapTransport
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		if wrap != nil {
			rt = wrap(rt)
		}
		return &limitedTransport{next: rt, limit: maxResponse}
	}
}

// NewReader is a reader of the cluster cfg names, bounded (Bound) and
// saying its errors as ReadErrors; no cache (one object read at a time).
func NewReader(cfg *rest.Config) (client.Reader, error) {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, err
	}
	return &serverReader{Reader: c, host: serverHost(cfg.Host)}, nil
}

// serverHost is the host (and port) of a server URL, as said in messages.
func serverHost(server string) string {
	if u, err := url.Parse(server); err == nil && u.Host != "" {
		return u.Host
	}
	if i := strings.IndexAny(server, "/?#"); i >= 0 {
		return server[:i]
	}
	return server
}
