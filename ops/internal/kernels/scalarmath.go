package kernels

import (
	"math"
	"math/cmplx"
	"unsafe"
)

// Scalar functions used by the elementwise loops where a Go operator does
// not have numpy's semantics. The small ones are inlined; none is ever
// called through a function value.

// absInt is |v|; the most negative value wraps to itself as in numpy.
func absInt[T signed](v T) T {
	if v < 0 {
		return -v
	}
	return v
}

func signInt[T signed](v T) T {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

func signUint[T unsigned](v T) T {
	if v > 0 {
		return 1
	}
	return 0
}

// signFloat is numpy's sign: ±1 for non-zero numbers, +0 for ±0, NaN for NaN.
func signFloat[T float](v T) T {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	case v == 0:
		return 0
	}
	return v
}

// recipInt is numpy's integer reciprocal 1/v truncated, with 1/0 = 0.
func recipInt[T integer](v T) T {
	switch {
	case v == 1:
		return 1
	case v < 0 && v+1 == 0: // v == -1
		return v
	}
	return 0
}

// floorDivInt is x // y rounded toward −∞; division by zero gives 0 and the
// most negative value // -1 wraps to itself (numpy).
func floorDivInt[T integer](x, y T) T {
	if y == 0 {
		return 0
	}
	q := x / y
	if x%y != 0 && (x < 0) != (y < 0) {
		q--
	}
	return q
}

// remInt is x mod y with the sign of y; x mod 0 is 0 (numpy).
func remInt[T integer](x, y T) T {
	if y == 0 {
		return 0
	}
	r := x % y
	if r != 0 && (r < 0) != (y < 0) {
		r += y
	}
	return r
}

// powInt is x**y with wrapping. A negative exponent (an error in numpy)
// gives 1 for x == 1, ±1 for x == -1 and 0 otherwise.
func powInt[T integer](x, y T) T {
	if y < 0 {
		switch {
		case x == 1:
			return 1
		case x+1 == 0: // x == -1
			if y&1 != 0 {
				return x
			}
			return 1
		}
		return 0
	}
	r := T(1)
	for y > 0 {
		if y&1 != 0 {
			r *= x
		}
		y >>= 1
		x *= x
	}
	return r
}

// divmodFloat is numpy's npy_divmod for a non-zero divisor: the floored
// quotient and the remainder with the sign of the divisor, computed in T.
func divmodFloat[T float](x, y T) (T, T) {
	mod := T(math.Mod(float64(x), float64(y)))
	div := (x - mod) / y
	if mod != 0 {
		if (y < 0) != (mod < 0) {
			mod += y
			div--
		}
	} else {
		mod = T(math.Copysign(0, float64(y)))
	}
	var q T
	if div != 0 {
		q = T(math.Floor(float64(div)))
		if div-q > 0.5 {
			q++
		}
	} else {
		q = T(math.Copysign(0, float64(x/y)))
	}
	return q, mod
}

// floorDivFloat is numpy's floor_divide for floats, with the Array API's
// cases for an infinite operand where numpy differs: ±inf // finite is ±inf
// (numpy: NaN) and finite // ∓inf is -0 (numpy: -1 for operands of
// opposite signs).
func floorDivFloat[T float](x, y T) T {
	if y == 0 {
		return x / y
	}
	if xi, yi := math.IsInf(float64(x), 0), math.IsInf(float64(y), 0); xi != yi {
		return x / y
	}
	q, _ := divmodFloat(x, y)
	return q
}

// remFloat is numpy's remainder for floats (the sign of the divisor).
func remFloat[T float](x, y T) T {
	if y == 0 {
		return T(math.Mod(float64(x), float64(y)))
	}
	_, r := divmodFloat(x, y)
	return r
}

// nextAfter is the next representable T after x toward y, and y when they
// are equal (C's nextafter: nextafter(0, -0) is -0).
func nextAfter[T float](x, y T) T {
	if x == y {
		return y
	}
	if unsafe.Sizeof(x) == 4 {
		return T(math.Nextafter32(float32(x), float32(y)))
	}
	return T(math.Nextafter(float64(x), float64(y)))
}

// logAddExp is log(exp(x) + exp(y)) without overflow, as numpy computes it.
func logAddExp(x, y float64) float64 {
	if x == y {
		return x + math.Ln2 // also equal infinities
	}
	d := x - y
	switch {
	case d > 0:
		return x + math.Log1p(math.Exp(-d))
	case d <= 0:
		return y + math.Log1p(math.Exp(d))
	}
	return d // NaN
}

