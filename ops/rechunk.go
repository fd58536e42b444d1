package ops

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// Rechunk returns x with new chunks, in one or more copy stages chosen as
// Rechunker does (see rechunkStages), with the default minimum chunk size
// of intermediates (DefaultRechunkMinMem).
func Rechunk(x *plan.Array, chunks ChunkSpec) (*plan.Array, error) {
	return RechunkMinMem(x, chunks, 0)
}

// DefaultRechunkMinMem is the smallest intermediate chunk, in bytes, that
// rechunkStages accepts before it adds a stage, for intermediates under
// workDir. Each stage reads and writes the whole array once, so a stage is
// worth adding only when the per-chunk overhead of the smaller chunks would
// cost more: on local disk a chunk file costs about 80 µs to write
// atomically and read back (measured: 16,384 chunks of 8 KiB written in
// 0.93 s and read in 0.42 s by two workers), the time of moving 100-200 KB,
// so 256 KiB (an array of 17 GB in 256 KiB chunks spends ~5 s on per-chunk
// overhead, one more stage ~20 s); on object stores a request costs some
// 20-50 ms, the time of several megabytes, so 8 MiB.
func DefaultRechunkMinMem(workDir string) int64 {
	if plan.IsObjectStore(workDir) {
		return 8 << 20
	}
	return 256 << 10
}

// RechunkMinMem is Rechunk with minMem the smallest intermediate chunk in
// bytes (Rechunker's and Cubed's min_mem); 0 means DefaultRechunkMinMem.
func RechunkMinMem(x *plan.Array, chunks ChunkSpec, minMem int64) (*plan.Array, error) {
	if minMem < 0 {
		return nil, plan.Errorf(plan.ErrValue, "rechunk: min_mem must not be negative, got %d", minMem)
	}
	if minMem == 0 {
		minMem = DefaultRechunkMinMem(x.Spec.WorkDir)
	}
	c, err := plan.NormalizeChunks(chunks, x.Shape, x.DType.Size(), autoLimit(x.Spec))
	if err != nil {
		return nil, err
	}
	same := true
	for i := range c {
		if !equalInts(c[i], x.Chunks[i]) {
			same = false
		}
	}
	if same || x.Size() == 0 {
		if x.Size() == 0 && !same {
			return virtual(x.Shape, x.DType, chunksAny(c), x.Spec, &plan.Generator{Kind: "full", Value: plan.Scalar{Kind: 'i'}})
		}
		return x, nil
	}
	return rechunkStages(x, c, minMem), nil
}

// maxRechunkStages bounds the stages of a multi-stage rechunk.
const maxRechunkStages = 6

