package ops

import (
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// DType is an element type. It is the zarr data type: the engine stores
// exactly what it computes.
type DType = zarr.DataType

// The Array API data types.
const (
	Bool       = zarr.Bool
	Int8       = zarr.Int8
	Int16      = zarr.Int16
	Int32      = zarr.Int32
	Int64      = zarr.Int64
	Uint8      = zarr.Uint8
	Uint16     = zarr.Uint16
	Uint32     = zarr.Uint32
	Uint64     = zarr.Uint64
	Float32    = zarr.Float32
	Float64    = zarr.Float64
	Complex64  = zarr.Complex64
	Complex128 = zarr.Complex128
)

// Default data types of the namespace.
const (
	DefaultInt   = Int64
	DefaultFloat = Float64
)

// IsBool, IsSigned, IsUnsigned, IsInteger, IsFloat, IsComplex classify dtypes.
func IsBool(d DType) bool     { return d == Bool }
func IsSigned(d DType) bool   { return d >= Int8 && d <= Int64 }
func IsUnsigned(d DType) bool { return d >= Uint8 && d <= Uint64 }
func IsInteger(d DType) bool  { return IsSigned(d) || IsUnsigned(d) }
func IsFloat(d DType) bool    { return d == Float32 || d == Float64 }
func IsComplex(d DType) bool  { return d == Complex64 || d == Complex128 }
func IsNumeric(d DType) bool  { return IsInteger(d) || IsFloat(d) || IsComplex(d) }

// ParseDType returns the data type with the given name, or a type error.
func ParseDType(name string) (DType, error) {
	d, err := zarr.ParseDataType(name)
	if err != nil || d == zarr.Float16 {
		return 0, plan.Errorf(plan.ErrType, "unsupported data type %q: cubego computes with bool, int8-int64, uint8-uint64, float32, float64, complex64 and complex128", name)
	}
	return d, nil
}

// ResultType applies the promotion rules to two array dtypes: the Array
// API standard's table, extended as numpy does for mixed kinds (bool with
// numbers, integers with floats, int64 with uint64 → float64).
func ResultType(a, b DType) DType {
	if a == b {
		return a
	}
	if a > b {
		a, b = b, a
	}
	switch {
	case a == Bool:
		return b
	case IsSigned(a) && IsSigned(b), IsUnsigned(a) && IsUnsigned(b):
		return max(a, b)
	case IsSigned(a) && IsUnsigned(b):
		// The smallest signed type holding both; none for uint64.
		need := max(a.Size(), 2*b.Size())
		if need > 8 {
			return Float64
		}
		return signedOfSize(need)
	case IsUnsigned(a) && IsFloat(b), IsSigned(a) && IsFloat(b):
		if b == Float32 && a.Size() <= 2 {
			return Float32
		}
		return Float64
	case IsInteger(a) && IsComplex(b):
		if b == Complex64 && a.Size() <= 2 {
			return Complex64
		}
		return Complex128
	case IsFloat(a) && IsFloat(b):
		return Float64
	case IsFloat(a) && IsComplex(b):
		if a == Float64 || b == Complex128 {
			return Complex128
		}
		return Complex64
	case IsComplex(a) && IsComplex(b):
		return Complex128
	}
	return b
}

func signedOfSize(n int) DType {
	switch n {
	case 1:
		return Int8
	case 2:
		return Int16
	case 4:
		return Int32
	}
	return Int64
}

// ScalarResultType applies NEP 50's rules for a Python scalar (a weak type)
// combined with an array of dtype d.
func ScalarResultType(d DType, s plan.Scalar) DType {
	switch s.Kind {
	case 'b':
		return d
	case 'i', 'u':
		if d == Bool {
			return DefaultInt
		}
		return d
	case 'f':
		if d == Bool || IsInteger(d) {
			return DefaultFloat
		}
		return d
	case 'c':
		switch {
		case d == Float32 || d == Complex64:
			return Complex64
		case IsComplex(d):
			return d
		}
		return Complex128
	}
	return d
}

// RealOf returns the real dtype of a complex dtype (d itself otherwise).
func RealOf(d DType) DType {
	switch d {
	case Complex64:
		return Float32
	case Complex128:
		return Float64
	}
	return d
}

// ComplexOf returns the complex dtype of d's precision: complex64 for
// float32, complex128 otherwise; complex dtypes are their own.
func ComplexOf(d DType) DType {
	switch d {
	case Float32, Complex64:
		return Complex64
	}
	return Complex128
}

// FloatOf returns the floating dtype a function of d computes in: d itself
// for floating and complex dtypes, float64 for integers and bool.
func FloatOf(d DType) DType {
	if IsFloat(d) || IsComplex(d) {
		return d
	}
	return Float64
}