// csign is numpy 2's complex sign z/|z|, with 0 for 0 and the limits for
// infinite components.
func csign(z complex128) complex128 {
	re, im := real(z), imag(z)
	a := math.Hypot(re, im)
	switch {
	case math.IsNaN(a):
		return complex(math.NaN(), math.NaN())
	case math.IsInf(a, 0):
		switch {
		case math.IsInf(re, 0) && math.IsInf(im, 0):
			return complex(math.NaN(), math.NaN())
		case math.IsInf(re, 0):
			return complex(math.Copysign(1, re), 0)
		}
		return complex(0, math.Copysign(1, im))
	case a == 0:
		return 0
	}
	return complex(re/a, im/a)
}

// cexpm1 is exp(z)-1 without cancellation for small z (numpy's nc_expm1),
// with the Array API's special cases (those of C99's cexp, less one) for
// zero, infinite and NaN components.
func cexpm1(z complex128) complex128 {
	x, y := real(z), imag(z)
	finX, finY := !math.IsInf(x, 0) && !math.IsNaN(x), !math.IsInf(y, 0) && !math.IsNaN(y)
	switch {
	case finX && finY:
		if x == 0 && y == 0 {
			return complex(0, y)
		}
		a := math.Sin(y / 2)
		return complex(math.Expm1(x)*math.Cos(y)-2*a*a, math.Exp(x)*math.Sin(y))
	case math.IsNaN(x):
		if y == 0 {
			return complex(x, y)
		}
		return complex(math.NaN(), math.NaN())
	case finX: // y is infinite or NaN
		return complex(math.NaN(), math.NaN())
	case x < 0: // -inf: exp(z) is 0 with the phase of y
		if finY {
			return complex(-1, math.Copysign(0, math.Sin(y)))
		}
		return complex(-1, 0)
	}
	// +inf
	switch {
	case y == 0:
		return complex(x, y)
	case finY:
		return complex(x*math.Cos(y), x*math.Sin(y))
	}
	return complex(x, math.NaN())
}

// clog1p is log(1+z) (numpy's nc_log1p).
func clog1p(z complex128) complex128 {
	x, y := real(z)+1, imag(z)
	return complex(math.Log(math.Hypot(x, y)), math.Atan2(y, x))
}

func clog2(z complex128) complex128 {
	l := cmplx.Log(z)
	return complex(real(l)/math.Ln2, imag(l)/math.Ln2)
}

func cround(z complex128) complex128 {
	return complex(math.RoundToEven(real(z)), math.RoundToEven(imag(z)))
}

func cisinf(z complex128) bool { return math.IsInf(real(z), 0) || math.IsInf(imag(z), 0) }

func cisfinite(z complex128) bool {
	re, im := real(z), imag(z)
	return re-re == 0 && im-im == 0
}

// cpow is numpy's complex power: 1 for a zero exponent, 0**y is 0 for
// real(y) > 0 and NaN otherwise, repeated (naive) multiplication for
// integral exponents below 100 in magnitude, else exp(y·log(x)) as C's cpow.
func cpow(x, y complex128) complex128 {
	yr, yi := real(y), imag(y)
	switch {
	case yr == 0 && yi == 0:
		return 1
	case real(x) == 0 && imag(x) == 0:
		if yr > 0 {
			return 0
		}
		return complex(math.NaN(), math.NaN())
	case yi == 0 && yr == math.Trunc(yr) && math.Abs(yr) < 100:
		n := int(yr)
		switch n {
		case 1:
			return x
		case 2:
			return x * x
		case 3:
			return x * (x * x)
		}
		if n < 0 {
			n = -n
		}
		r, p := complex128(1), x
		for mask := 1; ; mask <<= 1 {
			if n&mask != 0 {
				r *= p
			}
			if n < mask<<1 {
				break
			}
			p *= p
		}
		if yr < 0 {
			return cdiv(1, r)
		}
		return r
	}
	return cmplx.Exp(y * clog(x))
}

// cdiv is numpy's complex division (Smith's algorithm; a zero divisor gives
// infinities or NaNs componentwise).
func cdiv(x, y complex128) complex128 {
	xr, xi, yr, yi := real(x), imag(x), real(y), imag(y)
	ar, ai := math.Abs(yr), math.Abs(yi)
	switch {
	case ar >= ai && ar == 0 && ai == 0:
		return complex(xr/ar, xi/ar)
	case ar >= ai:
		rat := yi / yr
		scl := 1 / (yr + yi*rat)
		return complex((xr+xi*rat)*scl, (xi-xr*rat)*scl)
	}
	rat := yr / yi
	scl := 1 / (yi + yr*rat)
	return complex((xr*rat+xi)*scl, (xi*rat-xr)*scl)
}

