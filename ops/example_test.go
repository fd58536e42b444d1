package ops_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/cubego/cubego/engine"
	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// An elementwise expression, sqrt(x² + y²), where y (one row) broadcasts
// against x (two rows) and the Python-style scalar 2 takes x's dtype.
func ExampleElemwise() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "cubego-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	spec := &plan.Spec{WorkDir: dir, AllowedMem: 100_000_000}

	x, err := ops.FromSlice([]int{2, 3}, []float64{3, 5, 8, 0, 1, 2}, []int{1, 3}, spec)
	if err != nil {
		log.Fatal(err)
	}
	y, err := ops.FromSlice([]int{3}, []float64{4, 12, 15}, 3, spec)
	if err != nil {
		log.Fatal(err)
	}
	two := ops.Operand{Scalar: &plan.Scalar{Kind: 'i', I: 2}}
	x2, err := ops.Elemwise("pow", ops.Operand{Array: x}, two)
	if err != nil {
		log.Fatal(err)
	}
	y2, err := ops.Elemwise("pow", ops.Operand{Array: y}, two)
	if err != nil {
		log.Fatal(err)
	}
	sum, err := ops.Elemwise("add", ops.Operand{Array: x2}, ops.Operand{Array: y2})
	if err != nil {
		log.Fatal(err)
	}
	r, err := ops.Elemwise("sqrt", ops.Operand{Array: sum})
	if err != nil {
		log.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{r})
	if err != nil {
		log.Fatal(err)
	}
	p.Fuse() // one op evaluates the whole expression per block
	res, err := engine.Execute(ctx, p, engine.Options{}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Close()
	v, err := engine.ReadAs[float64](ctx, res, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(p.Ops), "op:", r.Shape, r.DType, v)
	// Output:
	// 1 op: [2 3] float64 [5 13 17 4 12.041594578792296 15.132745950421556]
}

// Reductions over some axes or all of them. Integers are summed in int64,
// as numpy does; mean computes in floating point.
func ExampleReduce() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "cubego-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	spec := &plan.Spec{WorkDir: dir, AllowedMem: 100_000_000}

	// 1, 2, ..., 12 as a 3×4 int16 array in 2×2 blocks.
	data := make([]int16, 12)
	for i := range data {
		data[i] = int16(i + 1)
	}
	x, err := ops.FromSlice([]int{3, 4}, data, []int{2, 2}, spec)
	if err != nil {
		log.Fatal(err)
	}
	rows, err := ops.Reduce("sum", x, []int{1}, false, nil, 0)
	if err != nil {
		log.Fatal(err)
	}
	mean, err := ops.Reduce("mean", x, nil, false, nil, 0) // nil axes: all of them
	if err != nil {
		log.Fatal(err)
	}
	biggest, err := ops.Reduce("max", x, []int{0}, true, nil, 0) // keepdims
	if err != nil {
		log.Fatal(err)
	}
	// One computation, three outputs.
	p, err := plan.Build([]*plan.Array{rows, mean, biggest})
	if err != nil {
		log.Fatal(err)
	}
	res, err := engine.Execute(ctx, p, engine.Options{}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Close()
	r, err := engine.ReadAs[int64](ctx, res, 0)
	if err != nil {
		log.Fatal(err)
	}
	m, err := engine.ReadAs[float64](ctx, res, 1)
	if err != nil {
		log.Fatal(err)
	}
	b, err := engine.ReadAs[int16](ctx, res, 2)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rows.DType, r)
	fmt.Println(mean.DType, mean.Shape, m)
	fmt.Println(biggest.DType, biggest.Shape, b)
	// Output:
	// int64 [10 26 42]
	// float64 [] [6.5]
	// int16 [1 4] [9 10 11 12]
}

// A matrix product; the contracted dimension is streamed one block pair
// at a time.
func ExampleMatmul() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "cubego-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	spec := &plan.Spec{WorkDir: dir, AllowedMem: 100_000_000}

	a, err := ops.FromSlice([]int{2, 3}, []float64{1, 2, 3, 4, 5, 6}, []int{1, 2}, spec)
	if err != nil {
		log.Fatal(err)
	}
	b, err := ops.FromSlice([]int{3, 2}, []float64{1, 0, 0, 1, 1, 1}, []int{2, 1}, spec)
	if err != nil {
		log.Fatal(err)
	}
	c, err := ops.Matmul(a, b)
	if err != nil {
		log.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{c})
	if err != nil {
		log.Fatal(err)
	}
	res, err := engine.Execute(ctx, p, engine.Options{}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Close()
	v, err := engine.ReadAs[float64](ctx, res, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Shape, c.Chunks, v)
	// Output:
	// [2 2] [[1 1] [1 1]] [4 5 10 11]
}

// Rechunk changes an array's blocks (here rows to columns) through as few
// intermediate stages as the memory budget allows.
func ExampleRechunk() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "cubego-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	spec := &plan.Spec{WorkDir: dir, AllowedMem: 100_000_000}

	x, err := ops.Arange(0, 6, 1, ops.Int32, nil, spec)
	if err != nil {
		log.Fatal(err)
	}
	x, err = ops.Reshape(x, []int{2, 3})
	if err != nil {
		log.Fatal(err)
	}
	rows, err := ops.Rechunk(x, []int{1, 3})
	if err != nil {
		log.Fatal(err)
	}
	cols, err := ops.Rechunk(rows, []int{2, 1})
	if err != nil {
		log.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{cols})
	if err != nil {
		log.Fatal(err)
	}
	res, err := engine.Execute(ctx, p, engine.Options{}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Close()
	v, err := engine.ReadAs[int32](ctx, res, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rows.Chunks, "->", cols.Chunks, v)
	// Output:
	// [[1 1] [3]] -> [[2] [1 1 1]] [0 1 2 3 4 5]
}

// FromZarr reads an existing Zarr array (v2 or v3, as zarr-python writes
// them) in its stored chunks or in others; here a v2 array written with
// package zarr.
func ExampleFromZarr() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "cubego-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	spec := &plan.Spec{WorkDir: dir, AllowedMem: 100_000_000}

	// data.zarr/t: 4 uint8 values in chunks of 2, zlib-compressed.
	path := filepath.Join(dir, "data.zarr")
	store, err := zarr.OpenStore(ctx, path)
	if err != nil {
		log.Fatal(err)
	}
	z, err := zarr.CreateArray(ctx, store, "t", zarr.ArrayMetadata{ZarrFormat: 2, Shape: []int{4}, ChunkShape: []int{2},
		DataType: zarr.Uint8, Compressor: &zarr.Codec{Name: "zlib", Configuration: map[string]any{"level": 1}}})
	if err != nil {
		log.Fatal(err)
	}
	for i, chunk := range [][]byte{{10, 20}, {30, 40}} {
		if err := z.WriteChunk(ctx, []int{i}, chunk); err != nil {
			log.Fatal(err)
		}
	}
	zarr.Close(store)

	// nil chunks: the stored ones. Storage options (nil here) configure
	// object stores.
	t, err := ops.FromZarr(ctx, path, "t", nil, spec, nil)
	if err != nil {
		log.Fatal(err)
	}
	total, err := ops.Reduce("sum", t, nil, false, nil, 0)
	if err != nil {
		log.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{total})
	if err != nil {
		log.Fatal(err)
	}
	res, err := engine.Execute(ctx, p, engine.Options{}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Close()
	v, err := engine.ReadAs[uint64](ctx, res, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(t.DType, t.Chunks, v)
	// Output:
	// uint8 [[2 2]] [100]
}
