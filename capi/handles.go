package main

/*
#include <stdint.h>
*/
import "C"

import (
	"runtime/cgo"
	"unsafe"

	"github.com/cubego/cubego/plan"
)

// arrayInfo is what Python learns about an array.
type arrayInfo struct {
	Handle uint64  `json:"handle"`
	Name   string  `json:"name"`
	Shape  []int   `json:"shape"`
	DType  string  `json:"dtype"`
	Chunks [][]int `json:"chunks"`
	// ImplicitSpec: the array has the configured default spec because it
	// was created without one (plan.Spec.Implicit).
	ImplicitSpec bool `json:"implicit_spec,omitempty"`
}

func newArrayInfo(a *plan.Array) arrayInfo {
	shape := a.Shape
	if shape == nil {
		shape = []int{}
	}
	chunks := a.Chunks
	if chunks == nil {
		chunks = [][]int{}
	}
	return arrayInfo{Handle: uint64(cgo.NewHandle(a)), Name: a.Name, Shape: shape, DType: a.DType.String(), Chunks: chunks,
		ImplicitSpec: a.Spec != nil && a.Spec.Implicit}
}

func arrayOf(h C.uint64_t) (*plan.Array, error) {
	if h == 0 {
		return nil, plan.Errorf(plan.ErrValue, "invalid array handle 0")
	}
	a, ok := cgo.Handle(h).Value().(*plan.Array)
	if !ok {
		return nil, plan.Errorf(plan.ErrValue, "handle %d is not an array", uint64(h))
	}
	return a, nil
}

func arraysOf(p *C.uint64_t, n C.int64_t) ([]*plan.Array, error) {
	if n <= 0 {
		return nil, nil
	}
	hs := unsafe.Slice((*C.uint64_t)(p), int(n))
	out := make([]*plan.Array, len(hs))
	for i, h := range hs {
		a, err := arrayOf(h)
		if err != nil {
			return nil, err
		}
		out[i] = a
	}
	return out, nil
}

//export cg_array_release
func cg_array_release(h C.uint64_t) (status C.int32_t) {
	defer guard(&status, nil)
	if h != 0 {
		cgo.Handle(h).Delete()
	}
	return statusOK
}
