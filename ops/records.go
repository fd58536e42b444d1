package ops

import (
	"errors"
	"fmt"
	"math"

	"github.com/cubego/cubego/ops/internal/kernels"
	"github.com/cubego/cubego/plan"
)

// recordKind is a reduction whose partial results are records of several
// fields rather than values (Kernel.Reduce names it).
type recordKind struct {
	fields  int
	arg     bool   // (index, value) records, else moments (count, shift, total, M2)
	skipNaN bool   // the moments leave NaNs out
	complex bool   // moments of complex values (real and imaginary parts)
	result  string // the moments' result: "mean", "var" or "std"
}

// recordKinds are the record reductions, by name: the arg reductions carry
// (index, value) through the tree (the value in a 64-bit type of its kind:
// float64, int64 or uint64, the index stored in the same type), the
// moments (count, shift, total, M2) in float64 (see kernels.MomentsFold).
var recordKinds = map[string]recordKind{
	"argmax":    {fields: kernels.ArgRecordFields, arg: true},
	"argmin":    {fields: kernels.ArgRecordFields, arg: true},
	"nanargmax": {fields: kernels.ArgRecordFields, arg: true},
	"nanargmin": {fields: kernels.ArgRecordFields, arg: true},
	"var":       {fields: kernels.MomentRecordFields, result: "var"},
	"std":       {fields: kernels.MomentRecordFields, result: "std"},
	"nanvar":    {fields: kernels.MomentRecordFields, skipNaN: true, result: "var"},
	"nanstd":    {fields: kernels.MomentRecordFields, skipNaN: true, result: "std"},
	"nanmean":   {fields: kernels.MomentRecordFields, skipNaN: true, result: "mean"},
	"cvar":      {fields: kernels.ComplexMomentRecordFields, complex: true, result: "var"},
	"cstd":      {fields: kernels.ComplexMomentRecordFields, complex: true, result: "std"},
}

// ArgReduce returns the int64 index of the first maximum (fn "argmax") or
// minimum ("argmin") along axis, or of the flattened array when axis is
// nil; "nanargmax" and "nanargmin" ignore NaNs. NaN counts as the extreme
// value for argmax and argmin, as in numpy; a slice of only NaNs makes
// nanargmax and nanargmin fail when computed, as numpy raises.
func ArgReduce(fn string, x *plan.Array, axis *int, keepdims bool) (*plan.Array, error) {
	return ArgReduceSplit(fn, x, axis, keepdims, Split{})
}

// ArgReduceSplit is ArgReduce with a fan-in. It is one tree reduction of
// (index, value) records: the first round finds each lane's best element
// of its blocks, indexed from the blocks' positions in x; the later rounds
// keep the better record (by value; equal values: the smaller index).
func ArgReduceSplit(fn string, x *plan.Array, axis *int, keepdims bool, split Split) (*plan.Array, error) {
	rk, ok := recordKinds[fn]
	if !ok || !rk.arg {
		return nil, plan.Errorf(plan.ErrNotImplemented, "unknown arg reduction %q", fn)
	}
	if IsComplex(x.DType) {
		return nil, plan.Errorf(plan.ErrType, "%s is not defined for complex dtypes", fn)
	}
	if !IsNumeric(x.DType) && x.DType != Bool {
		return nil, plan.Errorf(plan.ErrType, "%s is not defined for dtype %s", fn, x.DType)
	}
	var axes []int
	if axis == nil {
		axes, _ = NormalizeAxes(nil, x.NDim(), fn)
	} else {
		ax, err := normAxis(fn, *axis, x.NDim())
		if err != nil {
			return nil, err
		}
		axes = []int{ax}
	}
	shape := reducedShape(x.Shape, axes, keepdims)
	var n int64 = 1
	for _, a := range axes {
		n *= int64(x.Shape[a])
	}
	switch {
	case n == 0 && (axis == nil || plan.Prod(shape) > 0):
		return nil, plan.Errorf(plan.ErrValue, "%s of an empty sequence", fn)
	case len(axes) == 0 || plan.Prod(shape) == 0:
		// A 0-d array (index 0), or nothing to index.
		return Full(shape, Int64, plan.Scalar{Kind: 'i'}, nil, x.Spec)
	}
	rec := Int64
	switch {
	case IsFloat(x.DType):
		rec = Float64
	case IsUnsigned(x.DType):
		rec = Uint64
	}
	t := &tree{fn: fn, kernel: fn, x: x, axes: axes, keepdims: keepdims,
		operand: castExpr(plan.InputExpr(0, x.DType), rec), partial: rec, fields: rk.fields,
		out: Int64, scratch: 1, split: split}
	return t.build()
}

