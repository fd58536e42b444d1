package kernels

import (
	"fmt"
	"slices"
	"sort"

	"github.com/cubego/cubego/zarr"
)

// Lane kernels work along one axis of C-contiguous blocks: a block of shape
// (…outer, n, …inner) is outer×inner lanes of n elements, each lane's
// elements inner apart.

func lanes(shape []int, axis int) (outer, n, inner int) {
	outer, inner = 1, 1
	for d, e := range shape {
		switch {
		case d < axis:
			outer *= e
		case d > axis:
			inner *= e
		}
	}
	return outer, shape[axis], inner
}

func checkLane(name string, x Operand, axis int) error {
	if axis < 0 || axis >= len(x.Shape) {
		return fmt.Errorf("kernels: %s axis %d invalid for %d dimensions", name, axis, len(x.Shape))
	}
	if x.Strides != nil && !isCContiguous(x.Shape, x.Strides) || x.Offset != 0 {
		return fmt.Errorf("kernels: %s needs C-contiguous operands", name)
	}
	return nil
}

// Scan writes the inclusive cumulative sum ("cumsum") or product
// ("cumprod") of x along axis into dst (same dtype and shape), continuing
// from carry when it is not nil: carry holds one element per lane (the
// shape of x with extent 1 on axis) and is updated to the lanes' last values.
// It means, for each lane: acc = carry; for i: acc = acc op x[i]; dst[i] = acc.
func Scan(op string, dst, x Operand, axis int, carry []byte) error {
	clearUpper()
	if err := checkLane(op, x, axis); err != nil {
		return err
	}
	if dst.DType != x.DType || len(dst.Data) < len(x.Data) {
		return fmt.Errorf("kernels: %s destination does not match its input", op)
	}
	if op != "cumsum" && op != "cumprod" {
		return unsupported(op, x.DType)
	}
	prod := op == "cumprod"
	o, n, in := lanes(x.Shape, axis)
	switch x.DType {
	case zarr.Int8:
		scanLoop(as[int8](dst.Data), as[int8](x.Data), as[int8](carry), o, n, in, prod)
	case zarr.Int16:
		scanLoop(as[int16](dst.Data), as[int16](x.Data), as[int16](carry), o, n, in, prod)
	case zarr.Int32:
		scanLoop(as[int32](dst.Data), as[int32](x.Data), as[int32](carry), o, n, in, prod)
	case zarr.Int64:
		scanLoop(as[int64](dst.Data), as[int64](x.Data), as[int64](carry), o, n, in, prod)
	case zarr.Uint8:
		scanLoop(as[uint8](dst.Data), as[uint8](x.Data), as[uint8](carry), o, n, in, prod)
	case zarr.Uint16:
		scanLoop(as[uint16](dst.Data), as[uint16](x.Data), as[uint16](carry), o, n, in, prod)
	case zarr.Uint32:
		scanLoop(as[uint32](dst.Data), as[uint32](x.Data), as[uint32](carry), o, n, in, prod)
	case zarr.Uint64:
		scanLoop(as[uint64](dst.Data), as[uint64](x.Data), as[uint64](carry), o, n, in, prod)
	case zarr.Float32:
		scanLoop(as[float32](dst.Data), as[float32](x.Data), as[float32](carry), o, n, in, prod)
	case zarr.Float64:
		scanLoop(as[float64](dst.Data), as[float64](x.Data), as[float64](carry), o, n, in, prod)
	case zarr.Complex64:
		scanLoop(as[complex64](dst.Data), as[complex64](x.Data), as[complex64](carry), o, n, in, prod)
	case zarr.Complex128:
		scanLoop(as[complex128](dst.Data), as[complex128](x.Data), as[complex128](carry), o, n, in, prod)
	default:
		return unsupported(op, x.DType)
	}
	return nil
}

func scanLoop[T number](dst, x, carry []T, outer, n, inner int, prod bool) {
	for o := range outer {
		for j := range inner {
			var acc T
			if prod {
				acc = 1
			}
			if carry != nil {
				acc = carry[o*inner+j]
			}
			base := o*n*inner + j
			for i := range n {
				k := base + i*inner
				if prod {
					acc *= x[k]
				} else {
					acc += x[k]
				}
				dst[k] = acc
			}
			if carry != nil {
				carry[o*inner+j] = acc
			}
		}
	}
}

