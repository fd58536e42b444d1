package engine

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
)

func randomChunks(r *rand.Rand, shape []int) []any {
	c := make([]any, len(shape))
	for d, n := range shape {
		c[d] = 1 + r.IntN(max(n, 1))
	}
	return c
}

// TestRechunkProperties: over random shapes and source and target
// chunkings, a stored array rechunked (in however many stages) has exactly
// its values, and every task allocates at most its projection.
func TestRechunkProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 40 {
		nd := 1 + r.IntN(3)
		shape := make([]int, nd)
		for d := range shape {
			shape[d] = 1 + r.IntN(30)
		}
		spec := &plan.Spec{WorkDir: t.TempDir(), AllowedMem: int64(2000 + r.IntN(60000)), ReservedMem: 0}
		n := int(plan.Prod(shape))
		x := literal(t, spec, shape, randomChunks(r, shape), seq(n))
		stored, _ := ops.Elemwise("negative", ops.Operand{Array: x})
		y, err := ops.Rechunk(stored, randomChunks(r, shape))
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.Build([]*plan.Array{y})
		if err != nil {
			t.Fatal(err)
		}
		if p.Validate() != nil {
			continue // a budget too small for these chunks is refused, as it should be
		}
		var bad []string
		res, err := Execute(context.Background(), p, Options{}, func(ev Event) {
			if ev.Type == TaskEnd && ev.PeakAllocated > ev.ProjectedMem {
				bad = append(bad, ev.Op)
			}
		})
		if err != nil {
			t.Fatalf("case %d %v: %v", i, shape, err)
		}
		buf := make([]byte, y.NBytes())
		if err := res.Read(context.Background(), 0, buf); err != nil {
			t.Fatal(err)
		}
		res.Close()
		for k, g := range toFloats(y.DType, buf) {
			if g != -float64(k) {
				t.Fatalf("case %d: shape %v chunks %v -> %v: element %d = %v", i, shape, stored.Chunks, y.Chunks, k, g)
			}
		}
		if len(bad) > 0 {
			t.Errorf("case %d: tasks of %v allocated more than projected", i, bad)
		}
	}
}

func TestSwapAxesRechunkPlansTwoStages(t *testing.T) {
	n := 64
	spec := &plan.Spec{WorkDir: t.TempDir(), AllowedMem: 20_000, ReservedMem: 0} // the whole array (32 kB) does not fit
	x := literal(t, spec, []int{n, n}, []any{n, 4}, seq(n*n))
	stored, _ := ops.Elemwise("negative", ops.Operand{Array: x})
	// min_mem of 64 bytes accepts the (4, 4) float64 intermediates of min(S, T)
	y, err := ops.RechunkMinMem(stored, []any{4, n}, 64)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := plan.Build([]*plan.Array{y})
	var copies []*plan.OpInfo
	for _, o := range p.Ops {
		if o.Op.Kind == "rechunk" {
			copies = append(copies, o)
		}
	}
	if len(copies) != 2 {
		t.Fatalf("%d rechunk stages, want 2", len(copies))
	}
	// Stage 1 reads each (64, 4) source chunk once, writing 16 (4, 4)
	// blocks; stage 2 assembles each (4, 64) target from 16 of those.
	if copies[0].NumTasks != 16 || copies[1].NumTasks != 16 {
		t.Errorf("stage tasks %d and %d, want 16 and 16", copies[0].NumTasks, copies[1].NumTasks)
	}
	got := compute(t, Options{}, y)[0]
	for k, g := range got {
		if g != -float64(k) {
			t.Fatalf("element %d = %v", k, g)
		}
	}
}

// TestDegenerateRechunkUsesMoreStages: (1, N) → (N, 1) through min(S, T)
// would write N*N chunks of one element; the multi-stage plan goes through
// intermediates that interpolate between the two shapes instead.
func TestDegenerateRechunkUsesMoreStages(t *testing.T) {
	n := 256
	spec := &plan.Spec{WorkDir: t.TempDir(), AllowedMem: 200_000, ReservedMem: 0} // the array is 512 kB
	x := literal(t, spec, []int{n, n}, []any{1, n}, seq(n*n))
	stored, _ := ops.Elemwise("negative", ops.Operand{Array: x})
	y, err := ops.Rechunk(stored, []any{n, 1})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := plan.Build([]*plan.Array{y})
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	stages := 0
	for _, o := range p.Ops {
		if o.Op.Kind != "rechunk" {
			continue
		}
		stages++
		out := o.Op.Output
		if out != y && plan.Prod(out.ChunkShape()) < 16 {
			t.Errorf("intermediate chunks %v: tiny chunks the multi-stage plan should avoid", out.ChunkShape())
		}
		if o.NumTasks > int64(n) {
			t.Errorf("stage %s has %d tasks; no stage should need more than %d", o.Op.Name, o.NumTasks, n)
		}
	}
	if stages < 2 {
		t.Fatalf("%d rechunk stages, want at least 2", stages)
	}
	var bad []string
	res, err := Execute(context.Background(), p, Options{}, func(ev Event) {
		if ev.Type == TaskEnd && ev.PeakAllocated > ev.ProjectedMem {
			bad = append(bad, ev.Op)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	buf := make([]byte, y.NBytes())
	if err := res.Read(context.Background(), 0, buf); err != nil {
		t.Fatal(err)
	}
	for k, g := range toFloats(y.DType, buf) {
		if g != -float64(k) {
			t.Fatalf("element %d = %v", k, g)
		}
	}
	if len(bad) > 0 {
		t.Errorf("tasks of %v allocated more than projected", bad)
	}
}
