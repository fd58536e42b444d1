package kernels

import (
	"fmt"
	"unsafe"

	"github.com/cubego/cubego/zarr"
)

// Cast converts x into dst elementwise with numpy's astype semantics:
// integers wrap, floats truncate toward zero when converted to integers,
// complex numbers lose their imaginary part when converted to real types,
// and any type converts to Bool as value != 0. Float16 is supported in both
// directions.
//
// Float to integer conversions that numpy leaves to the platform are fixed
// here: NaN gives 0; values within [-2^63, 2^64) truncate to a 64-bit
// integer and wrap to the target width (as numpy on x86, e.g. -1.0 to uint8
// is 255); ±Inf and larger values give numpy's x86 result, the most negative
// int64, wrapped to the target width.
func Cast(dst, x Operand) error {
	clearUpper()
	k := castKernel(x.DType, dst.DType)
	if k == nil {
		return fmt.Errorf("kernels: cast from %s to %s not supported", x.DType, dst.DType)
	}
	return apply(dst, []Operand{x}, k)
}

// copyKernel copies elements unchanged: for i := range dst { dst[i] = x[i] }.
func copyKernel(d, a, _, _ []byte) { copy(d, a) }

// castKernel returns the kernel converting from one dtype to another, or
// nil if either is invalid.
func castKernel(from, to zarr.DataType) kernel {
	if !to.Valid() {
		return nil
	}
	if from == to {
		return copyKernel
	}
	if v := vectorCast[[2]zarr.DataType{from, to}]; v != nil {
		return v
	}
	switch from {
	case zarr.Bool:
		return castFromBool(to)
	case zarr.Int8:
		return castFromInt[int8](to)
	case zarr.Int16:
		return castFromInt[int16](to)
	case zarr.Int32:
		return castFromInt[int32](to)
	case zarr.Int64:
		return castFromInt[int64](to)
	case zarr.Uint8:
		return castFromInt[uint8](to)
	case zarr.Uint16:
		return castFromInt[uint16](to)
	case zarr.Uint32:
		return castFromInt[uint32](to)
	case zarr.Uint64:
		return castFromInt[uint64](to)
	case zarr.Float16:
		return castFromHalf(to)
	case zarr.Float32:
		return castFromFloat[float32](to)
	case zarr.Float64:
		return castFromFloat[float64](to)
	case zarr.Complex64:
		return castFromComplex[complex64](to)
	case zarr.Complex128:
		return castFromComplex[complex128](to)
	}
	return nil
}

func castFromBool(to zarr.DataType) kernel {
	switch to {
	case zarr.Int8:
		return unary(fromBoolLoop[int8])
	case zarr.Int16:
		return unary(fromBoolLoop[int16])
	case zarr.Int32:
		return unary(fromBoolLoop[int32])
	case zarr.Int64:
		return unary(fromBoolLoop[int64])
	case zarr.Uint8:
		return unary(fromBoolLoop[uint8])
	case zarr.Uint16:
		return unary(fromBoolLoop[uint16])
	case zarr.Uint32:
		return unary(fromBoolLoop[uint32])
	case zarr.Uint64:
		return unary(fromBoolLoop[uint64])
	case zarr.Float16:
		return unary(boolToHalfLoop)
	case zarr.Float32:
		return unary(fromBoolLoop[float32])
	case zarr.Float64:
		return unary(fromBoolLoop[float64])
	case zarr.Complex64:
		return unary(fromBoolLoop[complex64])
	case zarr.Complex128:
		return unary(fromBoolLoop[complex128])
	}
	return nil
}

func castFromInt[S integer](to zarr.DataType) kernel {
	switch to {
	case zarr.Bool:
		return unary(toBoolLoop[S])
	case zarr.Int8:
		return unary(convertLoop[S, int8])
	case zarr.Int16:
		return unary(convertLoop[S, int16])
	case zarr.Int32:
		return unary(convertLoop[S, int32])
	case zarr.Int64:
		return unary(convertLoop[S, int64])
	case zarr.Uint8:
		return unary(convertLoop[S, uint8])
	case zarr.Uint16:
		return unary(convertLoop[S, uint16])
	case zarr.Uint32:
		return unary(convertLoop[S, uint32])
	case zarr.Uint64:
		return unary(convertLoop[S, uint64])
	case zarr.Float16:
		return unary(realToHalfLoop[S])
	case zarr.Float32:
		return unary(convertLoop[S, float32])
	case zarr.Float64:
		return unary(convertLoop[S, float64])
	case zarr.Complex64:
		return unary(realToComplexLoop[S, complex64])
	case zarr.Complex128:
		return unary(realToComplexLoop[S, complex128])
	}
	return nil
}

