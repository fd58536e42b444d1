package kernels

import (
	"errors"
	"fmt"
	"math"

	"github.com/cubego/cubego/zarr"
)

// Record reductions fold an operand into per-lane records of several
// fields instead of one value: (index, value) for the arg reductions,
// (count, shift, total, M2) for the moments behind var, std and nanmean. A record
// array holds its fields as planes along a leading axis: acc has shape
// [fields, accShape...] and is C-contiguous, so field f of lane i is
// element f·lanes + i.
//
// An operand is either values (shape frame) or records of earlier rounds
// (recordIn: shape [fields, frame...], fields along dimension 0); axes are
// the reduced dimensions of the frame. With first the records are set
// from this operand; else the operand's records are combined into them.

// ErrAllNaN is a nanargmax or nanargmin over a lane of only NaNs, which
// has no answer (numpy raises "All-NaN slice encountered").
var ErrAllNaN = errors.New("All-NaN slice encountered")

// ArgRecordFields is the number of fields of an arg reduction's record.
const ArgRecordFields = 2

// MomentRecordFields is the number of fields of a moments record.
const MomentRecordFields = 4

// recordFrame checks a record fold's operands and returns the value
// frame's shape, x's strides over it (the field stride apart), the field
// stride of x (0 for values) and the accumulator's lane count and strides
// (0 along reduced dimensions).
func recordFrame(fields int, acc, x Operand, axes []int, recordIn bool) (frame, xs []int, field, lanes int, astr []int, err error) {
	xStrides, err := checkInput("folded operand", x, x.Shape)
	if err != nil {
		return nil, nil, 0, 0, nil, err
	}
	frame, xs = x.Shape, xStrides
	if recordIn {
		if len(x.Shape) == 0 || x.Shape[0] != fields {
			return nil, nil, 0, 0, nil, fmt.Errorf("kernels: record operand shape %v, want %d fields first", x.Shape, fields)
		}
		frame, xs, field = x.Shape[1:], xStrides[1:], xStrides[0]
	}
	accShape := append([]int{fields}, frame...)
	seen := make([]bool, len(frame))
	for _, a := range axes {
		if a < 0 || a >= len(frame) || seen[a] {
			return nil, nil, 0, 0, nil, fmt.Errorf("kernels: record fold axes %v invalid for %d dimensions", axes, len(frame))
		}
		seen[a] = true
		accShape[1+a] = 1
	}
	if !sameShape(acc.Shape, accShape) {
		return nil, nil, 0, 0, nil, fmt.Errorf("kernels: record accumulator shape %v, want %v", acc.Shape, accShape)
	}
	if _, _, err := checkDst(acc); err != nil {
		return nil, nil, 0, 0, nil, err
	}
	lanes, _ = numElements(accShape[1:])
	astr = cStrides(accShape[1:])
	for _, a := range axes {
		astr[a] = 0
	}
	return frame, xs, field, lanes, astr, nil
}

