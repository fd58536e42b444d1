package ops

import (
	"unsafe"

	"github.com/cubego/cubego/plan"
)

// Element is the set of Go types that hold one element of a cubego data
// type, with that type's memory layout: bool (one byte, 0 or 1) for
// [Bool], int8–int64 and uint8–uint64 for the integer types, float32,
// float64, complex64 and complex128. Chunk bytes are these elements in
// little-endian order, which is the machine's order on every platform
// cubego builds for (amd64, arm64).
type Element interface {
	bool | int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 |
		float32 | float64 | complex64 | complex128
}

// DTypeOf returns the data type whose elements T holds, such as [Float64]
// for float64.
func DTypeOf[T Element]() DType {
	var z T
	switch any(z).(type) {
	case bool:
		return Bool
	case int8:
		return Int8
	case int16:
		return Int16
	case int32:
		return Int32
	case int64:
		return Int64
	case uint8:
		return Uint8
	case uint16:
		return Uint16
	case uint32:
		return Uint32
	case uint64:
		return Uint64
	case float32:
		return Float32
	case float64:
		return Float64
	case complex64:
		return Complex64
	}
	return Complex128
}

// FromSlice returns a virtual array of shape holding a copy of data (C
// order), of the data type of T (see [DTypeOf]). It is [FromBuffer] for Go
// values.
func FromSlice[T Element](shape []int, data []T, chunks ChunkSpec, spec *plan.Spec) (*plan.Array, error) {
	return FromBuffer(shape, DTypeOf[T](), elementBytes(data), chunks, spec)
}

// elementBytes views the elements of s as their bytes, without copying.
func elementBytes[T Element](s []T) []byte {
	if len(s) == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(s[0])))
}
