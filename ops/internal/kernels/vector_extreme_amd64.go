//go:build goexperiment.simd && amd64

package kernels

import (
	"math"
	"simd/archsimd"
)

// Vector loops of maximum and minimum: elementwise (the generated loops'
// maxFloat and minFloat) and accumulating (a reduction over a non-last
// axis: Go's max and min builtins). Both propagate NaN, which VMAXPD and
// VMINPD do not (they return their second operand when either is NaN, or
// when both are zeros), so the loops select with explicit compares and
// blends, or check for NaNs and zeros and redo those chunks exactly: the
// result is the scalar loop's, bit for bit but for NaN payloads
// (vector_test.go). A VMAXPD or VMINPD result is only used where it does
// not depend on the operand order (no NaN, no zero), as the compiler
// treats them as commutative and may swap the operands.

// maximumFloat64 is d[i] = maxFloat(xs[i], ys[i]) (isMax) or minFloat:
// x if x > y (x < y) or x is NaN, else y: two compares and a blend.
func maximumFloat64(isMax bool, d, xs, ys []float64) {
	n := len(d)
	xs, ys = xs[:n], ys[:n]
	i := 0
	for ; i <= n-8; i += 8 {
		x, y, o := xs[i:i+8:i+8], ys[i:i+8:i+8], d[i:i+8:i+8]
		x0, y0 := archsimd.LoadFloat64x4Slice(x[0:4]), archsimd.LoadFloat64x4Slice(y[0:4])
		x1, y1 := archsimd.LoadFloat64x4Slice(x[4:8]), archsimd.LoadFloat64x4Slice(y[4:8])
		var m0, m1 archsimd.Mask64x4
		if isMax {
			m0, m1 = x0.Greater(y0), x1.Greater(y1)
		} else {
			m0, m1 = x0.Less(y0), x1.Less(y1)
		}
		x0.Merge(y0, m0.Or(x0.IsNaN())).StoreSlice(o[0:4])
		x1.Merge(y1, m1.Or(x1.IsNaN())).StoreSlice(o[4:8])
	}
	clearUpper() // the scalar tail is legacy SSE
	if isMax {
		maximumFloatLoop(d[i:], xs[i:], ys[i:])
	} else {
		minimumFloatLoop(d[i:], xs[i:], ys[i:])
	}
}

// maximumFloat32 is maximumFloat64 for float32.
func maximumFloat32(isMax bool, d, xs, ys []float32) {
	n := len(d)
	xs, ys = xs[:n], ys[:n]
	i := 0
	for ; i <= n-16; i += 16 {
		x, y, o := xs[i:i+16:i+16], ys[i:i+16:i+16], d[i:i+16:i+16]
		x0, y0 := archsimd.LoadFloat32x8Slice(x[0:8]), archsimd.LoadFloat32x8Slice(y[0:8])
		x1, y1 := archsimd.LoadFloat32x8Slice(x[8:16]), archsimd.LoadFloat32x8Slice(y[8:16])
		var m0, m1 archsimd.Mask32x8
		if isMax {
			m0, m1 = x0.Greater(y0), x1.Greater(y1)
		} else {
			m0, m1 = x0.Less(y0), x1.Less(y1)
		}
		x0.Merge(y0, m0.Or(x0.IsNaN())).StoreSlice(o[0:8])
		x1.Merge(y1, m1.Or(x1.IsNaN())).StoreSlice(o[8:16])
	}
	clearUpper()
	if isMax {
		maximumFloatLoop(d[i:], xs[i:], ys[i:])
	} else {
		minimumFloatLoop(d[i:], xs[i:], ys[i:])
	}
}

