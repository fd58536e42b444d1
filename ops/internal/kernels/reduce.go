package kernels

import (
	"fmt"

	"github.com/cubego/cubego/zarr"
)

// Reduce reduces x over axes into acc.
//
// acc is C-contiguous with x's shape but extent 1 on axes (keepdims) and,
// except for any and all, x's dtype. With first, acc = reduce(x); else acc =
// combine(acc, reduce(x)), which is how a reduction accumulates over the
// chunks of an array.
//
// Ops and dtypes (numpy semantics):
//   - sum, prod: numbers; integers wrap; float and complex sums use numpy's
//     pairwise summation along the innermost reduced run.
//   - min, max: numbers and bool; NaN propagates; complex numbers are ordered
//     lexicographically as in numpy. A min or max of an empty x with first is
//     an error.
//   - nansum, nanprod, nanmin, nanmax: as above but skipping NaN; an all-NaN
//     min or max is NaN; on integers they equal the plain ops.
//   - any, all: x of any dtype (non-zero is true), acc Bool.
func Reduce(op string, acc, x Operand, axes []int, first bool) error {
	clearUpper()
	xStrides, err := checkInput("reduced operand", x, x.Shape)
	if err != nil {
		return err
	}
	nd := len(x.Shape)
	accShape := append([]int(nil), x.Shape...)
	reduced := make([]bool, nd)
	for _, a := range axes {
		if a < 0 || a >= nd || reduced[a] {
			return fmt.Errorf("kernels: %s axes %v invalid for %d dimensions", op, axes, nd)
		}
		reduced[a] = true
		accShape[a] = 1
	}
	if !sameShape(acc.Shape, accShape) {
		return fmt.Errorf("kernels: %s accumulator shape %v, want %v", op, acc.Shape, accShape)
	}
	accN, accData, err := checkDst(acc)
	if err != nil {
		return err
	}
	anyAll := op == "any" || op == "all"
	if anyAll && acc.DType != zarr.Bool {
		return fmt.Errorf("kernels: %s accumulator is %s, not bool", op, acc.DType)
	}
	widens := !anyAll && acc.DType != x.DType && Widens(op, x.DType, acc.DType)
	if !anyAll && acc.DType != x.DType && !widens {
		return fmt.Errorf("kernels: %s accumulator is %s, not %s", op, acc.DType, x.DType)
	}
	r, ok := newReduction(op, x.DType, accData, x.Data)
	// slab, if not nil, is r.accum over rows contiguous runs rs apart, all
	// into the same acc row: for j < rows, r.accum(ai, xo+j*rs, 1, n).
	var slab func(ai, xo, n, rows, rs int)
	// runs, if not nil, is r.row over rows contiguous runs rs apart, each
	// into the next acc element: for j < rows, r.row(ai+j, xo+j*rs, 1, n).
	var runs func(ai, xo, n, rows, rs int)
	if widens {
		r, ok = newWideningReduction(op, x.DType, acc.DType, accData, x.Data)
	} else if v := vectorRows[opDType{op, x.DType}]; ok && v != nil {
		r = v(accData, x.Data, r)
		if s := vectorSlabs[opDType{op, x.DType}]; s != nil {
			slab = s(accData, x.Data)
		}
		if s := vectorRowRuns[opDType{op, x.DType}]; s != nil {
			runs = s(accData, x.Data)
		}
	}
	if !ok {
		return unsupported(op, x.DType)
	}
	xN, _ := numElements(x.Shape)
	if accN == 0 {
		return nil
	}
	if first {
		switch op {
		case "sum", "nansum", "any":
			clear(accData)
		case "prod", "nanprod", "all":
			Fill(accData, acc.DType, ScalarBytes(Scalar{Kind: 'i', I: 1}, acc.DType))
		default: // min and max start from the first element along axes
			if xN == 0 {
				return fmt.Errorf("kernels: %s of an empty array", op)
			}
			slab := Operand{DType: x.DType, Data: x.Data, Shape: accShape, Strides: xStrides, Offset: x.Offset}
			if err := CopyStrided(acc, slab); err != nil {
				return err
			}
		}
	}
	if xN == 0 {
		return nil
	}

	accStrides := cStrides(accShape)
	for d := range reduced {
		if reduced[d] {
			accStrides[d] = 0
		}
	}
	shape, st := coalesce(x.Shape, [][]int{xStrides, accStrides})
	xs, as := st[0], st[1]
	last := len(shape) - 1
	n, xInner := shape[last], xs[last]
	// The inner run either reduces into one accumulator element (its acc
	// stride is 0) or accumulates elementwise into a row of acc (stride 1).
	// A reduction with a slab loop takes the contiguous runs of the next
	// dimension, all into the same acc row, in one call.
	slabs := slab != nil && last >= 1 && as[last] == 1 && xInner == 1 && as[last-1] == 0
	// Likewise a reduction with a row-runs loop takes the contiguous runs of
	// the next dimension, each into the next acc element, in one call.
	rowRuns := runs != nil && last >= 1 && as[last] == 0 && xInner == 1 && as[last-1] == 1 && xs[last-1] >= 0
	outer := last
	if slabs || rowRuns {
		outer = last - 1
	}
	idx := make([]int, last)
	xo, ao := x.Offset, 0
	for {
		switch {
		case slabs:
			slab(ao, xo, n, shape[last-1], xs[last-1])
		case rowRuns:
			runs(ao, xo, n, shape[last-1], xs[last-1])
		case as[last] == 0:
			r.row(ao, xo, xInner, n)
		default:
			r.accum(ao, xo, xInner, n)
		}
		k := outer - 1
		for ; k >= 0; k-- {
			idx[k]++
			xo += xs[k]
			ao += as[k]
			if idx[k] < shape[k] {
				break
			}
			xo -= xs[k] * shape[k]
			ao -= as[k] * shape[k]
			idx[k] = 0
		}
		if k < 0 {
			return nil
		}
	}
}