// crecip is numpy's complex reciprocal; 1/0 is NaN+NaNi (unlike cdiv).
func crecip(z complex128) complex128 {
	zr, zi := real(z), imag(z)
	if math.Abs(zi) <= math.Abs(zr) {
		r := zi / zr
		d := zr + zi*r
		return complex(1/d, -r/d)
	}
	r := zr / zi
	d := zr*r + zi
	return complex(r/d, -1/d)
}

// logF is math.Log, correct also for subnormal x (Go's amd64 assembly Log
// reads the exponent bits directly and is wrong below 2^-1022).
func logF(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		return math.Log(x*0x1p54) - 54*math.Ln2
	}
	return math.Log(x)
}

func log10F(x float64) float64 { return logF(x) * (1 / math.Ln10) }

// clog is cmplx.Log with logF for the modulus.
func clog(z complex128) complex128 {
	if math.IsNaN(real(z)) || math.IsNaN(imag(z)) {
		return cmplx.Log(z)
	}
	return complex(logF(cmplx.Abs(z)), cmplx.Phase(z))
}

// csqrt is cmplx.Sqrt with C99's NaN + NaNi for a NaN real part and a
// finite imaginary part.
func csqrt(z complex128) complex128 {
	if math.IsNaN(real(z)) && !math.IsInf(imag(z), 0) {
		return complex(math.NaN(), math.NaN())
	}
	return cmplx.Sqrt(z)
}

// ctanh is cmplx.Tanh with C99's ±0 + NaNi for ±0 + i∞ and ±0 + iNaN, the
// Array API's ±1 ± 0i (the sign of y) for ±∞ + iy, and, for |x| > 22 where
// tanh(x) is ±1 in float64 and cosh(2x) would overflow, the limit
// ±1 + 4·sin(y)·cos(y)·e^(-2|x|) i (cmplx.Tanh gives inf/inf = NaN).
func ctanh(z complex128) complex128 {
	x, y := real(z), imag(z)
	switch {
	case x == 0 && (math.IsInf(y, 0) || math.IsNaN(y)):
		return complex(x, math.NaN())
	case math.IsInf(x, 0) && !math.IsInf(y, 0) && !math.IsNaN(y):
		return complex(math.Copysign(1, x), math.Copysign(0, y))
	case math.Abs(x) > 22 && !math.IsInf(x, 0) && !math.IsInf(y, 0) && !math.IsNaN(y):
		s, c := math.Sincos(y)
		return complex(math.Copysign(1, x), 4*s*c*math.Exp(-2*math.Abs(x)))
	}
	return cmplx.Tanh(z)
}

// ctan is tan(z) = -i·tanh(i·z), as C99 defines its special values.
func ctan(z complex128) complex128 {
	w := ctanh(complex(-imag(z), real(z)))
	return complex(imag(w), -real(w))
}

// The inverse trigonometric and hyperbolic functions below use Kahan's
// formulas ("Branch cuts for complex elementary functions", 1987) for finite
// arguments: products of principal square roots of 1 ± z, which neither
// cancel nor overflow for large |z| (math/cmplx's log-based formulas lose all
// accuracy from |z| ≈ 1e7: cmplx.Asin(1+67108864i) is +Inf i). 1 - z is
// formed componentwise so that the sign of a zero imaginary part, which
// picks the side of a branch cut, survives. Non-finite arguments keep
// math/cmplx's special values, which are C99's.

// oneMinus is 1 - z with the imaginary part -imag(z) (Go's complex
// subtraction would give +0 for imag(z) = +0).
func oneMinus(z complex128) complex128 { return complex(1-real(z), -imag(z)) }

func onePlus(z complex128) complex128 { return complex(1+real(z), imag(z)) }

// cmulConj is conj(a)·b, by components.
func cmulConj(a, b complex128) complex128 {
	ar, ai, br, bi := real(a), imag(a), real(b), imag(b)
	return complex(ar*br+ai*bi, ar*bi-ai*br)
}

func casin(z complex128) complex128 {
	if !cisfinite(z) {
		return cmplx.Asin(z)
	}
	s1, s2 := csqrt(oneMinus(z)), csqrt(onePlus(z))
	re := math.Atan2(real(z), real(s1)*real(s2)-imag(s1)*imag(s2))
	return complex(re, math.Asinh(imag(cmulConj(s1, s2))))
}

