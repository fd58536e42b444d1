package engine

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
)

// computeFused runs outs with fusion and returns the values and op count.
func computeFused(t *testing.T, outs ...*plan.Array) ([][]float64, int) {
	t.Helper()
	p, err := plan.Build(outs)
	if err != nil {
		t.Fatal(err)
	}
	p.Fuse()
	res, err := Execute(context.Background(), p, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	vals := make([][]float64, len(outs))
	for i, a := range outs {
		buf := make([]byte, a.NBytes())
		if err := res.Read(context.Background(), i, buf); err != nil {
			t.Fatal(err)
		}
		vals[i] = toFloats(a.DType, buf)
	}
	return vals, len(p.Ops)
}

func TestFusedChainsMatchUnfused(t *testing.T) {
	spec := testSpec(t)
	x := literal(t, spec, []int{7, 6}, []any{3, 4}, seq(42))
	w := literal(t, spec, []int{7, 6}, []any{2, 5}, seq(42))
	half := &plan.Scalar{Kind: 'f', F: 0.5}
	one := 1
	m1 := -1
	sum, _ := ops.Elemwise("add", ops.Operand{Array: x}, ops.Operand{Array: w})
	scaled, _ := ops.Elemwise("multiply", ops.Operand{Array: sum}, ops.Operand{Scalar: half})
	sq, _ := ops.Elemwise("multiply", ops.Operand{Array: scaled}, ops.Operand{Array: scaled}) // reads scaled twice
	neg, _ := ops.Elemwise("negative", ops.Operand{Array: sq})
	// Misaligned: neg[1:, ::-1] - w[:-1, :] through a slice op.
	a, _ := ops.GetItem(neg, []ops.Index{{Kind: ops.IndexSlice, Start: &one}, {Kind: ops.IndexSlice, Step: &m1}})
	b, _ := ops.GetItem(w, []ops.Index{{Kind: ops.IndexSlice, Stop: &m1}})
	d, _ := ops.Elemwise("subtract", ops.Operand{Array: a}, ops.Operand{Array: b})
	f32, _ := ops.AsType(d, ops.Float32)
	want := compute(t, Options{}, f32)[0]
	got, n := computeFused(t, f32)
	if n != 1 {
		t.Errorf("fused plan has %d ops, want 1", n)
	}
	for i := range want {
		if got[0][i] != want[i] {
			t.Fatalf("element %d: fused %v, unfused %v", i, got[0][i], want[i])
		}
	}
	// Check one value by hand: row 1 of neg reversed, minus row 0 of w.
	r, c := 0, 0 // d[0, 0] = neg[1, 5] - w[0, 0]
	v := float64(6*1+5) * 2 * 0.5
	if g := got[0][r*6+c]; g != float64(float32(-v*v-0)) {
		t.Errorf("d[0,0] = %v, want %v", g, -v*v)
	}
}

func TestFusionKeepsSharedAndOutputArrays(t *testing.T) {
	spec := testSpec(t)
	x := literal(t, spec, []int{8}, []any{4}, seq(8))
	y, _ := ops.Elemwise("negative", ops.Operand{Array: x})
	a, _ := ops.Elemwise("add", ops.Operand{Array: y}, ops.Operand{Scalar: &plan.Scalar{Kind: 'i', I: 1}})
	b, _ := ops.Elemwise("multiply", ops.Operand{Array: y}, ops.Operand{Scalar: &plan.Scalar{Kind: 'i', I: 2}})
	vals, n := computeFused(t, a, b, y) // y is read twice and requested: it stays
	if n != 3 {
		t.Errorf("plan has %d ops, want 3", n)
	}
	for i := range 8 {
		if vals[0][i] != -float64(i)+1 || vals[1][i] != -2*float64(i) || vals[2][i] != -float64(i) {
			t.Fatalf("element %d: %v %v %v", i, vals[0][i], vals[1][i], vals[2][i])
		}
	}
}

func TestElementwiseFusesIntoReduction(t *testing.T) {
	spec := testSpec(t)
	x := literal(t, spec, []int{9, 5}, []any{2, 3}, seq(45))
	row := literal(t, spec, []int{5}, []any{3}, seq(5)) // broadcast along axis 0
	prod, _ := ops.Elemwise("multiply", ops.Operand{Array: x}, ops.Operand{Array: row})
	plus, _ := ops.Elemwise("add", ops.Operand{Array: prod}, ops.Operand{Scalar: &plan.Scalar{Kind: 'i', I: 1}})
	for _, axes := range [][]int{{0}, {1}, nil} {
		for _, split := range []int{2, 16} {
			m, err := ops.Reduce("mean", plus, axes, false, nil, split)
			if err != nil {
				t.Fatal(err)
			}
			want := compute(t, Options{}, m)[0]
			got, n := computeFused(t, m)
			p, _ := plan.Build([]*plan.Array{m})
			if n != len(p.Ops)-2 {
				t.Errorf("axes %v split %d: %d ops after fusion, want %d", axes, split, n, len(p.Ops)-2)
			}
			for i := range want {
				if !near(got[0][i], want[i]) {
					t.Fatalf("axes %v split %d: element %d fused %v, unfused %v", axes, split, i, got[0][i], want[i])
				}
			}
		}
	}
}

func TestIntermediatesDeletedWhenNoLongerRead(t *testing.T) {
	spec := testSpec(t)
	x := literal(t, spec, []int{8, 6}, []any{3, 4}, seq(48))
	a, _ := ops.Elemwise("negative", ops.Operand{Array: x})
	b, _ := ops.Rechunk(a, []any{8, 2}) // reads a, which is then deleted
	// along axis 1: the sum follows b's chunks along axis 0, so it reads b
	// (a sum over every axis would read a instead of the rechunk)
	c, _ := ops.Reduce("sum", b, []int{1}, false, nil, 0)
	p, _ := plan.Build([]*plan.Array{c})
	stored := func(name string) bool {
		m, _ := filepath.Glob(filepath.Join(spec.WorkDir, "cubego-*", "compute-*", name, "zarr.json"))
		return len(m) > 0
	}
	var aDuringSum, bDuringSum bool
	res, err := Execute(context.Background(), p, Options{}, func(ev Event) {
		if ev.Type == OperationStart && ev.Func == "sum" {
			aDuringSum, bDuringSum = stored(a.Name), stored(b.Name)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	if aDuringSum || !bDuringSum {
		t.Errorf("when the sum started: %s stored %v (want false), %s stored %v (want true)", a.Name, aDuringSum, b.Name, bDuringSum)
	}
}

func TestIntermediatesInMemoryWithinBudget(t *testing.T) {
	for _, budget := range []int64{1 << 20, 400} {
		spec := testSpec(t)
		x := literal(t, spec, []int{8, 6}, []any{3, 4}, seq(48))
		a, _ := ops.Elemwise("negative", ops.Operand{Array: x})
		b, _ := ops.Rechunk(a, []any{8, 2})
		c, _ := ops.Reduce("sum", b, []int{0}, false, nil, 0)
		p, _ := plan.Build([]*plan.Array{c})
		var onDisk []string
		res, err := Execute(context.Background(), p, Options{IntermediateMem: budget}, func(ev Event) {
			if ev.Type == OperationEnd {
				m, _ := filepath.Glob(filepath.Join(spec.WorkDir, "cubego-*", "compute-*", "*", "zarr.json"))
				onDisk = append(onDisk, m...)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, c.NBytes())
		if err := res.Read(context.Background(), 0, buf); err != nil {
			t.Fatal(err)
		}
		res.Close()
		for j, g := range toFloats(c.DType, buf) {
			want := 0.0
			for i := range 8 {
				want -= float64(i*6 + j)
			}
			if g != want {
				t.Fatalf("budget %d: sum[%d] = %v, want %v", budget, j, g, want)
			}
		}
		// 384-byte intermediates: all fit 1 MiB; with 400 bytes one fits
		// and the next goes to disk.
		if budget > 1000 && len(onDisk) != 0 || budget < 1000 && len(onDisk) == 0 {
			t.Errorf("budget %d: intermediates on disk %v", budget, onDisk)
		}
	}
}

func TestElementwiseFusesIntoRechunk(t *testing.T) {
	spec := testSpec(t)
	x := literal(t, spec, []int{12, 10}, []any{3, 4}, seq(120))
	w := literal(t, spec, []int{12, 10}, []any{3, 4}, seq(120))
	one, m1 := 1, -1
	two := &plan.Scalar{Kind: 'i', I: 2}
	scaled, _ := ops.Elemwise("multiply", ops.Operand{Array: x}, ops.Operand{Scalar: two})
	// Misaligned (irregular chunks, one-stage rechunk) and aligned (regular
	// chunks, a rechunk copy whose tasks each write several blocks).
	a, _ := ops.GetItem(scaled, []ops.Index{{Kind: ops.IndexSlice, Start: &one}, {Kind: ops.IndexSlice, Start: &one}})
	b, _ := ops.GetItem(w, []ops.Index{{Kind: ops.IndexSlice, Stop: &m1}, {Kind: ops.IndexSlice, Stop: &m1}})
	diff, _ := ops.Elemwise("subtract", ops.Operand{Array: a}, ops.Operand{Array: b})
	neg, _ := ops.Elemwise("negative", ops.Operand{Array: scaled})
	for _, c := range []struct {
		name   string
		src    *plan.Array
		chunks []any
	}{{"misaligned", diff, []any{4, 4}}, {"aligned", neg, []any{12, 2}}, {"aligned-grouped", neg, []any{6, 8}}} {
		r, err := ops.Rechunk(c.src, c.chunks)
		if err != nil {
			t.Fatal(err)
		}
		want := compute(t, Options{}, r)[0]
		got, n := computeFused(t, r)
		if n != 1 {
			t.Errorf("%s: %d ops after fusion, want 1 (the rechunk evaluating the expression)", c.name, n)
		}
		for i := range want {
			if got[0][i] != want[i] {
				t.Fatalf("%s: element %d fused %v, unfused %v", c.name, i, got[0][i], want[i])
			}
		}
	}
}

// TestRechunkFusesOnlyIntoAlignedConsumers: a rechunk copy fuses into a
// consumer that reads nothing else, block for block (the copy then
// evaluates the consumer's expression and reads just what it read); a
// consumer reading it through other blocks, or beside another input, would
// read the rechunk's source through its own blocks, so it does not fuse.
func TestRechunkFusesOnlyIntoAlignedConsumers(t *testing.T) {
	spec := testSpec(t)
	x := literal(t, spec, []int{12, 10}, []any{3, 4}, seq(120))
	r, _ := ops.Rechunk(x, []any{12, 2})
	neg, _ := ops.Elemwise("negative", ops.Operand{Array: r})
	sliced, _ := ops.GetItem(r, []ops.Index{{Kind: ops.IndexSlice, Start: ptr(1)}})
	y := literal(t, spec, []int{12, 10}, []any{12, 2}, seq(120))
	sum, _ := ops.Elemwise("add", ops.Operand{Array: r}, ops.Operand{Array: y})
	for _, c := range []struct {
		name string
		out  *plan.Array
		fuse bool
	}{{"negative", neg, true}, {"slice", sliced, false}, {"two inputs", sum, false}} {
		p, _ := plan.Build([]*plan.Array{c.out})
		before := len(p.Ops)
		want := compute(t, Options{}, c.out)[0]
		got, n := computeFused(t, c.out)
		if c.fuse && n != before-1 {
			t.Errorf("%s: %d ops after fusion, want %d: the copy should compute the consumer", c.name, n, before-1)
		}
		if !c.fuse && n != before {
			t.Errorf("%s: %d ops after fusion, want %d: a rechunk's source must not be read through its consumer's blocks", c.name, n, before)
		}
		for i := range want {
			if got[0][i] != want[i] {
				t.Fatalf("%s: element %d fused %v, unfused %v", c.name, i, got[0][i], want[i])
			}
		}
	}
}

func TestFusedOpReadsEachInputOnce(t *testing.T) {
	spec := testSpec(t)
	a := literal(t, spec, []int{6, 4}, []any{3, 2}, seq(24))
	b := literal(t, spec, []int{6, 4}, []any{3, 2}, seq(24))
	s, _ := ops.Elemwise("add", ops.Operand{Array: a}, ops.Operand{Array: b})
	sq, _ := ops.Elemwise("multiply", ops.Operand{Array: s}, ops.Operand{Array: s}) // reads s twice
	z, _ := ops.Elemwise("add", ops.Operand{Array: sq}, ops.Operand{Array: a})      // and a once more
	p, err := plan.Build([]*plan.Array{z})
	if err != nil {
		t.Fatal(err)
	}
	p.Fuse()
	if len(p.Ops) != 1 || len(p.Ops[0].Op.Inputs) != 2 {
		t.Fatalf("fused plan: %d ops, the last with %d inputs; want 1 op reading a and b once each", len(p.Ops), len(p.Ops[len(p.Ops)-1].Op.Inputs))
	}
	want := compute(t, Options{}, z)[0]
	got, _ := computeFused(t, z)
	for i := range want {
		if got[0][i] != want[i] {
			t.Fatalf("element %d: fused %v, unfused %v", i, got[0][i], want[i])
		}
	}
}

func ptr(i int) *int { return &i }

func TestSliceFusesIntoReduction(t *testing.T) {
	// sum(x[a:b] - row) folds over the slice's blocks where they lie in x
	// (a grid on x, on x's chunks or across them): the slice is not stored.
	spec := testSpec(t)
	x := literal(t, spec, []int{12, 5}, []any{3, 2}, seq(60))
	y := literal(t, spec, []int{12, 5}, []any{4, 5}, seq(60))
	row := literal(t, spec, []int{5}, []any{2}, seq(5))
	ix := func(v int) *int { return &v }
	for _, sl := range [][2]int{{3, 9}, {4, 11}, {0, 12}, {1, 2}, {6, 12}} {
		idx := []ops.Index{{Kind: ops.IndexSlice, Start: ix(sl[0]), Stop: ix(sl[1])}, {Kind: ops.IndexSlice, Start: ix(1)}}
		xs, err := ops.GetItem(x, idx)
		if err != nil {
			t.Fatal(err)
		}
		ys, _ := ops.GetItem(y, idx)
		rs, _ := ops.GetItem(row, idx[1:])
		d, _ := ops.Elemwise("subtract", ops.Operand{Array: xs}, ops.Operand{Array: rs})
		prod, _ := ops.Elemwise("multiply", ops.Operand{Array: xs}, ops.Operand{Array: ys})
		for _, operand := range []*plan.Array{xs, d, prod} {
			for _, axes := range [][]int{{0}, {1}, nil} {
				for _, split := range []int{2, 16} {
					m, err := ops.Reduce("sum", operand, axes, false, nil, split)
					if err != nil {
						t.Fatal(err)
					}
					want := compute(t, Options{}, m)[0]
					p, _ := plan.Build([]*plan.Array{m})
					p.Fuse()
					for _, o := range p.Ops {
						if o.Op.Func == "getitem" || o.Op.Func == "getitem+subtract" || o.Op.Func == "getitem+multiply" {
							t.Errorf("x[%d:%d, 1:], axes %v split %d: %s stored, not fused into the fold", sl[0], sl[1], axes, split, o.Op.Func)
						}
					}
					got, _ := computeFused(t, m)
					for i := range want {
						if !near(got[0][i], want[i]) {
							t.Fatalf("x[%d:%d, 1:], axes %v split %d: element %d fused %v, unfused %v", sl[0], sl[1], axes, split, i, got[0][i], want[i])
						}
					}
				}
			}
		}
	}
}

func TestSharedViewFusesIntoEachReader(t *testing.T) {
	// xs - mean(xs, axis=0) over a slice xs of x: the slice, read by both
	// the mean and the difference, fuses into each and is not stored. A
	// strided slice, which each reader would read whole chunks for, is
	// stored once for both.
	spec := testSpec(t)
	x := literal(t, spec, []int{12, 5}, []any{3, 2}, seq(60))
	ix := func(v int) *int { return &v }
	for _, c := range []struct {
		key   []ops.Index
		views int // getitem ops left after fusion
	}{
		{[]ops.Index{{Kind: ops.IndexSlice, Start: ix(3), Stop: ix(11)}, {Kind: ops.IndexSlice, Start: ix(1)}}, 0},
		{[]ops.Index{{Kind: ops.IndexSlice, Start: ix(6)}}, 0},
		{[]ops.Index{{Kind: ops.IndexSlice, Step: ix(2)}}, 1},
	} {
		xs, err := ops.GetItem(x, c.key)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := ops.Reduce("mean", xs, []int{0}, true, nil, 2)
		d, _ := ops.Elemwise("subtract", ops.Operand{Array: xs}, ops.Operand{Array: m})
		s, _ := ops.Reduce("sum", d, nil, false, nil, 0)
		for _, outs := range [][]*plan.Array{{s}, {s, xs}} {
			want := compute(t, Options{}, outs...)
			p, _ := plan.Build(outs)
			p.Fuse()
			views := 0
			for _, o := range p.Ops {
				if o.Op.Func == "getitem" {
					views++
				}
			}
			wantViews := c.views
			if len(outs) == 2 {
				wantViews = 1 // requested: stored, and read by no fused op
			}
			if views != wantViews {
				t.Errorf("key %v, %d outputs: %d getitem ops after fusion, want %d", c.key, len(outs), views, wantViews)
			}
			got, _ := computeFused(t, outs...)
			for k := range want {
				for i := range want[k] {
					if !near(got[k][i], want[k][i]) {
						t.Fatalf("key %v output %d element %d: fused %v, unfused %v", c.key, k, i, got[k][i], want[k][i])
					}
				}
			}
		}
	}
}

func TestSharedComputationIsStoredOnce(t *testing.T) {
	// An element-wise result that computes (not a view) and that two ops
	// read is computed once and stored, not computed again in each.
	spec := testSpec(t)
	x := literal(t, spec, []int{12, 5}, []any{3, 2}, seq(60))
	y, _ := ops.Elemwise("negative", ops.Operand{Array: x})
	a, _ := ops.Reduce("sum", y, []int{0}, false, nil, 0)
	b, _ := ops.Reduce("max", y, []int{1}, false, nil, 0)
	p, _ := plan.Build([]*plan.Array{a, b})
	p.FuseWith(plan.FuseOptions{SingleInput: true}) // no sibling merging
	n := 0
	for _, o := range p.Ops {
		if o.Op.Func == "negative" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d negative ops after fusion, want 1 (stored, read by both)", n)
	}
}
