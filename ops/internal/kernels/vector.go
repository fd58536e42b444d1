package kernels

import "github.com/cubego/cubego/zarr"

// Vector loops. Built with GOEXPERIMENT=simd on amd64 with AVX2,
// vector_amd64.go registers hand-vectorised loops for some (op, dtype)
// pairs in these tables; Unary, Binary and Reduce use them in place of the
// generated loops. Each has exactly the meaning of the loop it replaces
// (vector_test.go compares them element by element, NaNs and signed zeros
// included); other builds leave the tables empty.

// opDType names a loop: an op of the elementwise or reduction tables and its
// input dtype.
type opDType struct {
	op string
	dt zarr.DataType
}

var (
	vectorUnary  = map[opDType]kernel{}
	vectorBinary = map[opDType]kernel{}
	// vectorCast replaces castKernel's loop from one dtype to another.
	vectorCast = map[[2]zarr.DataType]kernel{}
	// vectorRows replaces the row loop of a reduction (the contiguous runs
	// reduced into one accumulator element), and for some the accumulating
	// loop (contiguous runs combined elementwise into a row of acc), over
	// typed acc and x buffers.
	vectorRows = map[opDType]func(acc, x []byte, r reduction) reduction{}
	// vectorSlabs holds, for some of vectorRows, a loop over a slab: rows
	// contiguous runs of n elements, rs apart, accumulated into the same n
	// elements of acc (a reduction over a non-last axis), as one call.
	vectorSlabs = map[opDType]func(acc, x []byte) func(ai, xo, n, rows, rs int){}
	// vectorRowRuns holds, for some of vectorRows, a loop over rows
	// contiguous runs of n elements, rs apart, each reduced into its own
	// element of acc, from ai on (a reduction over the last axis), as one
	// call.
	vectorRowRuns = map[opDType]func(acc, x []byte) func(ai, xo, n, rows, rs int){}
)

// vectorSlabOf adapts h(d, x, rows, rs), doing d[i] = combine(d[i],
// x[j*rs+i]) for j < rows, to a vectorSlabs loop.
func vectorSlabOf[T any](h func(d, x []T, rows, rs int)) func(acc, x []byte) func(ai, xo, n, rows, rs int) {
	return func(accB, xB []byte) func(ai, xo, n, rows, rs int) {
		a, x := as[T](accB), as[T](xB)
		return func(ai, xo, n, rows, rs int) {
			h(a[ai:ai+n], x[xo:xo+(rows-1)*rs+n], rows, rs)
		}
	}
}

// vectorRowRunsOf adapts h(d, x, n, rows, rs), doing d[j] = combine(d[j],
// x[j*rs:j*rs+n]...) for j < rows, to a vectorRowRuns loop.
func vectorRowRunsOf[T any](h func(d, x []T, n, rows, rs int)) func(acc, x []byte) func(ai, xo, n, rows, rs int) {
	return func(accB, xB []byte) func(ai, xo, n, rows, rs int) {
		a, x := as[T](accB), as[T](xB)
		return func(ai, xo, n, rows, rs int) {
			h(a[ai:ai+rows], x[xo:xo+(rows-1)*rs+n], n, rows, rs)
		}
	}
}

// vectorRowsOf adapts a loop f(run, m) = combine(m, run...) over a
// contiguous run to a reduction's row loop and, if g is not nil, a loop
// g(d, run) doing d[i] = combine(d[i], run[i]) to its accumulating loop;
// strided runs keep r's loops.
func vectorRowsOf[T any](f func(x []T, m T) T, g func(d, x []T)) func(acc, x []byte, r reduction) reduction {
	return func(accB, xB []byte, r reduction) reduction {
		a, x, strided, stridedAccum := as[T](accB), as[T](xB), r.row, r.accum
		r.row = func(ai, xo, xs, n int) {
			if xs != 1 {
				strided(ai, xo, xs, n)
				return
			}
			a[ai] = f(x[xo:xo+n], a[ai])
		}
		if g != nil {
			r.accum = func(ai, xo, xs, n int) {
				if xs != 1 {
					stridedAccum(ai, xo, xs, n)
					return
				}
				g(a[ai:ai+n], x[xo:xo+n])
			}
		}
		return r
	}
}

// mathVariant is a set of vector exp and log kernels (one instruction-set
// width) and its name.
type mathVariant struct {
	name    string
	kernels map[opDType]kernel
}
