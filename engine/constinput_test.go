package engine

import (
	"context"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// A constant virtual input (ones, full...) reaches map and reduce tasks as
// a broadcast block: its regions are never filled, so a task holds no
// buffer for it (x + ones holds one chunk, computed in x's buffer; ones *
// 2 just its output chunk), and the values are those of the filled array.
func TestConstantInputsHoldNoBuffer(t *testing.T) {
	spec := &plan.Spec{WorkDir: t.TempDir(), AllowedMem: 1 << 30}
	must := mustArray(t)
	chunk := []any{128, 128}
	shape := []int{300, 200}
	x := must(ops.Random(shape, zarr.Float64, 1, chunk, spec))
	xs := must(ops.Elemwise("negative", ops.Operand{Array: x})) // stored
	ones := must(ops.Full(shape, zarr.Float64, plan.Scalar{Kind: 'f', F: 1}, chunk, spec))
	add := must(ops.Elemwise("add", ops.Operand{Array: xs}, ops.Operand{Array: ones}))
	two := plan.Scalar{Kind: 'f', F: 2}
	twice := must(ops.Elemwise("multiply", ops.Operand{Array: ones}, ops.Operand{Scalar: &two}))
	one := plan.Scalar{Kind: 'f', F: 1}
	total := must(ops.Reduce("sum", must(ops.Elemwise("add", ops.Operand{Array: ones}, ops.Operand{Scalar: &one})), []int{0, 1}, false, nil, 0))
	p, err := plan.Build([]*plan.Array{xs, add, twice, total})
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
	xv, addv, twicev, totalv := read(0, xs), read(1, add), read(2, twice), read(3, total)
	for i := range xv {
		if addv[i] != xv[i]+1 || twicev[i] != 2 {
			t.Fatalf("element %d: x + 1 = %v, 2 × 1 = %v (x %v)", i, addv[i], twicev[i], xv[i])
		}
	}
	if totalv[0] != 2*300*200 {
		t.Fatalf("sum(ones + 1) = %v, want %v", totalv[0], 2*300*200)
	}
	chunkBytes := int64(128 * 128 * 8)
	peak := map[string]int64{}
	for _, ev := range log.tasks() {
		peak[ev.Func] = max(peak[ev.Func], ev.PeakAllocated)
	}
	for fn, want := range map[string]int64{"add": chunkBytes, "multiply": chunkBytes} {
		if peak[fn] != want {
			t.Errorf("%s: a task allocated at most %d bytes, want %d", fn, peak[fn], want)
		}
	}
}