// maximumInt32 is d[i] = max(xs[i], ys[i]) (isMax) or min: VPMAXSD,
// VPMINSD.
func maximumInt32(isMax bool, d, xs, ys []int32) {
	n := len(d)
	xs, ys = xs[:n], ys[:n]
	i := 0
	for ; i <= n-16; i += 16 {
		x, y, o := xs[i:i+16:i+16], ys[i:i+16:i+16], d[i:i+16:i+16]
		x0, y0 := archsimd.LoadInt32x8Slice(x[0:8]), archsimd.LoadInt32x8Slice(y[0:8])
		x1, y1 := archsimd.LoadInt32x8Slice(x[8:16]), archsimd.LoadInt32x8Slice(y[8:16])
		if isMax {
			x0, x1 = x0.Max(y0), x1.Max(y1)
		} else {
			x0, x1 = x0.Min(y0), x1.Min(y1)
		}
		x0.StoreSlice(o[0:8])
		x1.StoreSlice(o[8:16])
	}
	if isMax {
		maximumIntUintLoop(d[i:], xs[i:], ys[i:])
	} else {
		minimumIntUintLoop(d[i:], xs[i:], ys[i:])
	}
}

// extremeAccumFloat64 is maxAccum (isMax) or minAccum over contiguous d and
// x: d[i] = max(d[i], x[i]) with Go's max, which propagates NaN and orders
// -0 below +0: a if a < b, else b if b < a, else (equal or unordered) the
// bits a | b, which is a NaN if either is, and for equal values differs
// from both only in a zero's sign: -0 if either is. Max is -min(-a, -b):
// a if a > b, else b if b > a, else a | b with the sign bit of a & b.
func extremeAccumFloat64(d, x []float64, isMax bool) {
	x = x[:len(d)]
	nonSign := archsimd.BroadcastInt64x4(math.MaxInt64)
	for len(d) >= 8 {
		a0, b0 := archsimd.LoadFloat64x4Slice(d[0:4]), archsimd.LoadFloat64x4Slice(x[0:4])
		a1, b1 := archsimd.LoadFloat64x4Slice(d[4:8]), archsimd.LoadFloat64x4Slice(x[4:8])
		p0, q0 := a0.AsInt64x4(), b0.AsInt64x4()
		p1, q1 := a1.AsInt64x4(), b1.AsInt64x4()
		if isMax {
			e0 := p0.Or(q0).And(p0.And(q0).Or(nonSign)).AsFloat64x4()
			e1 := p1.Or(q1).And(p1.And(q1).Or(nonSign)).AsFloat64x4()
			a0 = a0.Merge(b0.Merge(e0, b0.Greater(a0)), a0.Greater(b0))
			a1 = a1.Merge(b1.Merge(e1, b1.Greater(a1)), a1.Greater(b1))
		} else {
			e0, e1 := p0.Or(q0).AsFloat64x4(), p1.Or(q1).AsFloat64x4()
			a0 = a0.Merge(b0.Merge(e0, b0.Less(a0)), a0.Less(b0))
			a1 = a1.Merge(b1.Merge(e1, b1.Less(a1)), a1.Less(b1))
		}
		a0.StoreSlice(d[0:4])
		a1.StoreSlice(d[4:8])
		d, x = d[8:], x[8:]
	}
	clearUpper()
	if isMax {
		maxAccum(d, x, 0, 1)
	} else {
		minAccum(d, x, 0, 1)
	}
}

// extremeAccumFloat32 is extremeAccumFloat64 for float32.
func extremeAccumFloat32(d, x []float32, isMax bool) {
	x = x[:len(d)]
	nonSign := archsimd.BroadcastInt32x8(math.MaxInt32)
	for len(d) >= 16 {
		a0, b0 := archsimd.LoadFloat32x8Slice(d[0:8]), archsimd.LoadFloat32x8Slice(x[0:8])
		a1, b1 := archsimd.LoadFloat32x8Slice(d[8:16]), archsimd.LoadFloat32x8Slice(x[8:16])
		p0, q0 := a0.AsInt32x8(), b0.AsInt32x8()
		p1, q1 := a1.AsInt32x8(), b1.AsInt32x8()
		if isMax {
			e0 := p0.Or(q0).And(p0.And(q0).Or(nonSign)).AsFloat32x8()
			e1 := p1.Or(q1).And(p1.And(q1).Or(nonSign)).AsFloat32x8()
			a0 = a0.Merge(b0.Merge(e0, b0.Greater(a0)), a0.Greater(b0))
			a1 = a1.Merge(b1.Merge(e1, b1.Greater(a1)), a1.Greater(b1))
		} else {
			e0, e1 := p0.Or(q0).AsFloat32x8(), p1.Or(q1).AsFloat32x8()
			a0 = a0.Merge(b0.Merge(e0, b0.Less(a0)), a0.Less(b0))
			a1 = a1.Merge(b1.Merge(e1, b1.Less(a1)), a1.Less(b1))
		}
		a0.StoreSlice(d[0:8])
		a1.StoreSlice(d[8:16])
		d, x = d[16:], x[16:]
	}
	clearUpper()
	if isMax {
		maxAccum(d, x, 0, 1)
	} else {
		minAccum(d, x, 0, 1)
	}
}

