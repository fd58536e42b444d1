// Package kernels holds cubego's chunk kernels: the loops that compute one
// chunk of an operation's output from chunk buffers, with numpy (Array API)
// semantics.
//
// # Buffers and operands
//
// A chunk is a []byte of little-endian elements of a [zarr.DataType]. An
// [Operand] is an N-D view of such a buffer: a shape, strides in elements
// (nil for C order, 0 to broadcast, never negative) and an offset. Outputs
// are always C-contiguous; inputs may be any view of the output's shape, so
// broadcasting and transposes cost no copies. Bool elements are bytes 0 and
// 1. Float16 is a storage type: only [Cast] reads or writes it.
//
// # Operations
//
//   - [Unary], [Binary] and [Where]: elementwise operations named as in the
//     Array API ("add", "floor_divide", "isnan", ...).
//   - [Cast], [ScalarBytes], [Fill]: dtype conversion with numpy's astype
//     semantics, scalars and constant chunks.
//   - [Reduce]: sum, prod, min, max, any, all and the nan-skipping variants
//     over any axes, starting or continuing an accumulation across chunks.
//   - [Matmul]: batched matrix products: float32/float64 through a blocked
//     GEMM with AVX-512 or AVX2 micro-kernels when built with
//     GOEXPERIMENT=simd on amd64 (gemm.go), else gonum BLAS; complex through
//     gonum.
//   - [Arange], [RandomUniform], [RandomIntegers]: chunk generators whose
//     values depend only on the element's index in the whole array, never on
//     the chunking.
//   - [CopyStrided]: materialises a view (transpose, broadcast, slice).
//
// Semantics follow numpy 2 where Go differs: integer division and remainder
// round toward −∞ and give 0 for a zero divisor, integer overflow wraps,
// shifts by the bit width or more give 0 (or −1), maximum and minimum
// propagate NaN, round is half to even, float32 transcendental functions are
// computed in float64 and rounded (the vector float32 exp and log within
// 1 ULP of that). An operation not defined for a dtype returns an
// [UnsupportedError]; no input makes a kernel panic.
//
// # Dispatch and loops
//
// Each call picks its (op, dtype) loop once, with one flat switch, and then
// runs a plain generic loop over contiguous blocks: an indirect call per
// element would cost about 3.5x. The elementwise loops and their switches
// are generated from one table by gen_loops.go (go generate), since
// generics abstract the dtypes but not the operators. When every input is
// contiguous a loop runs once over the whole chunk; otherwise the shape is
// coalesced and walked row by row, and inputs whose rows are strided or
// broadcast are first gathered into small scratch blocks.
//
// # Vector loops
//
// Built with GOEXPERIMENT=simd on amd64 with AVX2 (the library's build),
// some (op, dtype) loops are hand-vectorised with simd/archsimd
// (vector_amd64.go, registered in vector.go's tables) and replace the
// generated ones: add, subtract and multiply, the six comparisons, sqrt,
// exp and log (also FMA), and the min and max reductions, for float64,
// float32, int32 and (add, subtract, comparisons) int64, and the pairwise
// float64 and float32 sum (the same additions in the same order). Each means exactly
// what the loop it replaces means: vector_test.go compares them element by
// element on hostile inputs (NaN payloads, infinities, signed zeros,
// subnormals, every tail length). The reductions fall back to the scalar
// loop for a run holding a NaN or whose extreme is a zero, so NaN propagates
// and max(-0, +0) is +0 as in the scalar loops; exp and log are polynomial
// kernels within 1 ULP of math.Exp and math.Log (float64 exp 0.59 ULP from
// the exact value where math.Exp on amd64 reaches 1.34, log 0.70; the
// float32 kernels, in float32 arithmetic, 0.58 and 0.71 float32 ULP, so
// within 1 ULP of the rounded float64 results the loops give). Each result
// depends only on its element, and every lane outside their normal range
// (overflow, underflow, subnormal, zero, negative, infinite or NaN input)
// is computed by the scalar function, so special values have the same bits.
package kernels

//go:generate go run gen_loops.go
//go:generate go run gen_vector.go
//go:generate go run gen_compare.go