// Var returns the variance along axes with the given correction (ddof), or
// its square root (fn "std"); "nanvar", "nanstd" and "nanmean" leave NaNs
// out. dtype, when not nil, is the result's floating-point dtype.
func Var(fn string, x *plan.Array, axes []int, keepdims bool, correction float64, dtype *DType) (*plan.Array, error) {
	return Moments(fn, x, axes, keepdims, correction, dtype, Split{})
}

// Moments is Var with a fan-in. Real data is one tree reduction of
// moments records in float64 — count, total and M2 (Cubed's fields), the
// total taken about a shift (the block's mean) carried as a fourth field:
// each block's record comes from two passes over the block in memory (its
// sum, then the deviations from its mean) and records merge with Chan et
// al.'s update, so the result is as accurate as numpy's two-pass variance
// even for data far from zero, in a single pass over x. Complex var and
// std carry the records of the real and imaginary parts (the variance is
// their sum); computed in a real dtype, complex data is cast first and
// takes two passes over x (the mean, then the squared deviations).
func Moments(fn string, x *plan.Array, axes []int, keepdims bool, correction float64, dtype *DType, split Split) (*plan.Array, error) {
	rk, ok := recordKinds[fn]
	if !ok || rk.arg || rk.complex { // cvar and cstd are chosen below, for complex data
		return nil, plan.Errorf(plan.ErrNotImplemented, "unknown moments reduction %q", fn)
	}
	if !IsNumeric(x.DType) {
		return nil, plan.Errorf(plan.ErrType, "%s is not defined for dtype %s", fn, x.DType)
	}
	axes, err := NormalizeAxes(axes, x.NDim(), fn)
	if err != nil {
		return nil, err
	}
	ft := FloatOf(x.DType)
	if dtype != nil {
		ft = *dtype
	}
	if IsComplex(ft) || IsComplex(x.DType) {
		if fn != "var" && fn != "std" {
			return nil, plan.Errorf(plan.ErrNotImplemented, "%s of complex data", fn)
		}
		if !IsComplex(ft) {
			// Complex data computed in a real dtype (numpy casts it).
			return complexVar(fn, x, axes, keepdims, correction, ft, split)
		}
		rk = recordKinds["c"+fn]
	}
	if !IsFloat(ft) && !rk.complex {
		return nil, plan.Errorf(plan.ErrType, "%s: dtype must be a floating-point dtype, got %s", fn, ft)
	}
	shape := reducedShape(x.Shape, axes, keepdims)
	var n int64 = 1
	for _, a := range axes {
		n *= int64(x.Shape[a])
	}
	kernel, value := fn, Float64
	if rk.complex {
		// The variance of complex values is real.
		kernel, value = "c"+fn, Complex128
		ft = map[DType]DType{Complex64: Float32, Complex128: Float64}[ft]
	}
	if n == 0 || x.Size() == 0 {
		// No elements: NaN, as numpy (0/0), or an empty result.
		return Full(shape, ft, plan.Scalar{Kind: 'f', F: math.NaN()}, nil, x.Spec)
	}
	t := &tree{fn: fn, kernel: kernel, x: x, axes: axes, keepdims: keepdims,
		operand: castExpr(plan.InputExpr(0, x.DType), value), partial: Float64, fields: rk.fields,
		out: ft, scratch: 2, correction: correction, split: split}
	return t.build()
}

// complexVar is the variance of complex data computed in the dtype ft: the
// mean of the squared magnitudes of the deviations from the mean, in two
// passes over x.
func complexVar(fn string, x *plan.Array, axes []int, keepdims bool, correction float64, ft DType, split Split) (*plan.Array, error) {
	xf, err := AsType(x, ft)
	if err != nil {
		return nil, err
	}
	mean, err := ReduceSplit("mean", xf, axes, true, nil, split)
	if err != nil {
		return nil, err
	}
	dev, err := Elemwise("subtract", Operand{Array: xf}, Operand{Array: mean})
	if err != nil {
		return nil, err
	}
	a, err := Elemwise("abs", Operand{Array: dev})
	if err != nil {
		return nil, err
	}
	sq, err := Elemwise("multiply", Operand{Array: a}, Operand{Array: a})
	if err != nil {
		return nil, err
	}
	ss, err := ReduceSplit("sum", sq, axes, keepdims, nil, split)
	if err != nil {
		return nil, err
	}
	var n int64 = 1
	for _, ax := range axes {
		n *= int64(x.Shape[ax])
	}
	out, err := Elemwise("divide", Operand{Array: ss}, Operand{Scalar: &plan.Scalar{Kind: 'f', F: max(float64(n)-correction, 0)}})
	if err != nil {
		return nil, err
	}
	if fn == "std" {
		return Elemwise("sqrt", Operand{Array: out})
	}
	return out, nil
}