// reduction holds the two loops of a reduction over typed acc and x:
// row(ai, xo, xs, n) combines the n elements x[xo], x[xo+xs], ... into
// acc[ai]; accum(ai, xo, xs, n) combines x[xo+j*xs] into acc[ai+j], j < n.
type reduction struct {
	row, accum func(ai, xo, xs, n int)
}

func newReduction(op string, dt zarr.DataType, acc, x []byte) (reduction, bool) {
	if op == "any" || op == "all" {
		switch dt {
		case zarr.Bool, zarr.Int8, zarr.Uint8: // integers are zero when all bits are
			return anyAllReduction(op, acc, as[uint8](x))
		case zarr.Int16, zarr.Uint16:
			return anyAllReduction(op, acc, as[uint16](x))
		case zarr.Int32, zarr.Uint32:
			return anyAllReduction(op, acc, as[uint32](x))
		case zarr.Int64, zarr.Uint64:
			return anyAllReduction(op, acc, as[uint64](x))
		case zarr.Float32:
			return anyAllReduction(op, acc, as[float32](x))
		case zarr.Float64:
			return anyAllReduction(op, acc, as[float64](x))
		case zarr.Complex64:
			return anyAllReduction(op, acc, as[complex64](x))
		case zarr.Complex128:
			return anyAllReduction(op, acc, as[complex128](x))
		}
		return reduction{}, false
	}
	switch dt {
	case zarr.Bool:
		switch op {
		case "min", "nanmin":
			return anyAllReduction("all", acc, as[uint8](x))
		case "max", "nanmax":
			return anyAllReduction("any", acc, as[uint8](x))
		}
	case zarr.Int8:
		return intReduction(op, as[int8](acc), as[int8](x))
	case zarr.Int16:
		return intReduction(op, as[int16](acc), as[int16](x))
	case zarr.Int32:
		return intReduction(op, as[int32](acc), as[int32](x))
	case zarr.Int64:
		return intReduction(op, as[int64](acc), as[int64](x))
	case zarr.Uint8:
		return intReduction(op, as[uint8](acc), as[uint8](x))
	case zarr.Uint16:
		return intReduction(op, as[uint16](acc), as[uint16](x))
	case zarr.Uint32:
		return intReduction(op, as[uint32](acc), as[uint32](x))
	case zarr.Uint64:
		return intReduction(op, as[uint64](acc), as[uint64](x))
	case zarr.Float32:
		return floatReduction(op, as[float32](acc), as[float32](x))
	case zarr.Float64:
		return floatReduction(op, as[float64](acc), as[float64](x))
	case zarr.Complex64:
		return complexReduction(op, as[complex64](acc), as[complex64](x))
	case zarr.Complex128:
		return complexReduction(op, as[complex128](acc), as[complex128](x))
	}
	return reduction{}, false
}