// Sort writes x sorted along axis into dst (same dtype and shape); with
// indices set it writes int64 indices of the sorted order instead (dst
// must then be Int64). Sorting is stable; NaNs sort to the end. Descending
// order is the reverse of the stable ascending sort of the reversed lane,
// as the Array API's reference does (so ties keep their order).
func Sort(dst, x Operand, axis int, descending, indices bool) error {
	clearUpper()
	if err := checkLane("sort", x, axis); err != nil {
		return err
	}
	o, n, in := lanes(x.Shape, axis)
	if indices && dst.DType != zarr.Int64 || !indices && dst.DType != x.DType {
		return fmt.Errorf("kernels: sort destination has dtype %s", dst.DType)
	}
	switch x.DType {
	case zarr.Bool, zarr.Uint8:
		sortLanes(dst.Data, as[uint8](x.Data), o, n, in, descending, indices)
	case zarr.Int8:
		sortLanes(dst.Data, as[int8](x.Data), o, n, in, descending, indices)
	case zarr.Int16:
		sortLanes(dst.Data, as[int16](x.Data), o, n, in, descending, indices)
	case zarr.Int32:
		sortLanes(dst.Data, as[int32](x.Data), o, n, in, descending, indices)
	case zarr.Int64:
		sortLanes(dst.Data, as[int64](x.Data), o, n, in, descending, indices)
	case zarr.Uint16:
		sortLanes(dst.Data, as[uint16](x.Data), o, n, in, descending, indices)
	case zarr.Uint32:
		sortLanes(dst.Data, as[uint32](x.Data), o, n, in, descending, indices)
	case zarr.Uint64:
		sortLanes(dst.Data, as[uint64](x.Data), o, n, in, descending, indices)
	case zarr.Float32:
		sortLanes(dst.Data, as[float32](x.Data), o, n, in, descending, indices)
	case zarr.Float64:
		sortLanes(dst.Data, as[float64](x.Data), o, n, in, descending, indices)
	default:
		return unsupported("sort", x.DType)
	}
	return nil
}

// lessNaNLast orders numbers with NaN after everything else.
func lessNaNLast[T realNumber](a, b T) bool { return a < b || (a == a && b != b) }

func sortLanes[T realNumber](dst []byte, x []T, outer, n, inner int, descending, indices bool) {
	idx := make([]int, n)
	var out []T
	var outIdx []int64
	if indices {
		outIdx = as[int64](dst)
	} else {
		out = as[T](dst)
	}
	for o := range outer {
		for j := range inner {
			base := o*n*inner + j
			for i := range idx {
				idx[i] = i
				if descending {
					idx[i] = n - 1 - i
				}
			}
			sort.SliceStable(idx, func(a, b int) bool { return lessNaNLast(x[base+idx[a]*inner], x[base+idx[b]*inner]) })
			if descending {
				slices.Reverse(idx)
			}
			for i, k := range idx {
				if indices {
					outIdx[base+i*inner] = int64(k)
				} else {
					out[base+i*inner] = x[base+k*inner]
				}
			}
		}
	}
}

// Gather copies, for every position j along axis of dst whose wanted index
// idx[j] lies in [start, start+x.Shape[axis]), the slab x[…, idx[j]-start, …]
// into dst[…, j, …]. Called once per block of the source along axis, it
// assembles a take in bounded memory. x and dst share dtype and all other
// extents.
func Gather(dst, x Operand, axis int, idx []int64, start int) error {
	clearUpper()
	if err := checkLane("take", x, axis); err != nil {
		return err
	}
	if dst.DType != x.DType {
		return fmt.Errorf("kernels: take destination has dtype %s, not %s", dst.DType, x.DType)
	}
	o, n, in := lanes(x.Shape, axis)
	_, m, _ := lanes(dst.Shape, axis)
	if len(idx) != m {
		return fmt.Errorf("kernels: take has %d indices for %d positions", len(idx), m)
	}
	es := x.DType.Size()
	run := in * es
	for j, k := range idx {
		i := int(k) - start
		if i < 0 || i >= n {
			continue
		}
		for oo := range o {
			s := (oo*n + i) * run
			d := (oo*m + j) * run
			copy(dst.Data[d:d+run], x.Data[s:s+run])
		}
	}
	return nil
}

