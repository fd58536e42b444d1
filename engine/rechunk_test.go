package engine

import (
	"context"
	"math/rand/v2"
	"sync"
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
		res, bad, err := executeWithinProjection(p)
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
	res, bad, err := executeWithinProjection(p)
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

// TestRechunkFusedIntoConsumerProperties: over random shapes, chunkings and
// budgets, an element-wise op reading a rechunk is fused into the rechunk's
// last copy when the budget allows (its output is then never stored), the
// values are right, and every task allocates at most its projection.
func TestRechunkFusedIntoConsumerProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	fused := 0
	for i := range 40 {
		nd := 1 + r.IntN(3)
		shape := make([]int, nd)
		for d := range shape {
			shape[d] = 1 + r.IntN(30)
		}
		spec := &plan.Spec{WorkDir: t.TempDir(), AllowedMem: int64(4000 + r.IntN(100000)), ReservedMem: 0}
		n := int(plan.Prod(shape))
		x := literal(t, spec, shape, randomChunks(r, shape), seq(n))
		stored, _ := ops.Elemwise("negative", ops.Operand{Array: x})
		y, err := ops.Rechunk(stored, randomChunks(r, shape))
		if err != nil {
			t.Fatal(err)
		}
		z, err := ops.Elemwise("multiply", ops.Operand{Array: y}, ops.Operand{Scalar: &plan.Scalar{Kind: 'f', F: 3}})
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.Build([]*plan.Array{z})
		if err != nil {
			t.Fatal(err)
		}
		p.Fuse()
		if p.Validate() != nil {
			continue
		}
		last := p.Ops[len(p.Ops)-1].Op
		if last.Output != z {
			t.Fatalf("case %d: the last op writes %v, not the result", i, last.Output)
		}
		if y.Op != nil && y.Op.Kind == "rechunk" && last.Kind == "rechunk" {
			fused++
			for _, o := range p.Ops {
				if o.Op.Output == y {
					t.Fatalf("case %d: the rechunk's output is still stored", i)
				}
			}
		}
		res, bad, err := executeWithinProjection(p)
		if err != nil {
			t.Fatalf("case %d %v: %v", i, shape, err)
		}
		buf := make([]byte, z.NBytes())
		if err := res.Read(context.Background(), 0, buf); err != nil {
			t.Fatal(err)
		}
		res.Close()
		for k, g := range toFloats(z.DType, buf) {
			if g != -3*float64(k) {
				t.Fatalf("case %d: shape %v chunks %v -> %v: element %d = %v", i, shape, stored.Chunks, y.Chunks, k, g)
			}
		}
		if len(bad) > 0 {
			t.Errorf("case %d: tasks of %v allocated more than projected", i, bad)
		}
	}
	if fused < 10 {
		t.Errorf("only %d of 40 cases fused the product into the rechunk", fused)
	}
}

