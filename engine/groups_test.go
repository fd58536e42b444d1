package engine

import (
	"context"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
)

// TestReadSharingGroups: W2's three means of products of two stored arrays
// run their first rounds together (they read u and v), each final round on
// its own after them; results equal the sequential run's; one worker runs
// every op alone.
func TestReadSharingGroups(t *testing.T) {
	spec := testSpec(t)
	n := 6 * 4 * 5
	dir := t.TempDir()
	stored := func(name string, v []float64) *plan.Array {
		x := literal(t, spec, []int{6, 4, 5}, []any{1, 4, 5}, v)
		out, err := ops.ToZarr(x, plan.ZarrRef{Store: dir, Path: name}, nil)
		if err != nil {
			t.Fatal(err)
		}
		compute(t, Options{}, out)
		back, err := ops.FromZarr(context.Background(), dir, name, nil, spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		return back
	}
	v2 := seq(n)
	for i := range v2 {
		v2[i] = float64(n - i)
	}
	u, v := stored("u", seq(n)), stored("v", v2)
	mean := func(a, b *plan.Array) *plan.Array {
		prod, _ := ops.Elemwise("multiply", ops.Operand{Array: a}, ops.Operand{Array: b})
		m, err := ops.Reduce("mean", prod, []int{0}, false, nil, 2)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	outs := []*plan.Array{mean(u, u), mean(v, v), mean(u, v)}
	p, err := plan.Build(outs)
	if err != nil {
		t.Fatal(err)
	}
	p.Fuse()
	groups := readSharingGroups(p, 2)
	sizes := []int{}
	for _, g := range groups {
		sizes = append(sizes, len(g))
	}
	// The three first rounds together, then the rounds that follow one
	// by one.
	if len(groups) != 7 || len(groups[0]) != 3 {
		t.Fatalf("groups of sizes %v: want the three first rounds together", sizes)
	}
	ran := map[*plan.OpInfo]bool{}
	for _, g := range groups {
		for _, o := range g {
			for _, a := range o.Op.InputArrays() {
				for _, q := range p.Ops {
					if q.Op.Output == a && !ran[q] {
						t.Fatalf("%s runs before %s, which writes its input", o.Op, q.Op)
					}
				}
			}
		}
		for _, o := range g {
			ran[o] = true
		}
	}
	if len(ran) != len(p.Ops) {
		t.Fatalf("%d of %d ops grouped", len(ran), len(p.Ops))
	}
	for _, g := range readSharingGroups(p, 1) {
		if len(g) != 1 {
			t.Fatalf("one worker: a group of %d ops", len(g))
		}
	}
	res, err := Execute(context.Background(), p, Options{MaxWorkers: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, res, outs...)
	res.Close()
	a, b := seq(n), v2
	for k, pair := range [][2][]float64{{a, a}, {b, b}, {a, b}} {
		for j := range 20 {
			want := 0.0
			for i := range 6 {
				want += pair[0][i*20+j] * pair[1][i*20+j]
			}
			if !near(got[k][j], want/6) {
				t.Fatalf("mean %d element %d = %v, want %v", k, j, got[k][j], want/6)
			}
		}
	}
}
