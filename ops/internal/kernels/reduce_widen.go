package kernels

import "github.com/cubego/cubego/zarr"

// Widens reports whether Reduce folds an operand of dtype from straight
// into an accumulator of the wider dtype to, exactly as if the operand
// were cast to `to` first: sums and products of integers (and booleans)
// in int64 or uint64, which wrap the same in any order. It spares the cast
// operand's buffer (for a uint16 sum, four times the input) and a pass
// over it. (Float sums are left to the pairwise loops.) plan.FoldsCast is
// the same rule, for the projection.
func Widens(op string, from, to zarr.DataType) bool {
	switch op {
	case "sum", "prod", "nansum", "nanprod": // the nan forms equal the plain ones on integers
	default:
		return false
	}
	return (to == zarr.Int64 || to == zarr.Uint64) && from != to && isIntegerOrBool(from)
}

func isIntegerOrBool(dt zarr.DataType) bool { return dt >= zarr.Bool && dt <= zarr.Uint64 }

// newWideningReduction is newReduction for an accumulator wider than x
// (see Widens).
func newWideningReduction(op string, from, to zarr.DataType, acc, x []byte) (reduction, bool) {
	switch to {
	case zarr.Int64:
		return widenFrom(op, from, as[int64](acc), x)
	case zarr.Uint64:
		return widenFrom(op, from, as[uint64](acc), x)
	}
	return reduction{}, false
}

func widenFrom[A int64 | uint64](op string, from zarr.DataType, a []A, x []byte) (reduction, bool) {
	switch from {
	case zarr.Bool, zarr.Uint8:
		return widening(op, a, as[uint8](x))
	case zarr.Int8:
		return widening(op, a, as[int8](x))
	case zarr.Int16:
		return widening(op, a, as[int16](x))
	case zarr.Uint16:
		return widening(op, a, as[uint16](x))
	case zarr.Int32:
		return widening(op, a, as[int32](x))
	case zarr.Uint32:
		return widening(op, a, as[uint32](x))
	case zarr.Int64:
		return widening(op, a, as[int64](x))
	case zarr.Uint64:
		return widening(op, a, as[uint64](x))
	}
	return reduction{}, false
}

// widening returns the loops of a sum or product of x accumulated in A.
// As simple loops: a[ai] += A(x[xo+j*xs]) (or *=) for j < n; accum does
// the same into a[ai+j].
func widening[A int64 | uint64, X integer](op string, a []A, x []X) (reduction, bool) {
	switch op {
	case "sum", "nansum":
		return reduction{
			func(ai, xo, xs, n int) {
				if xs == 1 {
					a[ai] += widenSum[A](x[xo : xo+n])
					return
				}
				var s A
				for j := xo; n > 0; n-- {
					s += A(x[j])
					j += xs
				}
				a[ai] += s
			},
			func(ai, xo, xs, n int) {
				for i := range a[ai : ai+n] {
					a[ai+i] += A(x[xo])
					xo += xs
				}
			},
		}, true
	case "prod", "nanprod":
		return reduction{
			func(ai, xo, xs, n int) {
				p := a[ai]
				for j := xo; n > 0; n-- {
					p *= A(x[j])
					j += xs
				}
				a[ai] = p
			},
			func(ai, xo, xs, n int) {
				for i := range a[ai : ai+n] {
					a[ai+i] *= A(x[xo])
					xo += xs
				}
			},
		}, true
	}
	return reduction{}, false
}

// widenSum returns the sum of x in A, with four independent partial sums
// (integer addition wraps the same in any order). As a simple loop:
//
//	for _, v := range x { s += A(v) }
func widenSum[A int64 | uint64, X integer](x []X) A {
	var s0, s1, s2, s3 A
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		s0 += A(v[0])
		s1 += A(v[1])
		s2 += A(v[2])
		s3 += A(v[3])
	}
	for ; i < len(x); i++ {
		s0 += A(x[i])
	}
	return s0 + s1 + s2 + s3
}
