package zarr

import "fmt"

// DataType is an element type of a Zarr array and of every chunk buffer in
// the engine. Values are little-endian in memory, whatever the stored order.
type DataType uint8

// The data types cubego stores and computes with. Float16 is storage only:
// the engine computes with it as Float32.
const (
	Invalid DataType = iota
	Bool
	Int8
	Int16
	Int32
	Int64
	Uint8
	Uint16
	Uint32
	Uint64
	Float16
	Float32
	Float64
	Complex64
	Complex128
)

var dataTypeNames = [...]string{
	Invalid: "invalid", Bool: "bool",
	Int8: "int8", Int16: "int16", Int32: "int32", Int64: "int64",
	Uint8: "uint8", Uint16: "uint16", Uint32: "uint32", Uint64: "uint64",
	Float16: "float16", Float32: "float32", Float64: "float64",
	Complex64: "complex64", Complex128: "complex128",
}

var dataTypeSizes = [...]int{
	Bool: 1, Int8: 1, Int16: 2, Int32: 4, Int64: 8,
	Uint8: 1, Uint16: 2, Uint32: 4, Uint64: 8,
	Float16: 2, Float32: 4, Float64: 8, Complex64: 8, Complex128: 16,
}

// String returns the Zarr v3 name of the data type (also numpy's name).
func (d DataType) String() string {
	if int(d) < len(dataTypeNames) {
		return dataTypeNames[d]
	}
	return fmt.Sprintf("DataType(%d)", uint8(d))
}

// Size returns the size of one element in bytes.
func (d DataType) Size() int {
	if int(d) < len(dataTypeSizes) {
		return dataTypeSizes[d]
	}
	return 0
}

// Valid reports whether d is one of the defined data types.
func (d DataType) Valid() bool { return d > Invalid && d <= Complex128 }

// ParseDataType returns the data type with the given Zarr v3 name.
func ParseDataType(name string) (DataType, error) {
	for i, n := range dataTypeNames {
		if i > 0 && n == name {
			return DataType(i), nil
		}
	}
	return Invalid, fmt.Errorf("%w: data type %q", ErrNotImplemented, name)
}

// MarshalText encodes the data type as its name.
func (d DataType) MarshalText() ([]byte, error) {
	if !d.Valid() {
		return nil, fmt.Errorf("zarr: invalid data type %d", uint8(d))
	}
	return []byte(d.String()), nil
}

// UnmarshalText decodes a data type name.
func (d *DataType) UnmarshalText(b []byte) error {
	v, err := ParseDataType(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}
