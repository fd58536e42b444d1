package ops

import (
	"fmt"

	"github.com/cubego/cubego/ops/internal/kernels"
	"github.com/cubego/cubego/plan"
)

// piecewiseStep fills the output block and copies each input's clipped
// region to its place: input dimensions map to output dimensions through
// their Affine OutDim (Const dimensions are dropped).
func (t *TaskKernel) piecewiseStep(out Block, ins []Block, first bool) error {
	if first {
		kernels.Fill(out.Data, out.DType, kernels.ScalarBytes(toKernelScalar(t.op.Kernel.Fill), out.DType))
	}
	elem := out.DType.Size()
	outStrides := CStrides(out.Shape)
	for i, b := range ins {
		if b.Data == nil {
			continue
		}
		if b.DType != out.DType {
			return fmt.Errorf("ops: piecewise input %d has dtype %s, output %s", i, b.DType, out.DType)
		}
		// The region's shape and position in output dimensions.
		count := make([]int, len(out.Shape))
		for d := range count {
			count[d] = 1
		}
		dstOff := 0
		srcStrides := make([]int, len(out.Shape))
		inStrides := CStrides(b.Shape)
		for d, m := range t.op.Inputs[i].Dims {
			if m.Kind != plan.Affine || m.Step == 0 {
				continue
			}
			count[m.OutDim] = b.Shape[d]
			srcStrides[m.OutDim] = inStrides[d]
			dstOff += b.Origin[d] * outStrides[m.OutDim]
		}
		StridedCopy(elem, count, out.Data, dstOff, outStrides, b.Data, 0, srcStrides)
	}
	return nil
}

// chunkFunc runs a function of whole blocks along one axis (scans, sorts).
func chunkFunc(k plan.Kernel, out Block, in Block) error {
	x := kernels.Contiguous(in.DType, in.Data, in.Shape)
	dst := kernels.Contiguous(out.DType, out.Data, in.Shape)
	switch k.Core {
	case "cumsum", "cumprod":
		return kernels.Scan(k.Core, dst, x, k.Axes[0], nil)
	case "sort", "argsort":
		return kernels.Sort(dst, x, k.Axes[0], k.Descending, k.Core == "argsort")
	}
	return fmt.Errorf("ops: unknown chunk function %q", k.Core)
}

// foldStep folds one block of a streamed input (input 0) into the output.
func (t *TaskKernel) foldStep(out Block, ins []Block, first bool) error {
	k := t.op.Kernel
	switch k.Core {
	case "take":
		// The output block's positions along the axis and the first index
		// of the source block this step reads.
		lo, hi := t.op.OutputRange(t.block)
		ax := k.Axes[0]
		r := t.op.InputRegion(0, t.block, t.step)
		dst := kernels.Contiguous(out.DType, out.Data, out.Shape)
		return kernels.Gather(dst, kernels.Contiguous(ins[0].DType, ins[0].Data, ins[0].Shape), ax,
			k.Indices[lo[ax]:hi[ax]], r.Start[ax])
	case "searchsorted_left", "searchsorted_right":
		acc := kernels.Contiguous(out.DType, out.Data, out.Shape)
		return kernels.CountBelow(acc, kernels.Contiguous(ins[0].DType, ins[0].Data, ins[0].Shape),
			kernels.Contiguous(ins[1].DType, ins[1].Data, ins[1].Shape), k.Core == "searchsorted_right", first)
	case "isin":
		acc := kernels.Contiguous(out.DType, out.Data, out.Shape)
		return kernels.IsIn(acc, kernels.Contiguous(ins[1].DType, ins[1].Data, ins[1].Shape),
			kernels.Contiguous(ins[0].DType, ins[0].Data, ins[0].Shape), first)
	}
	return fmt.Errorf("ops: unknown fold %q", k.Core)
}
