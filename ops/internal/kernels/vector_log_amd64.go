//go:build goexperiment.simd && amd64

package kernels

import (
	"math"
	"simd/archsimd"
)

// Vector log (AVX2 + FMA), four float64 lanes at a time.
//
// For positive normal finite x: x = 2^k·m with m in [√2/2, √2), found from
// the bits (subtracting the bits of √2/2 makes the exponent field k's), and
// log(x) = k·ln2 + log(1+f), f = m − 1. With s = f/(2+f),
// log(1+f) = 2·atanh(s) = f − s·(f − R), R ≈ Σ 2s^(2n)/(2n+1). For
// |s| ≤ 0.1716, R is the classic scalar log's (fdlibm's, and Go's
// math.Log's) minimax polynomial of degree 7 in s², whose error is below
// 2^-58; the Taylor series needs ten terms for the same. The terms are
// combined as in that scalar log, f − (f²/2 − s·(f²/2 + R)), so that only
// small corrections are rounded before the last subtraction, and k·ln2 is
// split in an exact k·ln2Hi and a small k·ln2Lo. Zero, negative and
// subnormal inputs, infinities and NaN are computed by logF, the generated
// loop's function, so special values have its bits.

// logCoef are the coefficients of R in powers of s², from s² up: fdlibm's
// Lg1–Lg7 (Go's math.Log has them as L1–L7).
var logCoef = [7]float64{
	6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01,
	2.222219843214978396e-01, 1.818357216161805012e-01, 1.531383769920937332e-01,
	1.479819860511658591e-01,
}

type logConsts struct {
	minNormal, inf, one, two, half, ln2Hi, ln2Lo, kBias, twoM32 archsimd.Float64x4
	offset, mantissa, sqrtHalf, highWord, expField              archsimd.Uint64x4
	c                                                           [len(logCoef)]archsimd.Float64x4
}

func newLogConsts() logConsts {
	l := logConsts{
		minNormal: archsimd.BroadcastFloat64x4(0x1p-1022),
		inf:       archsimd.BroadcastFloat64x4(math.Inf(1)),
		one:       archsimd.BroadcastFloat64x4(1),
		two:       archsimd.BroadcastFloat64x4(2),
		half:      archsimd.BroadcastFloat64x4(0.5),
		ln2Hi:     archsimd.BroadcastFloat64x4(ln2Hi),
		ln2Lo:     archsimd.BroadcastFloat64x4(ln2Lo),
		kBias:     archsimd.BroadcastFloat64x4(0x1p52 + 1023*0x1p32),
		twoM32:    archsimd.BroadcastFloat64x4(0x1p-32),
		// 1.0's bits minus √2/2's: added to x's bits, the exponent field
		// becomes k+1023 and the mantissa field m's offset by √2/2's.
		offset:   archsimd.BroadcastUint64x4(0x3ff0000000000000 - 0x3fe6a09e667f3bcd),
		mantissa: archsimd.BroadcastUint64x4(1<<52 - 1),
		sqrtHalf: archsimd.BroadcastUint64x4(0x3fe6a09e667f3bcd),
		highWord: archsimd.BroadcastUint64x4(0xffffffff00000000),
		expField: archsimd.BroadcastUint64x4(0x4330000000000000), // 2^52's bits
	}
	for i, c := range logCoef {
		l.c[i] = archsimd.BroadcastFloat64x4(c)
	}
	return l
}

// outside returns the mask (bit i for lane i) of the lanes of x that
// logVec does not compute: zero, negative, subnormal, infinite or NaN.
func (l *logConsts) outside(x archsimd.Float64x4) uint64 {
	return uint64(^x.GreaterEqual(l.minNormal).And(x.Less(l.inf)).ToBits()) & (1<<lanesFloat64 - 1)
}

// logVec is log of four positive normal finite lanes.
func (l *logConsts) logVec(x archsimd.Float64x4) archsimd.Float64x4 {
	u := x.AsUint64x4().Add(l.offset)
	m := u.And(l.mantissa).Add(l.sqrtHalf).AsFloat64x4()
	// k+1023 is u's top 12 bits: shifted down within the high 32-bit word
	// (Go 1.26 emits logical 64-bit vector shifts by a constant through a
	// legacy-SSE register move, which stalls while the upper halves are
	// dirty; the arithmetic 32-bit shift takes an immediate), it is placed
	// under 2^52's exponent as kb·2^32, so k = (that − 2^52 − 1023·2^32)·2^−32,
	// exactly.
	kb := u.AsInt32x8().ShiftAllRight(20).AsUint64x4().And(l.highWord)
	k := kb.Or(l.expField).AsFloat64x4().Sub(l.kBias).Mul(l.twoM32)
	f := m.Sub(l.one)
	s := f.Div(l.two.Add(f))
	z := s.Mul(s)
	c := &l.c
	p := c[6].MulAdd(z, c[5])
	p = p.MulAdd(z, c[4])
	p = p.MulAdd(z, c[3])
	p = p.MulAdd(z, c[2])
	p = p.MulAdd(z, c[1])
	p = p.MulAdd(z, c[0])
	hfsq := l.half.Mul(f).Mul(f)
	// hfsq + R = p·z + hfsq; k·ln2Hi is exact, so the last sum rounds once.
	t := s.MulAdd(p.MulAdd(z, hfsq), k.Mul(l.ln2Lo))
	return k.MulAdd(l.ln2Hi, f.Sub(hfsq.Sub(t)))
}

