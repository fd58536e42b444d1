package zarr

import "math"

// float16ToFloat64 returns the value of the IEEE 754 half-precision number
// with bits h. The conversion is exact; NaN payloads are not kept.
func float16ToFloat64(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	frac := float64(h & 0x3ff)
	switch exp {
	case 0: // zero or subnormal: frac × 2⁻²⁴
		return sign * math.Ldexp(frac, -24)
	case 0x1f:
		if frac != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	}
	return sign * math.Ldexp(1024+frac, exp-25)
}

// float64ToFloat16 returns the half-precision number nearest to f (ties to
// even), as numpy's float16(f) does: ±Inf beyond the largest finite half,
// subnormals and signed zeros kept, NaN payloads truncated but kept quiet.
func float64ToFloat16(f float64) uint16 {
	b := math.Float64bits(f)
	sign := uint16(b>>48) & 0x8000
	exp := int(b>>52) & 0x7ff
	mant := b & (1<<52 - 1)
	switch {
	case exp == 0x7ff && mant != 0: // NaN
		m := uint16(mant>>42) & 0x3ff
		return sign | 0x7c00 | 0x200 | m
	case exp == 0x7ff: // ±Inf
		return sign | 0x7c00
	case exp == 0: // zero or float64 subnormal: far below the half range
		return sign
	}
	e := exp - 1023 // f = 1.mant × 2^e
	mant |= 1 << 52
	if e > 15 {
		return sign | 0x7c00
	}
	// Keep the top bits of the 53-bit significand that fit: 11 for a
	// normal half (e ≥ -14), fewer for a subnormal, whose unit is 2⁻²⁴.
	shift := uint(42)
	if e < -14 {
		shift = uint(28 - e) // 42 + (-14 - e)
		if shift > 63 {
			return sign
		}
	}
	m := mant >> shift
	rem := mant & (1<<shift - 1)
	half := uint64(1) << (shift - 1)
	if rem > half || (rem == half && m&1 == 1) {
		m++
	}
	if e < -14 {
		// m counts units of 2⁻²⁴; m == 0x400 carries into the smallest
		// normal, which the bit layout encodes the same way.
		return sign | uint16(m)
	}
	if m == 1<<11 { // rounding carried into the next binade
		m >>= 1
		e++
		if e > 15 {
			return sign | 0x7c00
		}
	}
	return sign | uint16(e+15)<<10 | uint16(m&0x3ff)
}
