package kernels

import (
	"fmt"

	"github.com/cubego/cubego/zarr"
)

// Loop is an elementwise loop over contiguous buffers: dst and the inputs
// a, b and c (nil when absent) hold the same number of elements, each of
// its own dtype. It is the loop Unary, Binary, Cast or Where run over
// contiguous operands, without their per-call checks, for callers that run
// one expression over many small blocks (ops' fused expressions, a few
// thousand elements at a time so that the temporaries stay in L1).
type Loop func(dst, a, b, c []byte)

// ElementwiseLoop returns the loop of op over inputs of the dtypes args,
// giving dst: "astype" (one input), "where" (Bool, then two of dst's
// dtype), or an op of Unary (one input) or Binary (two inputs of one
// dtype). A pair Unary, Binary, Cast or Where would refuse is an error.
// The loop's results are those of the exported function on the same
// elements, bit for bit.
func ElementwiseLoop(op string, dst zarr.DataType, args ...zarr.DataType) (Loop, error) {
	var (
		k   kernel
		out zarr.DataType
	)
	switch {
	case op == "astype" && len(args) == 1:
		k, out = castKernel(args[0], dst), dst
		if k == nil {
			return nil, fmt.Errorf("kernels: cast from %s to %s not supported", args[0], dst)
		}
	case op == "where" && len(args) == 3:
		if args[0] != zarr.Bool || args[1] != dst || args[2] != dst {
			return nil, fmt.Errorf("kernels: where of %s, %s and %s into %s: want bool and two of %s", args[0], args[1], args[2], dst, dst)
		}
		if k, out = whereLoop(dst), dst; k == nil {
			return nil, unsupported(op, dst)
		}
	case len(args) == 1:
		k, out = unaryKernel(op, args[0])
	case len(args) == 2:
		if args[0] != args[1] {
			return nil, fmt.Errorf("kernels: %s of %s and %s: operands must share a dtype", op, args[0], args[1])
		}
		k, out = binaryKernel(op, args[0])
	default:
		return nil, fmt.Errorf("kernels: no elementwise %q of %d operands", op, len(args))
	}
	if k == nil {
		return nil, unsupported(op, args[0])
	}
	if out != dst {
		return nil, fmt.Errorf("kernels: %s of %s gives %s, not %s", op, args[0], out, dst)
	}
	return func(d, a, b, c []byte) {
		clearUpper()
		k(d, a, b, c)
	}, nil
}
