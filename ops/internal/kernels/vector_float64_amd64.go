//go:build goexperiment.simd && amd64

package kernels

import (
	"math"
	"simd/archsimd"
	"unsafe"
)

// The float64 vector loops of maximum, minimum, max and min. gen_vector.go
// writes vector_float32_amd64.go from this file, with float32 for float64
// and Float32x8 (8 lanes) for Float64x4 (4 lanes): archsimd has no generic
// vector types, so one source serves both widths by generation (go generate;
// TestGeneratedLoopsCurrent checks the output is current). Lengths and
// offsets are in lanesFloat64.
//
// VMAXPD and VMINPD neither propagate NaN nor order -0 below +0 (they
// return their second operand when either is NaN, or when both are zeros),
// so the loops select with explicit compares and blends, check for NaNs
// and zeros and redo those chunks exactly, or set NaN lanes and the signs
// of zeros with bitwise operations (max5Float64): the result is the scalar
// loop's, bit for bit but for NaN payloads (vector_test.go). A VMAXPD or
// VMINPD result is only used where it does not depend on the operand order
// (no NaN, no zero) or corrected where it does, as the compiler treats
// them as commutative and may swap the operands.

// lanesFloat64 is the number of float64 lanes of a Float64x4.
const lanesFloat64 = 4

// extremeFloat64 is maxRow (isMax) or minRow over a contiguous run,
// meaning: for _, v := range x { m = max(m, v) }, NaN propagating. Four
// vector chains of VMAXPD (or VMINPD) run beside a NaN flag; a run with a
// NaN or whose extreme is a zero is done again by the scalar loop.
func extremeFloat64(x []float64, m float64, isMax bool) float64 {
	const w = lanesFloat64
	if len(x) < 8*w {
		return scalarExtreme(x, m, isMax)
	}
	r := x
	a0 := archsimd.LoadFloat64x4Slice(r[0:w])
	a1 := archsimd.LoadFloat64x4Slice(r[w : 2*w])
	a2 := archsimd.LoadFloat64x4Slice(r[2*w : 3*w])
	a3 := archsimd.LoadFloat64x4Slice(r[3*w : 4*w])
	nan := a0.IsNaN().Or(a1.IsNaN()).Or(a2.IsNaN().Or(a3.IsNaN()))
	r = r[4*w:]
	if isMax {
		for len(r) >= 4*w {
			v0 := archsimd.LoadFloat64x4Slice(r[0:w])
			v1 := archsimd.LoadFloat64x4Slice(r[w : 2*w])
			v2 := archsimd.LoadFloat64x4Slice(r[2*w : 3*w])
			v3 := archsimd.LoadFloat64x4Slice(r[3*w : 4*w])
			a0, a1, a2, a3 = a0.Max(v0), a1.Max(v1), a2.Max(v2), a3.Max(v3)
			nan = nan.Or(v0.IsNaN().Or(v1.IsNaN())).Or(v2.IsNaN().Or(v3.IsNaN()))
			r = r[4*w:]
		}
		a0 = a0.Max(a1).Max(a2.Max(a3))
	} else {
		for len(r) >= 4*w {
			v0 := archsimd.LoadFloat64x4Slice(r[0:w])
			v1 := archsimd.LoadFloat64x4Slice(r[w : 2*w])
			v2 := archsimd.LoadFloat64x4Slice(r[2*w : 3*w])
			v3 := archsimd.LoadFloat64x4Slice(r[3*w : 4*w])
			a0, a1, a2, a3 = a0.Min(v0), a1.Min(v1), a2.Min(v2), a3.Min(v3)
			nan = nan.Or(v0.IsNaN().Or(v1.IsNaN())).Or(v2.IsNaN().Or(v3.IsNaN()))
			r = r[4*w:]
		}
		a0 = a0.Min(a1).Min(a2.Min(a3))
	}
	var l [w]float64
	a0.Store(&l)
	clearUpper() // the scalar code below is legacy SSE
	v := scalarExtreme(r, scalarExtreme(l[1:], l[0], isMax), isMax)
	if nan.ToBits() != 0 || v == 0 {
		return scalarExtreme(x, m, isMax)
	}
	if isMax {
		return max(m, v)
	}
	return min(m, v)
}

