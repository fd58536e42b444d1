package engine

import (
	"math"
	"slices"
	"sort"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
)

func TestReshapeMergesAndSplits(t *testing.T) {
	spec := testSpec(t)
	x := literal(t, spec, []int{6, 10}, []any{4, 3}, seq(60))
	for _, shape := range [][]int{{60}, {10, 6}, {2, 3, 10}, {6, 2, 5}, {1, 60, 1}, {15, 4}, {-1, 5}} {
		y, err := ops.Reshape(x, shape)
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range compute(t, Options{}, y)[0] {
			if g != float64(i) {
				t.Fatalf("reshape %v: element %d = %v", shape, i, g)
			}
		}
	}
	if _, err := ops.Reshape(x, []int{7, 9}); err == nil {
		t.Error("reshape to a shape of another size succeeded")
	}
}

func TestConcatPadAndStack(t *testing.T) {
	spec := testSpec(t)
	a := literal(t, spec, []int{2, 3}, []any{1, 2}, seq(6))
	b := literal(t, spec, []int{2, 2}, []any{2, 1}, []float64{10, 11, 12, 13})
	c, err := ops.Concat([]*plan.Array{a, b}, 1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ops.PadConstant(a, [][2]int{{1, 0}, {0, 2}}, plan.Scalar{Kind: 'f', F: -1})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ops.Stack([]*plan.Array{a, a}, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := compute(t, Options{}, c, p, s)
	if want := []float64{0, 1, 2, 10, 11, 3, 4, 5, 12, 13}; !slices.Equal(got[0], want) {
		t.Errorf("concat = %v, want %v", got[0], want)
	}
	if want := []float64{-1, -1, -1, -1, -1, 0, 1, 2, -1, -1, 3, 4, 5, -1, -1}; !slices.Equal(got[1], want) {
		t.Errorf("pad = %v, want %v", got[1], want)
	}
	if want := append(seq(6), seq(6)...); !slices.Equal(got[2], want) {
		t.Errorf("stack = %v, want %v", got[2], want)
	}
}

func TestCumulativeAcrossBlocks(t *testing.T) {
	spec := testSpec(t)
	x := literal(t, spec, []int{3, 7}, []any{2, 3}, seq(21))
	cs, err := ops.Cumulative("cumsum", x, 1, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	got := compute(t, Options{}, cs)[0]
	for i := range 3 {
		acc := 0.0
		if got[i*8] != 0 {
			t.Errorf("row %d initial = %v", i, got[i*8])
		}
		for j := range 7 {
			acc += float64(i*7 + j)
			if g := got[i*8+j+1]; g != acc {
				t.Fatalf("cumsum[%d, %d] = %v, want %v", i, j, g, acc)
			}
		}
	}
}

func TestSortTakeSearchIsIn(t *testing.T) {
	spec := testSpec(t)
	vals := []float64{5, math.NaN(), 3, 9, 1, 3, 7, 0}
	x := literal(t, spec, []int{8}, []any{3}, vals)
	s, err := ops.Sort(x, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := ops.Take(x, []int64{7, 0, -1, 3}, 0)
	if err != nil {
		t.Fatal(err)
	}
	sorted := literal(t, spec, []int{5}, []any{2}, []float64{1, 3, 3, 5, 8})
	q := literal(t, spec, []int{3}, []any{2}, []float64{3, 0, 9})
	ss, err := ops.SearchSorted(sorted, q, "right")
	if err != nil {
		t.Fatal(err)
	}
	in, err := ops.IsIn(x, q, false)
	if err != nil {
		t.Fatal(err)
	}
	got := compute(t, Options{}, s, tk, ss, in)
	want := []float64{0, 1, 3, 3, 5, 7, 9}
	if !slices.Equal(got[0][:7], want) || !math.IsNaN(got[0][7]) {
		t.Errorf("sort = %v", got[0])
	}
	if !slices.Equal(got[1], []float64{0, 5, 0, 9}) {
		t.Errorf("take = %v", got[1])
	}
	if want := []float64{3, 0, 5}; !slices.Equal(got[2], want) {
		t.Errorf("searchsorted = %v, want %v", got[2], want)
	}
	if want := []float64{0, 0, 1, 1, 0, 1, 0, 1}; !slices.Equal(got[3], want) {
		t.Errorf("isin = %v, want %v", got[3], want)
	}
	if _, err := ops.Take(x, []int64{8}, 0); err == nil {
		t.Error("take out of bounds succeeded")
	}
}

func TestArgReduceAndVar(t *testing.T) {
	spec := testSpec(t)
	x := literal(t, spec, []int{4, 5}, []any{3, 2}, []float64{
		3, 1, 4, 1, 5,
		9, 2, 6, 5, 3,
		5, 8, 9, 7, 9,
		3, 2, 3, 8, 4})
	ax := 1
	am, err := ops.ArgReduce("argmax", x, &ax, false)
	if err != nil {
		t.Fatal(err)
	}
	all, err := ops.ArgReduce("argmin", x, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	v, err := ops.Var("var", x, []int{0}, false, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := compute(t, Options{}, am, all, v)
	if want := []float64{4, 0, 2, 3}; !slices.Equal(got[0], want) {
		t.Errorf("argmax = %v, want %v", got[0], want)
	}
	if got[1][0] != 1 {
		t.Errorf("argmin of all = %v, want 1", got[1][0])
	}
	col := []float64{3, 9, 5, 3}
	m := (3 + 9 + 5 + 3) / 4.0
	ss := 0.0
	for _, c := range col {
		ss += (c - m) * (c - m)
	}
	if !near(got[2][0], ss/3) {
		t.Errorf("var[0] = %v, want %v", got[2][0], ss/3)
	}
}

// sortedCopy is the reference for sorting tests with no NaNs.
func sortedCopy(v []float64) []float64 {
	c := append([]float64{}, v...)
	sort.Float64s(c)
	return c
}

func TestSortDescendingMultiBlock(t *testing.T) {
	spec := testSpec(t)
	vals := []float64{4, 8, 1, 9, 2, 7, 3}
	x := literal(t, spec, []int{7}, []any{2}, vals)
	d, err := ops.Sort(x, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	got := compute(t, Options{}, d)[0]
	want := sortedCopy(vals)
	slices.Reverse(want)
	if !slices.Equal(got, want) {
		t.Errorf("descending sort = %v, want %v", got, want)
	}
}