// CountBelow adds to acc (Int64, v's shape) the number of elements of the
// sorted 1-D block s that are less than (right: less than or equal to)
// each element of v: summed over the blocks of a sorted array this is
// searchsorted. NaNs sort last.
func CountBelow(acc, s, v Operand, right, first bool) error {
	clearUpper()
	if acc.DType != zarr.Int64 || s.DType != v.DType {
		return fmt.Errorf("kernels: searchsorted operands do not match")
	}
	a := as[int64](acc.Data)
	if first {
		clear(a)
	}
	switch v.DType {
	case zarr.Int8:
		countBelow(a, as[int8](s.Data), as[int8](v.Data), right)
	case zarr.Int16:
		countBelow(a, as[int16](s.Data), as[int16](v.Data), right)
	case zarr.Int32:
		countBelow(a, as[int32](s.Data), as[int32](v.Data), right)
	case zarr.Int64:
		countBelow(a, as[int64](s.Data), as[int64](v.Data), right)
	case zarr.Bool, zarr.Uint8:
		countBelow(a, as[uint8](s.Data), as[uint8](v.Data), right)
	case zarr.Uint16:
		countBelow(a, as[uint16](s.Data), as[uint16](v.Data), right)
	case zarr.Uint32:
		countBelow(a, as[uint32](s.Data), as[uint32](v.Data), right)
	case zarr.Uint64:
		countBelow(a, as[uint64](s.Data), as[uint64](v.Data), right)
	case zarr.Float32:
		countBelow(a, as[float32](s.Data), as[float32](v.Data), right)
	case zarr.Float64:
		countBelow(a, as[float64](s.Data), as[float64](v.Data), right)
	default:
		return unsupported("searchsorted", v.DType)
	}
	return nil
}

func countBelow[T realNumber](acc []int64, s, v []T, right bool) {
	for i, x := range v[:len(acc)] {
		if right {
			acc[i] += int64(sort.Search(len(s), func(k int) bool { return lessNaNLast(x, s[k]) }))
		} else {
			acc[i] += int64(sort.Search(len(s), func(k int) bool { return !lessNaNLast(s[k], x) }))
		}
	}
}

// IsIn sets acc (Bool, x's shape) where an element of x equals an element
// of the 1-D block t (or-ing with acc unless first): folded over the
// blocks of the test elements this is isin.
func IsIn(acc, x, t Operand, first bool) error {
	clearUpper()
	if acc.DType != zarr.Bool || x.DType != t.DType {
		return fmt.Errorf("kernels: isin operands do not match")
	}
	a := as[uint8](acc.Data)
	if first {
		clear(a)
	}
	switch x.DType {
	case zarr.Bool, zarr.Uint8, zarr.Int8:
		isIn(a, as[uint8](x.Data), as[uint8](t.Data))
	case zarr.Int16, zarr.Uint16:
		isIn(a, as[uint16](x.Data), as[uint16](t.Data))
	case zarr.Int32, zarr.Uint32:
		isIn(a, as[uint32](x.Data), as[uint32](t.Data))
	case zarr.Int64, zarr.Uint64:
		isIn(a, as[uint64](x.Data), as[uint64](t.Data))
	case zarr.Float32:
		isIn(a, as[float32](x.Data), as[float32](t.Data))
	case zarr.Float64:
		isIn(a, as[float64](x.Data), as[float64](t.Data))
	case zarr.Complex64:
		isIn(a, as[complex64](x.Data), as[complex64](t.Data))
	case zarr.Complex128:
		isIn(a, as[complex128](x.Data), as[complex128](t.Data))
	default:
		return unsupported("isin", x.DType)
	}
	return nil
}

// isIn compares by value with ==, so NaN is in nothing and -0 == +0 (for
// the integer types, comparing the bit patterns is the same as values).
func isIn[T comparable](acc []uint8, x, t []T) {
	set := make(map[T]struct{}, len(t))
	for _, v := range t {
		set[v] = struct{}{}
	}
	for i, v := range x[:len(acc)] {
		if acc[i] == 0 {
			if _, ok := set[v]; ok {
				acc[i] = 1
			}
		}
	}
}
