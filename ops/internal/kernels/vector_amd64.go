//go:build goexperiment.simd && amd64

package kernels

import (
	"simd/archsimd"
	"unsafe"

	"github.com/cubego/cubego/zarr"
)

// AVX2 loops (256-bit vectors: 4 float64 or int64, 8 float32 or int32 per
// vector), registered in vector.go's tables when the CPU has AVX2. Go does
// not vectorise loops itself, and these operations run at the speed of the
// cache only with several independent vector chains per iteration.

func init() {
	if !archsimd.X86.AVX2() {
		return
	}
	for _, op := range []string{"min", "max"} {
		isMax := op == "max"
		vectorRows[opDType{op, zarr.Float64}] = vectorRowsOf(
			func(x []float64, m float64) float64 { return extremeFloat64(x, m, isMax) },
			func(d, x []float64) { extremeAccumFloat64(d, x, isMax) })
		vectorSlabs[opDType{op, zarr.Float64}] = vectorSlabOf(func(d, x []float64, rows, rs int) { extremeSlabFloat64(d, x, rows, rs, isMax) })
		vectorRowRuns[opDType{op, zarr.Float64}] = vectorRowRunsOf(func(d, x []float64, n, rows, rs int) { extremeRowsFloat64(d, x, n, rows, rs, isMax) })
		vectorRows[opDType{op, zarr.Float32}] = vectorRowsOf(
			func(x []float32, m float32) float32 { return extremeFloat32(x, m, isMax) },
			func(d, x []float32) { extremeAccumFloat32(d, x, isMax) })
		vectorSlabs[opDType{op, zarr.Float32}] = vectorSlabOf(func(d, x []float32, rows, rs int) { extremeSlabFloat32(d, x, rows, rs, isMax) })
		vectorRowRuns[opDType{op, zarr.Float32}] = vectorRowRunsOf(func(d, x []float32, n, rows, rs int) { extremeRowsFloat32(d, x, n, rows, rs, isMax) })
		vectorRows[opDType{op, zarr.Int32}] = vectorRowsOf(
			func(x []int32, m int32) int32 { return extremeInt32(x, m, isMax) },
			func(d, x []int32) { extremeAccumInt32(d, x, isMax) })
		vectorSlabs[opDType{op, zarr.Int32}] = vectorSlabOf(func(d, x []int32, rows, rs int) { extremeSlabInt32(d, x, rows, rs, isMax) })
		elementwise := map[string]string{"max": "maximum", "min": "minimum"}[op]
		vectorBinary[opDType{elementwise, zarr.Float64}] = binary(func(d, x, y []float64) { maximumFloat64(isMax, d, x, y) })
		vectorBinary[opDType{elementwise, zarr.Float32}] = binary(func(d, x, y []float32) { maximumFloat32(isMax, d, x, y) })
		vectorBinary[opDType{elementwise, zarr.Int32}] = binary(func(d, x, y []int32) { maximumInt32(isMax, d, x, y) })
	}
	vectorRows[opDType{"sum", zarr.Float64}] = vectorRowsOf(func(x []float64, m float64) float64 { return m + pairwiseSumFloat64(x) }, nil)
	vectorRows[opDType{"sum", zarr.Float32}] = vectorRowsOf(func(x []float32, m float32) float32 { return m + pairwiseSumFloat32(x) }, nil)
	for op, c := range map[string]int{
		"less": cmpLess, "less_equal": cmpLessEqual, "greater": cmpGreater,
		"greater_equal": cmpGreaterEqual, "equal": cmpEqual, "not_equal": cmpNotEqual,
	} {
		f64, f32, i32 := compareFloat64Loops[c], compareFloat32Loops[c], compareInt32Loops[c]
		vectorBinary[opDType{op, zarr.Float64}] = func(d, a, b, _ []byte) { f64(d, as[float64](a), as[float64](b)) }
		vectorBinary[opDType{op, zarr.Float32}] = func(d, a, b, _ []byte) { f32(d, as[float32](a), as[float32](b)) }
		vectorBinary[opDType{op, zarr.Int32}] = func(d, a, b, _ []byte) { i32(d, as[int32](a), as[int32](b)) }
		vectorBinary[opDType{op, zarr.Int64}] = func(d, a, b, _ []byte) { compareInt64(c, d, as[int64](a), as[int64](b)) }
	}
	for op, c := range map[string]int{"add": arithAdd, "subtract": arithSub, "multiply": arithMul} {
		vectorBinary[opDType{op, zarr.Float64}] = binary(func(d, x, y []float64) { arithFloat64(c, d, x, y) })
		vectorBinary[opDType{op, zarr.Float32}] = binary(func(d, x, y []float32) { arithFloat32(c, d, x, y) })
		vectorBinary[opDType{op, zarr.Int32}] = binary(func(d, x, y []int32) { arithInt32(c, d, x, y) })
		if c != arithMul { // AVX2 has no 64-bit multiply
			vectorBinary[opDType{op, zarr.Int64}] = binary(func(d, x, y []int64) { arithInt64(c, d, x, y) })
		}
	}
	vectorUnary[opDType{"sqrt", zarr.Float64}] = unary(sqrtFloat64)
	vectorUnary[opDType{"sqrt", zarr.Float32}] = unary(sqrtFloat32)
	vectorUnary[opDType{"negative", zarr.Float64}] = unary(negativeFloat64)
	vectorUnary[opDType{"negative", zarr.Float32}] = unary(negativeFloat32)
	vectorCast[[2]zarr.DataType{zarr.Float64, zarr.Float32}] = unary(float64ToFloat32)
	for _, m := range vectorMath() {
		for key, k := range m.kernels {
			vectorUnary[key] = k // the last, the widest the CPU has, wins
		}
	}
}