// extremeRowsFloat64 is extremeFloat64 over rows runs of n elements, rs
// apart, each into its own element of d: d[j] = max(d[j], x[j*rs:j*rs+n]...)
// (isMax) or min, a reduction over the last axis. A call of extremeFloat64
// per row would switch between vector and legacy-SSE scalar code twice a
// row, which costs as much as reducing a 1,024-element row; here a group of
// rows is reduced to vectors first, then all of them to scalars. A run's
// last 4*w elements are read by one iteration, overlapping the one before
// (max and min are idempotent), so there is no scalar tail.
func extremeRowsFloat64(d, x []float64, n, rows, rs int, isMax bool) {
	const w = lanesFloat64
	if n < 4*w {
		for j := range rows {
			d[j] = scalarExtreme(x[j*rs:j*rs+n], d[j], isMax)
		}
		return
	}
	const group = 32
	var part [group][w]float64
	var nans [group]uint8
	for j0 := 0; j0 < rows; j0 += group {
		g := min(group, rows-j0)
		for k := range g {
			r := x[(j0+k)*rs : (j0+k)*rs+n]
			a0 := archsimd.LoadFloat64x4Slice(r[0:w])
			a1 := archsimd.LoadFloat64x4Slice(r[w : 2*w])
			a2 := archsimd.LoadFloat64x4Slice(r[2*w : 3*w])
			a3 := archsimd.LoadFloat64x4Slice(r[3*w : 4*w])
			nan := a0.IsNaN().Or(a1.IsNaN()).Or(a2.IsNaN().Or(a3.IsNaN()))
			for i := 4 * w; i < n; i += 4 * w {
				v := (*[4 * w]float64)(r[min(i, n-4*w):][:4*w])
				v0 := archsimd.LoadFloat64x4Slice(v[0:w])
				v1 := archsimd.LoadFloat64x4Slice(v[w : 2*w])
				v2 := archsimd.LoadFloat64x4Slice(v[2*w : 3*w])
				v3 := archsimd.LoadFloat64x4Slice(v[3*w : 4*w])
				if isMax {
					a0, a1, a2, a3 = a0.Max(v0), a1.Max(v1), a2.Max(v2), a3.Max(v3)
				} else {
					a0, a1, a2, a3 = a0.Min(v0), a1.Min(v1), a2.Min(v2), a3.Min(v3)
				}
				nan = nan.Or(v0.IsNaN().Or(v1.IsNaN())).Or(v2.IsNaN().Or(v3.IsNaN()))
			}
			if isMax {
				a0 = a0.Max(a1).Max(a2.Max(a3))
			} else {
				a0 = a0.Min(a1).Min(a2.Min(a3))
			}
			a0.Store(&part[k])
			nans[k] = nan.ToBits()
		}
		clearUpper() // the scalar code below is legacy SSE
		for k := range g {
			j := j0 + k
			// As extremeFloat64: a row with a NaN, or whose extreme is a
			// zero, is done again by the scalar loop.
			if v := scalarExtreme(part[k][1:], part[k][0], isMax); nans[k] != 0 || v == 0 {
				d[j] = scalarExtreme(x[j*rs:j*rs+n], d[j], isMax)
			} else if isMax {
				d[j] = max(d[j], v)
			} else {
				d[j] = min(d[j], v)
			}
		}
	}
}

