//go:build goexperiment.simd && amd64

package kernels

import (
	"simd/archsimd"
	"unsafe"
)

// The int32 vector loops of maximum, minimum, max and min (the float
// loops are in vector_float64_amd64.go and the generated
// vector_float32_amd64.go).

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

// extremeSlabInt32 is extremeAccumInt32 over rows runs of x, rs apart: d
// stays in registers over four rows at a time, combined pairwise (max and
// min are associative and commutative).
func extremeSlabInt32(d, x []int32, rows, rs int, isMax bool) {
	n := len(d)
	r := 0
	for ; r+4 <= rows; r += 4 {
		x0, x1 := x[r*rs:r*rs+n], x[(r+1)*rs:(r+1)*rs+n]
		x2, x3 := x[(r+2)*rs:(r+2)*rs+n], x[(r+3)*rs:(r+3)*rs+n]
		i := n - n%8
		extremeSlab4Int32(unsafe.Pointer(unsafe.SliceData(d)), unsafe.Pointer(unsafe.SliceData(x0)),
			unsafe.Pointer(unsafe.SliceData(x1)), unsafe.Pointer(unsafe.SliceData(x2)),
			unsafe.Pointer(unsafe.SliceData(x3)), i, isMax)
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

// extremeSlab4Int32 is d[i] = max(d[i], x0[i], x1[i], x2[i], x3[i]) (isMax)
// or min for i < n, a multiple of 8, with d and the xs runs of n int32s at
// pd and p0 to p3, two vectors an iteration. The caller checks the
// lengths, as extremeSlab4Float64's does: bounds-checked slices made the
// compiler spill loop state to the stack on every iteration.
func extremeSlab4Int32(pd, p0, p1, p2, p3 unsafe.Pointer, n int, isMax bool) {
	const next = 32 // bytes to the next vector
	// at is the vector at byte offset o of p (o <= (n-8)*4 at every use).
	at := func(p unsafe.Pointer, o int) *[8]int32 { return (*[8]int32)(unsafe.Add(p, o)) }
	pairs := (n - n%16) * 4
	o := 0
	if isMax {
		for ; o < pairs; o += 2 * next {
			a, b := archsimd.LoadInt32x8(at(pd, o)), archsimd.LoadInt32x8(at(pd, o+next))
			v0, u0 := archsimd.LoadInt32x8(at(p0, o)), archsimd.LoadInt32x8(at(p0, o+next))
			v1, u1 := archsimd.LoadInt32x8(at(p1, o)), archsimd.LoadInt32x8(at(p1, o+next))
			v2, u2 := archsimd.LoadInt32x8(at(p2, o)), archsimd.LoadInt32x8(at(p2, o+next))
			v3, u3 := archsimd.LoadInt32x8(at(p3, o)), archsimd.LoadInt32x8(at(p3, o+next))
			a.Max(v0.Max(v1)).Max(v2.Max(v3)).Store(at(pd, o))
			b.Max(u0.Max(u1)).Max(u2.Max(u3)).Store(at(pd, o+next))
		}
	} else {
		for ; o < pairs; o += 2 * next {
			a, b := archsimd.LoadInt32x8(at(pd, o)), archsimd.LoadInt32x8(at(pd, o+next))
			v0, u0 := archsimd.LoadInt32x8(at(p0, o)), archsimd.LoadInt32x8(at(p0, o+next))
			v1, u1 := archsimd.LoadInt32x8(at(p1, o)), archsimd.LoadInt32x8(at(p1, o+next))
			v2, u2 := archsimd.LoadInt32x8(at(p2, o)), archsimd.LoadInt32x8(at(p2, o+next))
			v3, u3 := archsimd.LoadInt32x8(at(p3, o)), archsimd.LoadInt32x8(at(p3, o+next))
			a.Min(v0.Min(v1)).Min(v2.Min(v3)).Store(at(pd, o))
			b.Min(u0.Min(u1)).Min(u2.Min(u3)).Store(at(pd, o+next))
		}
	}
	if o < n*4 {
		a := archsimd.LoadInt32x8(at(pd, o))
		v0, v1 := archsimd.LoadInt32x8(at(p0, o)), archsimd.LoadInt32x8(at(p1, o))
		v2, v3 := archsimd.LoadInt32x8(at(p2, o)), archsimd.LoadInt32x8(at(p3, o))
		if isMax {
			a = a.Max(v0.Max(v1)).Max(v2.Max(v3))
		} else {
			a = a.Min(v0.Min(v1)).Min(v2.Min(v3))
		}
		a.Store(at(pd, o))
	}
}