func castFromFloat[S float](to zarr.DataType) kernel {
	switch to {
	case zarr.Bool:
		return unary(toBoolLoop[S])
	case zarr.Int8:
		return unary(floatToIntLoop[S, int8])
	case zarr.Int16:
		return unary(floatToIntLoop[S, int16])
	case zarr.Int32:
		return unary(floatToIntLoop[S, int32])
	case zarr.Int64:
		return unary(floatToIntLoop[S, int64])
	case zarr.Uint8:
		return unary(floatToIntLoop[S, uint8])
	case zarr.Uint16:
		return unary(floatToIntLoop[S, uint16])
	case zarr.Uint32:
		return unary(floatToIntLoop[S, uint32])
	case zarr.Uint64:
		return unary(floatToIntLoop[S, uint64])
	case zarr.Float16:
		return unary(realToHalfLoop[S])
	case zarr.Float32:
		return unary(convertLoop[S, float32])
	case zarr.Float64:
		return unary(convertLoop[S, float64])
	case zarr.Complex64:
		return unary(realToComplexLoop[S, complex64])
	case zarr.Complex128:
		return unary(realToComplexLoop[S, complex128])
	}
	return nil
}

func castFromComplex[S complexFloat](to zarr.DataType) kernel {
	switch to {
	case zarr.Bool:
		return unary(toBoolLoop[S])
	case zarr.Int8:
		return unary(complexToIntLoop[S, int8])
	case zarr.Int16:
		return unary(complexToIntLoop[S, int16])
	case zarr.Int32:
		return unary(complexToIntLoop[S, int32])
	case zarr.Int64:
		return unary(complexToIntLoop[S, int64])
	case zarr.Uint8:
		return unary(complexToIntLoop[S, uint8])
	case zarr.Uint16:
		return unary(complexToIntLoop[S, uint16])
	case zarr.Uint32:
		return unary(complexToIntLoop[S, uint32])
	case zarr.Uint64:
		return unary(complexToIntLoop[S, uint64])
	case zarr.Float16:
		return unary(complexToHalfLoop[S])
	case zarr.Float32:
		return unary(complexToFloatLoop[S, float32])
	case zarr.Float64:
		return unary(complexToFloatLoop[S, float64])
	case zarr.Complex64:
		return unary(complexToComplexLoop[S, complex64])
	case zarr.Complex128:
		return unary(complexToComplexLoop[S, complex128])
	}
	return nil
}

func castFromHalf(to zarr.DataType) kernel {
	switch to {
	case zarr.Bool:
		return unary(halfToBoolLoop)
	case zarr.Int8:
		return unary(halfToIntLoop[int8])
	case zarr.Int16:
		return unary(halfToIntLoop[int16])
	case zarr.Int32:
		return unary(halfToIntLoop[int32])
	case zarr.Int64:
		return unary(halfToIntLoop[int64])
	case zarr.Uint8:
		return unary(halfToIntLoop[uint8])
	case zarr.Uint16:
		return unary(halfToIntLoop[uint16])
	case zarr.Uint32:
		return unary(halfToIntLoop[uint32])
	case zarr.Uint64:
		return unary(halfToIntLoop[uint64])
	case zarr.Float32:
		return unary(halfToFloatLoop[float32])
	case zarr.Float64:
		return unary(halfToFloatLoop[float64])
	case zarr.Complex64:
		return unary(halfToComplexLoop[complex64])
	case zarr.Complex128:
		return unary(halfToComplexLoop[complex128])
	}
	return nil
}

// int64Min is the x86 result of an out-of-range float to integer conversion.
var int64Min uint64 = 1 << 63

// floatToInt converts f to D: NaN gives 0, values within the 64-bit range
// truncate toward zero and wrap to D's width, others give int64Min wrapped.
func floatToInt[D integer](f float64) D {
	switch {
	case f >= -0x1p63 && f < 0x1p63:
		return D(int64(f))
	case f >= 0x1p63 && f < 0x1p64:
		return D(uint64(f))
	case f != f:
		return 0
	}
	return D(int64Min)
}

func convertLoop[S, D realNumber](d []D, s []S) {
	s = s[:len(d)]
	for i := range d {
		d[i] = D(s[i])
	}
}

func floatToIntLoop[S float, D integer](d []D, s []S) {
	s = s[:len(d)]
	for i := range d {
		d[i] = floatToInt[D](float64(s[i]))
	}
}

func toBoolLoop[S number](d []uint8, s []S) {
	s = s[:len(d)]
	for i := range d {
		d[i] = b2u(s[i] != 0)
	}
}