// recordStep folds one step's operand x into the task's records: the
// output block (partial results) or, in the last round, the accumulator
// the engine allocated beside it (Block.Acc).
func (t *TaskKernel) recordStep(alloc Allocator, rk recordKind, out Block, x kernels.Operand, first bool) error {
	k := t.op.Kernel
	off := 0
	if k.RecordIn {
		off = 1
	}
	if len(x.Shape) < off {
		return fmt.Errorf("ops: %s records operand has no field dimension", k.Reduce)
	}
	axes := make([]int, len(k.Axes))
	for i, a := range k.Axes {
		axes[i] = a - off
	}
	accShape := append([]int{rk.fields}, x.Shape[off:]...)
	for _, a := range axes {
		accShape[1+a] = 1
	}
	dt := rk.dtype(k)
	need := int(plan.Prod(accShape)) * dt.Size()
	data := out.Data
	if !k.RecordOut {
		data = out.Acc
	}
	if len(data) < need {
		return fmt.Errorf("ops: %s records need %d bytes, have %d", k.Reduce, need, len(data))
	}
	acc := kernels.Contiguous(dt, data[:need], accShape)
	if rk.arg {
		var base int64
		var strides []int64
		if !k.RecordIn {
			base, strides = t.argIndex(x.Shape, axes)
		}
		return kernels.ArgFold(k.Reduce, acc, x, axes, base, strides, k.RecordIn, first)
	}
	var tmp []byte
	if !first && !k.RecordIn {
		tmp = alloc.Allocate(need)
		defer alloc.Free(tmp)
	}
	if rk.complex {
		return kernels.ComplexMomentsFold(acc, x, axes, k.RecordIn, first, tmp)
	}
	return kernels.MomentsFold(rk.skipNaN, acc, x, axes, k.RecordIn, first, tmp)
}

// argIndex returns the flat index (over the reduced axes of the operand
// frame, in x's terms) of this step's first element, and its stride along
// each frame dimension. A reduced frame dimension's offset and extent come
// from an input read block by block along it.
func (t *TaskKernel) argIndex(frame, axes []int) (int64, []int64) {
	strides := make([]int64, len(frame))
	var base int64
	stride := int64(1)
	for j := len(axes) - 1; j >= 0; j-- {
		f := axes[j]
		off, n := 0, frame[f]
	search:
		for i, in := range t.op.Inputs {
			for d, m := range in.Dims {
				if m.Kind == plan.Blocks && m.Frame == f {
					r := t.op.InputRegion(i, t.block, t.step)
					off, n = r.Start[d], in.Array.Shape[d]
					break search
				}
			}
		}
		strides[f] = stride
		base += int64(off) * stride
		stride *= int64(n)
	}
	return base, strides
}

// recordFinish writes the last round's results from its records.
func (t *TaskKernel) recordFinish(rk recordKind, out Block) error {
	k := t.op.Kernel
	dt := rk.dtype(k)
	lanes := int(plan.Prod(out.Shape))
	need := rk.fields * lanes * dt.Size()
	if len(out.Acc) < need {
		return fmt.Errorf("ops: %s records need %d bytes, have %d", k.Reduce, need, len(out.Acc))
	}
	acc := kernels.Contiguous(dt, out.Acc[:need], []int{rk.fields, lanes})
	res := kernels.Contiguous(out.DType, out.Data, out.Shape)
	if rk.arg {
		err := kernels.ArgFinish(k.Reduce, res, acc)
		if errors.Is(err, kernels.ErrAllNaN) {
			return plan.Errorf(plan.ErrValue, "%s: All-NaN slice encountered", k.Reduce)
		}
		return err
	}
	return kernels.MomentsFinish(rk.result, res, acc, k.Correction)
}

// AccBytes returns the size of the accumulator a task of the op needs
// beside its output block of the given shape (Block.Acc): the records of
// a record reduction's last round, else 0.
func (t *TaskKernel) AccBytes(outShape []int) int {
	k := t.op.Kernel
	rk, ok := recordKinds[k.Reduce]
	if k.Core != "reduce" || !ok || k.RecordOut {
		return 0
	}
	return rk.fields * int(plan.Prod(outShape)) * rk.dtype(k).Size()
}

// dtype returns the dtype of a record's fields: the folded operand's for
// the arg reductions (which cast values to it), float64 for the moments.
func (rk recordKind) dtype(k plan.Kernel) DType {
	if rk.arg {
		return k.Exprs[0].DType
	}
	return Float64
}
