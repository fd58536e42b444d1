package engine

import (
	"context"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// TestMeasuredWithinProjected runs every kind of op on 32 MB chunks, one
// task at a time, and checks each task's measured memory against its
// projection: the bytes it allocated from the engine, and the growth of the
// process's peak RSS while it ran.
func TestMeasuredWithinProjected(t *testing.T) {
	if testing.Short() {
		t.Skip("moves about 2 GB of chunk data")
	}
	const mb = 1_000_000
	spec := &plan.Spec{WorkDir: t.TempDir(), AllowedMem: 2000 * mb, ReservedMem: 100 * mb}
	must := mustArray(t)
	one := &plan.Scalar{Kind: 'i', I: 1}
	two := &plan.Scalar{Kind: 'i', I: 2}
	c1, m1, step2 := 1, -1, 2
	chunk := []any{2048, 2048} // 2048 × 2048 float64 = 33.5 MB
	x := must(ops.Random([]int{4096, 4096}, zarr.Float64, 1, chunk, spec))
	y := must(ops.Random([]int{4096, 4096}, zarr.Float64, 2, chunk, spec))
	xs := must(ops.Elemwise("negative", ops.Operand{Array: x})) // stored: read by several ops
	ys := must(ops.Elemwise("negative", ops.Operand{Array: y}))
	a := must(ops.Random([]int{4096, 1024}, zarr.Float64, 3, []any{4096, 1024}, spec))
	as := must(ops.Elemwise("negative", ops.Operand{Array: a}))
	b := must(ops.Random([]int{1024, 64}, zarr.Float64, 4, []any{1024, 64}, spec))

	u16 := must(ops.AsType(xs, zarr.Uint16)) // an output too, so stored and read as uint16
	cases := map[string]*plan.Array{
		"cast":        u16,
		"integer sum": must(ops.Reduce("sum", u16, nil, false, nil, 0)), // folded into uint64 as read
		"elementwise": must(ops.Elemwise("add", ops.Operand{Array: xs}, ops.Operand{Array: ys})),
		"fused chain": must(ops.Elemwise("subtract",
			ops.Operand{Array: must(ops.Elemwise("multiply",
				ops.Operand{Array: must(ops.Elemwise("add", ops.Operand{Array: xs}, ops.Operand{Scalar: one}))},
				ops.Operand{Array: ys}))},
			ops.Operand{Scalar: two})),
		"reduction round": must(ops.Reduce("sum", xs, []int{0}, false, nil, 0)),
		"arg round":       must(ops.ArgReduce("argmax", xs, &c1, false)),
		"moments round":   must(ops.Var("var", ys, []int{0}, false, 0, nil)),
		"matmul":          must(ops.Matmul(as, b)),
		"rechunk copy":    must(ops.Rechunk(xs, []any{4096, 1024})),
		"indexing":        must(ops.GetItem(ys, []ops.Index{{Kind: ops.IndexSlice, Start: &c1}, {Kind: ops.IndexSlice, Step: &step2}})),
		"concatenation":   must(ops.Concat([]*plan.Array{xs, ys}, 0)),
		// A misaligned difference evaluated by the rechunk copy that
		// regularises its chunks (to_zarr's shape).
		"fused rechunk": must(ops.Rechunk(must(ops.Elemwise("subtract",
			ops.Operand{Array: must(ops.GetItem(xs, []ops.Index{{Kind: ops.IndexSlice, Start: &c1}}))},
			ops.Operand{Array: must(ops.GetItem(ys, []ops.Index{{Kind: ops.IndexSlice, Stop: &m1}}))})), chunk)),
	}
	var outs []*plan.Array
	names := map[*plan.Op]string{}
	for name, c := range cases {
		outs = append(outs, c)
		names[c.Op] = name
	}
	p, err := plan.Build(outs)
	if err != nil {
		t.Fatal(err)
	}
	p.Fuse()
	var log eventLog
	res, err := Execute(context.Background(), p, Options{MaxWorkers: 1}, log.add)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	byName := map[string]*plan.OpInfo{}
	for _, o := range p.Ops {
		byName[o.Op.Name] = o
	}
	seen := map[string]bool{}
	for _, ev := range log.tasks() {
		o := byName[ev.Op]
		kind := "input"
		for op, name := range names {
			if op.Output == o.Op.Output {
				kind = name
			}
		}
		seen[kind] = true
		budget := ev.ProjectedMem - spec.ReservedMem
		growth := ev.PeakMeasuredMemEnd - ev.PeakMeasuredMemStart
		if ev.PeakAllocated > budget {
			t.Errorf("%s (%s) block %v: allocated %s > projected %s (less reserved)", kind, ev.Func, ev.Block,
				plan.FormatBytes(ev.PeakAllocated), plan.FormatBytes(budget))
		}
		if growth > budget && !raceEnabled { // the race detector's shadow memory inflates RSS
			t.Errorf("%s (%s) block %v: peak RSS grew by %s > projected %s (less reserved)", kind, ev.Func, ev.Block,
				plan.FormatBytes(growth), plan.FormatBytes(budget))
		}
		if len(ev.Block) == 0 || ev.Block[0] == 0 && (len(ev.Block) < 2 || ev.Block[1] == 0) {
			t.Logf("%-15s %-22s projected %9s allocated %9s RSS growth %9s", kind, ev.Func, plan.FormatBytes(budget),
				plan.FormatBytes(ev.PeakAllocated), plan.FormatBytes(growth))
		}
	}
	for name := range cases {
		if !seen[name] {
			t.Errorf("no task events of the %s op", name)
		}
	}
	// Over the whole computation, the process's peak RSS grew by less than
	// the largest projection.
	if g := res.Stats.PeakRSS - res.Stats.RSSStart; g > p.MaxProjectedMem()-spec.ReservedMem && !raceEnabled {
		t.Errorf("peak RSS grew by %s > max projected %s", plan.FormatBytes(g), plan.FormatBytes(p.MaxProjectedMem()-spec.ReservedMem))
	}
}
