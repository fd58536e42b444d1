package main

// The C half of the thread binding lives in call.c. Its declarations are
// here, in a file without exports, so that cgo does not copy them into
// libcubego.h: they are internal to the library.

/*
#include <stdint.h>

void cgo_call_set_bound(uint64_t call);
uint64_t cgo_call_bound(void);
*/
import "C"

import "unsafe"

// boundCall returns the id of the call bound to the calling thread (0:
// none).
func boundCall() uint64 { return uint64(C.cgo_call_bound()) }

// bindCall binds the call id to the calling thread (0 unbinds).
func bindCall(id uint64) { C.cgo_call_set_bound(C.uint64_t(id)) }

// cuint64 and cuint64p convert for tests, which cannot use cgo's C types.
func cuint64(v uint64) C.uint64_t    { return C.uint64_t(v) }
func cuint64p(p *uint64) *C.uint64_t { return (*C.uint64_t)(unsafe.Pointer(p)) }
