package engine

import (
	"context"
	"math"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
)

// TestReadSharingGroups: three reductions of products of two stored
// arrays, folding differently so that they are not stacked into one op
// (W2's three means are: siblings_test.go), run their first rounds
// together (they read u and v), each final round on its own after them;
// results equal the sequential run's; one worker runs every op alone.
func TestReadSharingGroups(t *testing.T) {
	spec := testSpec(t)
	n := 6 * 4 * 5
	dir := t.TempDir()
	stored := func(name string, v []float64) *plan.Array {
		return storedArray(t, spec, dir, name, []int{6, 4, 5}, []any{1, 4, 5}, v)
	}
	v2 := seq(n)
	for i := range v2 {
		v2[i] = float64(n - i)
	}
	u, v := stored("u", seq(n)), stored("v", v2)
	reduce := func(fn string, a, b *plan.Array) *plan.Array {
		prod, _ := ops.Elemwise("multiply", ops.Operand{Array: a}, ops.Operand{Array: b})
		m, err := ops.Reduce(fn, prod, []int{0}, false, nil, 2)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	outs := []*plan.Array{reduce("mean", u, u), reduce("max", v, v), reduce("min", u, v)}
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
	// With u's end in the page cache, the group takes u's direction,
	// mean(v*v) included: the group reads each chunk of v together.
	for _, atEnd := range []map[*plan.Array]bool{nil, {u: true}} {
		reverse := scanDirections(groups, atEnd)
		for _, o := range groups[0] {
			if reverse[o] != (atEnd != nil) {
				t.Fatalf("u cached at its end %v: %s runs in reverse %v", atEnd != nil, o.Op, reverse[o])
			}
		}
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
			sum, most, least := 0.0, math.Inf(-1), math.Inf(1)
			for i := range 6 {
				x := pair[0][i*20+j] * pair[1][i*20+j]
				sum, most, least = sum+x, max(most, x), min(least, x)
			}
			if want := []float64{sum / 6, most, least}[k]; !near(got[k][j], want) {
				t.Fatalf("reduction %d element %d = %v, want %v", k, j, got[k][j], want)
			}
		}
	}
}

// TestSecondPassRunsInReverse: in sum(x - mean(x, axis=0)) the first round
// of the mean streams x forward and the op reading x again runs its tasks
// from the last block to the first; the sum is right either way.
func TestSecondPassRunsInReverse(t *testing.T) {
	spec := testSpec(t)
	x := storedArray(t, spec, t.TempDir(), "x", []int{8, 3}, []any{1, 3}, seq(24))
	m, _ := ops.Reduce("mean", x, []int{0}, true, nil, 2)
	d, _ := ops.Elemwise("subtract", ops.Operand{Array: x}, ops.Operand{Array: m})
	sq, _ := ops.Elemwise("multiply", ops.Operand{Array: d}, ops.Operand{Array: d})
	s, err := ops.Reduce("sum", sq, nil, false, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{s})
	if err != nil {
		t.Fatal(err)
	}
	p.Fuse()
	reverse := scanDirections(readSharingGroups(p, 2), nil)
	var readers []bool
	for _, o := range p.Ops {
		for _, a := range o.Op.InputArrays() {
			if a == x {
				readers = append(readers, reverse[o])
			}
		}
	}
	if len(readers) != 2 || readers[0] || !readers[1] {
		t.Fatalf("ops reading x run in reverse: %v, want [false true]", readers)
	}
	// With the end of x in the page cache and not its start, the first
	// pass starts at the end and the second at the start.
	reverse = scanDirections(readSharingGroups(p, 2), map[*plan.Array]bool{x: true})
	readers = readers[:0]
	for _, o := range p.Ops {
		for _, a := range o.Op.InputArrays() {
			if a == x {
				readers = append(readers, reverse[o])
			}
		}
	}
	if len(readers) != 2 || !readers[0] || readers[1] {
		t.Fatalf("x cached at its end: ops reading x run in reverse: %v, want [true false]", readers)
	}
	order := []int{}
	res, err := Execute(context.Background(), p, Options{MaxWorkers: 1}, func(ev Event) {
		if ev.Type == TaskEnd && ev.Op == p.Ops[len(p.Ops)-2].Op.Name {
			order = append(order, ev.Block[0])
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, res, s)[0][0]
	res.Close()
	// Columns 0..2 of x hold 3i + j: deviations from the column mean
	// 3(i - 3.5), squared and summed over 8 rows and 3 columns.
	want := 0.0
	for i := range 8 {
		want += 3 * 9 * (float64(i) - 3.5) * (float64(i) - 3.5)
	}
	if !near(got, want) {
		t.Fatalf("sum = %v, want %v", got, want)
	}
	if len(order) < 2 {
		t.Fatalf("the second pass ran %d tasks, want several", len(order))
	}
	for k := 1; k < len(order); k++ {
		if order[k] > order[k-1] {
			t.Fatalf("the second pass ran blocks in order %v, not from the last", order)
		}
	}
}
