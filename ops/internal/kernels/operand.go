package kernels

import (
	"fmt"
	"math"

	"github.com/cubego/cubego/zarr"
)

// Operand is an N-D view over a byte buffer of little-endian elements.
//
// Shape is the logical shape; for the inputs of elementwise kernels it is the
// destination's shape (broadcasting is expressed with zero strides). Strides
// are in elements and never negative; nil means C-contiguous for Shape.
// Offset is the index, in elements, of the view's first element in Data.
type Operand struct {
	DType   zarr.DataType
	Data    []byte
	Shape   []int
	Strides []int
	Offset  int
}

// Contiguous returns a C-contiguous operand over data.
func Contiguous(dt zarr.DataType, data []byte, shape []int) Operand {
	return Operand{DType: dt, Data: data, Shape: shape}
}

// numElements returns the number of elements of shape.
func numElements(shape []int) (int, error) {
	n := 1
	for _, e := range shape {
		if e < 0 {
			return 0, fmt.Errorf("kernels: negative extent in shape %v", shape)
		}
		if e != 0 && n > math.MaxInt/e {
			return 0, fmt.Errorf("kernels: shape %v too large", shape)
		}
		n *= e
	}
	return n, nil
}

// cStrides returns the C-order strides, in elements, of shape.
func cStrides(shape []int) []int {
	s := make([]int, len(shape))
	acc := 1
	for d := len(shape) - 1; d >= 0; d-- {
		s[d] = acc
		acc *= shape[d]
	}
	return s
}

// isCContiguous reports whether strides lay shape out in C order with no
// gaps. Dimensions of extent 1 may have any stride.
func isCContiguous(shape, strides []int) bool {
	want := 1
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] != 1 && strides[d] != want {
			return false
		}
		want *= shape[d]
	}
	return true
}

// sameShape reports whether a and b are equal.
func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// checkDst validates a C-contiguous destination and returns its element
// count and its data from the first element on.
func checkDst(dst Operand) (int, []byte, error) {
	if !dst.DType.Valid() {
		return 0, nil, fmt.Errorf("kernels: destination has invalid data type %s", dst.DType)
	}
	n, err := numElements(dst.Shape)
	if err != nil {
		return 0, nil, err
	}
	if dst.Strides != nil && (len(dst.Strides) != len(dst.Shape) || !isCContiguous(dst.Shape, dst.Strides)) {
		return 0, nil, fmt.Errorf("kernels: destination strides %v are not C-contiguous for shape %v", dst.Strides, dst.Shape)
	}
	size := dst.DType.Size()
	if dst.Offset < 0 || dst.Offset > len(dst.Data)/size || n > len(dst.Data)/size-dst.Offset {
		return 0, nil, fmt.Errorf("kernels: destination of %d %s elements at offset %d does not fit in %d bytes",
			n, dst.DType, dst.Offset, len(dst.Data))
	}
	return n, dst.Data[dst.Offset*size : (dst.Offset+n)*size], nil
}

// checkInput validates o as a view of the given shape and returns its
// strides (C strides when o.Strides is nil).
func checkInput(role string, o Operand, shape []int) ([]int, error) {
	if !o.DType.Valid() {
		return nil, fmt.Errorf("kernels: %s has invalid data type %s", role, o.DType)
	}
	if !sameShape(o.Shape, shape) {
		return nil, fmt.Errorf("kernels: %s shape %v, want %v", role, o.Shape, shape)
	}
	strides := o.Strides
	if strides == nil {
		strides = cStrides(shape)
	} else if len(strides) != len(shape) {
		return nil, fmt.Errorf("kernels: %s has %d strides for %d dimensions", role, len(strides), len(shape))
	}
	if o.Offset < 0 {
		return nil, fmt.Errorf("kernels: %s has negative offset %d", role, o.Offset)
	}
	n, err := numElements(shape)
	if err != nil || n == 0 {
		return strides, err
	}
	// last is the element index of the view's last element; every step is
	// checked for overflow so that absurd strides give an error, not a panic.
	last := o.Offset
	for d, e := range shape {
		s := strides[d]
		if s < 0 {
			return nil, fmt.Errorf("kernels: %s has negative stride %v", role, strides)
		}
		if e > 1 && s > 0 {
			if e-1 > (math.MaxInt-last)/s {
				return nil, fmt.Errorf("kernels: %s strides %v overflow", role, strides)
			}
			last += (e - 1) * s
		}
	}
	if last >= len(o.Data)/o.DType.Size() {
		return nil, fmt.Errorf("kernels: %s view (shape %v, strides %v, offset %d) exceeds its %d bytes of %s",
			role, shape, strides, o.Offset, len(o.Data), o.DType)
	}
	return strides, nil
}

// coalesce drops dimensions of extent 1 and merges neighbouring dimensions
// that every operand (and a C-contiguous destination) traverses with one
// stride. It returns at least one dimension.
func coalesce(shape []int, strides [][]int) ([]int, [][]int) {
	cs := make([]int, 0, len(shape))
	cst := make([][]int, len(strides))
	for d, e := range shape {
		if e == 1 {
			continue
		}
		if last := len(cs) - 1; last >= 0 {
			merge := true
			for k := range strides {
				if cst[k][last] != strides[k][d]*e {
					merge = false
					break
				}
			}
			if merge {
				cs[last] *= e
				for k := range strides {
					cst[k][last] = strides[k][d]
				}
				continue
			}
		}
		cs = append(cs, e)
		for k := range strides {
			cst[k] = append(cst[k], strides[k][d])
		}
	}
	if len(cs) == 0 {
		cs = append(cs, 1)
		for k := range strides {
			cst[k] = append(cst[k], 0)
		}
	}
	return cs, cst
}