// TestReductionOfRechunk: sums of a rechunk (in one or several stages), over
// every axis and along one, keep the rechunk (it is not skipped: its chunks
// decide the summation order), the values are right and every task keeps
// within its projection.
func TestReductionOfRechunk(t *testing.T) {
	n := 256
	spec := &plan.Spec{WorkDir: t.TempDir(), AllowedMem: 200_000, ReservedMem: 0}
	x := literal(t, spec, []int{n, n}, []any{n, 4}, seq(n*n))
	stored, _ := ops.Elemwise("negative", ops.Operand{Array: x})
	for _, c := range [][]any{{4, n}, {n, 1}, {16, 64}} {
		y, err := ops.Rechunk(stored, c)
		if err != nil {
			t.Fatal(err)
		}
		all, err := ops.Reduce("sum", y, nil, false, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		axis0, err := ops.Reduce("sum", y, []int{0}, false, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.Build([]*plan.Array{all, axis0})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		copies := 0
		for _, o := range p.Ops {
			if o.Op.Kind == "rechunk" {
				copies++
			}
		}
		if want := len(rechunkStages(y)); copies < want {
			t.Errorf("rechunk to %v: %d copies planned, want at least %d", c, copies, want)
		}
		res, bad, err := executeWithinProjection(p)
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, res, all, axis0)
		res.Close()
		if w := -float64(n*n) * float64(n*n-1) / 2; got[0][0] != w {
			t.Errorf("rechunk to %v: sum %v, want %v", c, got[0][0], w)
		}
		for j, g := range got[1] {
			if w := -float64(n)*float64(j) - float64(n*(n-1)/2*n); g != w {
				t.Fatalf("rechunk to %v: column sum %d = %v, want %v", c, j, g, w)
			}
		}
		if len(bad) > 0 {
			t.Errorf("tasks of %v allocated more than projected", bad)
		}
	}
}

// rechunkStages returns the copies producing y.
func rechunkStages(y *plan.Array) []*plan.Op {
	var s []*plan.Op
	for a := y; a.Op != nil && a.Op.Kind == "rechunk"; a = a.Op.Inputs[0].Array {
		s = append(s, a.Op)
	}
	return s
}

func readAll(t *testing.T, res *Result, arrays ...*plan.Array) [][]float64 {
	t.Helper()
	var out [][]float64
	for i, a := range arrays {
		buf := make([]byte, a.NBytes())
		if err := res.Read(context.Background(), i, buf); err != nil {
			t.Fatal(err)
		}
		out = append(out, toFloats(a.DType, buf))
	}
	return out
}

// TestRechunkFusedIntoReductionProperties: over random shapes, chunkings,
// reduced axes and budgets, a reduction reading a rechunk has the rechunk's
// last copy fused into its first round when that copy computes one block
// per task and the budget allows (the rechunked array is then never
// stored), the sums are exact (integers) and every task allocates at most
// its projection.
func TestRechunkFusedIntoReductionProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	fused := 0
	for i := range 60 {
		nd := 1 + r.IntN(3)
		shape := make([]int, nd)
		for d := range shape {
			shape[d] = 1 + r.IntN(30)
		}
		var axes []int
		for d := range nd {
			if r.IntN(2) == 0 {
				axes = append(axes, d)
			}
		}
		if len(axes) == 0 {
			axes = []int{r.IntN(nd)}
		}
		spec := &plan.Spec{WorkDir: t.TempDir(), AllowedMem: int64(4000 + r.IntN(100000)), ReservedMem: 0}
		from, to := randomChunks(r, shape), randomChunks(r, shape)
		if i%2 == 0 && nd > 1 {
			// Swap-axes patterns, which rechunk in stages (whose last copy
			// computes one block per task) when the budget is small.
			for d := range shape {
				shape[d] = 8 + r.IntN(20)
			}
			from, to = randomChunks(r, shape), randomChunks(r, shape)
			nb := 8 * plan.Prod(shape)
			spec.AllowedMem = nb/4 + r.Int64N(nb/4)
			from[0], to[0] = shape[0], 1+r.IntN(3)
			for d := 1; d < nd; d++ {
				from[d], to[d] = 1+r.IntN(3), shape[d]
			}
		}
		n := int(plan.Prod(shape))
		x := literal(t, spec, shape, from, seq(n))
		stored, _ := ops.Elemwise("negative", ops.Operand{Array: x})
		y, err := ops.RechunkMinMem(stored, to, 8)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ops.Reduce("sum", y, axes, false, nil, 1+r.IntN(4))
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.Build([]*plan.Array{s})
		if err != nil {
			t.Fatal(err)
		}
		p.Fuse()
		if p.Validate() != nil {
			continue
		}
		stillStored := false
		for _, o := range p.Ops {
			stillStored = stillStored || o.Op.Output == y
		}
		if y.Op != nil && y.Op.Kind == "rechunk" && !stillStored {
			fused++
		}

		res, bad, err := executeWithinProjection(p)
		if err != nil {
			t.Fatalf("case %d %v: %v", i, shape, err)
		}
		got := readAll(t, res, s)[0]
		res.Close()
		want := make([]float64, len(got))
		reduced := map[int]bool{}
		for _, a := range axes {
			reduced[a] = true
		}
		for k := range n {
			idx, rest, out := k, 1, 0
			for d := nd - 1; d >= 0; d-- {
				if !reduced[d] {
					out += (idx % shape[d]) * rest
					rest *= shape[d]
				}
				idx /= shape[d]
			}
			want[out] -= float64(k)
		}
		for k := range want {
			if got[k] != want[k] {
				t.Fatalf("case %d: shape %v chunks %v -> %v, sum over %v: element %d = %v, want %v", i, shape, stored.Chunks, y.Chunks, axes, k, got[k], want[k])
			}
		}
		if len(bad) > 0 {
			t.Errorf("case %d: tasks of %v allocated more than projected", i, bad)
		}
	}
	t.Logf("%d of 60 cases fused", fused)
	if fused < 10 {
		t.Errorf("only %d of 60 cases fused the rechunk into the reduction", fused)
	}
}