func intReduction[T integer](op string, a, x []T) (reduction, bool) {
	switch op {
	case "sum", "nansum":
		return reduction{
			func(ai, xo, xs, n int) { a[ai] += sumRow(x, xo, xs, n) },
			func(ai, xo, xs, n int) { addAccum(a[ai:ai+n], x, xo, xs) },
		}, true
	case "prod", "nanprod":
		return reduction{
			func(ai, xo, xs, n int) { a[ai] = prodRow(x, xo, xs, n, a[ai]) },
			func(ai, xo, xs, n int) { mulAccum(a[ai:ai+n], x, xo, xs) },
		}, true
	case "min", "nanmin":
		return reduction{
			func(ai, xo, xs, n int) { a[ai] = minRow(x, xo, xs, n, a[ai]) },
			func(ai, xo, xs, n int) { minAccum(a[ai:ai+n], x, xo, xs) },
		}, true
	case "max", "nanmax":
		return reduction{
			func(ai, xo, xs, n int) { a[ai] = maxRow(x, xo, xs, n, a[ai]) },
			func(ai, xo, xs, n int) { maxAccum(a[ai:ai+n], x, xo, xs) },
		}, true
	}
	return reduction{}, false
}

func floatReduction[T float](op string, a, x []T) (reduction, bool) {
	switch op {
	case "sum":
		return reduction{
			func(ai, xo, xs, n int) { a[ai] += pairwiseSum(x, xo, xs, n) },
			func(ai, xo, xs, n int) { addAccum(a[ai:ai+n], x, xo, xs) },
		}, true
	case "nansum":
		return reduction{
			func(ai, xo, xs, n int) { a[ai] += nanPairwiseSum(x, xo, xs, n) },
			func(ai, xo, xs, n int) { nanAddAccum(a[ai:ai+n], x, xo, xs) },
		}, true
	case "prod":
		return reduction{
			func(ai, xo, xs, n int) { a[ai] = prodRow(x, xo, xs, n, a[ai]) },
			func(ai, xo, xs, n int) { mulAccum(a[ai:ai+n], x, xo, xs) },
		}, true
	case "nanprod":
		return reduction{
			func(ai, xo, xs, n int) { a[ai] = nanProdRow(x, xo, xs, n, a[ai]) },
			func(ai, xo, xs, n int) { nanMulAccum(a[ai:ai+n], x, xo, xs) },
		}, true
	case "min":
		return reduction{
			func(ai, xo, xs, n int) { a[ai] = minRow(x, xo, xs, n, a[ai]) },
			func(ai, xo, xs, n int) { minAccum(a[ai:ai+n], x, xo, xs) },
		}, true
	case "max":
		return reduction{
			func(ai, xo, xs, n int) { a[ai] = maxRow(x, xo, xs, n, a[ai]) },
			func(ai, xo, xs, n int) { maxAccum(a[ai:ai+n], x, xo, xs) },
		}, true
	case "nanmin":
		return reduction{
			func(ai, xo, xs, n int) { a[ai] = nanMinRow(x, xo, xs, n, a[ai]) },
			func(ai, xo, xs, n int) { nanMinAccum(a[ai:ai+n], x, xo, xs) },
		}, true
	case "nanmax":
		return reduction{
			func(ai, xo, xs, n int) { a[ai] = nanMaxRow(x, xo, xs, n, a[ai]) },
			func(ai, xo, xs, n int) { nanMaxAccum(a[ai:ai+n], x, xo, xs) },
		}, true
	}
	return reduction{}, false
}

func complexReduction[T complexFloat](op string, a, x []T) (reduction, bool) {
	switch op {
	case "sum":
		return reduction{
			func(ai, xo, xs, n int) { a[ai] += pairwiseSum(x, xo, xs, n) },
			func(ai, xo, xs, n int) { addAccum(a[ai:ai+n], x, xo, xs) },
		}, true
	case "nansum":
		return reduction{
			func(ai, xo, xs, n int) { a[ai] += nanPairwiseSum(x, xo, xs, n) },
			func(ai, xo, xs, n int) { nanAddAccum(a[ai:ai+n], x, xo, xs) },
		}, true
	case "prod":
		return reduction{
			func(ai, xo, xs, n int) { a[ai] = prodRow(x, xo, xs, n, a[ai]) },
			func(ai, xo, xs, n int) { mulAccum(a[ai:ai+n], x, xo, xs) },
		}, true
	case "nanprod":
		return reduction{
			func(ai, xo, xs, n int) { a[ai] = nanProdRow(x, xo, xs, n, a[ai]) },
			func(ai, xo, xs, n int) { nanMulAccum(a[ai:ai+n], x, xo, xs) },
		}, true
	case "min", "max", "nanmin", "nanmax":
		skip := op == "nanmin" || op == "nanmax"
		isMax := op == "max" || op == "nanmax"
		return reduction{
			func(ai, xo, xs, n int) { a[ai] = cExtremeRow(x, xo, xs, n, a[ai], isMax, skip) },
			func(ai, xo, xs, n int) {
				d := a[ai : ai+n]
				for i := range d {
					d[i] = cExtremeRow(x, xo+i*xs, 0, 1, d[i], isMax, skip)
				}
			},
		}, true
	}
	return reduction{}, false
}

