//go:build goexperiment.simd && amd64

package kernels

import (
	"math"
	"math/big"
	"simd/archsimd"
)

// Vector log in AVX-512, eight float64 or sixteen float32 lanes at a
// time. float32 log is the AVX2 method of vector_log_amd64.go (fdlibm's
// reduction and polynomial), with the same arithmetic and so the same
// result bits. float64 log has a method of its own, with a table and no
// division; its results are within 1 ULP of the AVX2 loop's, not equal.
//
// Every 512-bit floating-point instruction issues on one port of the CPUs
// measured (see vector_exp512_amd64.go), so the speed is the count of
// those; integer operations and permutes issue on another port. fdlibm's
// method costs eighteen floating-point instructions per eight float64
// lanes and a division (VDIVPD, also on that port; VRCP14PD and a Newton
// step instead cost seven more instructions and ran at 0.94×). The table
// method below costs seventeen, no division and no shift (a shift takes
// that port too: k and j come out of u by a mask and a byte permute). It
// is 1.15–1.25× as fast over 64 Ki elements, in L2 (best of 240 calls,
// the two kernels' calls interleaved, eight rounds with the order
// alternating, inputs in [0.5, 1.5) or positive of every magnitude), and
// 1.02–1.09× over 1 Mi elements, where both wait on memory.
//
// float64: x = 2^k·m with m in [1 − 31/2048, 2 − 31/1024): with
// u = bits(x) − log512Base, k is u's exponent field, signed, m's bits u's
// mantissa field plus log512Base. The top four bits of that field, j,
// split m's range into sixteen intervals of 2^48 doubles; interval 0 holds
// 1.0 (31/2048 of m below it, 33/1024 above). For each interval the table
// holds invc ≈ 1/c for a c inside it, and log c. Then
// log x = k·ln2 + log c + log1p(r), r = m·invc − 1 (one FMA), with
// −0.0295 < r < 0.0323, and log1p(r) = r + r²·Q(r), Q of degree 7
// (logQCoef). Interval 0 has invc = 1 and log c = 0, so that near x = 1,
// r = x − 1 exactly and nothing is lost to cancellation.
//
// The sum is arranged so that only r's rounding, Q's error and the last
// rounding reach the result:
//   - hi = (k + j/16)·ln2Hi + T_j is exact: u's top sixteen bits, read as
//     an integer, are (16k + j)·2^48 and convert exactly; ln2Hi has 33
//     significant bits, T_j = log c − (j/16)·(ln2Hi + ln2Lo) is a multiple
//     of 2^-37, and |hi| < 2^10. The table's invc were found by a search
//     near each interval's middle (as in glibc's log) for one whose log c
//     lies within 2^-66 of such a T_j, so log c needs no low part.
//   - w = hi + r and its rounding error come out exactly (Fast2Sum: hi is
//     0, or its exponent is at least r's).
//   - (k + j/16)·ln2Lo, that error and r²·Q(r) are added at the scale of
//     the small terms, and the last addition, to w, rounds once.
// r's rounding is at most half its ULP. Where the result can be as small
// as r (k = 0 above interval 0, k = −1 below it) each c is placed so that
// this is at most a quarter of the result's ULP (interval 15, which holds
// the x just below interval 0, has its c off the middle for that). Q's
// error is at most 0.17 ULP of log1p(r), at the ends of r's range. The
// largest error measured, over 600,000 inputs dense around the intervals'
// edges and 1, is 0.81 ULP from the exact value; fdlibm's method reached
// 0.83 on the same inputs.
//
// Lanes outside [2^-1022, +Inf) are recomputed by logF, with one test per
// pair of vectors.

// log512Base is bits(1 − 31/2048), the smallest m.
const log512Base = 0x3fef840000000000