// vectorMath returns the vector exp and log kernels this CPU can run,
// narrowest first: AVX2 with FMA, then AVX-512 (mathAVX512). The widest is
// registered; the tests check each.
func vectorMath() []mathVariant {
	var v []mathVariant
	if archsimd.X86.AVX2() && archsimd.X86.FMA() {
		v = append(v, mathVariant{"AVX2", map[opDType]kernel{
			{"exp", zarr.Float64}: unary(expFloat64),
			{"exp", zarr.Float32}: unary(expFloat32),
			{"log", zarr.Float64}: unary(logFloat64),
			{"log", zarr.Float32}: unary(logFloat32),
		}})
	}
	if archsimd.X86.AVX512() {
		v = append(v, mathVariant{"AVX-512", mathAVX512})
	}
	return v
}

// lanes512Float64 and lanes512Float32 are the lanes of the AVX-512 vectors
// of vector_math512_amd64.go (Float64x8, Float32x16).
const (
	lanes512Float64 = 8
	lanes512Float32 = 16
)

// mathAVX512 are exp and log in AVX-512 vectors, which replace the AVX2
// ones where the CPU has AVX-512 (numpy uses AVX-512 for these where it
// can): float64 exp and log by tables (vector_exp512_amd64.go,
// vector_log512_amd64.go), float32 log by the AVX2 arithmetic with a
// shorter way to the exponent (vector_log512_amd64.go), float32 exp
// generated by gen_math512.go from the AVX2 code. The float32 ones give
// the AVX2 loops' bits with twice the lanes per instruction; the float64
// ones are within 1 ULP of them, below 1 ULP from the exact value.
var mathAVX512 = map[opDType]kernel{
	{"exp", zarr.Float64}: unary(expFloat64AVX512),
	{"exp", zarr.Float32}: unary(expFloat32AVX512),
	{"log", zarr.Float64}: unary(logFloat64AVX512),
	{"log", zarr.Float32}: unary(logFloat32AVX512),
}

