package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"runtime"
	"syscall"
	"testing"

	"github.com/cubego/cubego/engine"
	"github.com/cubego/cubego/zarr"
)

// timeoutError is a network timeout as net's errors report it.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

var _ net.Error = timeoutError{}

// TestStatusOfStorageErrors: storage failures map to the OSError family
// of status codes, through every wrapping the engine adds.
func TestStatusOfStorageErrors(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int32
	}{
		{fmt.Errorf("%w: get \"k\"", zarr.ErrTimeout), statusTimeout},
		{fmt.Errorf("zarr: get: %w", context.DeadlineExceeded), statusTimeout},
		{&net.OpError{Op: "read", Net: "tcp", Err: timeoutError{}}, statusTimeout},
		{fmt.Errorf("%w: get \"k\" after 5 attempts", zarr.ErrUnavailable), statusConnection},
		{fmt.Errorf("%w: get \"k\"", zarr.ErrPermission), statusPermission},
		{&fs.PathError{Op: "open", Path: "/x", Err: syscall.EACCES}, statusPermission},
		{fmt.Errorf("%w: get \"k\": it is a directory", zarr.ErrIO), statusIO},
		{&fs.PathError{Op: "write", Path: "/x", Err: syscall.ENOSPC}, statusIO},
		{fmt.Errorf("%w: chunk c/0", zarr.ErrCorrupt), statusIO},
		{fmt.Errorf("%w: key \"k\"", zarr.ErrNotFound), statusNotFound},
		{fmt.Errorf("zarr: get: %w", context.Canceled), statusCancelled},
		{&engine.TaskError{Op: "op-001 (add)", Array: "a", Block: []int{0}, Attempts: 3,
			Err: fmt.Errorf("%w: get \"a/c/0\"", zarr.ErrTimeout)}, statusTimeout},
		{&engine.TaskError{Op: "op-001 (add)", Array: "a", Block: []int{0}, Attempts: 3,
			Err: fmt.Errorf("%w: get \"a/c/0\"", zarr.ErrIO)}, statusIO},
		{errors.New("something else"), statusInternal},
	} {
		if got := statusOf(tc.err); got != tc.want {
			t.Errorf("statusOf(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
	if statusOf(os.ErrNotExist) != statusNotFound {
		t.Error("os.ErrNotExist is not CG_NOT_FOUND")
	}
}

// TestCallBinding: a call bound to this thread is the context of the
// blocking calls made on it; cancelling it cancels them; unbinding,
// releasing and unknown calls behave as documented.
func TestCallBinding(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if callContext() != context.Background() {
		t.Fatal("an unbound thread has a call context")
	}
	var id [1]uint64
	if st := cg_call_new(cuint64p(&id[0])); st != statusOK {
		t.Fatalf("cg_call_new: %d", st)
	}
	if st := cg_call_bind(cuint64(id[0])); st != statusOK {
		t.Fatalf("cg_call_bind: %d", st)
	}
	ctx := callContext()
	if ctx.Err() != nil || ctx == context.Background() {
		t.Fatalf("bound call context: %v", ctx)
	}
	// Another thread sees no call.
	other := make(chan context.Context)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		other <- callContext()
	}()
	if <-other != context.Background() {
		t.Error("a call bound to one thread is seen on another")
	}
	if st := cg_call_cancel(cuint64(id[0])); st != statusOK {
		t.Fatalf("cg_call_cancel: %d", st)
	}
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Errorf("after cg_call_cancel: %v", ctx.Err())
	}
	if st := cg_call_bind(0); st != statusOK || callContext() != context.Background() {
		t.Errorf("unbinding: %d", st)
	}
	if st := cg_call_release(cuint64(id[0])); st != statusOK {
		t.Errorf("cg_call_release: %d", st)
	}
	if st := cg_call_bind(cuint64(id[0])); st != statusValue {
		t.Errorf("binding a released call: %d, want CG_VALUE", st)
	}
	if st := cg_call_cancel(cuint64(id[0])); st != statusValue {
		t.Errorf("cancelling a released call: %d, want CG_VALUE", st)
	}
}
