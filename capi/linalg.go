package main

import (
	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
)

// The linear algebra extension's whole-matrix functions: cg_op "linalg"
// with args {"func": name} (see ops.Linalg) and inputs x, or x and the
// right-hand sides b for "solve".
func init() {
	opTable["linalg"] = struct {
		nin int
		fn  opFunc
	}{-1, opLinalg}
}

func opLinalg(a args, in []*plan.Array) (*plan.Array, error) {
	fn, err := a.str("func", "")
	if err != nil {
		return nil, err
	}
	switch len(in) {
	case 1:
		return ops.Linalg(fn, in[0], nil)
	case 2:
		return ops.Linalg(fn, in[0], in[1])
	}
	return nil, plan.Errorf(plan.ErrValue, "linalg takes one or two arrays, got %d", len(in))
}
