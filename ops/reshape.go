package ops

import (
	"slices"

	"github.com/cubego/cubego/plan"
)

// Reshape returns x with a new shape (one entry may be -1) in C order.
//
// Dimensions are matched in groups with equal products (merged or split
// dimensions). x is first rechunked so that in every group all dimensions
// but the leading one are whole and the leading one is cut where the
// output's leading dimension can be cut too; then every input block holds
// exactly the elements of one output block, in the same order, and the
// reshape copies bytes block for block.
func Reshape(x *plan.Array, shape []int) (*plan.Array, error) {
	shape, err := resolveShape(x, shape)
	if err != nil {
		return nil, err
	}
	if slices.Equal(shape, x.Shape) {
		return x, nil
	}
	if x.Size() == 0 {
		return virtual(shape, x.DType, nil, x.Spec, &plan.Generator{Kind: "full", Value: plan.Scalar{Kind: 'i'}})
	}
	in := x.Shape
	type group struct{ i0, i1, o0, o1 int }
	var groups []group
	for i, j := 0, 0; i < len(in) || j < len(shape); {
		g := group{i0: i, o0: j}
		pin, pout := 1, 1
		if i < len(in) {
			pin *= in[i]
			i++
		}
		if j < len(shape) {
			pout *= shape[j]
			j++
		}
		for pin != pout {
			if pin < pout && i < len(in) {
				pin *= in[i]
				i++
			} else if j < len(shape) {
				pout *= shape[j]
				j++
			} else {
				pin *= in[i]
				i++
			}
		}
		g.i1, g.o1 = i, j
		groups = append(groups, g)
	}
	// Bytes of one block outside a group's leading dimension, to size it.
	elem := int64(x.DType.Size())
	target := max(x.ChunkBytes(), 1)
	inChunks := make([]any, len(in))
	outChunks := make([][]int, len(shape))
	dims := make([]plan.DimMap, len(in))
	for _, g := range groups {
		innerIn := int(plan.Prod(in[min(g.i0+1, g.i1):g.i1]))
		innerOut := int(plan.Prod(shape[min(g.o0+1, g.o1):g.o1]))
		for d := g.i0 + 1; d < g.i1; d++ {
			inChunks[d] = -1
			dims[d] = plan.DimMap{Kind: plan.Full, OutDim: -1}
		}
		for d := g.o0 + 1; d < g.o1; d++ {
			outChunks[d] = []int{shape[d]}
		}
		switch {
		case g.i0 == g.i1: // only size-1 output dimensions
			for d := g.o0; d < g.o1; d++ {
				outChunks[d] = []int{1}
			}
			continue
		case g.o0 == g.o1: // only size-1 input dimensions
			inChunks[g.i0] = -1
			dims[g.i0] = plan.DimMap{Kind: plan.Full, OutDim: -1}
			continue
		}
		// The leading input dimension is cut at multiples of unit elements,
		// so that each cut falls between whole rows of the output's inner
		// dimensions.
		unit := lcm(innerIn, innerOut) / innerIn
		other := elem * int64(innerIn)
		for _, h := range groups {
			if h != g && h.i0 < h.i1 {
				other *= int64(plan.MaxChunk(x.Chunks[h.i0]))
			}
		}
		c := int(target/max(other, 1)) / unit * unit
		c = min(max(c, unit), in[g.i0])
		lead, err := plan.RegularChunks(in[g.i0], c)
		if err != nil {
			return nil, err
		}
		inChunks[g.i0] = lead
		dims[g.i0] = plan.DimMap{Kind: plan.Scaled, OutDim: g.o0, Num: innerOut, Den: innerIn}
		oc := make([]int, len(lead))
		for k, n := range lead {
			oc[k] = n * innerIn / innerOut
		}
		outChunks[g.o0] = oc
	}
	src, err := Rechunk(x, inChunks)
	if err != nil {
		return nil, err
	}
	out := plan.NewArray(shape, x.DType, outChunks, x.Spec)
	plan.NewOp("reshape", "blockwise", []plan.Input{{Array: src, Dims: dims}}, out, plan.Kernel{Core: "reshape"})
	return out, nil
}

func resolveShape(x *plan.Array, shape []int) ([]int, error) {
	shape = append([]int{}, shape...)
	unknown := -1
	known := int64(1)
	for i, n := range shape {
		switch {
		case n == -1 && unknown < 0:
			unknown = i
		case n < 0:
			return nil, plan.Errorf(plan.ErrValue, "reshape: invalid shape %s", FormatShape(shape))
		default:
			k, ok := plan.ProdChecked([]int{int(known), n})
			if !ok {
				return nil, plan.Errorf(plan.ErrValue, "reshape: cannot reshape array of size %d into shape %s: its number of elements overflows int64", x.Size(), FormatShape(shape))
			}
			known = k
		}
	}
	if unknown >= 0 {
		if known == 0 || x.Size()%known != 0 {
			return nil, plan.Errorf(plan.ErrValue, "reshape: cannot reshape array of size %d into shape %s", x.Size(), FormatShape(shape))
		}
		shape[unknown] = int(x.Size() / known)
	}
	if plan.Prod(shape) != x.Size() {
		return nil, plan.Errorf(plan.ErrValue, "reshape: cannot reshape array of size %d into shape %s", x.Size(), FormatShape(shape))
	}
	return shape, nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func lcm(a, b int) int { return a / gcd(a, b) * b }
