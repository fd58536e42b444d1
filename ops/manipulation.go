package ops

import (
	"math"
	"slices"

	"github.com/cubego/cubego/plan"
)

// BroadcastTo broadcasts x to shape. Dimensions x lacks or has as 1 get
// chunks of about the size of x's chunks.
func BroadcastTo(x *plan.Array, shape []int) (*plan.Array, error) {
	return BroadcastToChunks(x, shape, nil)
}

// BroadcastToChunks is BroadcastTo with the result's chunks given (any
// chunking of shape; nil chooses as BroadcastTo does). Each output block
// reads the input blocks it overlaps.
func BroadcastToChunks(x *plan.Array, shape []int, chunks ChunkSpec) (*plan.Array, error) {
	if err := checkShape(shape); err != nil {
		return nil, err
	}
	out, err := BroadcastShapes(x.Shape, shape)
	if err != nil || !slices.Equal(out, shape) {
		return nil, plan.Errorf(plan.ErrValue, "broadcast_to: cannot broadcast shape %s to %s", FormatShape(x.Shape), FormatShape(shape))
	}
	if slices.Equal(x.Shape, shape) && chunks == nil {
		return x, nil
	}
	dims := broadcastDims(x.Shape, shape)
	var c [][]int
	if chunks != nil {
		c, err = plan.NormalizeChunks(chunks, shape, x.DType.Size(), autoLimit(x.Spec))
	} else {
		spec := make([]any, len(shape))
		off := len(shape) - x.NDim()
		for i := range shape {
			spec[i] = "auto"
			if j := i - off; j >= 0 && x.Shape[j] == shape[i] {
				spec[i] = x.Chunks[j]
			}
		}
		c, err = plan.NormalizeChunks(spec, shape, x.DType.Size(), max(x.ChunkBytes(), 1<<20))
	}
	if err != nil {
		return nil, err
	}
	if slices.Equal(x.Shape, shape) && slices.EqualFunc(c, x.Chunks, slices.Equal) {
		return x, nil
	}
	if plan.Prod(shape) == 0 {
		return virtual(shape, x.DType, chunksAny(c), x.Spec, &plan.Generator{Kind: "full", Value: plan.Scalar{Kind: 'i'}})
	}
	return mapOp("broadcast_to", []plan.Input{{Array: x, Dims: dims}}, plan.InputExpr(0, x.DType), shape, c)
}

// Concat joins arrays along an existing axis. Their dtypes are promoted;
// along the axis the output keeps each input's blocks, so every task copies
// from a single input.
func Concat(arrays []*plan.Array, axis int) (*plan.Array, error) {
	return ConcatChunks(arrays, axis, nil)
}