// rechunkStages plans the copies from x's chunks S to target chunks T.
// A task reads whole chunks of its input and writes whole chunks of its
// output, so no chunk is read more than once per stage:
//
//   - One stage when a copy region covering lcm(S, T) elements per
//     dimension (TaskBlocks target blocks, a union of whole source chunks)
//     fits the memory budget.
//   - Otherwise, when x's chunks can be read in part (a raw Zarr source on
//     local disk, plan.Array.PartialReads) and the part of a source chunk
//     a target block needs is made of runs of at least zarr.BoxReadGap
//     bytes (boxRunElems), one stage of target blocks, each reading just
//     those parts: the source is read once and nothing else is written.
//     Swap-axes rechunks, (N, c) → (c, N), are of this kind: a band of c
//     rows of a C-order chunk is one contiguous run.
//   - Otherwise several stages through intermediate chunk shapes (Rechunker's
//     multi-stage algorithm). The first candidate is two stages through
//     I = min(S, T) per dimension (x → I reads each source chunk once,
//     writing the I blocks inside it; I → T assembles each target chunk from
//     whole I chunks). When its intermediate chunks are smaller than minMem
//     bytes (e.g. (1, N) → (N, 1) would make (1, 1) chunks), plans of 2, 3,
//     ... stages whose intermediates interpolate geometrically between S and
//     T are tried in turn (each intermediate size a multiple of min(S, T)
//     so that consecutive copy regions stay small); the first whose every
//     stage fits and whose intermediates reach minMem wins, else the fitting
//     plan with the largest smallest intermediate chunk.
//   - Otherwise one stage of target blocks, each read from the source
//     chunks it overlaps: bounded memory, at the cost of reading source
//     chunks more than once.
func rechunkStages(x *plan.Array, target [][]int, minMem int64) *plan.Array {
	if plan.IsRegular(x.Chunks) && plan.IsRegular(target) {
		s, t := x.ChunkShape(), chunkShapeOf(target)
		if op := copyOp(x, target, taskBlocksFor(x.Shape, s, t)); op != nil {
			return op
		}
		if x.PartialReads && int64(boxRunElems(s, t))*int64(x.DType.Size()) >= zarr.BoxReadGap {
			// Each target block reads, from each source chunk it overlaps,
			// runs of at least BoxReadGap bytes: reading only those parts
			// reads the source once, with no intermediate to write and
			// read back.
			if op := copyOp(x, target, nil); op != nil {
				return op
			}
		}
		if out := multiStage(x, s, t, target, minMem); out != nil {
			return out
		}
	}
	out := plan.NewArray(x.Shape, x.DType, target, x.Spec)
	plan.NewOp("rechunk", "rechunk", []plan.Input{{Array: x, Dims: plan.Identity(x.NDim())}}, out,
		plan.Kernel{Core: "map", Exprs: []*plan.Expr{plan.InputExpr(0, x.DType)}})
	return out
}

// multiStage returns the last array of the best fitting chain of copies
// from x (chunk shape s) to target (chunk shape t), or nil when none fits.
func multiStage(x *plan.Array, s, t []int, target [][]int, minMem int64) *plan.Array {
	lo := make([]int, len(s))
	for d := range s {
		lo[d] = max(min(s[d], t[d]), 1)
	}
	candidates := [][][]int{{lo}}
	for n := 2; n <= maxRechunkStages; n++ {
		candidates = append(candidates, geometricStages(x.Shape, s, t, lo, n))
	}
	var best []([]int)
	bestSmallest := int64(-1)
	for _, inter := range candidates {
		if !chainFits(x, s, t, target, inter) {
			continue
		}
		smallest := int64(math.MaxInt64)
		for _, c := range inter {
			smallest = min(smallest, plan.Prod(c)*int64(x.DType.Size()))
		}
		if smallest >= minMem {
			best = inter
			break
		}
		if smallest > bestSmallest {
			best, bestSmallest = inter, smallest
		}
	}
	if best == nil {
		return nil
	}
	return buildChain(x, s, t, target, best)
}

// geometricStages returns the n-1 intermediate chunk shapes of an n-stage
// rechunk: per dimension s^(1-k/n) * t^(k/n), rounded to a multiple of
// lo = min(s, t) and capped at the dimension, without repeats.
func geometricStages(shape, s, t, lo []int, n int) [][]int {
	var out [][]int
	prev := s
	for k := 1; k < n; k++ {
		f := float64(k) / float64(n)
		c := make([]int, len(s))
		for d := range s {
			g := math.Exp((1-f)*math.Log(float64(max(s[d], 1))) + f*math.Log(float64(max(t[d], 1))))
			m := max(int(math.Round(g/float64(lo[d]))), 1) * lo[d]
			c[d] = min(m, max(shape[d], 1))
		}
		if !equalInts(c, prev) && !equalInts(c, t) {
			out = append(out, c)
			prev = c
		}
	}
	return out
}

// chainFits reports whether every copy of the chain s → inter... → t fits
// the memory budget (it plans the copies and unlinks them again).
func chainFits(x *plan.Array, s, t []int, target [][]int, inter [][]int) bool {
	if len(inter) == 0 {
		return false
	}
	out := buildChain(x, s, t, target, inter)
	if out == nil {
		return false
	}
	for a := out; a != x; a = a.Op.Inputs[0].Array {
		defer unlink(a)
	}
	return true
}

