package zarr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"syscall"
	"time"

	"gocloud.dev/gcerrors"
)

// The request policy of object stores, unless storage options say
// otherwise (docs/zarr.md, "Timeouts and retries").
const (
	// DefaultTimeout bounds how long one request may go without progress.
	DefaultTimeout = 60 * time.Second
	// DefaultConnectTimeout bounds setting up a connection (dial and TLS).
	DefaultConnectTimeout = 10 * time.Second
	// DefaultRetries is how many times a request that failed with a
	// transient error is tried again (five attempts in all, as s3fs makes).
	DefaultRetries = 4
)

// requestPolicy bounds each request an object store makes. A request is
// abandoned when it makes no progress for timeout: no response yet, or no
// bytes sent or received (so a large transfer that keeps moving is never
// cut short, and a server that accepts and never answers is). A request
// that failed with a transient error (see transient) is retried up to
// retries times, after an exponential backoff with full jitter. The zero
// policy has no timeout and no retries (in-memory stores).
type requestPolicy struct {
	timeout        time.Duration
	connectTimeout time.Duration
	retries        int
	backoffBase    time.Duration
	backoffMax     time.Duration
}

var defaultRequestPolicy = requestPolicy{
	timeout:        DefaultTimeout,
	connectTimeout: DefaultConnectTimeout,
	retries:        DefaultRetries,
	backoffBase:    200 * time.Millisecond,
	backoffMax:     20 * time.Second,
}

// maxRetries bounds the "retries" storage option: more is a mistake.
const maxRetries = 100

// parseRequestPolicy takes the storage options "timeout",
// "connect_timeout" (seconds, positive numbers) and "retries" (an integer
// ≥ 0) out of o.
func parseRequestPolicy(o storageOptions) (requestPolicy, error) {
	p := defaultRequestPolicy
	for _, k := range []struct {
		key string
		dst *time.Duration
	}{{"timeout", &p.timeout}, {"connect_timeout", &p.connectTimeout}} {
		d, ok, err := o.seconds(k.key)
		if err != nil {
			return p, err
		}
		if ok {
			*k.dst = d
		}
	}
	n, ok, err := o.count("retries")
	if err != nil {
		return p, err
	}
	if ok {
		p.retries = n
	}
	return p, nil
}

// number removes key and returns its value as a float64; ok is false when
// it is absent or null.
func (o storageOptions) number(key string) (float64, bool, error) {
	raw, ok := o[key]
	delete(o, key)
	if !ok || raw == nil {
		return 0, false, nil
	}
	var v float64
	switch x := raw.(type) {
	case float64:
		v = x
	case float32:
		v = float64(x)
	case int:
		v = float64(x)
	case int64:
		v = float64(x)
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return 0, true, fmt.Errorf("%w: storage option %q must be a number, not %s", ErrInvalid, key, x)
		}
		v = f
	default:
		return 0, true, fmt.Errorf("%w: storage option %q must be a number, not %T", ErrInvalid, key, raw)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, true, fmt.Errorf("%w: storage option %q must be a finite number, not %v", ErrInvalid, key, v)
	}
	return v, true, nil
}

// seconds removes key and returns its value, a positive number of
// seconds, as a duration.
func (o storageOptions) seconds(key string) (time.Duration, bool, error) {
	v, ok, err := o.number(key)
	if err != nil || !ok {
		return 0, ok, err
	}
	// A week is far more than any request needs, and keeps the product
	// below time.Duration's range.
	if v <= 0 || v > 7*24*3600 {
		return 0, true, fmt.Errorf("%w: storage option %q must be a positive number of seconds (at most a week), not %v", ErrInvalid, key, v)
	}
	return time.Duration(v * float64(time.Second)), true, nil
}

// count removes key and returns its value, an integer in [0, maxRetries].
func (o storageOptions) count(key string) (int, bool, error) {
	v, ok, err := o.number(key)
	if err != nil || !ok {
		return 0, ok, err
	}
	if v != math.Trunc(v) || v < 0 || v > maxRetries {
		return 0, true, fmt.Errorf("%w: storage option %q must be an integer from 0 to %d, not %v", ErrInvalid, key, maxRetries, v)
	}
	return int(v), true, nil
}

// errStalled is the cause of an attempt's context when the attempt made
// no progress within the policy's timeout.
var errStalled = errors.New("zarr: request made no progress")