// log512Table holds, for each interval j of m, invc (row 0) and
// T_j = log c − (j/16)·(ln2Hi + ln2Lo), c = 1/invc (row 1). For j ≥ 1 the
// search took n = n0, n0 + 1, n0 − 1, n0 + 2, … and the first
// T = n·2^-37 for which invc = RN(e^−(T + (j/16)·(ln2Hi + ln2Lo))) is
// within a factor 1 ± 2^-66 of the exact power; n0 is nearest to the T of
// invc = 2/(lo + hi), lo and hi the interval's ends, except in interval 15:
// invc = (1 + 2^-7 − 2^-12)/hi, so that r < 2^-7 at its top.
// TestLog512Table checks what the method needs of the table.
var log512Table = [2][16]float64{
	{
		1, 0x1.e17098fab40bcp-01, 0x1.c6b7659f81c6ep-01, 0x1.aecdb9333cd69p-01,
		0x1.9947bf0e1a726p-01, 0x1.85ce21e4a3d0ap-01, 0x1.74196fc5984ccp-01, 0x1.63ee9de9e368p-01,
		0x1.551c7a13a283bp-01, 0x1.4779aeb169c93p-01, 0x1.3ae33ffdfc8a3p-01, 0x1.2f3b5f590020ep-01,
		0x1.246884d8cb1cfp-01, 0x1.1a54a500c2b39p-01, 0x1.10ecacafb465dp-01, 0x1.05e6df126925ap-01,
	},
	{
		0, 0x1.2a8b2bdcp-06, 0x1.063432b8p-05, 0x1.5ddb82e7p-05,
		0x1.9ed2e8b7p-05, 0x1.cb5132dcp-05, 0x1.e53dadbcp-05, 0x1.ee3ef797p-05,
		0x1.e7c576bep-05, 0x1.d3148dd4p-05, 0x1.b149b18cp-05, 0x1.8362204bp-05,
		0x1.4a3eebp-05, 0x1.06aa60ecp-05, 0x1.72b2aab6p-06, 0x1.505a61bep-06,
	},
}

// logQRange holds r = m·invc − 1 for every m (TestLog512Table); logQCoef
// fits Q on it.
var logQRange = [2]float64{-0.0295, 0.0323}

// logQCoef are the coefficients, from r⁰ up, of the polynomial of degree 7
// that equals Q(r) = (log1p(r) − r)/r² = −1/2 + r/3 − r²/4 + … at the eight
// Chebyshev points of logQRange: nearly the best of its degree. Q's values
// and the 8×8 system are computed in 128-bit arithmetic, so that the only
// rounding is the coefficients' own. (Degree 8 makes the error negligible,
// 0.003 ULP, but the instruction it adds made the loop 6% slower.)
var logQCoef = func() (c [8]float64) {
	const n, prec = len(c), 128
	lo, hi := logQRange[0], logQRange[1]
	num := func(v float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(v) }
	var a [n][n + 1]*big.Float
	for i := range n {
		r := num((lo+hi)/2 + (hi-lo)/2*math.Cos(float64(2*i+1)*math.Pi/float64(2*n)))
		q, p := num(0), num(1) // p = r^m
		for m := range 32 {    // |r|^32/34 < 2^-163
			t := num(0).Quo(p, num(float64(m+2)))
			if m%2 == 0 {
				t.Neg(t)
			}
			q.Add(q, t)
			if m < n {
				a[i][m] = num(0).Set(p)
			}
			p.Mul(p, r)
		}
		a[i][n] = q
	}
	for col := range n { // Gauss–Jordan elimination with partial pivoting
		piv := col
		for i := col + 1; i < n; i++ {
			if new(big.Float).Abs(a[i][col]).Cmp(new(big.Float).Abs(a[piv][col])) > 0 {
				piv = i
			}
		}
		a[col], a[piv] = a[piv], a[col]
		for i := range n {
			if i == col {
				continue
			}
			f := num(0).Quo(a[i][col], a[col][col])
			for m := col; m <= n; m++ {
				a[i][m].Sub(a[i][m], num(0).Mul(f, a[col][m]))
			}
		}
	}
	for m := range n {
		c[m], _ = num(0).Quo(a[m][n], a[m][m]).Float64()
	}
	return c
}()