// maximumFloat64 is d[i] = maxFloat(xs[i], ys[i]) (isMax) or minFloat:
// x if x > y (x < y) or x is NaN, else y: two compares and a blend.
func maximumFloat64(isMax bool, d, xs, ys []float64) {
	const w = lanesFloat64
	n := len(d)
	xs, ys = xs[:n], ys[:n]
	i := 0
	for ; i <= n-2*w; i += 2 * w {
		x, y, o := xs[i:i+2*w:i+2*w], ys[i:i+2*w:i+2*w], d[i:i+2*w:i+2*w]
		x0, y0 := archsimd.LoadFloat64x4Slice(x[0:w]), archsimd.LoadFloat64x4Slice(y[0:w])
		x1, y1 := archsimd.LoadFloat64x4Slice(x[w:2*w]), archsimd.LoadFloat64x4Slice(y[w:2*w])
		var m0, m1 archsimd.Mask64x4
		if isMax {
			m0, m1 = x0.Greater(y0), x1.Greater(y1)
		} else {
			m0, m1 = x0.Less(y0), x1.Less(y1)
		}
		x0.Merge(y0, m0.Or(x0.IsNaN())).StoreSlice(o[0:w])
		x1.Merge(y1, m1.Or(x1.IsNaN())).StoreSlice(o[w : 2*w])
	}
	clearUpper() // the scalar tail is legacy SSE
	if isMax {
		maximumFloatLoop(d[i:], xs[i:], ys[i:])
	} else {
		minimumFloatLoop(d[i:], xs[i:], ys[i:])
	}
}

// extremeAccumFloat64 is maxAccum (isMax) or minAccum over contiguous d and
// x: d[i] = max(d[i], x[i]) with Go's max, which propagates NaN and orders
// -0 below +0 (see maxExactFloat64).
func extremeAccumFloat64(d, x []float64, isMax bool) {
	const w = lanesFloat64
	x = x[:len(d)]
	nonSign := archsimd.BroadcastInt64x4(math.MaxInt64)
	for len(d) >= 2*w {
		a0, b0 := archsimd.LoadFloat64x4Slice(d[0:w]), archsimd.LoadFloat64x4Slice(x[0:w])
		a1, b1 := archsimd.LoadFloat64x4Slice(d[w:2*w]), archsimd.LoadFloat64x4Slice(x[w:2*w])
		if isMax {
			a0, a1 = maxExactFloat64(a0, b0, nonSign), maxExactFloat64(a1, b1, nonSign)
		} else {
			a0, a1 = minExactFloat64(a0, b0), minExactFloat64(a1, b1)
		}
		a0.StoreSlice(d[0:w])
		a1.StoreSlice(d[w : 2*w])
		d, x = d[2*w:], x[2*w:]
	}
	clearUpper()
	if isMax {
		maxAccum(d, x, 0, 1)
	} else {
		minAccum(d, x, 0, 1)
	}
}

// maxExactFloat64 and minExactFloat64 are Go's max and min of a and b, lane
// by lane: min is a if a < b, else b if b < a, else (equal or unordered)
// the bits a | b, which is a NaN if either is, and for equal values differs
// from both only in a zero's sign: -0 if either is. Max is -min(-a, -b): a
// if a > b, else b if b > a, else a | b with the sign bit of a & b.
func maxExactFloat64(a, b archsimd.Float64x4, nonSign archsimd.Int64x4) archsimd.Float64x4 {
	p, q := a.AsInt64x4(), b.AsInt64x4()
	e := p.Or(q).And(p.And(q).Or(nonSign)).AsFloat64x4()
	return a.Merge(b.Merge(e, b.Greater(a)), a.Greater(b))
}

func minExactFloat64(a, b archsimd.Float64x4) archsimd.Float64x4 {
	e := a.AsInt64x4().Or(b.AsInt64x4()).AsFloat64x4()
	return a.Merge(b.Merge(e, b.Less(a)), a.Less(b))
}