// walkRows calls row(xo, ao, io) for each run of shape[last] elements
// along the last dimension, with the offsets of the run's first element in
// x, in the accumulator and in the flat index.
func walkRows(shape, xs, astr []int, is []int64, xo, ao int, io int64, row func(xo, ao int, io int64)) {
	nd := len(shape)
	if nd == 0 {
		row(xo, ao, io)
		return
	}
	for _, n := range shape {
		if n == 0 {
			return
		}
	}
	idx := make([]int, nd-1)
	for {
		row(xo, ao, io)
		k := nd - 2
		for ; k >= 0; k-- {
			idx[k]++
			xo += xs[k]
			ao += astr[k]
			io += is[k]
			if idx[k] < shape[k] {
				break
			}
			xo -= xs[k] * shape[k]
			ao -= astr[k] * shape[k]
			io -= is[k] * int64(shape[k])
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

// ArgFold folds x into (index, value) records for op "argmax", "argmin",
// "nanargmax" or "nanargmin". The record dtype (acc's and x's) is Float64,
// Int64 or Uint64; indices are stored in it. For values, base is the flat
// index of x's first element and idxStrides the flat index's stride along
// each frame dimension (0 along kept dimensions).
//
// A record is better than another when its value is larger (argmax) or
// smaller (argmin), or equal with a smaller index, so the first extreme
// wins whatever order the blocks are folded in. NaN beats every number and
// ties with NaN go to the smaller index (numpy's argmax and argmin); the
// nan variants let every number beat NaN.
func ArgFold(op string, acc, x Operand, axes []int, base int64, idxStrides []int64, recordIn, first bool) error {
	clearUpper()
	var isMax, skip bool
	switch op {
	case "argmax":
		isMax = true
	case "argmin":
	case "nanargmax":
		isMax, skip = true, true
	case "nanargmin":
		skip = true
	default:
		return fmt.Errorf("kernels: unknown arg reduction %q", op)
	}
	if acc.DType != x.DType {
		return fmt.Errorf("kernels: %s records are %s, operand %s", op, acc.DType, x.DType)
	}
	frame, xs, field, lanes, astr, err := recordFrame(ArgRecordFields, acc, x, axes, recordIn)
	if err != nil {
		return err
	}
	if len(idxStrides) != len(frame) && !recordIn {
		return fmt.Errorf("kernels: %s index strides %v for %d dimensions", op, idxStrides, len(frame))
	}
	if n, _ := numElements(frame); n == 0 {
		if first && lanes > 0 {
			return fmt.Errorf("kernels: %s of an empty array", op)
		}
		return nil
	}
	_, accData, err := checkDst(acc)
	if err != nil {
		return err
	}
	switch acc.DType {
	case zarr.Float64:
		argFold(as[float64](accData), as[float64](x.Data), frame, xs, astr, idxStrides, x.Offset, field, lanes, base, recordIn, first, isMax, skip)
	case zarr.Int64:
		argFold(as[int64](accData), as[int64](x.Data), frame, xs, astr, idxStrides, x.Offset, field, lanes, base, recordIn, first, isMax, skip)
	case zarr.Uint64:
		argFold(as[uint64](accData), as[uint64](x.Data), frame, xs, astr, idxStrides, x.Offset, field, lanes, base, recordIn, first, isMax, skip)
	default:
		return unsupported(op, acc.DType)
	}
	return nil
}

// better reports whether record (v, vi) beats record (b, bi).
func better[T realNumber](v, vi, b, bi T, isMax, skip bool) bool {
	vn, bn := v != v, b != b
	switch {
	case vn && bn:
		return vi < bi
	case vn:
		return !skip
	case bn:
		return skip
	case v == b:
		return vi < bi
	case isMax:
		return v > b
	}
	return v < b
}

func argFold[T realNumber](acc, x []T, frame, xs, astr []int, is []int64, xoff, field, lanes int, base int64, recordIn, first, isMax, skip bool) {
	idx, val := acc[:lanes], acc[lanes:2*lanes]
	last := len(frame) - 1
	if first {
		// Start every lane from its first element: reduced coordinates 0,
		// whose flat index is base.
		slab := append([]int(nil), frame...)
		for d := range slab {
			if astr[d] == 0 {
				slab[d] = 1
			}
		}
		walkRows(slab, xs, astr, make([]int64, len(frame)), xoff, 0, 0, func(xo, ao int, _ int64) {
			n, xst, ast := 1, 0, 0
			if last >= 0 {
				n, xst, ast = slab[last], xs[last], astr[last]
			}
			for j := 0; j < n; j++ {
				a, o := ao+j*ast, xo+j*xst
				if recordIn {
					idx[a], val[a] = x[o], x[o+field]
				} else {
					idx[a], val[a] = T(base), x[o]
				}
			}
		})
	}
	if recordIn {
		walkRows(frame, xs, astr, make([]int64, len(frame)), xoff, 0, 0, func(xo, ao int, _ int64) {
			n, xst, ast := 1, 0, 0
			if last >= 0 {
				n, xst, ast = frame[last], xs[last], astr[last]
			}
			for j := 0; j < n; j++ {
				a, o := ao+j*ast, xo+j*xst
				if v, vi := x[o+field], x[o]; better(v, vi, val[a], idx[a], isMax, skip) {
					idx[a], val[a] = vi, v
				}
			}
		})
		return
	}
	walkRows(frame, xs, astr, is, xoff, 0, base, func(xo, ao int, io int64) {
		n, xst, ast, ist := 1, 0, 0, int64(0)
		if last >= 0 {
			n, xst, ast, ist = frame[last], xs[last], astr[last], is[last]
		}
		if ast == 0 {
			// The run reduces into one lane.
			bi, b := idx[ao], val[ao]
			for j := 0; j < n; j++ {
				if v, vi := x[xo+j*xst], T(io+int64(j)*ist); better(v, vi, b, bi, isMax, skip) {
					bi, b = vi, v
				}
			}
			idx[ao], val[ao] = bi, b
			return
		}
		vi := T(io)
		for j := 0; j < n; j++ {
			a := ao + j*ast
			if v := x[xo+j*xst]; better(v, vi, val[a], idx[a], isMax, skip) {
				idx[a], val[a] = vi, v
			}
		}
	})
}

// ArgFinish writes the indices of (index, value) records acc to out
// (int64, acc's shape without the field axis). For "nanargmax" and
// "nanargmin" a lane whose value is NaN had only NaNs: ErrAllNaN.
func ArgFinish(op string, out, acc Operand) error {
	clearUpper()
	if out.DType != zarr.Int64 {
		return fmt.Errorf("kernels: %s result must be int64, not %s", op, out.DType)
	}
	lanes, d, err := checkDst(out)
	if err != nil {
		return err
	}
	_, a, err := checkDst(acc)
	if err != nil {
		return err
	}
	if len(acc.Shape) == 0 || acc.Shape[0] != ArgRecordFields || len(a) != ArgRecordFields*lanes*acc.DType.Size() {
		return fmt.Errorf("kernels: %s records of shape %v for %d results", op, acc.Shape, lanes)
	}
	skip := op == "nanargmax" || op == "nanargmin"
	dst := as[int64](d)
	switch acc.DType {
	case zarr.Float64:
		return argFinish(dst, as[float64](a), skip)
	case zarr.Int64:
		return argFinish(dst, as[int64](a), skip)
	case zarr.Uint64:
		return argFinish(dst, as[uint64](a), skip)
	}
	return unsupported(op, acc.DType)
}

func argFinish[T realNumber](dst []int64, acc []T, skip bool) error {
	n := len(dst)
	for i := range dst {
		if v := acc[n+i]; skip && v != v {
			return ErrAllNaN
		}
		dst[i] = int64(acc[i])
	}
	return nil
}

// MomentsFold folds x into moments records (float64): (count, shift,
// total, M2), where total is the sum of the values less shift and M2 the
// sum of squared deviations from the mean (mean = shift + total/count).
// Values (float64) are summarised per lane in two passes over the block:
// the sum (pairwise), whose mean rounded to float64 becomes the shift, then
// the deviations from the shift, summed and squared. Records are merged
// with the pairwise update of Chan, Golub and LeVeque (1979), about the
// first record's shift:
//
//	n = na + nb, δ = (kb − ka) + (tb/nb − ta/na), total = ta + tb + nb·(kb − ka),
//	M2 = M2a + M2b + δ²·na·nb/n
//
// Unlike a sum of squares, this keeps full precision for data far from
// zero: the shift carries the large common part exactly, and totals and
// deviations stay the size of the spread. A lane whose block sum is not
// finite (infinities, or NaN) gets shift 0 and M2 NaN, so its mean is ±inf
// or NaN and its variance NaN, as numpy's. With skipNaN, NaN values are
// left out (nanvar). tmp, when not first, holds the block's own records:
// acc's size.
func MomentsFold(skipNaN bool, acc, x Operand, axes []int, recordIn, first bool, tmp []byte) error {
	clearUpper()
	if acc.DType != zarr.Float64 || x.DType != zarr.Float64 {
		return fmt.Errorf("kernels: moments records and operand must be float64, not %s and %s", acc.DType, x.DType)
	}
	frame, xs, field, lanes, astr, err := recordFrame(MomentRecordFields, acc, x, axes, recordIn)
	if err != nil {
		return err
	}
	_, accData, err := checkDst(acc)
	if err != nil {
		return err
	}
	a := as[float64](accData)
	xd := as[float64](x.Data)
	if recordIn {
		if first {
			clear(a)
		}
		walkRows(frame, xs, astr, make([]int64, len(frame)), x.Offset, 0, 0, func(xo, ao int, _ int64) {
			n, xst, ast := 1, 0, 0
			if last := len(frame) - 1; last >= 0 {
				n, xst, ast = frame[last], xs[last], astr[last]
			}
			for j := 0; j < n; j++ {
				o, l := xo+j*xst, ao+j*ast
				mergeMoments(a, lanes, l, xd[o], xd[o+field], xd[o+2*field], xd[o+3*field])
			}
		})
		return nil
	}
	own := a
	if !first {
		if len(tmp) < len(accData) {
			return fmt.Errorf("kernels: moments scratch of %d bytes, need %d", len(tmp), len(accData))
		}
		own = as[float64](tmp[:len(accData)])
	}
	clear(own)
	blockMoments(own, lanes, xd, frame, xs, astr, x.Offset, skipNaN)
	if !first {
		for l := range lanes {
			mergeMoments(a, lanes, l, own[l], own[lanes+l], own[2*lanes+l], own[3*lanes+l])
		}
	}
	return nil
}

// mergeMoments merges the record (nb, kb, tb, m2b) into lane l of a.
func mergeMoments(a []float64, lanes, l int, nb, kb, tb, m2b float64) {
	if nb == 0 {
		return
	}
	na := a[l]
	if na == 0 {
		a[l], a[lanes+l], a[2*lanes+l], a[3*lanes+l] = nb, kb, tb, m2b
		return
	}
	ta := a[2*lanes+l]
	dk := kb - a[lanes+l]
	d := dk + (tb/nb - ta/na)
	n := na + nb
	a[l] = n
	a[2*lanes+l] = ta + tb + nb*dk
	a[3*lanes+l] += m2b + d*d*(na*nb/n)
}

// blockMoments sets the moments records r (cleared) of a block of values.
func blockMoments(r []float64, lanes int, x []float64, frame, xs, astr []int, xoff int, skipNaN bool) {
	cnt, shift, total, m2 := r[:lanes], r[lanes:2*lanes], r[2*lanes:3*lanes], r[3*lanes:4*lanes]
	last := len(frame) - 1
	run := func() (n, xst, ast int) {
		if last < 0 {
			return 1, 0, 0
		}
		return frame[last], xs[last], astr[last]
	}
	zero := make([]int64, len(frame))
	// Pass 1: counts and sums (in total).
	walkRows(frame, xs, astr, zero, xoff, 0, 0, func(xo, ao int, _ int64) {
		n, xst, ast := run()
		switch {
		case ast == 0 && !skipNaN:
			cnt[ao] += float64(n)
			total[ao] += pairwiseSum(x, xo, xst, n)
		case ast == 0:
			c := 0
			for j := 0; j < n; j++ {
				if v := x[xo+j*xst]; v == v {
					c++
				}
			}
			cnt[ao] += float64(c)
			total[ao] += nanPairwiseSum(x, xo, xst, n)
		default:
			for j := 0; j < n; j++ {
				v := x[xo+j*xst]
				if skipNaN && v != v {
					continue
				}
				cnt[ao+j*ast]++
				total[ao+j*ast] += v
			}
		}
	})
	// The shift: the mean, where finite; M2 NaN marks the other lanes.
	for l, c := range cnt {
		switch m := total[l] / c; {
		case c == 0:
		case math.IsInf(m, 0) || m != m:
			m2[l] = math.NaN()
		default:
			shift[l], total[l] = m, 0
		}
	}
	// Pass 2: deviations from the shift, summed and squared.
	walkRows(frame, xs, astr, zero, xoff, 0, 0, func(xo, ao int, _ int64) {
		n, xst, ast := run()
		if ast == 0 {
			if m2[ao] != m2[ao] {
				return
			}
			k, t, s := shift[ao], 0.0, 0.0
			for j := 0; j < n; j++ {
				v := x[xo+j*xst]
				if skipNaN && v != v {
					continue
				}
				d := v - k
				t += d
				s += d * d
			}
			total[ao] += t
			m2[ao] += s
			return
		}
		for j := 0; j < n; j++ {
			l := ao + j*ast
			v := x[xo+j*xst]
			if skipNaN && v != v || m2[l] != m2[l] {
				continue
			}
			d := v - shift[l]
			total[l] += d
			m2[l] += d * d
		}
	})
	// Σ(x − k)² = M2 + n·(mean − k)², and mean − k = total/n.
	for l, c := range cnt {
		if c > 0 && m2[l] == m2[l] {
			m2[l] = max(m2[l]-total[l]*total[l]/c, 0)
		}
	}
}

// MomentsFinish writes the final values of moments records acc into out
// (float32 or float64, acc's shape without the field axis): "mean" shift +
// total/count (NaN where the count is 0), "var" M2 / max(count −
// correction, 0), "std" its square root. Records of
// ComplexMomentRecordFields fields (ComplexMomentsFold) give the variance
// of complex values: the M2 of both parts.
func MomentsFinish(kind string, out, acc Operand, correction float64) error {
	clearUpper()
	lanes, d, err := checkDst(out)
	if err != nil {
		return err
	}
	_, ad, err := checkDst(acc)
	if err != nil {
		return err
	}
	fields := MomentRecordFields
	if len(acc.Shape) > 0 && acc.Shape[0] == ComplexMomentRecordFields {
		fields = ComplexMomentRecordFields
	}
	if acc.DType != zarr.Float64 || len(ad) != fields*lanes*8 {
		return fmt.Errorf("kernels: moments records of shape %v and dtype %s for %d results", acc.Shape, acc.DType, lanes)
	}
	if kind != "mean" && kind != "var" && kind != "std" || kind == "mean" && fields != MomentRecordFields {
		return fmt.Errorf("kernels: unknown moments result %q of %d-field records", kind, fields)
	}
	a := as[float64](ad)
	value := func(l int) float64 {
		n := a[l]
		if kind == "mean" {
			if n == 0 {
				return math.NaN()
			}
			return a[lanes+l] + a[2*lanes+l]/n
		}
		m2 := a[3*lanes+l]
		if fields == ComplexMomentRecordFields {
			m2 += a[7*lanes+l] // the imaginary parts' M2
		}
		if kind == "var" {
			return m2 / max(n-correction, 0)
		}
		return math.Sqrt(m2 / max(n-correction, 0))
	}
	switch out.DType {
	case zarr.Float64:
		o := as[float64](d)
		for l := range o {
			o[l] = value(l)
		}
	case zarr.Float32:
		o := as[float32](d)
		for l := range o {
			o[l] = float32(value(l))
		}
	default:
		return unsupported(kind, out.DType)
	}
	return nil
}

// ComplexMomentRecordFields is the number of fields of a complex moments
// record: the moments records of the real and of the imaginary parts.
const ComplexMomentRecordFields = 2 * MomentRecordFields

// ComplexMomentsFold is MomentsFold for complex128 values: it keeps the
// moments of the real parts in the first MomentRecordFields fields and of
// the imaginary parts in the others, since |z − m|² = (re − m_re)² +
// (im − m_im)² makes the variance of z their sum (MomentsFinish with the
// doubled record). NaN in either part makes the lane's variance NaN. With
// recordIn the operand is float64 records of ComplexMomentRecordFields
// fields.
func ComplexMomentsFold(acc, x Operand, axes []int, recordIn, first bool, tmp []byte) error {
	clearUpper()
	if acc.DType != zarr.Float64 || len(acc.Shape) == 0 || acc.Shape[0] != ComplexMomentRecordFields {
		return fmt.Errorf("kernels: complex moments records must be float64 with %d fields, got %s %v", ComplexMomentRecordFields, acc.DType, acc.Shape)
	}
	n, data, err := checkDst(acc)
	if err != nil {
		return err
	}
	half := n / 2 * 8
	shape := append([]int{MomentRecordFields}, acc.Shape[1:]...)
	parts := [2]Operand{Contiguous(zarr.Float64, data[:half], shape), Contiguous(zarr.Float64, data[half:], shape)}
	xs, err := checkInput("folded operand", x, x.Shape)
	if err != nil {
		return err
	}
	for p, part := range parts {
		var view Operand
		if recordIn {
			if x.DType != zarr.Float64 || len(x.Shape) == 0 || x.Shape[0] != ComplexMomentRecordFields {
				return fmt.Errorf("kernels: complex moments operand %s %v, want float64 records of %d fields", x.DType, x.Shape, ComplexMomentRecordFields)
			}
			view = Operand{DType: zarr.Float64, Data: x.Data, Shape: append([]int{MomentRecordFields}, x.Shape[1:]...),
				Strides: xs, Offset: x.Offset + p*MomentRecordFields*xs[0]}
		} else {
			if x.DType != zarr.Complex128 {
				return fmt.Errorf("kernels: complex moments of %s values", x.DType)
			}
			st := make([]int, len(xs))
			for d, s := range xs {
				st[d] = 2 * s
			}
			view = Operand{DType: zarr.Float64, Data: x.Data, Shape: x.Shape, Strides: st, Offset: 2*x.Offset + p}
		}
		if err := MomentsFold(false, part, view, axes, recordIn, first, tmp); err != nil {
			return err
		}
	}
	return nil
}
