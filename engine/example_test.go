package engine_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"

	"github.com/cubego/cubego/engine"
	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
)

// Build arrays, compute a reduction and write the result to Zarr, from Go.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	spec := &plan.Spec{WorkDir: dir, AllowedMem: 100_000_000, ReservedMem: 10_000_000}

	// x[i, j] = i*4 + j, in 3×2 blocks; mean over axis 0 of x*2 + 1.
	grid := make([]byte, 24*8)
	for i := range 24 {
		binary.LittleEndian.PutUint64(grid[i*8:], math.Float64bits(float64(i)))
	}
	x, _ := ops.FromBuffer([]int{6, 4}, ops.Float64, grid, []any{3, 2}, spec)
	y, _ := ops.Elemwise("multiply", ops.Operand{Array: x}, ops.Operand{Scalar: &plan.Scalar{Kind: 'f', F: 2}})
	y, _ = ops.Elemwise("add", ops.Operand{Array: y}, ops.Operand{Scalar: &plan.Scalar{Kind: 'i', I: 1}})
	m, _ := ops.Reduce("mean", y, []int{0}, false, nil, 0)
	stored, _ := ops.ToZarr(m, plan.ZarrRef{Store: dir + "/out.zarr"}, nil)

	p, _ := plan.Build([]*plan.Array{stored})
	fmt.Println("ops:", len(p.Ops), "within memory:", p.Validate() == nil)
	res, err := engine.Execute(ctx, p, engine.Options{}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer res.Close()
	buf := make([]byte, stored.NBytes())
	_ = res.Read(ctx, 0, buf)
	for i := range 4 {
		fmt.Print(math.Float64frombits(binary.LittleEndian.Uint64(buf[i*8:])), " ")
	}
	fmt.Println()
	// Output:
	// ops: 4 within memory: true
	// 21 23 25 27
}