func cacos(z complex128) complex128 {
	if !cisfinite(z) {
		return cmplx.Acos(z)
	}
	s1, s2 := csqrt(oneMinus(z)), csqrt(onePlus(z))
	re := 2 * math.Atan2(real(s1), real(s2))
	return complex(re, math.Asinh(imag(cmulConj(s2, s1))))
}

// casinh is -i·asin(i·z).
func casinh(z complex128) complex128 {
	if !cisfinite(z) {
		return cmplx.Asinh(z)
	}
	w := casin(complex(-imag(z), real(z)))
	return complex(imag(w), -real(w))
}

// cacosh is Kahan's acosh for finite z, and cmplx.Acosh with numpy's
// NaN + iπ/2 for ±0 + iNaN.
func cacosh(z complex128) complex128 {
	if !cisfinite(z) {
		if real(z) == 0 && math.IsNaN(imag(z)) {
			return complex(math.NaN(), math.Pi/2)
		}
		return cmplx.Acosh(z)
	}
	x, y := real(z), imag(z)
	s1, s2 := csqrt(complex(x-1, y)), csqrt(complex(x+1, y))
	re := math.Asinh(real(cmulConj(s1, s2)))
	return complex(re, 2*math.Atan2(imag(s1), real(s2)))
}

// catanh computes on |x| + i|y| and restores the signs (atanh is odd and
// commutes with conjugation): the real part is ¼·log1p(4|x|/((1-|x|)² + y²)),
// the imaginary part ½·atan2(2|y|, (1-|x|)(1+|x|) - y²), and beyond 1e150,
// where y² would overflow, the limit 1/z ± iπ/2.
func catanh(z complex128) complex128 {
	if !cisfinite(z) {
		return cmplx.Atanh(z)
	}
	x, y := real(z), imag(z)
	ax, ay := math.Abs(x), math.Abs(y)
	var re, im float64
	switch {
	case ax > 1e150 || ay > 1e150:
		re, im = real(crecip(complex(ax, ay))), math.Pi/2
	case ax == 1 && ay > 0 && ay < 1e-100:
		// (1-|x|)² + y² underflows: log((4+y²)/y²)/4 is log(2/|y|)/2.
		re, im = 0.5*(math.Ln2-math.Log(ay)), 0.5*math.Atan2(2*ay, -ay*ay)
	default:
		d := (1-ax)*(1-ax) + ay*ay
		re = 0.25 * math.Log1p(4*ax/d)
		im = 0.5 * math.Atan2(2*ay, (1-ax)*(1+ax)-ay*ay)
	}
	return complex(math.Copysign(re, x), math.Copysign(im, y))
}

// catan is -i·atanh(i·z).
func catan(z complex128) complex128 {
	if !cisfinite(z) {
		return cmplx.Atan(z)
	}
	w := catanh(complex(-imag(z), real(z)))
	return complex(imag(w), -real(w))
}

// maxFloat and minFloat are numpy's maximum and minimum for floats: NaN
// propagates (from either side) and of two equal values (±0) the second is
// returned.
func maxFloat[T float](x, y T) T {
	if x > y || x != x {
		return x
	}
	return y
}

func minFloat[T float](x, y T) T {
	if x < y || x != x {
		return x
	}
	return y
}

// Lexicographic complex ordering as numpy's CLT/CLE: NaN components compare
// false.
func cless[T complexFloat](x, y T) bool {
	xr, xi, yr, yi := real(complex128(x)), imag(complex128(x)), real(complex128(y)), imag(complex128(y))
	return (xr < yr && xi == xi && yi == yi) || (xr == yr && xi < yi)
}

func clessEqual[T complexFloat](x, y T) bool {
	xr, xi, yr, yi := real(complex128(x)), imag(complex128(x)), real(complex128(y)), imag(complex128(y))
	return (xr < yr && xi == xi && yi == yi) || (xr == yr && xi <= yi)
}

// cmax is numpy's maximum for complex: lexicographic, NaN propagating (the
// first operand wins ties and NaNs).
func cmax[T complexFloat](x, y T) T {
	if clessEqual(y, x) || x != x {
		return x
	}
	return y
}

// cmin is numpy's minimum for complex.
func cmin[T complexFloat](x, y T) T {
	if clessEqual(x, y) || x != x {
		return x
	}
	return y
}