func anyAllReduction[T number](op string, acc []byte, x []T) (reduction, bool) {
	a := as[uint8](acc)
	if op == "any" {
		return reduction{
			func(ai, xo, xs, n int) {
				if a[ai] == 0 {
					a[ai] = b2u(anyRow(x, xo, xs, n))
				}
			},
			func(ai, xo, xs, n int) {
				d := a[ai : ai+n]
				j := xo
				for i := range d {
					d[i] |= b2u(x[j] != 0)
					j += xs
				}
			},
		}, true
	}
	return reduction{
		func(ai, xo, xs, n int) {
			if a[ai] != 0 {
				a[ai] = b2u(allRow(x, xo, xs, n))
			}
		},
		func(ai, xo, xs, n int) {
			d := a[ai : ai+n]
			j := xo
			for i := range d {
				d[i] &= b2u(x[j] != 0)
				j += xs
			}
		},
	}, true
}

// Row loops: combine x[xo], x[xo+xs], ... (n elements) into one value. Each
// has a contiguous fast path with the same meaning as its strided loop.

func sumRow[T integer](x []T, xo, xs, n int) T {
	var s T
	if xs == 1 {
		for _, v := range x[xo : xo+n] {
			s += v
		}
		return s
	}
	for j := xo; n > 0; n-- {
		s += x[j]
		j += xs
	}
	return s
}

func prodRow[T number](x []T, xo, xs, n int, p T) T {
	for j := xo; n > 0; n-- {
		p *= x[j]
		j += xs
	}
	return p
}

func nanProdRow[T float | complexFloat](x []T, xo, xs, n int, p T) T {
	for j := xo; n > 0; n-- {
		if v := x[j]; v == v {
			p *= v
		}
		j += xs
	}
	return p
}

func minRow[T realNumber](x []T, xo, xs, n int, m T) T {
	if xs == 1 {
		// Meaning: for _, v := range row { m = min(m, v) }, with four
		// independent chains (min is associative, NaN still propagates).
		row := x[xo : xo+n]
		m0, m1, m2, m3 := m, m, m, m
		for len(row) >= 4 {
			m0, m1, m2, m3 = min(m0, row[0]), min(m1, row[1]), min(m2, row[2]), min(m3, row[3])
			row = row[4:]
		}
		for _, v := range row {
			m0 = min(m0, v)
		}
		return min(min(m0, m1), min(m2, m3))
	}
	for j := xo; n > 0; n-- {
		m = min(m, x[j])
		j += xs
	}
	return m
}

func maxRow[T realNumber](x []T, xo, xs, n int, m T) T {
	if xs == 1 {
		// Meaning: for _, v := range row { m = max(m, v) }, in four chains.
		row := x[xo : xo+n]
		m0, m1, m2, m3 := m, m, m, m
		for len(row) >= 4 {
			m0, m1, m2, m3 = max(m0, row[0]), max(m1, row[1]), max(m2, row[2]), max(m3, row[3])
			row = row[4:]
		}
		for _, v := range row {
			m0 = max(m0, v)
		}
		return max(max(m0, m1), max(m2, m3))
	}
	for j := xo; n > 0; n-- {
		m = max(m, x[j])
		j += xs
	}
	return m
}

// nanMin is min skipping NaN: NaN only when both are NaN.
func nanMin[T float](a, v T) T {
	switch {
	case v != v:
		return a
	case a != a:
		return v
	}
	return min(a, v)
}

func nanMax[T float](a, v T) T {
	switch {
	case v != v:
		return a
	case a != a:
		return v
	}
	return max(a, v)
}

func nanMinRow[T float](x []T, xo, xs, n int, m T) T {
	for j := xo; n > 0; n-- {
		m = nanMin(m, x[j])
		j += xs
	}
	return m
}

func nanMaxRow[T float](x []T, xo, xs, n int, m T) T {
	for j := xo; n > 0; n-- {
		m = nanMax(m, x[j])
		j += xs
	}
	return m
}