// TestRechunkReadsRawSourceInPart: swap-axes rechunks of an uncompressed
// Zarr source on local disk, whose target blocks need contiguous runs of
// at least zarr.BoxReadGap bytes from every source chunk, are one stage
// reading the source directly (no intermediate); the values and their sum
// are exact and every task allocates at most its projection.
func TestRechunkReadsRawSourceInPart(t *testing.T) {
	for _, tc := range []struct{ n, c int }{{500, 190}, {700, 256}, {600, 200}} {
		// Seven source chunks: a one-stage copy of whole chunks (the whole
		// array at once) does not fit, a target block read in part does.
		spec := &plan.Spec{WorkDir: t.TempDir(), AllowedMem: int64(7 * 8 * tc.n * tc.c), ReservedMem: 0}
		x := storedArray(t, spec, t.TempDir(), "x", []int{tc.n, tc.n}, []any{tc.n, tc.c}, seq(tc.n*tc.n))
		if !x.PartialReads {
			t.Fatal("an uncompressed local source does not read chunks in part")
		}
		y, err := ops.Rechunk(x, []any{tc.c, tc.n})
		if err != nil {
			t.Fatal(err)
		}
		if stages := rechunkStages(y); len(stages) != 1 || stages[0].Inputs[0].Array != x {
			t.Fatalf("n=%d c=%d: %d stages, want one reading the source", tc.n, tc.c, len(stages))
		}
		s, err := ops.Reduce("sum", y, nil, false, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.Build([]*plan.Array{y, s})
		if err != nil {
			t.Fatal(err)
		}
		p.Fuse()
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		res, bad, err := executeWithinProjection(p)
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, res, y, s)
		res.Close()
		for k, g := range got[0] {
			if g != float64(k) {
				t.Fatalf("n=%d c=%d: element %d = %v", tc.n, tc.c, k, g)
			}
		}
		if m := float64(tc.n * tc.n); got[1][0] != m*(m-1)/2 {
			t.Fatalf("n=%d c=%d: sum %v, want %v", tc.n, tc.c, got[1][0], m*(m-1)/2)
		}
		if len(bad) > 0 {
			t.Errorf("n=%d c=%d: tasks of %v allocated more than projected", tc.n, tc.c, bad)
		}
	}
}

// executeWithinProjection runs p and returns its result and the ops of
// the tasks that allocated more than their projection.
func executeWithinProjection(p *plan.Plan) (*Result, []string, error) {
	var bad []string
	var mu sync.Mutex
	res, err := Execute(context.Background(), p, Options{}, func(ev Event) {
		if ev.Type == TaskEnd && ev.PeakAllocated > ev.ProjectedMem {
			mu.Lock()
			bad = append(bad, ev.Op)
			mu.Unlock()
		}
	})
	return res, bad, err
}

// storedArray writes values to a Zarr array name under dir (a local
// store) with the given chunks and returns it opened under spec.
func storedArray(t *testing.T, spec *plan.Spec, dir, name string, shape []int, chunks []any, values []float64) *plan.Array {
	t.Helper()
	x := literal(t, testSpec(t), shape, chunks, values)
	out, err := ops.ToZarr(x, plan.ZarrRef{Store: dir, Path: name}, nil)
	if err != nil {
		t.Fatal(err)
	}
	compute(t, Options{}, out)
	a, err := ops.FromZarr(context.Background(), dir, name, nil, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
