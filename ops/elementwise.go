package ops

import (
	"fmt"

	"github.com/cubego/cubego/plan"
)

// Operand is an argument of an elementwise function: an array or a Python
// scalar (a weak type, NEP 50).
type Operand struct {
	Array  *plan.Array
	Scalar *plan.Scalar
}

// category names which input dtypes a function accepts.
type category uint8

const (
	numeric category = iota
	realNumeric
	integer
	integerOrBool
	boolean
	floating // accepts any numeric; computes in floating point
	realFloating
	anyType
)

// result names a function's output dtype relative to its computing dtype.
type result uint8

const (
	same result = iota
	toBool
	toReal // complex → its real dtype, others unchanged
	toFloat
)

type elemFunc struct {
	nin int
	cat category
	res result
}

// elemFuncs is the table of elementwise functions. The kernels package
// implements each name for the dtypes of its category.
var elemFuncs = map[string]elemFunc{
	"add": {2, numeric, same}, "subtract": {2, numeric, same}, "multiply": {2, numeric, same},
	"divide": {2, floating, toFloat}, "floor_divide": {2, realNumeric, same}, "remainder": {2, realNumeric, same},
	"pow": {2, numeric, same}, "maximum": {2, realNumeric, same}, "minimum": {2, realNumeric, same},
	"atan2": {2, realFloating, toFloat}, "hypot": {2, realFloating, toFloat}, "copysign": {2, realFloating, toFloat},
	"nextafter": {2, realFloating, toFloat}, "logaddexp": {2, realFloating, toFloat},
	"bitwise_and": {2, integerOrBool, same}, "bitwise_or": {2, integerOrBool, same}, "bitwise_xor": {2, integerOrBool, same},
	"bitwise_left_shift": {2, integer, same}, "bitwise_right_shift": {2, integer, same},
	"logical_and": {2, boolean, same}, "logical_or": {2, boolean, same}, "logical_xor": {2, boolean, same},
	"equal": {2, anyType, toBool}, "not_equal": {2, anyType, toBool},
	"less": {2, realNumeric, toBool}, "less_equal": {2, realNumeric, toBool},
	"greater": {2, realNumeric, toBool}, "greater_equal": {2, realNumeric, toBool},

	"negative": {1, numeric, same}, "positive": {1, numeric, same}, "abs": {1, numeric, toReal},
	"sign": {1, numeric, same}, "square": {1, numeric, same},
	"sqrt": {1, floating, toFloat}, "exp": {1, floating, toFloat}, "expm1": {1, floating, toFloat},
	"log": {1, floating, toFloat}, "log1p": {1, floating, toFloat}, "log2": {1, floating, toFloat}, "log10": {1, floating, toFloat},
	"sin": {1, floating, toFloat}, "cos": {1, floating, toFloat}, "tan": {1, floating, toFloat},
	"asin": {1, floating, toFloat}, "acos": {1, floating, toFloat}, "atan": {1, floating, toFloat},
	"sinh": {1, floating, toFloat}, "cosh": {1, floating, toFloat}, "tanh": {1, floating, toFloat},
	"asinh": {1, floating, toFloat}, "acosh": {1, floating, toFloat}, "atanh": {1, floating, toFloat},
	"floor": {1, realNumeric, same}, "ceil": {1, realNumeric, same}, "trunc": {1, realNumeric, same},
	"round": {1, numeric, same}, "reciprocal": {1, floating, toFloat},
	"bitwise_invert": {1, integerOrBool, same}, "logical_not": {1, boolean, same}, "conj": {1, numeric, same},
	"isnan": {1, numeric, toBool}, "isinf": {1, numeric, toBool}, "isfinite": {1, numeric, toBool},
	"signbit": {1, realFloating, toBool}, "real": {1, numeric, toReal}, "imag": {1, numeric, toReal},
}

func (c category) accepts(d DType) bool {
	switch c {
	case numeric, floating:
		return IsNumeric(d)
	case realNumeric:
		return IsInteger(d) || IsFloat(d)
	case integer:
		return IsInteger(d)
	case integerOrBool:
		return IsInteger(d) || d == Bool
	case boolean:
		return d == Bool
	case realFloating:
		return IsInteger(d) || IsFloat(d)
	}
	return true
}