func fromBoolLoop[D number](d []D, s []uint8) {
	s = s[:len(d)]
	for i := range d {
		if s[i] != 0 {
			d[i] = 1
		} else {
			d[i] = 0
		}
	}
}

func realToComplexLoop[S realNumber, D complexFloat](d []D, s []S) {
	s = s[:len(d)]
	for i := range d {
		d[i] = D(complex(float64(s[i]), 0))
	}
}

func complexToFloatLoop[S complexFloat, D float](d []D, s []S) {
	s = s[:len(d)]
	for i := range d {
		d[i] = D(real(complex128(s[i])))
	}
}

func complexToIntLoop[S complexFloat, D integer](d []D, s []S) {
	s = s[:len(d)]
	for i := range d {
		d[i] = floatToInt[D](real(complex128(s[i])))
	}
}

func complexToComplexLoop[S, D complexFloat](d []D, s []S) {
	s = s[:len(d)]
	for i := range d {
		d[i] = D(s[i])
	}
}

func boolToHalfLoop(d []uint16, s []uint8) {
	s = s[:len(d)]
	for i := range d {
		d[i] = uint16(b2u(s[i] != 0)) * 0x3c00 // 1.0
	}
}

func realToHalfLoop[S realNumber](d []uint16, s []S) {
	s = s[:len(d)]
	for i := range d {
		d[i] = float64ToHalf(float64(s[i]))
	}
}

func complexToHalfLoop[S complexFloat](d []uint16, s []S) {
	s = s[:len(d)]
	for i := range d {
		d[i] = float64ToHalf(real(complex128(s[i])))
	}
}

func halfToBoolLoop(d []uint8, s []uint16) {
	s = s[:len(d)]
	for i := range d {
		d[i] = b2u(s[i]&0x7fff != 0)
	}
}

func halfToIntLoop[D integer](d []D, s []uint16) {
	s = s[:len(d)]
	for i := range d {
		d[i] = floatToInt[D](halfToFloat64(s[i]))
	}
}

func halfToFloatLoop[D float](d []D, s []uint16) {
	s = s[:len(d)]
	for i := range d {
		d[i] = D(halfToFloat64(s[i]))
	}
}

func halfToComplexLoop[D complexFloat](d []D, s []uint16) {
	s = s[:len(d)]
	for i := range d {
		d[i] = D(complex(halfToFloat64(s[i]), 0))
	}
}

// Scalar is a Python-like scalar value: Kind selects the field that holds
// it ('b' bool B, 'i' int64 I, 'u' uint64 U, 'f' float64 F, 'c' complex128 C).
type Scalar struct {
	Kind byte
	B    bool
	I    int64
	U    uint64
	F    float64
	C    complex128
}

// ScalarBytes converts s to one little-endian element of dt with Cast's
// semantics (float to integer truncates toward zero, NaN gives 0, true is
// 1). An unknown Kind reads as zero; an invalid dt gives nil.
func ScalarBytes(s Scalar, dt zarr.DataType) []byte {
	if !dt.Valid() {
		return nil
	}
	var src Operand
	switch s.Kind {
	case 'b':
		src = Contiguous(zarr.Bool, []byte{b2u(s.B)}, nil)
	case 'i':
		src = Contiguous(zarr.Int64, bytesOf(s.I), nil)
	case 'u':
		src = Contiguous(zarr.Uint64, bytesOf(s.U), nil)
	case 'f':
		src = Contiguous(zarr.Float64, bytesOf(s.F), nil)
	case 'c':
		src = Contiguous(zarr.Complex128, bytesOf(s.C), nil)
	default:
		src = Contiguous(zarr.Bool, []byte{0}, nil)
	}
	out := make([]byte, dt.Size())
	if Cast(Contiguous(dt, out, nil), src) != nil {
		clear(out)
	}
	return out
}

// bytesOf returns the little-endian bytes of one element.
func bytesOf[T number](v T) []byte {
	b := make([]byte, unsafe.Sizeof(v))
	as[T](b)[0] = v
	return b
}

// Fill sets every element of dst to value, one element of dt. A value
// shorter than an element zeroes dst; extra bytes are ignored.
func Fill(dst []byte, dt zarr.DataType, value []byte) {
	clearUpper()
	size := dt.Size()
	if size == 0 || len(value) < size {
		clear(dst)
		return
	}
	// Meaning: for i := range elements { dst[i] = value }, by doubling copies.
	n := copy(dst, value[:size])
	for n < len(dst) {
		n += copy(dst[n:], dst[:n])
	}
}