// buildChain plans the copies x → inter[0] → ... → target, or returns nil
// (leaving no op behind) when one of them is over budget or has more
// blocks than an array may have.
func buildChain(x *plan.Array, s, t []int, target [][]int, inter [][]int) *plan.Array {
	cur, curShape := x, s
	var made []*plan.Array
	for i := 0; i <= len(inter); i++ {
		next, nextShape := target, t
		if i < len(inter) {
			nextShape = inter[i]
			next = make([][]int, len(nextShape))
			for d, n := range x.Shape {
				c, err := plan.RegularChunks(n, nextShape[d])
				if err != nil {
					for _, a := range made {
						unlink(a)
					}
					return nil
				}
				next[d] = c
			}
		}
		op := copyOp(cur, next, taskBlocksFor(x.Shape, curShape, nextShape))
		if op == nil {
			for _, a := range made {
				unlink(a)
			}
			return nil
		}
		made = append(made, op)
		cur, curShape = op, nextShape
	}
	return cur
}

// copyOp returns a rechunk copy of x to chunks whose tasks each write
// taskBlocks blocks, or nil when its projected memory is over budget.
func copyOp(x *plan.Array, chunks [][]int, taskBlocks []int) *plan.Array {
	out := plan.NewArray(x.Shape, x.DType, chunks, x.Spec)
	op := plan.NewOp("rechunk", "rechunk", []plan.Input{{Array: x, Dims: plan.Identity(x.NDim())}}, out,
		plan.Kernel{Core: "map", Exprs: []*plan.Expr{plan.InputExpr(0, x.DType)}})
	for _, k := range taskBlocks {
		if k > 1 {
			op.TaskBlocks = taskBlocks
			break
		}
	}
	if plan.ProjectedMem(op) > x.Spec.AllowedMem {
		unlink(out)
		return nil
	}
	return out
}

// unlink drops an op that was planned but not used.
func unlink(a *plan.Array) { a.Op = nil }

// boxRunElems returns the length, in elements, of the contiguous runs of
// the part of a source chunk (shape s) that a target block (shape t)
// needs, both C order: the trailing dimensions the part covers whole, and
// the first it does not, multiply.
func boxRunElems(s, t []int) int {
	run := 1
	for d := len(s) - 1; d >= 0; d-- {
		e := min(s[d], t[d])
		run *= e
		if e < s[d] {
			break
		}
	}
	return run
}

// taskBlocksFor returns how many target blocks of size t along each
// dimension make a copy region of lcm(s, t) elements (capped at the
// dimension), which holds whole chunks of both sizes.
func taskBlocksFor(shape, s, t []int) []int {
	k := make([]int, len(s))
	for d := range s {
		sd, td := max(s[d], 1), max(t[d], 1)
		e := min(lcm(sd, td), max(shape[d], 1))
		k[d] = max((e+td-1)/td, 1)
	}
	return k
}

func chunkShapeOf(chunks [][]int) []int {
	s := make([]int, len(chunks))
	for d, c := range chunks {
		s[d] = plan.MaxChunk(c)
	}
	return s
}

