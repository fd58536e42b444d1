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

// floorDivFloat is numpy's floor_divide for floats.
func floorDivFloat[T float](x, y T) T {
	if y == 0 {
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

// cexpm1 is exp(z)-1 without cancellation for small z (numpy's nc_expm1).
func cexpm1(z complex128) complex128 {
	x, y := real(z), imag(z)
	a := math.Sin(y / 2)
	return complex(math.Expm1(x)*math.Cos(y)-2*a*a, math.Exp(x)*math.Sin(y))
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

// ctanh is cmplx.Tanh with C99's ±0 + NaNi for ±0 + i∞ and ±0 + iNaN.
func ctanh(z complex128) complex128 {
	if real(z) == 0 && (math.IsInf(imag(z), 0) || math.IsNaN(imag(z))) {
		return complex(real(z), math.NaN())
	}
	return cmplx.Tanh(z)
}

// ctan is tan(z) = -i·tanh(i·z), as C99 defines its special values.
func ctan(z complex128) complex128 {
	w := ctanh(complex(-imag(z), real(z)))
	return complex(imag(w), -real(w))
}

// cacosh is cmplx.Acosh with numpy's NaN + iπ/2 for ±0 + iNaN.
func cacosh(z complex128) complex128 {
	if real(z) == 0 && math.IsNaN(imag(z)) {
		return complex(math.NaN(), math.Pi/2)
	}
	return cmplx.Acosh(z)
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