// extremeInt32 is maxRow (isMax) or minRow over a contiguous int32 run.
func extremeInt32(x []int32, m int32, isMax bool) int32 {
	if len(x) < 64 {
		return scalarExtreme(x, m, isMax)
	}
	r := x
	a0 := archsimd.LoadInt32x8Slice(r[0:8])
	a1 := archsimd.LoadInt32x8Slice(r[8:16])
	a2 := archsimd.LoadInt32x8Slice(r[16:24])
	a3 := archsimd.LoadInt32x8Slice(r[24:32])
	r = r[32:]
	if isMax {
		for len(r) >= 32 {
			a0 = a0.Max(archsimd.LoadInt32x8Slice(r[0:8]))
			a1 = a1.Max(archsimd.LoadInt32x8Slice(r[8:16]))
			a2 = a2.Max(archsimd.LoadInt32x8Slice(r[16:24]))
			a3 = a3.Max(archsimd.LoadInt32x8Slice(r[24:32]))
			r = r[32:]
		}
		a0 = a0.Max(a1).Max(a2.Max(a3))
	} else {
		for len(r) >= 32 {
			a0 = a0.Min(archsimd.LoadInt32x8Slice(r[0:8]))
			a1 = a1.Min(archsimd.LoadInt32x8Slice(r[8:16]))
			a2 = a2.Min(archsimd.LoadInt32x8Slice(r[16:24]))
			a3 = a3.Min(archsimd.LoadInt32x8Slice(r[24:32]))
			r = r[32:]
		}
		a0 = a0.Min(a1).Min(a2.Min(a3))
	}
	var l [8]int32
	a0.Store(&l)
	return scalarExtreme(r, scalarExtreme(l[:], m, isMax), isMax)
}

func scalarExtreme[T realNumber](x []T, m T, isMax bool) T {
	if isMax {
		return maxRow(x, 0, 1, len(x), m)
	}
	return minRow(x, 0, 1, len(x), m)
}

// pairwiseSumFloat64 is pairwiseSum over a contiguous run: the same
// splits, and blockSum's eight accumulators as two vectors, each lane
// adding the same elements in the same order from zero, so the result has
// the same bits. A node whose two halves are leaves folds both at once
// (leafPairFloat64).
func pairwiseSumFloat64(x []float64) float64 {
	if n := len(x); n > pairwiseBlock {
		h := n / 2
		h -= h % 8
		if s, ok := leafPairFloat64(x, h); ok {
			return s
		}
		return pairwiseSumFloat64(x[:h]) + pairwiseSumFloat64(x[h:])
	}
	var a, b archsimd.Float64x4
	for len(x) >= 8 {
		a = a.Add(archsimd.LoadFloat64x4Slice(x[0:4]))
		b = b.Add(archsimd.LoadFloat64x4Slice(x[4:8]))
		x = x[8:]
	}
	var r [8]float64
	a.Store((*[4]float64)(r[0:4]))
	b.Store((*[4]float64)(r[4:8]))
	clearUpper() // the scalar code below is legacy SSE
	s := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
	for _, v := range x {
		s += v
	}
	return s
}

// pairwiseSumFloat32 is pairwiseSumFloat64 for float32: the eight
// accumulators are one vector.
func pairwiseSumFloat32(x []float32) float32 {
	if n := len(x); n > pairwiseBlock {
		h := n / 2
		h -= h % 8
		if s, ok := leafPairFloat32(x, h); ok {
			return s
		}
		return pairwiseSumFloat32(x[:h]) + pairwiseSumFloat32(x[h:])
	}
	var a archsimd.Float32x8
	for len(x) >= 8 {
		a = a.Add(archsimd.LoadFloat32x8Slice(x[0:8]))
		x = x[8:]
	}
	var r [8]float32
	a.Store(&r)
	clearUpper()
	s := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
	for _, v := range x {
		s += v
	}
	return s
}

// Comparison codes of the compare loops.
const (
	cmpLess = iota
	cmpLessEqual
	cmpGreater
	cmpGreaterEqual
	cmpEqual
	cmpNotEqual
)

// bitBytes[b] holds 8 Bool elements, byte i being bit i of b: a comparison
// mask of 8 lanes (VMOVMSKPD/PS) becomes 8 output bytes with one load.
var bitBytes = func() (t [256]uint64) {
	for b := range t {
		for i := range 8 {
			t[b] |= uint64(b>>i&1) << (8 * i)
		}
	}
	return t
}()

// compareScalar is the comparison loop of the generated table (the tails
// of the vector loops).
func compareScalar[T integer | float](c int, d []uint8, xs, ys []T) {
	xs, ys = xs[:len(d)], ys[:len(d)]
	for i := range d {
		x, y := xs[i], ys[i]
		var r bool
		switch c {
		case cmpLess:
			r = x < y
		case cmpLessEqual:
			r = x <= y
		case cmpGreater:
			r = x > y
		case cmpGreaterEqual:
			r = x >= y
		case cmpEqual:
			r = x == y
		default:
			r = x != y
		}
		d[i] = b2u(r)
	}
}

