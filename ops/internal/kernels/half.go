package kernels

import "math"

// IEEE 754 binary16 conversions, rounding to nearest even like numpy's
// npy_double_to_half. Float16 is a storage type: it appears only in Cast.

// halfToFloat64 converts binary16 bits exactly, keeping NaN payloads.
func halfToFloat64(h uint16) float64 {
	sign := uint64(h&0x8000) << 48
	exp := int(h>>10) & 0x1f
	mant := uint64(h & 0x3ff)
	switch exp {
	case 0:
		v := math.Ldexp(float64(mant), -24)
		if sign != 0 {
			v = -v
		}
		return v
	case 0x1f:
		return math.Float64frombits(sign | 0x7ff<<52 | mant<<42)
	}
	return math.Float64frombits(sign | uint64(exp-15+1023)<<52 | mant<<42)
}

// float64ToHalf rounds f to the nearest binary16 (ties to even); values
// beyond the range become ±Inf, NaNs stay NaN.
func float64ToHalf(f float64) uint16 {
	b := math.Float64bits(f)
	sign := uint16(b>>48) & 0x8000
	exp := int(b>>52) & 0x7ff
	mant := b & (1<<52 - 1)
	if exp == 0x7ff {
		if mant == 0 {
			return sign | 0x7c00
		}
		m := uint16(mant >> 42)
		if m == 0 {
			m = 1 // keep it a NaN
		}
		return sign | 0x7c00 | m
	}
	e := exp - 1023
	switch {
	case e > 15:
		return sign | 0x7c00
	case e >= -14:
		// Normal: the carry of the rounding increment moves into the
		// exponent, up to 0x7c00 (Inf) for values that round past 65504.
		h := uint32(e+15)<<10 | uint32(mant>>42)
		rem := mant & (1<<42 - 1)
		if rem > 1<<41 || (rem == 1<<41 && h&1 != 0) {
			h++
		}
		return sign | uint16(h)
	case e >= -25:
		// Subnormal in units of 2^-24; may round up to the smallest normal.
		full := mant | 1<<52
		shift := uint(28 - e)
		h := full >> shift
		rem := full & (1<<shift - 1)
		half := uint64(1) << (shift - 1)
		if rem > half || (rem == half && h&1 != 0) {
			h++
		}
		return sign | uint16(h)
	}
	return sign
}