// ConcatChunks is Concat with the result's chunks given (any chunking of the
// result's shape; nil keeps the inputs' blocks as Concat does). A task then
// copies from every input block its output block overlaps, in one op.
func ConcatChunks(arrays []*plan.Array, axis int, chunkSpec ChunkSpec) (*plan.Array, error) {
	if len(arrays) == 0 {
		return nil, plan.Errorf(plan.ErrValue, "concat needs at least one array")
	}
	nd := arrays[0].NDim()
	if nd == 0 {
		return nil, plan.Errorf(plan.ErrValue, "concat: zero-dimensional arrays cannot be concatenated")
	}
	if axis < -nd || axis >= nd {
		return nil, plan.Errorf(plan.ErrValue, "concat: axis %d is out of bounds for arrays of dimension %d", axis, nd)
	}
	if axis < 0 {
		axis += nd
	}
	dt := arrays[0].DType
	for _, a := range arrays[1:] {
		dt = ResultType(dt, a.DType)
	}
	shape := append([]int{}, arrays[0].Shape...)
	shape[axis] = 0
	for _, a := range arrays {
		if a.NDim() != nd {
			return nil, plan.Errorf(plan.ErrValue, "concat: all arrays must have the same number of dimensions, got %s and %s", FormatShape(arrays[0].Shape), FormatShape(a.Shape))
		}
		for d := range nd {
			if d != axis && a.Shape[d] != arrays[0].Shape[d] {
				return nil, plan.Errorf(plan.ErrValue, "concat: shapes %s and %s differ outside axis %d", FormatShape(arrays[0].Shape), FormatShape(a.Shape), axis)
			}
		}
		if a.Shape[axis] > math.MaxInt-shape[axis] {
			return nil, plan.Errorf(plan.ErrValue, "concat: the length of axis %d overflows int64", axis)
		}
		shape[axis] += a.Shape[axis]
	}
	if err := plan.CheckShape(shape, dt.Size()); err != nil {
		return nil, err
	}
	var given [][]int
	if chunkSpec != nil {
		var err error
		if given, err = plan.NormalizeChunks(chunkSpec, shape, dt.Size(), autoLimit(arrays[0].Spec)); err != nil {
			return nil, err
		}
	}
	if len(arrays) == 1 {
		a, err := AsType(arrays[0], dt)
		if err != nil || given == nil {
			return a, err
		}
		return Rechunk(a, chunksAny(given))
	}
	chunks := make([][]int, nd)
	copy(chunks, arrays[0].Chunks)
	chunks[axis] = nil
	var inputs []plan.Input
	off := 0
	for _, a := range arrays {
		if a.Shape[axis] == 0 {
			continue
		}
		a, err := AsType(a, dt)
		if err != nil {
			return nil, err
		}
		chunks[axis] = append(chunks[axis], a.Chunks[axis]...)
		dims := plan.Identity(nd)
		dims[axis].Start = -off
		inputs = append(inputs, plan.Input{Array: a, Dims: dims})
		off += a.Shape[axis]
	}
	if len(inputs) == 0 {
		chunks[axis] = []int{0}
	}
	if given != nil {
		chunks = given
	}
	if len(inputs) == 0 || plan.Prod(shape) == 0 {
		return virtual(shape, dt, chunksAny(chunks), arrays[0].Spec, &plan.Generator{Kind: "full", Value: plan.Scalar{Kind: 'i'}})
	}
	return piecewiseOp("concat", inputs, dt, shape, chunks, plan.Scalar{Kind: 'i'})
}

// piecewiseOp creates an op copying clipped input regions into blocks
// filled with fill.
func piecewiseOp(fn string, inputs []plan.Input, dt DType, shape []int, chunks [][]int, fill plan.Scalar) (*plan.Array, error) {
	spec, err := plan.CommonSpec(arraysOf(inputs)...)
	if err != nil {
		return nil, err
	}
	out := plan.NewArray(shape, dt, chunks, spec)
	plan.NewOp(fn, "blockwise", inputs, out, plan.Kernel{Core: "piecewise", Fill: fill})
	return out, nil
}

// Stack joins arrays of one shape along a new axis.
func Stack(arrays []*plan.Array, axis int) (*plan.Array, error) {
	if len(arrays) == 0 {
		return nil, plan.Errorf(plan.ErrValue, "stack needs at least one array")
	}
	nd := arrays[0].NDim() + 1
	if axis < -nd || axis >= nd {
		return nil, plan.Errorf(plan.ErrValue, "stack: axis %d is out of bounds for arrays of dimension %d", axis, nd)
	}
	if axis < 0 {
		axis += nd
	}
	expanded := make([]*plan.Array, len(arrays))
	for i, a := range arrays {
		if !slices.Equal(a.Shape, arrays[0].Shape) {
			return nil, plan.Errorf(plan.ErrValue, "stack: all arrays must have the same shape, got %s and %s", FormatShape(arrays[0].Shape), FormatShape(a.Shape))
		}
		key := make([]Index, nd)
		for d := range key {
			key[d] = Index{Kind: IndexSlice}
		}
		key[axis] = Index{Kind: IndexNewAxis}
		e, err := GetItem(a, key)
		if err != nil {
			return nil, err
		}
		expanded[i] = e
	}
	return Concat(expanded, axis)
}