// extremeSlabFloat64 is extremeAccumFloat64 over rows runs of x, rs apart: d
// stays in registers over four rows at a time, combined pairwise (max and
// min are associative and commutative, NaN and signed zeros included).
func extremeSlabFloat64(d, x []float64, rows, rs int, isMax bool) {
	n := len(d)
	r := 0
	for ; r+4 <= rows; r += 4 {
		x0, x1 := x[r*rs:r*rs+n], x[(r+1)*rs:(r+1)*rs+n]
		x2, x3 := x[(r+2)*rs:(r+2)*rs+n], x[(r+3)*rs:(r+3)*rs+n]
		i := n - n%lanesFloat64
		extremeSlab4Float64(unsafe.Pointer(unsafe.SliceData(d)), unsafe.Pointer(unsafe.SliceData(x0)),
			unsafe.Pointer(unsafe.SliceData(x1)), unsafe.Pointer(unsafe.SliceData(x2)),
			unsafe.Pointer(unsafe.SliceData(x3)), i, isMax)
		if i < n {
			clearUpper() // the scalar tail is legacy SSE
			if isMax {
				maxAccum(d[i:], x0[i:], 0, 1)
				maxAccum(d[i:], x1[i:], 0, 1)
				maxAccum(d[i:], x2[i:], 0, 1)
				maxAccum(d[i:], x3[i:], 0, 1)
			} else {
				minAccum(d[i:], x0[i:], 0, 1)
				minAccum(d[i:], x1[i:], 0, 1)
				minAccum(d[i:], x2[i:], 0, 1)
				minAccum(d[i:], x3[i:], 0, 1)
			}
		}
	}
	for ; r < rows; r++ {
		extremeAccumFloat64(d, x[r*rs:r*rs+n], isMax)
	}
}

// sizeFloat64 is the size of a float64 in bytes.
const sizeFloat64 = int(unsafe.Sizeof(float64(0)))

// extremeSlab4Float64 is d[i] = max(d[i], x0[i], x1[i], x2[i], x3[i])
// (isMax) or min for i < n, a multiple of lanesFloat64, with d and the
// xs runs of n float64s at pd and p0 to p3: exactly maxAccum (minAccum)
// row after row, two vectors an iteration without a branch (max5Float64,
// min5Float64). The caller checks the lengths: with bounds-checked slices
// (and their lengths live for a scalar tail) the compiler spilled loop
// state to the stack on every iteration, which cost a third of the
// throughput on data in L3.
func extremeSlab4Float64(pd, p0, p1, p2, p3 unsafe.Pointer, n int, isMax bool) {
	const w = lanesFloat64
	const next = w * sizeFloat64 // bytes to the next vector
	// at is the vector at byte offset o of p (o <= (n-w)*sizeFloat64 at
	// every use).
	at := func(p unsafe.Pointer, o int) *[w]float64 { return (*[w]float64)(unsafe.Add(p, o)) }
	pairs := (n - n%(2*w)) * sizeFloat64
	if isMax {
		nonSign, qnan := archsimd.BroadcastInt64x4(math.MaxInt64), archsimd.BroadcastInt64x4(quietNaNFloat64)
		o := 0
		for ; o < pairs; o += 2 * next {
			a, b := archsimd.LoadFloat64x4(at(pd, o)), archsimd.LoadFloat64x4(at(pd, o+next))
			v0, u0 := archsimd.LoadFloat64x4(at(p0, o)), archsimd.LoadFloat64x4(at(p0, o+next))
			v1, u1 := archsimd.LoadFloat64x4(at(p1, o)), archsimd.LoadFloat64x4(at(p1, o+next))
			v2, u2 := archsimd.LoadFloat64x4(at(p2, o)), archsimd.LoadFloat64x4(at(p2, o+next))
			v3, u3 := archsimd.LoadFloat64x4(at(p3, o)), archsimd.LoadFloat64x4(at(p3, o+next))
			max5Float64(a, v0, v1, v2, v3, nonSign, qnan).Store(at(pd, o))
			max5Float64(b, u0, u1, u2, u3, nonSign, qnan).Store(at(pd, o+next))
		}
		if o < n*sizeFloat64 {
			a := archsimd.LoadFloat64x4(at(pd, o))
			v0, v1 := archsimd.LoadFloat64x4(at(p0, o)), archsimd.LoadFloat64x4(at(p1, o))
			v2, v3 := archsimd.LoadFloat64x4(at(p2, o)), archsimd.LoadFloat64x4(at(p3, o))
			max5Float64(a, v0, v1, v2, v3, nonSign, qnan).Store(at(pd, o))
		}
	} else {
		sign := archsimd.BroadcastInt64x4(math.MinInt64)
		o := 0
		for ; o < pairs; o += 2 * next {
			a, b := archsimd.LoadFloat64x4(at(pd, o)), archsimd.LoadFloat64x4(at(pd, o+next))
			v0, u0 := archsimd.LoadFloat64x4(at(p0, o)), archsimd.LoadFloat64x4(at(p0, o+next))
			v1, u1 := archsimd.LoadFloat64x4(at(p1, o)), archsimd.LoadFloat64x4(at(p1, o+next))
			v2, u2 := archsimd.LoadFloat64x4(at(p2, o)), archsimd.LoadFloat64x4(at(p2, o+next))
			v3, u3 := archsimd.LoadFloat64x4(at(p3, o)), archsimd.LoadFloat64x4(at(p3, o+next))
			min5Float64(a, v0, v1, v2, v3, sign).Store(at(pd, o))
			min5Float64(b, u0, u1, u2, u3, sign).Store(at(pd, o+next))
		}
		if o < n*sizeFloat64 {
			a := archsimd.LoadFloat64x4(at(pd, o))
			v0, v1 := archsimd.LoadFloat64x4(at(p0, o)), archsimd.LoadFloat64x4(at(p1, o))
			v2, v3 := archsimd.LoadFloat64x4(at(p2, o)), archsimd.LoadFloat64x4(at(p3, o))
			min5Float64(a, v0, v1, v2, v3, sign).Store(at(pd, o))
		}
	}
}

