package zarr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// statusError is an HTTP response error as the AWS SDK's implements it.
type statusError int

func (e statusError) Error() string       { return fmt.Sprintf("status %d", int(e)) }
func (e statusError) HTTPStatusCode() int { return int(e) }

// codeError is an API error as the AWS SDK's implements it.
type codeError string

func (e codeError) Error() string     { return string(e) }
func (e codeError) ErrorCode() string { return string(e) }

func TestTransient(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{statusError(503), true}, {statusError(500), true}, {statusError(502), true},
		{statusError(504), true}, {statusError(429), true}, {statusError(408), true},
		{statusError(404), false}, {statusError(403), false}, {statusError(400), false}, {statusError(416), false},
		{codeError("SlowDown"), true}, {codeError("InternalError"), true}, {codeError("NoSuchKey"), false},
		{&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{io.ErrUnexpectedEOF, true},
		{fmt.Errorf("Get \"http://x/k\": %w", io.EOF), true}, // the server hung up
		{&net.DNSError{Err: "no such host", Name: "x"}, true},
		{fmt.Errorf("%w: x", ErrCorrupt), false},
		{fmt.Errorf("%w: x", ErrNotFound), false},
		{fmt.Errorf("%w: x", ErrInvalid), false},
		{errors.New("something else"), false},
	} {
		if got := transient(tc.err); got != tc.want {
			t.Errorf("transient(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestBackoffIsBoundedFullJitter(t *testing.T) {
	p := requestPolicy{backoffBase: 100 * time.Millisecond, backoffMax: time.Second}
	for n := 1; n <= 70; n++ {
		ceiling := min(p.backoffMax, p.backoffBase<<min(n-1, 20))
		var top time.Duration
		for range 200 {
			d := p.backoff(n)
			if d < 0 || d > ceiling {
				t.Fatalf("backoff(%d) = %v, outside [0, %v]", n, d, ceiling)
			}
			top = max(top, d)
		}
		if top < ceiling/2 {
			t.Errorf("backoff(%d): 200 draws all below %v: not spread over [0, %v]", n, top, ceiling)
		}
	}
}

// TestRunRetriesOnlyTransientErrors: run stops at a permanent error, tries
// a transient one retries+1 times, and a stalled attempt (no progress) is
// abandoned and retried; progress keeps a slow attempt alive.
func TestRunRetriesOnlyTransientErrors(t *testing.T) {
	ctx := context.Background()
	p := requestPolicy{timeout: 100 * time.Millisecond, retries: 3, backoffBase: time.Millisecond, backoffMax: time.Millisecond}
	calls := 0
	n, stalled, err := p.run(ctx, func(context.Context, func()) error { calls++; return errors.New("permanent") })
	if err == nil || n != 1 || calls != 1 || stalled {
		t.Errorf("permanent error: %d attempts, %d calls, stalled %v, %v", n, calls, stalled, err)
	}
	calls = 0
	n, _, err = p.run(ctx, func(context.Context, func()) error { calls++; return statusError(503) })
	if err == nil || n != 4 || calls != 4 {
		t.Errorf("transient error: %d attempts, %d calls, %v; want 4", n, calls, err)
	}
	calls = 0
	n, stalled, err = p.run(ctx, func(ctx context.Context, _ func()) error {
		calls++
		<-ctx.Done()
		return ctx.Err()
	})
	if err == nil || n != 4 || !stalled {
		t.Errorf("stalled attempts: %d attempts, stalled %v, %v; want 4 stalled", n, stalled, err)
	}
	// 300 ms of steady progress outlives a 100 ms timeout.
	n, _, err = p.run(ctx, func(ctx context.Context, progress func()) error {
		for range 10 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(30 * time.Millisecond):
				progress()
			}
		}
		return nil
	})
	if err != nil || n != 1 {
		t.Errorf("an attempt making progress: %d attempts, %v", n, err)
	}
	// Cancelling the caller's context ends the retries at once.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, _, err = p.run(cctx, func(context.Context, func()) error { return statusError(503) })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
