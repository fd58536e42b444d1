package kernels

import (
	"unsafe"

	"github.com/cubego/cubego/zarr"
)

// Element type sets of the generic loops. Bool elements are stored as uint8
// (0 or 1; loops read any non-zero byte as true and always write 0 or 1).
type signed interface {
	int8 | int16 | int32 | int64
}
type unsigned interface {
	uint8 | uint16 | uint32 | uint64
}
type integer interface {
	signed | unsigned
}
type float interface {
	float32 | float64
}
type complexFloat interface {
	complex64 | complex128
}
type realNumber interface {
	integer | float
}
type number interface {
	realNumber | complexFloat
}

// as reinterprets a little-endian element buffer as a slice of T. Trailing
// bytes that do not fill a whole element are ignored.
func as[T any](b []byte) []T {
	var z T
	n := len(b) / int(unsafe.Sizeof(z))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
}

// b2u converts a bool to a stored Bool element (0 or 1) without a branch.
func b2u(b bool) uint8 { return *(*uint8)(unsafe.Pointer(&b)) }

// UnsupportedError reports an operation that is not defined for a data type,
// such as a bitwise operation on floats or sqrt on integers.
type UnsupportedError struct {
	Op    string
	DType zarr.DataType
}

func (e *UnsupportedError) Error() string {
	return "kernels: " + e.Op + " not supported for " + e.DType.String()
}

func unsupported(op string, dt zarr.DataType) error { return &UnsupportedError{Op: op, DType: dt} }

// bytesOfSlice is the inverse of as: the bytes of a typed slice.
func bytesOfSlice[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}
