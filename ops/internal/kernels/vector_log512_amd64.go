//go:build goexperiment.simd && amd64

package kernels

import (
	"math"
	"simd/archsimd"
)

// Vector log in AVX-512, eight float64 or sixteen float32 lanes at a
// time: the AVX2 methods of vector_log_amd64.go (fdlibm's reduction and
// polynomial), with the same arithmetic and so the same result bits,
// written for the wider unit rather than generated from the AVX2 code
// (gen_math512.go).
//
// Every 512-bit floating-point instruction issues on one port of the CPUs
// measured (see vector_exp512_amd64.go), so the speed is the count of
// those, and of the loads of constants. Three changes from the AVX2 code
// make float64 log 1.04–1.21× and float32 log 1.10–1.16× as fast as that
// code generated for AVX-512 (best of 30 calls over 1 M elements, six
// rounds, the order of the two alternating):
//   - k comes from x's bits less √2/2's by an arithmetic shift and a
//     conversion; for float64 (VPSRAQ, VCVTQQ2PD, both AVX-512 only) AVX2
//     builds it under 2^52's exponent with five operations, two of them
//     floating-point, and for float32 it subtracts the bias once more;
//   - the constants are passed as arguments, so Go keeps them in
//     registers instead of loading them at every use;
//   - two vectors are computed per iteration, with one test for lanes
//     outside the vector's domain.
// Replacing the division by VRCP14PD and a Newton step was measured too:
// seven floating-point instructions cost more than the one division
// (0.94×).

// logVec512 is log of eight positive normal finite lanes. k·ln2Hi is exact
// (k has at most 11 significant bits and ln2Hi 32), so the last sum rounds
// once, as in the AVX2 logVec.
func logVec512(x archsimd.Float64x8, sqrtHalf, mant archsimd.Int64x8, one, two, half, ln2Hi, ln2Lo, c0, c1, c2, c3, c4, c5, c6 archsimd.Float64x8) archsimd.Float64x8 {
	// u's exponent field is k and its mantissa field m's offset by √2/2's,
	// for m in [√2/2, √2): x = 2^k·m.
	u := x.AsInt64x8().Sub(sqrtHalf)
	m := u.And(mant).Add(sqrtHalf).AsFloat64x8()
	k := u.ShiftAllRight(52).ConvertToFloat64()
	f := m.Sub(one)
	s := f.Div(two.Add(f))
	z := s.Mul(s)
	p := c6.MulAdd(z, c5)
	p = p.MulAdd(z, c4)
	p = p.MulAdd(z, c3)
	p = p.MulAdd(z, c2)
	p = p.MulAdd(z, c1)
	p = p.MulAdd(z, c0)
	hfsq := half.Mul(f).Mul(f)
	t := s.MulAdd(p.MulAdd(z, hfsq), k.Mul(ln2Lo))
	return k.MulAdd(ln2Hi, f.Sub(hfsq.Sub(t)))
}

// logFloat64AVX512 is d[i] = logF(xs[i]) with logFloat64's bits, each
// result depending only on its element.
func logFloat64AVX512(d, xs []float64) {
	const w = lanes512Float64
	xs = xs[:len(d)]
	sqrtHalf := archsimd.BroadcastInt64x8(0x3fe6a09e667f3bcd)
	mant := archsimd.BroadcastInt64x8(1<<52 - 1)
	one := archsimd.BroadcastFloat64x8(1)
	two := archsimd.BroadcastFloat64x8(2)
	half := archsimd.BroadcastFloat64x8(0.5)
	hi := archsimd.BroadcastFloat64x8(ln2Hi)
	lo := archsimd.BroadcastFloat64x8(ln2Lo)
	var c [len(logCoef)]archsimd.Float64x8
	for i, v := range logCoef {
		c[i] = archsimd.BroadcastFloat64x8(v)
	}
	c0, c1, c2, c3, c4, c5, c6 := c[0], c[1], c[2], c[3], c[4], c[5], c[6]
	minNormal := archsimd.BroadcastFloat64x8(0x1p-1022)
	inf := archsimd.BroadcastFloat64x8(math.Inf(1))
	for len(d) >= 2*w {
		x0 := archsimd.LoadFloat64x8Slice(xs[:w])
		x1 := archsimd.LoadFloat64x8Slice(xs[w : 2*w])
		logVec512(x0, sqrtHalf, mant, one, two, half, hi, lo, c0, c1, c2, c3, c4, c5, c6).StoreSlice(d[:w])
		logVec512(x1, sqrtHalf, mant, one, two, half, hi, lo, c0, c1, c2, c3, c4, c5, c6).StoreSlice(d[w : 2*w])
		in := x0.GreaterEqual(minNormal).And(x0.Less(inf)).And(x1.GreaterEqual(minNormal).And(x1.Less(inf)))
		if in.ToBits() != 1<<w-1 {
			redoLogOutside(d[:2*w], xs[:2*w])
		}
		d, xs = d[2*w:], xs[2*w:]
	}
	for len(d) > 0 {
		var buf [w]float64
		for i := range buf {
			buf[i] = 1 // log(1) is computed by the vector, whatever the padding
		}
		n := copy(buf[:], xs)
		logVec512(archsimd.LoadFloat64x8Slice(buf[:]), sqrtHalf, mant, one, two, half, hi, lo, c0, c1, c2, c3, c4, c5, c6).StoreSlice(buf[:])
		copy(d, buf[:n])
		redoLogOutside(d[:n], xs[:n])
		d, xs = d[n:], xs[n:]
	}
}

