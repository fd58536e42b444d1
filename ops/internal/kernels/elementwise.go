package kernels

import (
	"fmt"

	"github.com/cubego/cubego/zarr"
)

// unary adapts a typed unary loop to a kernel.
func unary[T, U any](f func(d []U, xs []T)) kernel {
	return func(d, a, _, _ []byte) { f(as[U](d), as[T](a)) }
}

// binary adapts a typed binary loop to a kernel.
func binary[T, U any](f func(d []U, xs, ys []T)) kernel {
	return func(d, a, b, _ []byte) { f(as[U](d), as[T](a), as[T](b)) }
}

// Unary computes dst = op(x) elementwise. dst is C-contiguous; x has dst's
// shape and any strides. The result dtype is x's, except Bool for isnan,
// isinf, isfinite, signbit and logical_not, and the real dtype for abs, real
// and imag of complex x.
//
// Ops: negative, positive, abs, sign, square, sqrt, exp, expm1, log, log1p,
// log2, log10, sin, cos, tan, asin, acos, atan, sinh, cosh, tanh, asinh,
// acosh, atanh, floor, ceil, trunc, round, reciprocal, bitwise_invert,
// logical_not, conj, isnan, isinf, isfinite, signbit, real, imag. Float
// functions are defined for floats and complex numbers only (callers cast
// integers first); floor, ceil, trunc and round return integers unchanged;
// reciprocal of an integer is 1/x truncated, with 1/0 = 0; abs wraps the most
// negative integer to itself; round is half to even; sign of a complex number
// is z/|z|. Any op not defined for x's dtype, and any unknown op, is an
// UnsupportedError.
func Unary(op string, dst, x Operand) error {
	clearUpper()
	k, out := unaryKernel(op, x.DType)
	if k == nil {
		return unsupported(op, x.DType)
	}
	if dst.DType != out {
		return fmt.Errorf("kernels: %s of %s gives %s, not %s", op, x.DType, out, dst.DType)
	}
	return apply(dst, []Operand{x}, k)
}

// Binary computes dst = op(x, y) elementwise. x and y share a dtype; dst has
// that dtype, or Bool for the comparisons and for logical ops of non-bool
// operands.
//
// Ops: add, subtract, multiply, divide, floor_divide, remainder, pow,
// maximum, minimum, atan2, hypot, copysign, nextafter, logaddexp,
// bitwise_and, bitwise_or, bitwise_xor, bitwise_left_shift,
// bitwise_right_shift, logical_and, logical_or, logical_xor, and the
// comparisons equal, not_equal, less, less_equal, greater, greater_equal.
//
// Integers follow numpy: floor_divide and remainder round toward −∞ (the
// remainder takes the divisor's sign) and give 0 for a zero divisor;
// overflow wraps; pow with a negative exponent (an error in numpy) gives 1
// for base 1, ±1 for base −1 and 0 otherwise; shifts by a negative count or
// by the bit width or more give 0, or −1 for right shifts of negative
// values. For floats, floor_divide, remainder, maximum and minimum (NaN
// propagating), nextafter and logaddexp reproduce numpy's special values;
// complex numbers compare lexicographically. divide is for floats and
// complex numbers only; bool add and multiply are or and and, as in numpy.
func Binary(op string, dst, x, y Operand) error {
	clearUpper()
	if x.DType != y.DType {
		return fmt.Errorf("kernels: %s of %s and %s: operands must share a dtype", op, x.DType, y.DType)
	}
	k, out := binaryKernel(op, x.DType)
	if k == nil {
		return unsupported(op, x.DType)
	}
	if dst.DType != out {
		return fmt.Errorf("kernels: %s of %s gives %s, not %s", op, x.DType, out, dst.DType)
	}
	return apply(dst, []Operand{x, y}, k)
}

// Where computes dst = cond ? x : y elementwise. cond is Bool; x, y and dst
// share a dtype.
func Where(dst, cond, x, y Operand) error {
	clearUpper()
	if cond.DType != zarr.Bool {
		return fmt.Errorf("kernels: where condition is %s, not bool", cond.DType)
	}
	if x.DType != dst.DType || y.DType != dst.DType {
		return fmt.Errorf("kernels: where of %s and %s into %s: dtypes must match", x.DType, y.DType, dst.DType)
	}
	k := whereLoop(dst.DType)
	if k == nil {
		return unsupported("where", dst.DType)
	}
	return apply(dst, []Operand{cond, x, y}, k)
}

// whereLoop returns where's loop for elements of dt's size, or nil.
func whereLoop(dt zarr.DataType) kernel {
	switch dt.Size() {
	case 1:
		return whereKernel[uint8]
	case 2:
		return whereKernel[uint16]
	case 4:
		return whereKernel[uint32]
	case 8:
		return whereKernel[uint64]
	case 16:
		return whereKernel16
	}
	return nil
}

// unaryKernel returns op's loop over dt (the vector loop where there is
// one) and the dtype it gives; a nil loop if there is none.
func unaryKernel(op string, dt zarr.DataType) (kernel, zarr.DataType) {
	k, out := unaryLoop(op, dt)
	if v := vectorUnary[opDType{op, dt}]; v != nil {
		k = v
	}
	return k, out
}

// binaryKernel is unaryKernel for binary ops.
func binaryKernel(op string, dt zarr.DataType) (kernel, zarr.DataType) {
	k, out := binaryLoop(op, dt)
	if v := vectorBinary[opDType{op, dt}]; v != nil {
		k = v
	}
	return k, out
}

// whereKernel selects whole elements of any type of T's size, without a
// branch (random conditions would mispredict half the time). Meaning:
// for i := range dst { if c[i] != 0 { dst[i] = x[i] } else { dst[i] = y[i] } }.
func whereKernel[T unsigned](d, c, a, b []byte) {
	dst, xs, ys := as[T](d), as[T](a), as[T](b)
	c = c[:len(dst)]
	xs = xs[:len(dst)]
	ys = ys[:len(dst)]
	for i := range dst {
		mask := -T(b2u(c[i] != 0))
		dst[i] = ys[i] ^ (xs[i]^ys[i])&mask
	}
}

// whereKernel16 is whereKernel for 16-byte elements (complex128).
func whereKernel16(d, c, a, b []byte) {
	dst, xs, ys := as[[2]uint64](d), as[[2]uint64](a), as[[2]uint64](b)
	c = c[:len(dst)]
	xs = xs[:len(dst)]
	ys = ys[:len(dst)]
	for i := range dst {
		mask := -uint64(b2u(c[i] != 0))
		x, y := xs[i], ys[i]
		dst[i] = [2]uint64{y[0] ^ (x[0]^y[0])&mask, y[1] ^ (x[1]^y[1])&mask}
	}
}

// OverwritesInputSafely reports whether op's kernel (Unary, Binary, Cast
// or Where) gives the same result when dst is one of its operands' buffers
// (same elements, same size): every kernel reads an element's inputs
// before it writes the element, except the vector exp and log, which redo
// special lanes from x after storing the vector's result.
// TestElementwiseKernelsMayOverwriteTheirInputs checks every op it allows.
func OverwritesInputSafely(op string) bool {
	switch op {
	case "exp", "log":
		return false
	}
	return true
}
