package main

/*
#include <stdint.h>
*/
import "C"

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/cubego/cubego/plan"
)

// A call is a cancellable context for the exports that can block on
// storage (docs/capi.md, "Cancelling blocking calls"). The caller creates
// one with cg_call_new, binds it to the thread that makes the blocking
// call with cg_call_bind, and cancels it from another thread with
// cg_call_cancel: the blocking call then returns CG_CANCELLED promptly.
// Exports find the bound call through callContext.
type call struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// calls holds the live calls by id. Ids are never reused, so a stale id
// finds nothing rather than another call.
var calls struct {
	sync.Mutex
	m    map[uint64]*call
	next atomic.Uint64
}

// callContext returns the context of the call bound to the calling thread,
// or context.Background() when none is. It must run on the goroutine of an
// export (which runs on the C caller's thread), not on one it started.
func callContext() context.Context {
	id := boundCall()
	if id == 0 {
		return context.Background()
	}
	calls.Lock()
	c := calls.m[id]
	calls.Unlock()
	if c == nil {
		return context.Background()
	}
	return c.ctx
}

//export cg_call_new
func cg_call_new(out *C.uint64_t) (status C.int32_t) {
	defer guard(&status, nil)
	if out == nil {
		return setError(plan.Errorf(plan.ErrValue, "cg_call_new: out is NULL"), nil)
	}
	ctx, cancel := context.WithCancel(context.Background())
	id := calls.next.Add(1)
	calls.Lock()
	if calls.m == nil {
		calls.m = map[uint64]*call{}
	}
	calls.m[id] = &call{ctx: ctx, cancel: cancel}
	calls.Unlock()
	*out = C.uint64_t(id)
	return statusOK
}

//export cg_call_bind
func cg_call_bind(id C.uint64_t) (status C.int32_t) {
	defer guard(&status, nil)
	if id != 0 {
		calls.Lock()
		_, ok := calls.m[uint64(id)]
		calls.Unlock()
		if !ok {
			return setError(plan.Errorf(plan.ErrValue, "cg_call_bind: no call %d", uint64(id)), nil)
		}
	}
	bindCall(uint64(id))
	return statusOK
}

//export cg_call_cancel
func cg_call_cancel(id C.uint64_t) (status C.int32_t) {
	defer guard(&status, nil)
	calls.Lock()
	c := calls.m[uint64(id)]
	calls.Unlock()
	if c == nil {
		return setError(plan.Errorf(plan.ErrValue, "cg_call_cancel: no call %d", uint64(id)), nil)
	}
	c.cancel()
	return statusOK
}

//export cg_call_release
func cg_call_release(id C.uint64_t) (status C.int32_t) {
	defer guard(&status, nil)
	calls.Lock()
	c := calls.m[uint64(id)]
	delete(calls.m, uint64(id))
	calls.Unlock()
	if c != nil {
		c.cancel()
	}
	return statusOK
}
