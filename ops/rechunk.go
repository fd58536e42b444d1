package ops

import (
	"context"
	"fmt"

	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// Rechunk returns x with new chunks, in one or two copy stages chosen as
// Rechunker does (see rechunkStages).
func Rechunk(x *plan.Array, chunks ChunkSpec) (*plan.Array, error) {
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
	return rechunkStages(x, c), nil
}

// rechunkStages plans the copies from x's chunks S to target chunks T.
// A task reads whole source chunks and writes whole target chunks, so no
// chunk is read more than once per stage:
//
//   - One stage when a copy region covering lcm(S, T) elements per
//     dimension (TaskBlocks target blocks, a union of whole source chunks)
//     fits the memory budget.
//   - Otherwise two stages through intermediate chunks I = min(S, T) per
//     dimension (x → I reads each source chunk once, writing the I blocks
//     inside it; I → T assembles each target chunk from whole I chunks),
//     when both stages fit.
//   - Otherwise one stage of target blocks, each read from the source
//     chunks it overlaps: bounded memory, at the cost of reading source
//     chunks more than once.
func rechunkStages(x *plan.Array, target [][]int) *plan.Array {
	if plan.IsRegular(x.Chunks) && plan.IsRegular(target) {
		s, t := x.ChunkShape(), chunkShapeOf(target)
		if op := copyOp(x, target, taskBlocksFor(x.Shape, s, t)); op != nil {
			return op
		}
		inter := make([]int, len(s))
		for d := range s {
			inter[d] = max(min(s[d], t[d]), 1)
		}
		ic := make([][]int, len(s))
		for d, n := range x.Shape {
			ic[d] = plan.RegularChunks(n, inter[d])
		}
		if mid := copyOp(x, ic, taskBlocksFor(x.Shape, s, inter)); mid != nil {
			if out := copyOp(mid, target, taskBlocksFor(x.Shape, inter, t)); out != nil {
				return out
			}
			unlink(mid)
		}
	}
	out := plan.NewArray(x.Shape, x.DType, target, x.Spec)
	plan.NewOp("rechunk", "rechunk", []plan.Input{{Array: x, Dims: plan.Identity(x.NDim())}}, out,
		plan.Kernel{Core: "map", Exprs: []*plan.Expr{plan.InputExpr(0, x.DType)}})
	return out
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
	if err != nil {
		return nil, fmt.Errorf("store: no Zarr array at store %q, path %q: %w", ref.Store, ref.Path, err)
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