// logVec512 is log of eight positive normal finite lanes (see above), with
// the constants passed as arguments: Go keeps some in registers and loads
// the rest, where it would load every field of a struct at every use.
// ln2Hi52 and ln2Lo52 are ln2Hi·2^-52 and ln2Lo·2^-52.
func logVec512(x archsimd.Float64x8, base, mant, top archsimd.Int64x8, negOne, ln2Hi52, ln2Lo52, inv0, inv1, t0, t1, c0, c1, c2, c3, c4, c5, c6, c7 archsimd.Float64x8) archsimd.Float64x8 {
	u := x.AsInt64x8().Sub(base)
	m := u.And(mant).Add(base).AsFloat64x8()
	kj := u.And(top).ConvertToFloat64() // (16k + j)·2^48
	// Moving each lane's bytes down by six (a permute: a shift would take
	// the floating-point instructions' port) brings j to the low four
	// bits, which are all that the table's permutes read.
	b := u.AsUint8x64()
	j := b.ConcatShiftBytesRightGrouped(6, b).AsUint64x8()
	r := m.MulAdd(inv0.ConcatPermute(inv1, j), negOne)
	hi := kj.MulAdd(ln2Hi52, t0.ConcatPermute(t1, j)) // exact
	w := hi.Add(r)
	lo := kj.MulAdd(ln2Lo52, hi.Sub(w).Add(r)) // w's rounding error, exactly, plus (k + j/16)·ln2Lo
	q := c7.MulAdd(r, c6)
	q = q.MulAdd(r, c5)
	q = q.MulAdd(r, c4)
	q = q.MulAdd(r, c3)
	q = q.MulAdd(r, c2)
	q = q.MulAdd(r, c1)
	q = q.MulAdd(r, c0)
	return r.Mul(r).MulAdd(q, lo).Add(w)
}

// logFloat64AVX512 is d[i] = log(xs[i]) below 1 ULP from the exact value
// (within 1 ULP of logF's), each result depending only on its element.
func logFloat64AVX512(d, xs []float64) {
	const w = lanes512Float64
	xs = xs[:len(d)]
	base := archsimd.BroadcastInt64x8(log512Base)
	mant := archsimd.BroadcastInt64x8(1<<52 - 1)
	top := archsimd.BroadcastInt64x8(-1 << 48)
	negOne := archsimd.BroadcastFloat64x8(-1)
	hi := archsimd.BroadcastFloat64x8(ln2Hi * 0x1p-52)
	lo := archsimd.BroadcastFloat64x8(ln2Lo * 0x1p-52)
	inv0 := archsimd.LoadFloat64x8Slice(log512Table[0][:8])
	inv1 := archsimd.LoadFloat64x8Slice(log512Table[0][8:])
	t0 := archsimd.LoadFloat64x8Slice(log512Table[1][:8])
	t1 := archsimd.LoadFloat64x8Slice(log512Table[1][8:])
	var c [len(logQCoef)]archsimd.Float64x8
	for i, v := range logQCoef {
		c[i] = archsimd.BroadcastFloat64x8(v)
	}
	c0, c1, c2, c3, c4, c5, c6, c7 := c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]
	// The range test reads the high 32 bits of both vectors' lanes, one
	// permute: adding 2^20 (one to the exponent field) leaves them above
	// 2^21 − 1, as int32, exactly for x in [2^-1022, +Inf). Zeros and
	// subnormals stay below; +Inf, NaNs and negative numbers wrap to
	// negative, or from the top of uint32 to below 2^20.
	highHalves := archsimd.LoadUint32x16Slice([]uint32{1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31})
	oneExp := archsimd.BroadcastInt32x16(1 << 20)
	minHigh := archsimd.BroadcastInt32x16(1<<21 - 1)
	for len(d) >= 2*w {
		x0 := archsimd.LoadFloat64x8Slice(xs[:w])
		x1 := archsimd.LoadFloat64x8Slice(xs[w : 2*w])
		logVec512(x0, base, mant, top, negOne, hi, lo, inv0, inv1, t0, t1, c0, c1, c2, c3, c4, c5, c6, c7).StoreSlice(d[:w])
		logVec512(x1, base, mant, top, negOne, hi, lo, inv0, inv1, t0, t1, c0, c1, c2, c3, c4, c5, c6, c7).StoreSlice(d[w : 2*w])
		h := x0.AsInt32x16().ConcatPermute(x1.AsInt32x16(), highHalves).Add(oneExp)
		if h.Greater(minHigh).ToBits() != 1<<(2*w)-1 {
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
		logVec512(archsimd.LoadFloat64x8Slice(buf[:]), base, mant, top, negOne, hi, lo, inv0, inv1, t0, t1, c0, c1, c2, c3, c4, c5, c6, c7).StoreSlice(buf[:])
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