// cExtremeRow is the complex min or max (lexicographic, numpy's CLE order),
// propagating NaN, or skipping it when skip is set.
func cExtremeRow[T complexFloat](x []T, xo, xs, n int, m T, isMax, skip bool) T {
	for j := xo; n > 0; n-- {
		v := x[j]
		j += xs
		switch {
		case skip && v != v:
		case skip && m != m:
			m = v
		case isMax:
			m = cmax(m, v)
		default:
			m = cmin(m, v)
		}
	}
	return m
}

func anyRow[T number](x []T, xo, xs, n int) bool {
	for j := xo; n > 0; n-- {
		if x[j] != 0 {
			return true
		}
		j += xs
	}
	return false
}

func allRow[T number](x []T, xo, xs, n int) bool {
	for j := xo; n > 0; n-- {
		if x[j] == 0 {
			return false
		}
		j += xs
	}
	return true
}

// Accumulating loops: d[i] = combine(d[i], x[xo+i*xs]).

func addAccum[T number](d, x []T, xo, xs int) {
	if xs == 1 {
		// Meaning: for i := range d { d[i] += x[xo+i] }.
		xr := x[xo : xo+len(d)]
		for i := range d {
			d[i] += xr[i]
		}
		return
	}
	for i := range d {
		d[i] += x[xo]
		xo += xs
	}
}

func nanAddAccum[T float | complexFloat](d, x []T, xo, xs int) {
	for i := range d {
		if v := x[xo]; v == v {
			d[i] += v
		}
		xo += xs
	}
}

func mulAccum[T number](d, x []T, xo, xs int) {
	for i := range d {
		d[i] *= x[xo]
		xo += xs
	}
}

func nanMulAccum[T float | complexFloat](d, x []T, xo, xs int) {
	for i := range d {
		if v := x[xo]; v == v {
			d[i] *= v
		}
		xo += xs
	}
}

func minAccum[T realNumber](d, x []T, xo, xs int) {
	for i := range d {
		d[i] = min(d[i], x[xo])
		xo += xs
	}
}

func maxAccum[T realNumber](d, x []T, xo, xs int) {
	for i := range d {
		d[i] = max(d[i], x[xo])
		xo += xs
	}
}

func nanMinAccum[T float](d, x []T, xo, xs int) {
	for i := range d {
		d[i] = nanMin(d[i], x[xo])
		xo += xs
	}
}

func nanMaxAccum[T float](d, x []T, xo, xs int) {
	for i := range d {
		d[i] = nanMax(d[i], x[xo])
		xo += xs
	}
}

// pairwiseBlock is the run length below which pairwiseSum adds directly
// with eight accumulators, as numpy's PW_BLOCKSIZE.
const pairwiseBlock = 128

// pairwiseSum is numpy's pairwise summation of x[xo], x[xo+xs], ... (n
// elements): runs of up to 128 are summed with eight accumulators, longer
// runs are split in halves (multiples of 8) recursively, so the rounding
// error grows as O(log n) rather than O(n).
func pairwiseSum[T float | complexFloat](x []T, xo, xs, n int) T {
	if n > pairwiseBlock {
		h := n / 2
		h -= h % 8
		return pairwiseSum(x, xo, xs, h) + pairwiseSum(x, xo+h*xs, xs, n-h)
	}
	if xs == 1 {
		return blockSum(x[xo : xo+n])
	}
	var r [8]T
	i := 0
	for ; i+8 <= n; i += 8 {
		j := xo + i*xs
		for k := range r {
			r[k] += x[j]
			j += xs
		}
	}
	s := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
	for j := xo + i*xs; i < n; i++ {
		s += x[j]
		j += xs
	}
	return s
}

// blockSum sums a contiguous run with eight accumulators combined pairwise.
func blockSum[T float | complexFloat](x []T) T {
	var r0, r1, r2, r3, r4, r5, r6, r7 T
	for len(x) >= 8 {
		r0 += x[0]
		r1 += x[1]
		r2 += x[2]
		r3 += x[3]
		r4 += x[4]
		r5 += x[5]
		r6 += x[6]
		r7 += x[7]
		x = x[8:]
	}
	s := ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
	for _, v := range x {
		s += v
	}
	return s
}

// nanPairwiseSum is pairwiseSum with NaNs read as zero.
func nanPairwiseSum[T float | complexFloat](x []T, xo, xs, n int) T {
	if n > pairwiseBlock {
		h := n / 2
		h -= h % 8
		return nanPairwiseSum(x, xo, xs, h) + nanPairwiseSum(x, xo+h*xs, xs, n-h)
	}
	var r [8]T
	for i := 0; i < n; i++ {
		if v := x[xo+i*xs]; v == v {
			r[i%8] += v
		}
	}
	return ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
}