// quietNaNFloat64 is the bits of the quiet NaN with no payload: the
// exponent and the quiet bit.
const quietNaNFloat64 = 0x7FF8000000000000

// max5Float64 is Go's max of a, v0, v1, v2 and v3, lane by lane, from
// VMAXPD without a branch. Without NaNs, VMAXPD's result m is the largest
// value but for the sign of a zero. If m is a zero, no operand is
// positive, and the and of the operands' sign bits is the sign bit of max
// (+0 if any operand is +0; negative operands have the bit set); if m > 0,
// its sign bit is clear already; if m < 0, every operand has the bit. So
// m & (a & v0 & v1 & v2 & v3 | nonSign) is max. A lane with a NaN operand
// gets the exponent and quiet bit (qnan) set: a NaN, and the same NaN when
// every operand is that quiet NaN, as the scalar loop gives.
func max5Float64(a, v0, v1, v2, v3 archsimd.Float64x4, nonSign, qnan archsimd.Int64x4) archsimd.Float64x4 {
	m := a.Max(v0.Max(v1)).Max(v2.Max(v3))
	s := a.AsInt64x4().And(v0.AsInt64x4()).And(v1.AsInt64x4().And(v2.AsInt64x4())).And(v3.AsInt64x4())
	nan := a.IsNaN().Or(v0.IsNaN()).Or(v1.IsNaN().Or(v2.IsNaN())).Or(v3.IsNaN()).ToInt64x4()
	return m.AsInt64x4().And(s.Or(nonSign)).Or(nan.And(qnan)).AsFloat64x4()
}

// min5Float64 is Go's min of a, v0, v1, v2 and v3, lane by lane, from
// VMINPD as max5Float64: the or of the operands' sign bits (sign) is the
// sign of min when min is a zero (-0 if any operand is -0) and already set
// in m when m < 0; if m > 0 no operand has it. A lane with a NaN operand
// becomes the or of the operands, which contains m (an operand's bits): a
// NaN, and the same NaN when every operand is that NaN.
func min5Float64(a, v0, v1, v2, v3 archsimd.Float64x4, sign archsimd.Int64x4) archsimd.Float64x4 {
	m := a.Min(v0.Min(v1)).Min(v2.Min(v3))
	s := a.AsInt64x4().Or(v0.AsInt64x4()).Or(v1.AsInt64x4().Or(v2.AsInt64x4())).Or(v3.AsInt64x4())
	nan := a.IsNaN().Or(v0.IsNaN()).Or(v1.IsNaN().Or(v2.IsNaN())).Or(v3.IsNaN()).ToInt64x4()
	return m.AsInt64x4().Or(s.And(sign.Or(nan))).AsFloat64x4()
}
