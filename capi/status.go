package main

/*
#include <stdint.h>
#include <stdlib.h>
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"runtime/debug"
	"sync/atomic"
	"unsafe"

	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// Status codes; keep in sync with docs/capi.md and python/cubego/binding/libcubego.py.
const (
	statusOK             = 0
	statusValue          = 1
	statusType           = 2
	statusIndex          = 3
	statusNotFound       = 4
	statusNotImplemented = 5
	statusMemory         = 6
	statusIO             = 7
	statusCancelled      = 8
	statusInternal       = 9
	statusTimeout        = 10
	statusConnection     = 11
	statusPermission     = 12
)

// errInternal marks a recovered panic.
var errInternal = errors.New("internal error")

// panics counts panics recovered at the boundary (the library keeps
// working: every panic so far was inside one call's own state).
var panics atomic.Int64

// statusOf maps an error to a status code, in one place.
func statusOf(err error) int32 {
	var mem *plan.MemoryExceededError
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var pathErr *fs.PathError
	var netErr net.Error
	switch {
	case err == nil:
		return statusOK
	case errors.Is(err, errInternal):
		return statusInternal
	case errors.As(err, &mem):
		return statusMemory
	case errors.Is(err, context.Canceled):
		return statusCancelled
	case errors.Is(err, zarr.ErrTimeout), errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return statusTimeout
	case errors.Is(err, zarr.ErrUnavailable):
		return statusConnection
	case errors.Is(err, zarr.ErrPermission), errors.Is(err, fs.ErrPermission):
		return statusPermission
	case errors.Is(err, plan.ErrIndex):
		return statusIndex
	case errors.Is(err, plan.ErrType):
		return statusType
	case errors.Is(err, plan.ErrNotImplemented), errors.Is(err, zarr.ErrNotImplemented):
		return statusNotImplemented
	case errors.Is(err, zarr.ErrNotFound), errors.Is(err, os.ErrNotExist):
		return statusNotFound
	case errors.Is(err, plan.ErrValue), errors.Is(err, zarr.ErrInvalid), errors.As(err, &syntax), errors.As(err, &typ):
		return statusValue
	case errors.Is(err, zarr.ErrCorrupt), errors.Is(err, zarr.ErrIO), errors.As(err, &pathErr):
		return statusIO
	}
	return statusInternal
}

// setError stores err's message in *out (malloc'd; the caller frees it
// with cg_free) and returns its status.
func setError(err error, out **C.char) C.int32_t {
	st := statusOf(err)
	if st != statusOK && out != nil {
		*out = C.CString(err.Error())
	}
	return C.int32_t(st)
}

// guard recovers a panic at an export and turns it into CG_INTERNAL.
func guard(status *C.int32_t, errOut **C.char) {
	if r := recover(); r != nil {
		panics.Add(1)
		err := fmt.Errorf("%w: panic in libcubego: %v\n%s", errInternal, r, debug.Stack())
		*status = setError(err, errOut)
	}
}

// setJSON marshals v into *out (malloc'd).
func setJSON(v any, out **C.char) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	*out = C.CString(string(b))
	return nil
}

func goBytes(p unsafe.Pointer, n C.int64_t) []byte {
	if n <= 0 || p == nil {
		return []byte{}
	}
	return unsafe.Slice((*byte)(p), int(n))
}

//export cg_free
func cg_free(p unsafe.Pointer) { C.free(p) }
