package engine

import (
	"context"
	"math"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// A one-step element-wise task computes in the buffer of an input laid out
// as its output (ops.TaskKernel.InPlaceInput): it holds one chunk less
// (two, not three, for x + y), gives the same values, edge blocks
// included, and an expression whose last operation may not overwrite the
// input it reads (exp) is computed in a buffer of its own.
func TestElementwiseComputesInPlace(t *testing.T) {
	spec := &plan.Spec{WorkDir: t.TempDir(), AllowedMem: 1 << 30}
	must := mustArray(t)
	chunk := []any{128, 128}
	x := must(ops.Random([]int{300, 200}, zarr.Float64, 1, chunk, spec))
	y := must(ops.Random([]int{300, 200}, zarr.Float64, 2, chunk, spec))
	// Stored inputs (the plan is not fused).
	xs := must(ops.Elemwise("negative", ops.Operand{Array: x}))
	ys := must(ops.Elemwise("negative", ops.Operand{Array: y}))
	add := must(ops.Elemwise("add", ops.Operand{Array: xs}, ops.Operand{Array: ys}))
	expx := must(ops.Elemwise("exp", ops.Operand{Array: xs}))
	cast := must(ops.AsType(ys, zarr.Int64))
	p, err := plan.Build([]*plan.Array{xs, ys, add, expx, cast})
	if err != nil {
		t.Fatal(err)
	}
	var log eventLog
	res, err := Execute(context.Background(), p, Options{MaxWorkers: 1}, log.add)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	read := func(i int, a *plan.Array) []float64 {
		buf := make([]byte, a.NBytes())
		if err := res.Read(context.Background(), i, buf); err != nil {
			t.Fatal(err)
		}
		return toFloats(a.DType, buf)
	}
	xv, yv, addv, expv, castv := read(0, xs), read(1, ys), read(2, add), read(3, expx), read(4, cast)
	for i := range xv {
		if addv[i] != xv[i]+yv[i] || math.Abs(expv[i]-math.Exp(xv[i])) > 1e-15*math.Exp(xv[i]) /* vector exp: 1 ULP */ || castv[i] != float64(int64(yv[i])) {
			t.Fatalf("element %d: add %v exp %v int64 %v from x %v y %v", i, addv[i], expv[i], castv[i], xv[i], yv[i])
		}
	}
	chunkBytes := int64(128 * 128 * 8)
	peak := map[string]int64{}
	for _, ev := range log.tasks() {
		peak[ev.Func] = max(peak[ev.Func], ev.PeakAllocated)
	}
	for fn, want := range map[string]int64{"add": 2 * chunkBytes, "astype": chunkBytes, "exp": 2 * chunkBytes} {
		if peak[fn] != want {
			t.Errorf("%s: a task allocated at most %d bytes, want %d", fn, peak[fn], want)
		}
	}
}
