package ops

import (
	"fmt"

	"github.com/cubego/cubego/ops/internal/kernels"
	"github.com/cubego/cubego/plan"
)

// GenerateRegion fills dst (C order, the region's shape) with region r of
// the virtual array a.
func GenerateRegion(a *plan.Array, r plan.Region, dst []byte) error {
	g := a.Generator
	dt := a.DType
	switch g.Kind {
	case "full":
		kernels.Fill(dst, dt, kernels.ScalarBytes(toKernelScalar(g.Value), dt))
	case "arange":
		kernels.Arange(dst, dt, g.Start+g.Step*float64(r.Start[0]), g.Step*float64(r.Step[0]), 0)
	case "random":
		unit := true
		for _, s := range r.Step {
			unit = unit && s == 1
		}
		if unit {
			kernels.RandomUniform(dst, dt, g.Seed, a.Shape, r.Start, r.Count)
			return nil
		}
		// A strided region: generate one element at a time.
		elem := dt.Size()
		ones := make([]int, len(r.Count))
		for i := range ones {
			ones[i] = 1
		}
		pos := make([]int, len(r.Count))
		idx := make([]int, len(r.Count))
		for k := int64(0); k < r.Size(); k++ {
			for d := range pos {
				pos[d] = r.Start[d] + r.Step[d]*idx[d]
			}
			kernels.RandomUniform(dst[int(k)*elem:int(k+1)*elem], dt, g.Seed, a.Shape, pos, ones)
			for d := len(idx) - 1; d >= 0; d-- {
				idx[d]++
				if idx[d] < r.Count[d] {
					break
				}
				idx[d] = 0
			}
		}
	case "literal":
		CopyRegionFrom(dt.Size(), a.Shape, g.Data, r, dst)
	default:
		return fmt.Errorf("ops: unknown generator %q", g.Kind)
	}
	return nil
}

func toKernelScalar(s plan.Scalar) kernels.Scalar {
	return kernels.Scalar{Kind: s.Kind, B: s.B, I: s.I, U: s.U, F: s.F, C: s.C}
}
