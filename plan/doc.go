// Package plan describes chunked array computations as data: array nodes,
// the blockwise primitive that computes them, the memory each task is
// projected to use, and the check that refuses a plan over its memory
// budget before anything runs. It does no I/O.
//
// # Arrays and ops
//
// An [Array] has a shape, a data type and explicit block sizes per axis
// (Dask's normalised chunks, see [NormalizeChunks]). Its data comes from
// exactly one of: an [Op] that computes it (stored as Zarr while the
// computation runs), a [Generator] (a virtual array: full, arange, random or
// an in-memory literal, produced wherever it is read and never stored) or a
// Zarr array that already exists.
//
// An [Op] is blockwise: one task per output block. For each input, one
// [DimMap] per input dimension says which elements the task reads:
//
//   - Affine: element Start + Step·i for output element i along OutDim.
//     Identity (Step 1), slices with any step, transposes (another OutDim)
//     and broadcasting (Step 0) are all Affine.
//   - Const: one element (an integer index; the dimension is dropped).
//   - Blocks: a range of whole input blocks that the task folds over one
//     block at a time (reduction rounds, the contracted axis of matmul).
//
// So elementwise operations on misaligned chunks, slicing, rechunking,
// reductions and matrix products are one primitive; the engine reads any
// region from the chunks it overlaps (see [Op.InputRegion]). The [Kernel]
// says what a task computes from its regions: an elementwise [Expr] over
// the output block ("map"), a fold ("reduce") or a matrix product
// ("matmul"). For "reduce", Exprs[0] is the folded operand and the optional
// Exprs[1] is applied to the folded block at the end (input 0 is the fold),
// as mean divides a sum by the count.
//
// # Chunk grids and sizes
//
// Block sizes are listed per axis, so a chunking costs the sum of the axes'
// block counts, not their product: a 10⁶ × 10⁶ grid (10¹² blocks) lists
// 2·10⁶ sizes. At most [MaxBlocks] sizes are listed per array; more is an
// [ErrValue] raised before any list is allocated ([RegularChunks],
// [NormalizeChunks]). Shapes whose number of elements or bytes overflows
// int64 are an [ErrValue] too ([CheckShape]). [CheckGrid] checks all of
// this for an array built elsewhere (the C ABI checks every array it hands
// out; [Unmarshal] checks every array it decodes).
//
// # Memory
//
// [ProjectedMem] is the one function that projects an op's per-task memory,
// Cubed's model with the terms described on it. [Build] finalises a plan
// and [Plan.Validate] returns a [*MemoryExceededError] naming the worst op
// when any op's projection is over allowed_mem, before any task runs.
//
// # Errors
//
// Errors wrap [ErrValue], [ErrType], [ErrIndex] or [ErrNotImplemented] so
// callers (the C ABI) can tell a bad value from a bad type.
package plan