// PadConstant pads x with value: widths[d] = (before, after) per axis.
func PadConstant(x *plan.Array, widths [][2]int, value plan.Scalar) (*plan.Array, error) {
	if len(widths) != x.NDim() {
		return nil, plan.Errorf(plan.ErrValue, "pad: %d pad widths for an array of dimension %d", len(widths), x.NDim())
	}
	shape := make([]int, x.NDim())
	chunks := make([][]int, x.NDim())
	dims := plan.Identity(x.NDim())
	for d, w := range widths {
		if w[0] < 0 || w[1] < 0 {
			return nil, plan.Errorf(plan.ErrValue, "pad: negative pad width %v for axis %d", w, d)
		}
		if w[0] > math.MaxInt-x.Shape[d] || w[1] > math.MaxInt-x.Shape[d]-w[0] {
			return nil, plan.Errorf(plan.ErrValue, "pad: pad widths %v for axis %d of length %d: the padded length overflows int64", w, d, x.Shape[d])
		}
		shape[d] = x.Shape[d] + w[0] + w[1]
		dims[d].Start = -w[0]
		c, err := padChunks(x.Chunks[d], w[0], w[1], x.Shape[d])
		if err != nil {
			return nil, err
		}
		chunks[d] = c
	}
	if err := plan.CheckGrid(shape, chunks, x.DType.Size()); err != nil {
		return nil, err
	}
	if err := checkScalarFits("pad", value, x.DType); err != nil {
		return nil, err
	}
	if x.Size() == 0 {
		return Full(shape, x.DType, value, chunksAny(chunks), x.Spec)
	}
	return piecewiseOp("pad", []plan.Input{{Array: x, Dims: dims}}, x.DType, shape, chunks, value)
}

// padChunks puts the padding in blocks of its own at either end (split to
// the size of x's largest block), keeping x's blocks in between.
func padChunks(c []int, before, after, n int) ([]int, error) {
	size := max(plan.MaxChunk(c), 1)
	if plan.BlockCount(before, size)+len(c)+plan.BlockCount(after, size) > plan.MaxBlocks {
		return nil, plan.Errorf(plan.ErrValue, "pad: pad widths (%d, %d) in blocks of %d make more than the %d blocks an array may have",
			before, after, size, plan.MaxBlocks)
	}
	var out []int
	if before > 0 {
		b, err := plan.RegularChunks(before, size)
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	if n > 0 {
		out = append(out, c...)
	}
	if after > 0 {
		a, err := plan.RegularChunks(after, size)
		if err != nil {
			return nil, err
		}
		out = append(out, a...)
	}
	if len(out) == 0 {
		out = []int{0}
	}
	return out, nil
}

// Where selects elements of x where cond is true and of y elsewhere, with
// broadcasting; x and y may be scalars.
func Where(cond *plan.Array, x, y Operand) (*plan.Array, error) {
	if cond.DType != Bool {
		return nil, plan.Errorf(plan.ErrType, "where: condition must be bool, got %s", cond.DType)
	}
	var arrays []*plan.Array
	for _, o := range []Operand{x, y} {
		if o.Array != nil {
			arrays = append(arrays, o.Array)
		}
	}
	var ct DType
	switch len(arrays) {
	case 0:
		return nil, plan.Errorf(plan.ErrType, "where: x or y must be an array")
	case 1:
		ct = arrays[0].DType
	default:
		ct = ResultType(arrays[0].DType, arrays[1].DType)
	}
	for _, o := range []Operand{x, y} {
		if o.Scalar != nil {
			if err := checkScalarFits("where", *o.Scalar, ct); err != nil {
				return nil, err
			}
			ct = ScalarResultType(ct, *o.Scalar)
		}
	}
	shape, err := BroadcastShapes(append([][]int{cond.Shape}, shapesOf(arrays)...)...)
	if err != nil {
		return nil, plan.Errorf(plan.ErrValue, "where: %v", err)
	}
	inputs := []plan.Input{{Array: cond, Dims: broadcastDims(cond.Shape, shape)}}
	args := []*plan.Expr{plan.InputExpr(0, Bool)}
	for _, o := range []Operand{x, y} {
		if o.Scalar != nil {
			args = append(args, &plan.Expr{Op: "const", Value: *o.Scalar, DType: ct})
			continue
		}
		inputs = append(inputs, plan.Input{Array: o.Array, Dims: broadcastDims(o.Array.Shape, shape)})
		args = append(args, castExpr(plan.InputExpr(len(inputs)-1, o.Array.DType), ct))
	}
	return mapOp("where", inputs, &plan.Expr{Op: "where", DType: ct, Args: args}, shape, outputChunks(inputs, shape))
}