// Elemwise applies the elementwise function fn (one of the names listed in
// the package documentation, "Function names") to arrays and scalars with
// broadcasting and type promotion. At least one operand must be an array.
func Elemwise(fn string, operands ...Operand) (*plan.Array, error) {
	f, ok := elemFuncs[fn]
	if !ok {
		return nil, plan.Errorf(plan.ErrNotImplemented, "unknown elementwise function %q", fn)
	}
	if len(operands) != f.nin {
		return nil, plan.Errorf(plan.ErrValue, "%s takes %d arguments, got %d", fn, f.nin, len(operands))
	}
	var arrays []*plan.Array
	for _, o := range operands {
		if o.Array != nil {
			arrays = append(arrays, o.Array)
		}
	}
	if len(arrays) == 0 {
		return nil, plan.Errorf(plan.ErrType, "%s needs at least one array argument", fn)
	}
	// Promotion: arrays first, then scalars as weak types.
	ct := arrays[0].DType
	for _, a := range arrays[1:] {
		ct = ResultType(ct, a.DType)
	}
	for _, o := range operands {
		if o.Scalar != nil {
			if err := checkScalarFits(fn, *o.Scalar, ct); err != nil {
				return nil, err
			}
			ct = ScalarResultType(ct, *o.Scalar)
		}
	}
	if !f.cat.accepts(ct) {
		return nil, plan.Errorf(plan.ErrType, "%s is not defined for dtype %s", fn, ct)
	}
	for _, a := range arrays {
		if !f.cat.accepts(a.DType) && !(f.cat == realFloating && a.DType == Bool) {
			return nil, plan.Errorf(plan.ErrType, "%s is not defined for dtype %s", fn, a.DType)
		}
	}
	if f.cat == floating || f.cat == realFloating {
		ct = FloatOf(ct)
	}
	out := ct
	switch f.res {
	case toBool:
		out = Bool
	case toReal:
		out = RealOf(ct)
	}
	shape, err := BroadcastShapes(shapesOf(arrays)...)
	if err != nil {
		return nil, plan.Errorf(plan.ErrValue, "%s: %v", fn, err)
	}
	args := make([]*plan.Expr, len(operands))
	var inputs []plan.Input
	for i, o := range operands {
		if o.Scalar != nil {
			args[i] = &plan.Expr{Op: "const", Value: *o.Scalar, DType: ct}
			continue
		}
		inputs = append(inputs, plan.Input{Array: o.Array, Dims: broadcastDims(o.Array.Shape, shape)})
		args[i] = castExpr(plan.InputExpr(len(inputs)-1, o.Array.DType), ct)
	}
	expr := &plan.Expr{Op: fn, DType: out, Args: args}
	if fn == "positive" {
		expr = args[0]
	}
	return mapOp(fn, inputs, expr, shape, outputChunks(inputs, shape))
}

// mapOp creates a blockwise op evaluating expr over each output block.
func mapOp(fn string, inputs []plan.Input, expr *plan.Expr, shape []int, chunks [][]int) (*plan.Array, error) {
	spec, err := plan.CommonSpec(arraysOf(inputs)...)
	if err != nil {
		return nil, err
	}
	out := plan.NewArray(shape, expr.DType, chunks, spec)
	plan.NewOp(fn, "blockwise", inputs, out, plan.Kernel{Core: "map", Exprs: []*plan.Expr{expr}})
	return out, nil
}

func castExpr(e *plan.Expr, dt DType) *plan.Expr {
	if e.DType == dt {
		return e
	}
	return &plan.Expr{Op: "astype", DType: dt, Args: []*plan.Expr{e}}
}

func checkScalarFits(fn string, s plan.Scalar, dt DType) error {
	if s.Kind != 'i' && s.Kind != 'u' || !IsInteger(dt) {
		return nil
	}
	lo, hi := intRange(dt)
	if s.Kind == 'u' {
		if s.U > hi || s.U > 1<<63-1 && dt != Uint64 {
			return plan.Errorf(plan.ErrValue, "%s: Python integer %d out of bounds for %s", fn, s.U, dt)
		}
		return nil
	}
	if s.I < lo || (s.I > 0 && uint64(s.I) > hi) {
		return plan.Errorf(plan.ErrValue, "%s: Python integer %d out of bounds for %s", fn, s.I, dt)
	}
	return nil
}

func intRange(dt DType) (int64, uint64) {
	bits := uint(dt.Size() * 8)
	if IsUnsigned(dt) {
		return 0, 1<<bits - 1
	}
	return -1 << (bits - 1), 1<<(bits-1) - 1
}

