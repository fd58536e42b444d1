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
// [FromBuffer]) are computed where they are read and never stored.
// Elementwise functions broadcast and may combine arrays with different
// chunks: the output takes the chunks of the first array spanning each
// dimension and other inputs are read across their chunk boundaries.
// [Reduce] builds a tree of fold rounds whose fan-in comes from split_every
// or from allowed_mem ([Split]); [ArgReduce] and [Var] carry records
// ((index, value); count, total and M2) through one such tree. [Matmul]
// streams the contracted dimension and stores no partial products.
package ops