// logFloat64 is d[i] = logF(xs[i]), each result depending only on its
// element, as in expFloat64.
func logFloat64(d, xs []float64) {
	xs = xs[:len(d)]
	l := newLogConsts()
	for len(d) >= lanesFloat64 {
		x := archsimd.LoadFloat64x4Slice(xs[:lanesFloat64])
		l.logVec(x).StoreSlice(d[:lanesFloat64])
		if out := l.outside(x); out != 0 {
			clearUpper() // the scalar code is legacy SSE
			for i, v := range xs[:lanesFloat64] {
				if out>>i&1 != 0 {
					d[i] = logF(v)
				}
			}
		}
		d, xs = d[lanesFloat64:], xs[lanesFloat64:]
	}
	if len(d) > 0 {
		var buf [lanesFloat64]float64
		for i := range buf {
			buf[i] = 1 // log(1) is computed by the vector, whatever the padding
		}
		copy(buf[:], xs)
		x := archsimd.LoadFloat64x4Slice(buf[:])
		out := l.outside(x)
		l.logVec(x).StoreSlice(buf[:])
		clearUpper()
		for i, v := range xs {
			d[i] = buf[i]
			if out>>i&1 != 0 {
				d[i] = logF(v)
			}
		}
	}
}

// Vector log of float32, eight float32 lanes at a time: the same method in
// float32 arithmetic for positive normal finite x, with four terms of R
// (truncation below 2e-9 relative) and ln2 split as 0.693359375 plus a
// float32 ln2Lo. Results are within 1 ULP of the loop's (logF in float64,
// rounded); numpy's float32 SIMD log allows 3.8 ULP. Other lanes are
// computed as the loop does.

type log32Consts struct {
	minNormal, inf, one, two, half, ln2Hi, ln2Lo archsimd.Float32x8
	offset, mantissa, sqrtHalf, bias             archsimd.Int32x8
	c                                            [4]archsimd.Float32x8
}

func newLog32Consts() log32Consts {
	l := log32Consts{
		minNormal: archsimd.BroadcastFloat32x8(0x1p-126),
		inf:       archsimd.BroadcastFloat32x8(float32(math.Inf(1))),
		one:       archsimd.BroadcastFloat32x8(1),
		two:       archsimd.BroadcastFloat32x8(2),
		half:      archsimd.BroadcastFloat32x8(0.5),
		ln2Hi:     archsimd.BroadcastFloat32x8(ln2Hi32),
		ln2Lo:     archsimd.BroadcastFloat32x8(float32(math.Ln2 - ln2Hi32)),
		// As in logVec: 1.0's bits minus √2/2's (float32).
		offset:   archsimd.BroadcastInt32x8(0x3f800000 - 0x3f3504f3),
		mantissa: archsimd.BroadcastInt32x8(1<<23 - 1),
		sqrtHalf: archsimd.BroadcastInt32x8(0x3f3504f3),
		bias:     archsimd.BroadcastInt32x8(127),
	}
	for i := range l.c {
		l.c[i] = archsimd.BroadcastFloat32x8(2 / float32(2*i+3)) // Taylor: 2/3, 2/5, 2/7, 2/9
	}
	return l
}

// outside returns the mask of the lanes of x that are zero, negative,
// subnormal, infinite or NaN.
func (l *log32Consts) outside(x archsimd.Float32x8) uint64 {
	return uint64(^x.GreaterEqual(l.minNormal).And(x.Less(l.inf)).ToBits()) & (1<<lanesFloat32 - 1)
}

// logVec is log of eight positive normal finite lanes.
func (l *log32Consts) logVec(x archsimd.Float32x8) archsimd.Float32x8 {
	u := x.AsInt32x8().Add(l.offset)
	m := u.And(l.mantissa).Add(l.sqrtHalf).AsFloat32x8()
	k := u.ShiftAllRight(23).Sub(l.bias).ConvertToFloat32()
	f := m.Sub(l.one)
	s := f.Div(l.two.Add(f))
	z := s.Mul(s)
	c := &l.c
	p := c[3].MulAdd(z, c[2])
	p = p.MulAdd(z, c[1])
	p = p.MulAdd(z, c[0])
	r := p.Mul(z)
	hfsq := l.half.Mul(f).Mul(f)
	t := s.MulAdd(hfsq.Add(r), k.Mul(l.ln2Lo))
	return k.Mul(l.ln2Hi).Sub(hfsq.Sub(t).Sub(f))
}

// logFloat32 is d[i] = float32(logF(float64(xs[i]))) within 1 ULP, each
// result depending only on its element.
func logFloat32(d, xs []float32) {
	xs = xs[:len(d)]
	l := newLog32Consts()
	for len(d) >= lanesFloat32 {
		x := archsimd.LoadFloat32x8Slice(xs[:lanesFloat32])
		l.logVec(x).StoreSlice(d[:lanesFloat32])
		if out := l.outside(x); out != 0 {
			clearUpper() // the scalar code is legacy SSE
			for i, v := range xs[:lanesFloat32] {
				if out>>i&1 != 0 {
					d[i] = float32(logF(float64(v)))
				}
			}
		}
		d, xs = d[lanesFloat32:], xs[lanesFloat32:]
	}
	if len(d) > 0 {
		var buf [lanesFloat32]float32
		for i := range buf {
			buf[i] = 1 // log(1) is computed by the vector, whatever the padding
		}
		copy(buf[:], xs)
		x := archsimd.LoadFloat32x8Slice(buf[:])
		out := l.outside(x)
		l.logVec(x).StoreSlice(buf[:])
		clearUpper()
		for i, v := range xs {
			d[i] = buf[i]
			if out>>i&1 != 0 {
				d[i] = float32(logF(float64(v)))
			}
		}
	}
}
