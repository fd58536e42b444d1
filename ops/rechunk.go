package ops

import "github.com/cubego/cubego/plan"

// Rechunk returns x with new chunks. Each task assembles one output block
// from the input chunks it overlaps, one chunk at a time.
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
	out := plan.NewArray(x.Shape, x.DType, c, x.Spec)
	plan.NewOp("rechunk", "rechunk", []plan.Input{{Array: x, Dims: plan.Identity(x.NDim())}}, out,
		plan.Kernel{Core: "map", Exprs: []*plan.Expr{plan.InputExpr(0, x.DType)}})
	return out, nil
}

// ToZarr returns an array that, when computed, writes x to a Zarr array at
// store/path. The target gets x's chunks (made regular when they are not).
func ToZarr(x *plan.Array, store, path string, overwrite bool) (*plan.Array, error) {
	src := x
	if !plan.IsRegular(x.Chunks) {
		var err error
		if src, err = Rechunk(x, x.ChunkShape()); err != nil {
			return nil, err
		}
	}
	out := plan.NewArray(x.Shape, x.DType, src.Chunks, x.Spec)
	plan.NewOp("store", "blockwise", []plan.Input{{Array: src, Dims: plan.Identity(x.NDim())}}, out,
		plan.Kernel{Core: "map", Exprs: []*plan.Expr{plan.InputExpr(0, x.DType)}})
	out.Target = &plan.ZarrRef{Store: store, Path: path, Overwrite: overwrite}
	return out, nil
}