// ToZarr returns an array that, when computed, writes x to the Zarr array
// ref names. The target gets x's chunks (made regular when they are not);
// with shards, each shard (a multiple of x's chunks) is one block, written
// whole, holding inner chunks of x's chunk shape.
func ToZarr(x *plan.Array, ref plan.ZarrRef, shards []int) (*plan.Array, error) {
	src := x
	if !plan.IsRegular(x.Chunks) {
		var err error
		if src, err = Rechunk(x, x.ChunkShape()); err != nil {
			return nil, err
		}
	}
	if shards != nil {
		if len(shards) != x.NDim() {
			return nil, plan.Errorf(plan.ErrValue, "to_zarr: shards %v do not match an array of dimension %d", shards, x.NDim())
		}
		inner := src.ChunkShape()
		spec := make([]any, len(shards))
		for d, n := range shards {
			c := max(inner[d], 1)
			if n <= 0 || n%c != 0 {
				return nil, plan.Errorf(plan.ErrValue, "to_zarr: shard shape %v must be a multiple of the chunk shape %v", shards, inner)
			}
			spec[d] = n
			inner[d] = c
		}
		var err error
		if src, err = Rechunk(src, spec); err != nil {
			return nil, err
		}
		ref.InnerChunks = inner
	}
	out := plan.NewArray(x.Shape, x.DType, src.Chunks, x.Spec)
	plan.NewOp("store", "blockwise", []plan.Input{{Array: src, Dims: plan.Identity(x.NDim())}}, out,
		plan.Kernel{Core: "map", Exprs: []*plan.Expr{plan.InputExpr(0, x.DType)}})
	out.Target = &ref
	return out, nil
}

// StoreInto returns an array that, when computed, writes x into part of the
// existing Zarr array ref names: region gives the [start, stop) of each
// dimension (nil: the whole array). Regions must start on chunk boundaries
// and end on one or at the array's end, so that every chunk written is
// wholly x's; x is cast to the target's dtype and rechunked to its grid.
func StoreInto(ctx context.Context, x *plan.Array, ref plan.ZarrRef, region [][2]int) (*plan.Array, error) {
	s, err := zarr.OpenStoreWithOptions(ctx, ref.Store, ref.StorageOptions)
	if err != nil {
		return nil, fmt.Errorf("store: cannot open store %q: %w", ref.Store, err)
	}
	defer zarr.Close(s)
	z, err := zarr.OpenArray(ctx, s, ref.Path)
	if errors.Is(err, zarr.ErrNotFound) {
		return nil, fmt.Errorf("store: no Zarr array at store %q, path %q: %w", ref.Store, ref.Path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("store: cannot read the Zarr array at store %q, path %q: %w", ref.Store, ref.Path, err)
	}
	meta := z.Metadata()
	if region == nil {
		region = make([][2]int, len(meta.Shape))
		for d, n := range meta.Shape {
			region[d] = [2]int{0, n}
		}
	}
	if len(region) != len(meta.Shape) || x.NDim() != len(meta.Shape) {
		return nil, plan.Errorf(plan.ErrValue, "store: an array of shape %s cannot be written to a target of shape %s with region %v",
			FormatShape(x.Shape), FormatShape(meta.Shape), region)
	}
	chunks := make([]any, x.NDim())
	ref.Region = make([]int, x.NDim())
	for d, r := range region {
		n, c := meta.Shape[d], meta.ChunkShape[d]
		if r[0] < 0 || r[1] > n || r[0] > r[1] || r[1]-r[0] != x.Shape[d] {
			return nil, plan.Errorf(plan.ErrValue, "store: region %v of a target of shape %s does not fit an array of shape %s",
				region, FormatShape(meta.Shape), FormatShape(x.Shape))
		}
		if r[0]%c != 0 || (r[1]%c != 0 && r[1] != n) {
			return nil, plan.Errorf(plan.ErrValue, "store: region %v must start and end on chunk boundaries of the target (chunks %v) or at its end", region, meta.ChunkShape)
		}
		chunks[d] = c
		ref.Region[d] = r[0]
	}
	src, err := AsType(x, meta.DataType)
	if err != nil {
		return nil, err
	}
	if src, err = Rechunk(src, chunks); err != nil {
		return nil, err
	}
	ref.Existing = true
	out := plan.NewArray(x.Shape, meta.DataType, src.Chunks, x.Spec)
	plan.NewOp("store", "blockwise", []plan.Input{{Array: src, Dims: plan.Identity(x.NDim())}}, out,
		plan.Kernel{Core: "map", Exprs: []*plan.Expr{plan.InputExpr(0, meta.DataType)}})
	out.Target = &ref
	return out, nil
}
