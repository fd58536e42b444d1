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
	Handle uint64 `json:"handle"`
	Name   string `json:"name"`
	Shape  []int  `json:"shape"`
	DType  string `json:"dtype"`
	// Chunks are the block sizes, one list per axis; a caller that asked for
	// chunk runs (infoOptions.ChunkRuns) gets ChunkRuns instead, and no Chunks.
	Chunks *[][]int `json:"chunks,omitempty"`
	// ChunkRuns are the block sizes run-length encoded, one list of
	// [size, count] pairs per axis (docs/capi.md "Array results"), so an
	// array of a million blocks along an axis crosses the ABI as one or two
	// pairs instead of a million numbers.
	ChunkRuns *[][][2]int `json:"chunk_runs,omitempty"`
	// ImplicitSpec: the array has the configured default spec because it
	// was created without one (plan.Spec.Implicit).
	ImplicitSpec bool `json:"implicit_spec,omitempty"`
}

// infoOptions say how a call describes the arrays it returns.
type infoOptions struct {
	// ChunkRuns: describe chunks as runs (the "chunk_runs" argument).
	ChunkRuns bool
}

// infoOptionsOf reads the optional "chunk_runs" argument.
func infoOptionsOf(a args) (infoOptions, error) {
	runs, err := a.boolean("chunk_runs", false)
	return infoOptions{ChunkRuns: runs}, err
}

func newArrayInfo(a *plan.Array, opts infoOptions) arrayInfo {
	shape := a.Shape
	if shape == nil {
		shape = []int{}
	}
	info := arrayInfo{Handle: uint64(cgo.NewHandle(a)), Name: a.Name, Shape: shape, DType: a.DType.String(),
		ImplicitSpec: a.Spec != nil && a.Spec.Implicit}
	if opts.ChunkRuns {
		runs := chunkRuns(a.Chunks)
		info.ChunkRuns = &runs
	} else {
		chunks := a.Chunks
		if chunks == nil {
			chunks = [][]int{}
		}
		info.Chunks = &chunks
	}
	return info
}

// chunkRuns run-length encodes block sizes: for each axis, the [size,
// count] pairs of its consecutive equal sizes, in order. Expanding each pair
// into count copies of size gives the axis's block sizes back.
func chunkRuns(chunks [][]int) [][][2]int {
	out := make([][][2]int, len(chunks))
	for i, axis := range chunks {
		runs := [][2]int{}
		for _, c := range axis {
			if n := len(runs); n > 0 && runs[n-1][0] == c {
				runs[n-1][1]++
			} else {
				runs = append(runs, [2]int{c, 1})
			}
		}
		out[i] = runs
	}
	return out
}

// handleValue returns the value behind a handle Python passed, and an
// error value, not cgo's panic, for 0, a released handle or a number that
// never was one.
func handleValue(h uint64, what string) (v any, err error) {
	if h == 0 {
		return nil, plan.Errorf(plan.ErrValue, "invalid %s handle 0", what)
	}
	defer func() {
		if recover() != nil {
			v, err = nil, plan.Errorf(plan.ErrValue, "invalid %s handle %d (released, or never a handle)", what, h)
		}
	}()
	return cgo.Handle(h).Value(), nil
}

// lookupArray returns the array behind handle h.
func lookupArray(h uint64) (*plan.Array, error) {
	v, err := handleValue(h, "array")
	if err != nil {
		return nil, err
	}
	a, ok := v.(*plan.Array)
	if !ok {
		return nil, plan.Errorf(plan.ErrValue, "handle %d is not an array", h)
	}
	return a, nil
}

func lookupArrays(hs []uint64) ([]*plan.Array, error) {
	if len(hs) == 0 {
		return nil, nil
	}
	out := make([]*plan.Array, len(hs))
	for i, h := range hs {
		a, err := lookupArray(h)
		if err != nil {
			return nil, err
		}
		out[i] = a
	}
	return out, nil
}

// releaseArray deletes an array handle; 0 is a no-op, and a handle that
// is not a live array's (a job's, a released one) is an error that leaves
// every handle as it was.
func releaseArray(h uint64) error {
	if h == 0 {
		return nil
	}
	if _, err := lookupArray(h); err != nil {
		return err
	}
	cgo.Handle(h).Delete()
	return nil
}

func arrayOf(h C.uint64_t) (*plan.Array, error) { return lookupArray(uint64(h)) }

func handleSlice(p *C.uint64_t, n C.int64_t) []uint64 {
	if n <= 0 || p == nil {
		return nil
	}
	hs := unsafe.Slice((*C.uint64_t)(p), int(n))
	out := make([]uint64, len(hs))
	for i, h := range hs {
		out[i] = uint64(h)
	}
	return out
}

func arraysOf(p *C.uint64_t, n C.int64_t) ([]*plan.Array, error) {
	return lookupArrays(handleSlice(p, n))
}

//export cg_array_release
func cg_array_release(h C.uint64_t) (status C.int32_t) {
	defer guard(&status, nil)
	return setError(releaseArray(uint64(h)), nil)
}