// The constants of the comparison loops of compare_gen_amd64.go (written by
// gen_compare.go), which pack 32 lane masks (each lane all ones or zero)
// into 32 Bool bytes in vector registers: VPACKSSDW narrows pairs of masks
// to 16 bits (within each 128-bit half; 4-lane masks first pairwise to 32
// bits, their 4-byte pairs put in order by VPERMD with packHalves), VPSHUFB
// takes the low byte of each 16-bit lane into the low (first pair) or high
// (second pair) 8 bytes of each half, VPERMD puts the 4-byte groups back in
// element order, and an AND with 1 turns all ones into true. One 32-byte
// store instead of four table loads and four 8-byte stores.
var (
	packLowBytes, packHighBytes = func() (lo, hi [32]int8) {
		for g := range 2 {
			for i := range 8 {
				lo[16*g+i], lo[16*g+8+i] = int8(2*i), -1
				hi[16*g+i], hi[16*g+8+i] = -1, int8(2*i)
			}
		}
		return lo, hi
	}()
	packDwordOrder = [8]uint32{0, 4, 1, 5, 2, 6, 3, 7}
	packHalves     = [8]uint32{0, 1, 4, 5, 2, 3, 6, 7}
	packOnes       = [32]int8{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
)

// compareInt64 is compareInt32 for int64.
func compareInt64(c int, d []uint8, xs, ys []int64) {
	n := len(d)
	xs, ys = xs[:n], ys[:n]
	i := 0
	for ; i <= n-16; i += 16 {
		x, y := xs[i:i+16:i+16], ys[i:i+16:i+16]
		x0, y0 := archsimd.LoadInt64x4Slice(x[0:4]), archsimd.LoadInt64x4Slice(y[0:4])
		x1, y1 := archsimd.LoadInt64x4Slice(x[4:8]), archsimd.LoadInt64x4Slice(y[4:8])
		x2, y2 := archsimd.LoadInt64x4Slice(x[8:12]), archsimd.LoadInt64x4Slice(y[8:12])
		x3, y3 := archsimd.LoadInt64x4Slice(x[12:16]), archsimd.LoadInt64x4Slice(y[12:16])
		var b0, b1, b2, b3 uint8
		switch c {
		case cmpLess:
			b0, b1, b2, b3 = y0.Greater(x0).ToBits(), y1.Greater(x1).ToBits(), y2.Greater(x2).ToBits(), y3.Greater(x3).ToBits()
		case cmpLessEqual:
			b0, b1, b2, b3 = x0.LessEqual(y0).ToBits(), x1.LessEqual(y1).ToBits(), x2.LessEqual(y2).ToBits(), x3.LessEqual(y3).ToBits()
		case cmpGreater:
			b0, b1, b2, b3 = x0.Greater(y0).ToBits(), x1.Greater(y1).ToBits(), x2.Greater(y2).ToBits(), x3.Greater(y3).ToBits()
		case cmpGreaterEqual:
			b0, b1, b2, b3 = x0.GreaterEqual(y0).ToBits(), x1.GreaterEqual(y1).ToBits(), x2.GreaterEqual(y2).ToBits(), x3.GreaterEqual(y3).ToBits()
		case cmpEqual:
			b0, b1, b2, b3 = x0.Equal(y0).ToBits(), x1.Equal(y1).ToBits(), x2.Equal(y2).ToBits(), x3.Equal(y3).ToBits()
		default:
			b0, b1, b2, b3 = x0.NotEqual(y0).ToBits(), x1.NotEqual(y1).ToBits(), x2.NotEqual(y2).ToBits(), x3.NotEqual(y3).ToBits()
		}
		o := (*[2]uint64)(unsafe.Pointer(&d[i : i+16 : i+16][0]))
		o[0], o[1] = bitBytes[b0|b1<<4], bitBytes[b2|b3<<4]
	}
	clearUpper() // the scalar tail is legacy SSE
	compareScalar(c, d[i:], xs[i:], ys[i:])
}

// Arithmetic codes of the arith loops.
const (
	arithAdd = iota
	arithSub
	arithMul
)

// arithScalar is the generated loop of add, subtract or multiply.
func arithScalar[T integer | float](c int, d, xs, ys []T) {
	xs, ys = xs[:len(d)], ys[:len(d)]
	for i := range d {
		switch c {
		case arithAdd:
			d[i] = xs[i] + ys[i]
		case arithSub:
			d[i] = xs[i] - ys[i]
		default:
			d[i] = xs[i] * ys[i]
		}
	}
}

// arithFloat64 is d[i] = xs[i] op ys[i] for add, subtract or multiply,
// 16 elements an iteration.
func arithFloat64(c int, d, xs, ys []float64) {
	n := len(d)
	xs, ys = xs[:n], ys[:n]
	i := 0
	for ; i <= n-16; i += 16 {
		x, y, o := xs[i:i+16:i+16], ys[i:i+16:i+16], d[i:i+16:i+16]
		x0, y0 := archsimd.LoadFloat64x4Slice(x[0:4]), archsimd.LoadFloat64x4Slice(y[0:4])
		x1, y1 := archsimd.LoadFloat64x4Slice(x[4:8]), archsimd.LoadFloat64x4Slice(y[4:8])
		x2, y2 := archsimd.LoadFloat64x4Slice(x[8:12]), archsimd.LoadFloat64x4Slice(y[8:12])
		x3, y3 := archsimd.LoadFloat64x4Slice(x[12:16]), archsimd.LoadFloat64x4Slice(y[12:16])
		switch c {
		case arithAdd:
			x0, x1, x2, x3 = x0.Add(y0), x1.Add(y1), x2.Add(y2), x3.Add(y3)
		case arithSub:
			x0, x1, x2, x3 = x0.Sub(y0), x1.Sub(y1), x2.Sub(y2), x3.Sub(y3)
		default:
			x0, x1, x2, x3 = x0.Mul(y0), x1.Mul(y1), x2.Mul(y2), x3.Mul(y3)
		}
		x0.StoreSlice(o[0:4])
		x1.StoreSlice(o[4:8])
		x2.StoreSlice(o[8:12])
		x3.StoreSlice(o[12:16])
	}
	clearUpper() // the scalar tail is legacy SSE
	arithScalar(c, d[i:], xs[i:], ys[i:])
}

// arithFloat32 is arithFloat64 for float32.
func arithFloat32(c int, d, xs, ys []float32) {
	n := len(d)
	xs, ys = xs[:n], ys[:n]
	i := 0
	for ; i <= n-32; i += 32 {
		x, y, o := xs[i:i+32:i+32], ys[i:i+32:i+32], d[i:i+32:i+32]
		x0, y0 := archsimd.LoadFloat32x8Slice(x[0:8]), archsimd.LoadFloat32x8Slice(y[0:8])
		x1, y1 := archsimd.LoadFloat32x8Slice(x[8:16]), archsimd.LoadFloat32x8Slice(y[8:16])
		x2, y2 := archsimd.LoadFloat32x8Slice(x[16:24]), archsimd.LoadFloat32x8Slice(y[16:24])
		x3, y3 := archsimd.LoadFloat32x8Slice(x[24:32]), archsimd.LoadFloat32x8Slice(y[24:32])
		switch c {
		case arithAdd:
			x0, x1, x2, x3 = x0.Add(y0), x1.Add(y1), x2.Add(y2), x3.Add(y3)
		case arithSub:
			x0, x1, x2, x3 = x0.Sub(y0), x1.Sub(y1), x2.Sub(y2), x3.Sub(y3)
		default:
			x0, x1, x2, x3 = x0.Mul(y0), x1.Mul(y1), x2.Mul(y2), x3.Mul(y3)
		}
		x0.StoreSlice(o[0:8])
		x1.StoreSlice(o[8:16])
		x2.StoreSlice(o[16:24])
		x3.StoreSlice(o[24:32])
	}
	clearUpper() // the scalar tail is legacy SSE
	arithScalar(c, d[i:], xs[i:], ys[i:])
}

// arithInt32 is d[i] = xs[i] op ys[i] for add, subtract or multiply,
// wrapping on overflow.
func arithInt32(c int, d, xs, ys []int32) {
	n := len(d)
	xs, ys = xs[:n], ys[:n]
	i := 0
	for ; i <= n-32; i += 32 {
		x, y, o := xs[i:i+32:i+32], ys[i:i+32:i+32], d[i:i+32:i+32]
		x0, y0 := archsimd.LoadInt32x8Slice(x[0:8]), archsimd.LoadInt32x8Slice(y[0:8])
		x1, y1 := archsimd.LoadInt32x8Slice(x[8:16]), archsimd.LoadInt32x8Slice(y[8:16])
		x2, y2 := archsimd.LoadInt32x8Slice(x[16:24]), archsimd.LoadInt32x8Slice(y[16:24])
		x3, y3 := archsimd.LoadInt32x8Slice(x[24:32]), archsimd.LoadInt32x8Slice(y[24:32])
		switch c {
		case arithAdd:
			x0, x1, x2, x3 = x0.Add(y0), x1.Add(y1), x2.Add(y2), x3.Add(y3)
		case arithSub:
			x0, x1, x2, x3 = x0.Sub(y0), x1.Sub(y1), x2.Sub(y2), x3.Sub(y3)
		default:
			x0, x1, x2, x3 = x0.Mul(y0), x1.Mul(y1), x2.Mul(y2), x3.Mul(y3)
		}
		x0.StoreSlice(o[0:8])
		x1.StoreSlice(o[8:16])
		x2.StoreSlice(o[16:24])
		x3.StoreSlice(o[24:32])
	}
	clearUpper() // the scalar tail is legacy SSE
	arithScalar(c, d[i:], xs[i:], ys[i:])
}

// arithInt64 is arithInt32 for int64 add and subtract.
func arithInt64(c int, d, xs, ys []int64) {
	n := len(d)
	xs, ys = xs[:n], ys[:n]
	i := 0
	for ; i <= n-16; i += 16 {
		x, y, o := xs[i:i+16:i+16], ys[i:i+16:i+16], d[i:i+16:i+16]
		x0, y0 := archsimd.LoadInt64x4Slice(x[0:4]), archsimd.LoadInt64x4Slice(y[0:4])
		x1, y1 := archsimd.LoadInt64x4Slice(x[4:8]), archsimd.LoadInt64x4Slice(y[4:8])
		x2, y2 := archsimd.LoadInt64x4Slice(x[8:12]), archsimd.LoadInt64x4Slice(y[8:12])
		x3, y3 := archsimd.LoadInt64x4Slice(x[12:16]), archsimd.LoadInt64x4Slice(y[12:16])
		if c == arithAdd {
			x0, x1, x2, x3 = x0.Add(y0), x1.Add(y1), x2.Add(y2), x3.Add(y3)
		} else {
			x0, x1, x2, x3 = x0.Sub(y0), x1.Sub(y1), x2.Sub(y2), x3.Sub(y3)
		}
		x0.StoreSlice(o[0:4])
		x1.StoreSlice(o[4:8])
		x2.StoreSlice(o[8:12])
		x3.StoreSlice(o[12:16])
	}
	clearUpper() // the scalar tail is legacy SSE
	arithScalar(c, d[i:], xs[i:], ys[i:])
}

// sqrtFloat64 is d[i] = math.Sqrt(xs[i]) with VSQRTPD (correctly rounded,
// as math.Sqrt: the same bits).
func sqrtFloat64(d, xs []float64) {
	xs = xs[:len(d)]
	for len(d) >= 8 {
		archsimd.LoadFloat64x4Slice(xs[0:4]).Sqrt().StoreSlice(d[0:4])
		archsimd.LoadFloat64x4Slice(xs[4:8]).Sqrt().StoreSlice(d[4:8])
		d, xs = d[8:], xs[8:]
	}
	clearUpper() // the scalar tail is legacy SSE
	sqrtFloatLoop(d, xs)
}

// sqrtFloat32 is d[i] = float32(math.Sqrt(float64(xs[i]))) with VSQRTPS:
// rounding the float64 root to float32 gives the correctly rounded float32
// root (53 ≥ 2×24+2 bits), so the bits are the same.
func sqrtFloat32(d, xs []float32) {
	xs = xs[:len(d)]
	for len(d) >= 16 {
		archsimd.LoadFloat32x8Slice(xs[0:8]).Sqrt().StoreSlice(d[0:8])
		archsimd.LoadFloat32x8Slice(xs[8:16]).Sqrt().StoreSlice(d[8:16])
		d, xs = d[16:], xs[16:]
	}
	clearUpper() // the scalar tail is legacy SSE
	sqrtFloatLoop(d, xs)
}

// negativeFloat64 is d[i] = -xs[i]: the sign bit flipped, as Go's negation
// does (NaNs and zeros included).
func negativeFloat64(d, xs []float64) {
	xs = xs[:len(d)]
	sign := archsimd.BroadcastUint64x4(1 << 63)
	for len(d) >= 16 {
		x0 := archsimd.LoadFloat64x4Slice(xs[0:4]).AsUint64x4()
		x1 := archsimd.LoadFloat64x4Slice(xs[4:8]).AsUint64x4()
		x2 := archsimd.LoadFloat64x4Slice(xs[8:12]).AsUint64x4()
		x3 := archsimd.LoadFloat64x4Slice(xs[12:16]).AsUint64x4()
		x0.Xor(sign).AsFloat64x4().StoreSlice(d[0:4])
		x1.Xor(sign).AsFloat64x4().StoreSlice(d[4:8])
		x2.Xor(sign).AsFloat64x4().StoreSlice(d[8:12])
		x3.Xor(sign).AsFloat64x4().StoreSlice(d[12:16])
		d, xs = d[16:], xs[16:]
	}
	clearUpper() // the scalar tail is legacy SSE
	negativeIntUintFloatComplexLoop(d, xs)
}

// negativeFloat32 is negativeFloat64 for float32.
func negativeFloat32(d, xs []float32) {
	xs = xs[:len(d)]
	sign := archsimd.BroadcastUint32x8(1 << 31)
	for len(d) >= 32 {
		x0 := archsimd.LoadFloat32x8Slice(xs[0:8]).AsUint32x8()
		x1 := archsimd.LoadFloat32x8Slice(xs[8:16]).AsUint32x8()
		x2 := archsimd.LoadFloat32x8Slice(xs[16:24]).AsUint32x8()
		x3 := archsimd.LoadFloat32x8Slice(xs[24:32]).AsUint32x8()
		x0.Xor(sign).AsFloat32x8().StoreSlice(d[0:8])
		x1.Xor(sign).AsFloat32x8().StoreSlice(d[8:16])
		x2.Xor(sign).AsFloat32x8().StoreSlice(d[16:24])
		x3.Xor(sign).AsFloat32x8().StoreSlice(d[24:32])
		d, xs = d[32:], xs[32:]
	}
	clearUpper() // the scalar tail is legacy SSE
	negativeIntUintFloatComplexLoop(d, xs)
}

// float64ToFloat32 is d[i] = float32(xs[i]) with VCVTPD2PS, the vector form
// of the CVTSD2SS Go's conversion compiles to: rounded to nearest even
// under the default MXCSR, NaNs quieted with their upper payload bits kept.
func float64ToFloat32(d []float32, xs []float64) {
	xs = xs[:len(d)]
	for len(d) >= 16 {
		x0 := archsimd.LoadFloat64x4Slice(xs[0:4]).ConvertToFloat32()
		x1 := archsimd.LoadFloat64x4Slice(xs[4:8]).ConvertToFloat32()
		x2 := archsimd.LoadFloat64x4Slice(xs[8:12]).ConvertToFloat32()
		x3 := archsimd.LoadFloat64x4Slice(xs[12:16]).ConvertToFloat32()
		x0.StoreSlice(d[0:4])
		x1.StoreSlice(d[4:8])
		x2.StoreSlice(d[8:12])
		x3.StoreSlice(d[12:16])
		d, xs = d[16:], xs[16:]
	}
	clearUpper() // the scalar tail is legacy SSE
	convertLoop(d, xs)
}