// BroadcastShapes returns the shape that shapes broadcast to.
func BroadcastShapes(shapes ...[]int) ([]int, error) {
	n := 0
	for _, s := range shapes {
		n = max(n, len(s))
	}
	out := make([]int, n)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		for i, d := range s {
			j := n - len(s) + i
			switch {
			case out[j] == d || d == 1:
			case out[j] == 1:
				out[j] = d
			default:
				return nil, fmt.Errorf("shapes %s are not broadcast-compatible", formatShapes(shapes))
			}
		}
	}
	if _, ok := plan.ProdChecked(out); !ok {
		return nil, fmt.Errorf("shapes %s broadcast to %s, whose number of elements overflows int64", formatShapes(shapes), FormatShape(out))
	}
	return out, nil
}

// broadcastDims maps an input of shape in, broadcast to out, onto out's
// blocks: size-1 dimensions read their single element.
func broadcastDims(in, out []int) []plan.DimMap {
	off := len(out) - len(in)
	d := make([]plan.DimMap, len(in))
	for i, n := range in {
		if n == 1 && out[off+i] != 1 {
			d[i] = plan.DimMap{Kind: plan.Affine, OutDim: off + i, Step: 0}
		} else {
			d[i] = plan.DimMap{Kind: plan.Affine, OutDim: off + i, Step: 1}
		}
	}
	return d
}

// outputChunks picks the chunks of a blockwise output: along each dimension
// those of the first input that spans it (inputs read at other boundaries
// are assembled from their chunks by the engine), else one chunk.
func outputChunks(inputs []plan.Input, shape []int) [][]int {
	chunks := make([][]int, len(shape))
	for _, in := range inputs {
		for d, m := range in.Dims {
			if m.Kind == plan.Affine && m.Step == 1 && m.Start == 0 && chunks[m.OutDim] == nil &&
				in.Array.Shape[d] == shape[m.OutDim] {
				chunks[m.OutDim] = in.Array.Chunks[d]
			}
		}
	}
	for i, c := range chunks {
		if c == nil {
			chunks[i] = []int{shape[i]}
		}
	}
	return chunks
}

func shapesOf(arrays []*plan.Array) [][]int {
	s := make([][]int, len(arrays))
	for i, a := range arrays {
		s[i] = a.Shape
	}
	return s
}

func arraysOf(inputs []plan.Input) []*plan.Array {
	a := make([]*plan.Array, len(inputs))
	for i, in := range inputs {
		a[i] = in.Array
	}
	return a
}

func formatShapes(shapes [][]int) string {
	s := ""
	for i, sh := range shapes {
		if i > 0 {
			s += ", "
		}
		s += FormatShape(sh)
	}
	return s
}

// FormatShape renders a shape as Python does: (2, 3), (4,), ().
func FormatShape(s []int) string {
	switch len(s) {
	case 0:
		return "()"
	case 1:
		return fmt.Sprintf("(%d,)", s[0])
	}
	out := "("
	for i, d := range s {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprint(d)
	}
	return out + ")"
}

// AsType converts an array to another dtype.
func AsType(x *plan.Array, dt DType) (*plan.Array, error) {
	if x.DType == dt {
		return x, nil
	}
	return mapOp("astype", []plan.Input{{Array: x, Dims: plan.Identity(x.NDim())}},
		castExpr(plan.InputExpr(0, x.DType), dt), x.Shape, x.Chunks)
}

// PermuteDims reorders the dimensions of x: output dimension i is input
// dimension axes[i].
func PermuteDims(x *plan.Array, axes []int) (*plan.Array, error) {
	n := x.NDim()
	if len(axes) != n {
		return nil, plan.Errorf(plan.ErrValue, "permute_dims: axes %v do not match an array of dimension %d", axes, n)
	}
	dims := make([]plan.DimMap, n)
	shape := make([]int, n)
	chunks := make([][]int, n)
	seen := make([]bool, n)
	identity := true
	for i, a := range axes {
		if a < -n || a >= n {
			return nil, plan.Errorf(plan.ErrValue, "permute_dims: axis %d is out of bounds for an array of dimension %d", a, n)
		}
		if a < 0 {
			a += n
		}
		if seen[a] {
			return nil, plan.Errorf(plan.ErrValue, "permute_dims: repeated axis %d in %v", a, axes)
		}
		seen[a] = true
		identity = identity && a == i
		dims[a] = plan.DimMap{Kind: plan.Affine, OutDim: i, Step: 1}
		shape[i] = x.Shape[a]
		chunks[i] = x.Chunks[a]
	}
	if identity {
		return x, nil
	}
	return mapOp("permute_dims", []plan.Input{{Array: x, Dims: dims}}, plan.InputExpr(0, x.DType), shape, chunks)
}