// extremeAccumInt32 is maxAccum (isMax) or minAccum over contiguous int32
// d and x.
func extremeAccumInt32(d, x []int32, isMax bool) {
	x = x[:len(d)]
	for len(d) >= 16 {
		a0, b0 := archsimd.LoadInt32x8Slice(d[0:8]), archsimd.LoadInt32x8Slice(x[0:8])
		a1, b1 := archsimd.LoadInt32x8Slice(d[8:16]), archsimd.LoadInt32x8Slice(x[8:16])
		if isMax {
			a0, a1 = a0.Max(b0), a1.Max(b1)
		} else {
			a0, a1 = a0.Min(b0), a1.Min(b1)
		}
		a0.StoreSlice(d[0:8])
		a1.StoreSlice(d[8:16])
		d, x = d[16:], x[16:]
	}
	if isMax {
		maxAccum(d, x, 0, 1)
	} else {
		minAccum(d, x, 0, 1)
	}
}

// maxExactFloat64 and minExactFloat64 are extremeAccumFloat64's max and min of a
// and b.
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
	nonSign := archsimd.BroadcastInt64x4(math.MaxInt64)
	var zero archsimd.Float64x4
	r := 0
	for ; r+4 <= rows; r += 4 {
		x0, x1 := x[r*rs:r*rs+n], x[(r+1)*rs:(r+1)*rs+n]
		x2, x3 := x[(r+2)*rs:(r+2)*rs+n], x[(r+3)*rs:(r+3)*rs+n]
		i := 0
		for ; i+4 <= n; i += 4 {
			a := archsimd.LoadFloat64x4Slice(d[i : i+4])
			v0, v1 := archsimd.LoadFloat64x4Slice(x0[i:i+4]), archsimd.LoadFloat64x4Slice(x1[i:i+4])
			v2, v3 := archsimd.LoadFloat64x4Slice(x2[i:i+4]), archsimd.LoadFloat64x4Slice(x3[i:i+4])
			// Plain VMAXPD (VMINPD) unless an operand is NaN (their sum is
			// then NaN; a sum of infinities of both signs only costs a
			// detour) or the result is a zero of either sign.
			var m archsimd.Float64x4
			if isMax {
				m = a.Max(v0.Max(v1)).Max(v2.Max(v3))
			} else {
				m = a.Min(v0.Min(v1)).Min(v2.Min(v3))
			}
			if a.Add(v0.Add(v1)).Add(v2.Add(v3)).IsNaN().Or(m.Equal(zero)).ToBits() != 0 {
				if isMax {
					m = maxExactFloat64(a, maxExactFloat64(maxExactFloat64(v0, v1, nonSign), maxExactFloat64(v2, v3, nonSign), nonSign), nonSign)
				} else {
					m = minExactFloat64(a, minExactFloat64(minExactFloat64(v0, v1), minExactFloat64(v2, v3)))
				}
			}
			m.StoreSlice(d[i : i+4])
		}
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

// maxExactFloat32 and minExactFloat32 are extremeAccumFloat32's max and min of a
// and b.
func maxExactFloat32(a, b archsimd.Float32x8, nonSign archsimd.Int32x8) archsimd.Float32x8 {
	p, q := a.AsInt32x8(), b.AsInt32x8()
	e := p.Or(q).And(p.And(q).Or(nonSign)).AsFloat32x8()
	return a.Merge(b.Merge(e, b.Greater(a)), a.Greater(b))
}

func minExactFloat32(a, b archsimd.Float32x8) archsimd.Float32x8 {
	e := a.AsInt32x8().Or(b.AsInt32x8()).AsFloat32x8()
	return a.Merge(b.Merge(e, b.Less(a)), a.Less(b))
}

// extremeSlabFloat32 is extremeAccumFloat32 over rows runs of x, rs apart: d
// stays in registers over four rows at a time, combined pairwise (max and
// min are associative and commutative, NaN and signed zeros included).
func extremeSlabFloat32(d, x []float32, rows, rs int, isMax bool) {
	n := len(d)
	nonSign := archsimd.BroadcastInt32x8(math.MaxInt32)
	var zero archsimd.Float32x8
	r := 0
	for ; r+4 <= rows; r += 4 {
		x0, x1 := x[r*rs:r*rs+n], x[(r+1)*rs:(r+1)*rs+n]
		x2, x3 := x[(r+2)*rs:(r+2)*rs+n], x[(r+3)*rs:(r+3)*rs+n]
		i := 0
		for ; i+8 <= n; i += 8 {
			a := archsimd.LoadFloat32x8Slice(d[i : i+8])
			v0, v1 := archsimd.LoadFloat32x8Slice(x0[i:i+8]), archsimd.LoadFloat32x8Slice(x1[i:i+8])
			v2, v3 := archsimd.LoadFloat32x8Slice(x2[i:i+8]), archsimd.LoadFloat32x8Slice(x3[i:i+8])
			// Plain VMAXPD (VMINPD) unless an operand is NaN (their sum is
			// then NaN; a sum of infinities of both signs only costs a
			// detour) or the result is a zero of either sign.
			var m archsimd.Float32x8
			if isMax {
				m = a.Max(v0.Max(v1)).Max(v2.Max(v3))
			} else {
				m = a.Min(v0.Min(v1)).Min(v2.Min(v3))
			}
			if a.Add(v0.Add(v1)).Add(v2.Add(v3)).IsNaN().Or(m.Equal(zero)).ToBits() != 0 {
				if isMax {
					m = maxExactFloat32(a, maxExactFloat32(maxExactFloat32(v0, v1, nonSign), maxExactFloat32(v2, v3, nonSign), nonSign), nonSign)
				} else {
					m = minExactFloat32(a, minExactFloat32(minExactFloat32(v0, v1), minExactFloat32(v2, v3)))
				}
			}
			m.StoreSlice(d[i : i+8])
		}
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
		extremeAccumFloat32(d, x[r*rs:r*rs+n], isMax)
	}
}

// extremeSlabInt32 is extremeAccumInt32 over rows runs of x, rs apart: d
// stays in registers over four rows at a time, combined pairwise (max and
// min are associative and commutative, NaN and signed zeros included).
func extremeSlabInt32(d, x []int32, rows, rs int, isMax bool) {
	n := len(d)
	r := 0
	for ; r+4 <= rows; r += 4 {
		x0, x1 := x[r*rs:r*rs+n], x[(r+1)*rs:(r+1)*rs+n]
		x2, x3 := x[(r+2)*rs:(r+2)*rs+n], x[(r+3)*rs:(r+3)*rs+n]
		i := 0
		for ; i+8 <= n; i += 8 {
			a := archsimd.LoadInt32x8Slice(d[i : i+8])
			v0, v1 := archsimd.LoadInt32x8Slice(x0[i:i+8]), archsimd.LoadInt32x8Slice(x1[i:i+8])
			v2, v3 := archsimd.LoadInt32x8Slice(x2[i:i+8]), archsimd.LoadInt32x8Slice(x3[i:i+8])
			if isMax {
				a = a.Max(v0.Max(v1)).Max(v2.Max(v3))
			} else {
				a = a.Min(v0.Min(v1)).Min(v2.Min(v3))
			}
			a.StoreSlice(d[i : i+8])
		}
		if i < n {
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
		extremeAccumInt32(d, x[r*rs:r*rs+n], isMax)
	}
}