// attempt is one try of a request. It calls progress whenever bytes move,
// which restarts the timeout.
type attempt func(ctx context.Context, progress func()) error

// run runs try under the policy. It returns how many attempts were made,
// whether the last one stalled, and nil or the last attempt's error; when
// ctx is done it returns at once, with ctx's error.
func (p requestPolicy) run(ctx context.Context, try attempt) (attempts int, stalled bool, err error) {
	for attempts = 1; ; attempts++ {
		stalled, err = p.once(ctx, try)
		if err == nil {
			return attempts, false, nil
		}
		if ctx.Err() != nil {
			return attempts, false, ctx.Err()
		}
		if attempts > p.retries || !(stalled || transient(err)) {
			return attempts, stalled, err
		}
		if werr := sleepCtx(ctx, p.backoff(attempts)); werr != nil {
			return attempts, false, werr
		}
	}
}

// once runs one attempt with the timeout, reporting whether it stalled.
func (p requestPolicy) once(ctx context.Context, try attempt) (stalled bool, err error) {
	if p.timeout <= 0 {
		return false, try(ctx, func() {})
	}
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(p.timeout, func() { cancel(errStalled) })
	defer timer.Stop()
	err = try(actx, func() { timer.Reset(p.timeout) })
	stalled = err != nil && ctx.Err() == nil && errors.Is(context.Cause(actx), errStalled)
	return stalled, err
}

// backoff is the wait before attempt n+1: uniform in [0, base·2^(n-1)],
// capped at backoffMax ("full jitter", so clients that failed together
// do not retry together).
func (p requestPolicy) backoff(n int) time.Duration {
	ceiling := p.backoffMax
	if n-1 < 30 {
		if d := p.backoffBase << (n - 1); d > 0 && d < ceiling {
			ceiling = d
		}
	}
	if ceiling <= 0 {
		return 0
	}
	return rand.N(ceiling + 1)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// httpStatusCoder is implemented by the HTTP response errors of the AWS
// SDK (and others): the response's status code.
type httpStatusCoder interface{ HTTPStatusCode() int }

// apiErrorCoder is implemented by the AWS SDK's API errors: the service's
// error code ("SlowDown", "NoSuchKey", ...).
type apiErrorCoder interface{ ErrorCode() string }

// transientCodes are object-store error codes worth retrying: throttling
// and server-side failures.
var transientCodes = map[string]bool{
	"SlowDown": true, "Throttling": true, "ThrottlingException": true, "RequestLimitExceeded": true,
	"TooManyRequestsException": true, "RequestThrottled": true, "RequestTimeout": true,
	"InternalError": true, "ServiceUnavailable": true,
}

// transient reports whether err may go away when the request is made
// again: a connection that failed (see connectionFailure), a network
// timeout, throttling (HTTP 429) or a server error (HTTP 500, 502, 503,
// 504).
func transient(err error) bool {
	if err == nil || errors.Is(err, ErrInvalid) || errors.Is(err, ErrCorrupt) || errors.Is(err, ErrNotFound) {
		return false
	}
	switch gcerrors.Code(err) {
	case gcerrors.NotFound, gcerrors.PermissionDenied, gcerrors.InvalidArgument, gcerrors.FailedPrecondition:
		return false
	case gcerrors.ResourceExhausted, gcerrors.DeadlineExceeded, gcerrors.Internal:
		return true
	}
	var sc httpStatusCoder
	if errors.As(err, &sc) {
		switch sc.HTTPStatusCode() {
		case 408, 429, 500, 502, 503, 504:
			return true
		}
	}
	var ac apiErrorCoder
	if errors.As(err, &ac) && transientCodes[ac.ErrorCode()] {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	return connectionFailure(err)
}

// connectionFailure reports whether err is a failure to reach the server
// (refused, unreachable, a failed name lookup) or a connection dropped or
// cut short, rather than an error the server answered with.
func connectionFailure(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	return errors.As(err, &op) || errors.As(err, &dns) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) ||
		// A request's error wraps io.EOF when the server closed the
		// connection without answering (stores never return it for the
		// end of a value).
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// progressReader calls progress whenever a read returns bytes.
type progressReader struct {
	r        io.Reader
	progress func()
}

func (p progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.progress()
	}
	return n, err
}
