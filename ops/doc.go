// Package ops holds cubego's data types and promotion rules and every
// array-level operation (creation, elementwise functions, reductions,
// matmul, indexing, rechunk, Zarr input and output), each built from the
// blockwise primitive of package plan. The chunk kernels that run inside
// tasks live in ops/internal/kernels: one flat switch per op family picks a
// generic loop for the dtype once per chunk.
//
// # Data types
//
// The Array API dtypes (bool, int8–int64, uint8–uint64, float32, float64,
// complex64, complex128). [ResultType] is the standard's promotion table,
// extended as numpy does for mixed kinds; [ScalarResultType] treats Python
// scalars as weak types (NEP 50).
//
// # Operations
//
// Functions return lazy [plan.Array] values; nothing runs until a plan is
// executed by package engine. Virtual arrays ([Full], [Arange], [Random],
// [FromSlice], [FromBuffer]) are computed where they are read and never
// stored.
// Elementwise functions broadcast and may combine arrays with different
// chunks: the output takes the chunks of the first array spanning each
// dimension and other inputs are read across their chunk boundaries.
// [Reduce] builds a tree of fold rounds whose fan-in comes from split_every
// or from allowed_mem ([Split]); [ArgReduce] and [Var] carry records
// ((index, value); count, total and M2) through one such tree. [Matmul]
// streams the contracted dimension and stores no partial products.
//
// # Function names
//
// The functions that take a function name fn accept these names, generated
// from the tables they check fn against (go test ./ops -run FunctionNames
// -update):
//
//   - [Elemwise], one operand: abs, acos, acosh, asin, asinh, atan, atanh,
//     bitwise_invert, ceil, conj, cos, cosh, exp, expm1, floor, imag,
//     isfinite, isinf, isnan, log, log10, log1p, log2, logical_not, negative,
//     positive, real, reciprocal, round, sign, signbit, sin, sinh, sqrt,
//     square, tan, tanh, trunc
//   - [Elemwise], two operands: add, atan2, bitwise_and, bitwise_left_shift,
//     bitwise_or, bitwise_right_shift, bitwise_xor, copysign, divide, equal,
//     floor_divide, greater, greater_equal, hypot, less, less_equal,
//     logaddexp, logical_and, logical_or, logical_xor, maximum, minimum,
//     multiply, nextafter, not_equal, pow, remainder, subtract
//   - [Reduce] and [ReduceSplit]: all, any, max, mean, min, prod, sum
//   - [ArgReduce] and [ArgReduceSplit]: argmax, argmin, nanargmax, nanargmin
//   - [Var] and [Moments]: nanmean, nanstd, nanvar, std, var
//   - [Cumulative]: cumprod, cumsum
//   - [Linalg]: cholesky, cholesky_upper, det, eig_values, eig_vectors,
//     eigh_values, eigh_vectors, inv, qr_complete_q, qr_complete_r, qr_q,
//     qr_r, slogdet_logabsdet, slogdet_sign, solve, svd_full_u, svd_full_vh,
//     svd_s, svd_u, svd_vh
package ops