// redoLogOutside recomputes by logF the elements of d whose input is
// outside logVec512's domain: zero, negative, subnormal, infinite or NaN.
func redoLogOutside(d, xs []float64) {
	clearUpper() // the scalar code is legacy SSE
	for i, v := range xs {
		if !(v >= 0x1p-1022 && v < math.Inf(1)) {
			d[i] = logF(v)
		}
	}
}

// logVec512Float32 is log of sixteen positive normal finite float32 lanes,
// the AVX2 logVec of log32Consts.
func logVec512Float32(x archsimd.Float32x16, sqrtHalf, mant archsimd.Int32x16, one, two, half, ln2Hi, ln2Lo, c0, c1, c2, c3 archsimd.Float32x16) archsimd.Float32x16 {
	u := x.AsInt32x16().Sub(sqrtHalf)
	m := u.And(mant).Add(sqrtHalf).AsFloat32x16()
	k := u.ShiftAllRight(23).ConvertToFloat32()
	f := m.Sub(one)
	s := f.Div(two.Add(f))
	z := s.Mul(s)
	p := c3.MulAdd(z, c2)
	p = p.MulAdd(z, c1)
	p = p.MulAdd(z, c0)
	r := p.Mul(z)
	hfsq := half.Mul(f).Mul(f)
	t := s.MulAdd(hfsq.Add(r), k.Mul(ln2Lo))
	return k.Mul(ln2Hi).Sub(hfsq.Sub(t).Sub(f))
}

// logFloat32AVX512 is d[i] = logFloat32's bits, each result depending only
// on its element.
func logFloat32AVX512(d, xs []float32) {
	const w = lanes512Float32
	xs = xs[:len(d)]
	sqrtHalf := archsimd.BroadcastInt32x16(0x3f3504f3)
	mant := archsimd.BroadcastInt32x16(1<<23 - 1)
	one := archsimd.BroadcastFloat32x16(1)
	two := archsimd.BroadcastFloat32x16(2)
	half := archsimd.BroadcastFloat32x16(0.5)
	hi := archsimd.BroadcastFloat32x16(ln2Hi32)
	lo := archsimd.BroadcastFloat32x16(float32(math.Ln2 - ln2Hi32))
	var c [4]archsimd.Float32x16
	for i := range c {
		c[i] = archsimd.BroadcastFloat32x16(2 / float32(2*i+3)) // as newLog32Consts
	}
	c0, c1, c2, c3 := c[0], c[1], c[2], c[3]
	minNormal := archsimd.BroadcastFloat32x16(0x1p-126)
	inf := archsimd.BroadcastFloat32x16(float32(math.Inf(1)))
	for len(d) >= 2*w {
		x0 := archsimd.LoadFloat32x16Slice(xs[:w])
		x1 := archsimd.LoadFloat32x16Slice(xs[w : 2*w])
		logVec512Float32(x0, sqrtHalf, mant, one, two, half, hi, lo, c0, c1, c2, c3).StoreSlice(d[:w])
		logVec512Float32(x1, sqrtHalf, mant, one, two, half, hi, lo, c0, c1, c2, c3).StoreSlice(d[w : 2*w])
		in := x0.GreaterEqual(minNormal).And(x0.Less(inf)).And(x1.GreaterEqual(minNormal).And(x1.Less(inf)))
		if in.ToBits() != 1<<w-1 {
			redoLog32Outside(d[:2*w], xs[:2*w])
		}
		d, xs = d[2*w:], xs[2*w:]
	}
	for len(d) > 0 {
		var buf [w]float32
		for i := range buf {
			buf[i] = 1
		}
		n := copy(buf[:], xs)
		logVec512Float32(archsimd.LoadFloat32x16Slice(buf[:]), sqrtHalf, mant, one, two, half, hi, lo, c0, c1, c2, c3).StoreSlice(buf[:])
		copy(d, buf[:n])
		redoLog32Outside(d[:n], xs[:n])
		d, xs = d[n:], xs[n:]
	}
}

// redoLog32Outside is redoLogOutside for float32.
func redoLog32Outside(d, xs []float32) {
	clearUpper()
	for i, v := range xs {
		if !(v >= 0x1p-126 && v < float32(math.Inf(1))) {
			d[i] = float32(logF(float64(v)))
		}
	}
}
