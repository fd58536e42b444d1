package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/cubego/cubego/plan"
)

// Read copies output i of the computation (C order, little-endian) into
// dst, which must hold exactly the array's bytes.
func (r *Result) Read(ctx context.Context, i int, dst []byte) error {
	outs := r.job.plan.Outputs
	if i < 0 || i >= len(outs) {
		return plan.Errorf(plan.ErrIndex, "result %d out of range: the computation has %d outputs", i, len(outs))
	}
	a := outs[i]
	if int64(len(dst)) != a.NBytes() {
		return plan.Errorf(plan.ErrValue, "buffer of %d bytes cannot hold %s (%d bytes)", len(dst), a.Name, a.NBytes())
	}
	n := a.NDim()
	whole := plan.Region{Start: make([]int, n), Step: make([]int, n), Count: append([]int{}, a.Shape...)}
	for d := range whole.Step {
		whole.Step[d] = 1
	}
	defer func() {
		if p := recover(); p != nil {
			panic(fmt.Sprintf("engine: reading %s: %v", a.Name, p))
		}
	}()
	ta := &taskAllocator{parent: r.job.alloc}
	defer ta.freeAll()
	return r.job.readRegion(ctx, ta, a, whole, dst[:len(dst):len(dst)])
}

// Outputs returns the arrays the computation produced.
func (r *Result) Outputs() []*plan.Array { return r.job.plan.Outputs }

// Close removes the computation's intermediates. Targets written with
// to_zarr stay, and so do, in a resumable computation, the stored arrays it
// was asked for: a later resumed computation reading them (d = -c after c)
// finds them complete.
func (r *Result) Close() error {
	s := r.job.storage
	s.close()
	if !s.keyed {
		return removeLocal(r.job.dir)
	}
	if s.resume {
		keep := map[string]bool{}
		for _, a := range r.job.plan.Outputs {
			if k, err := plan.Key(a); err == nil {
				keep[k] = true
			}
		}
		s.used = slices.DeleteFunc(s.used, func(p string) bool { return keep[p] })
	}
	return s.removeUsed()
}
