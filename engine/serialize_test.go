package engine

import (
	"math"
	"slices"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
)

func TestGraphRoundTripComputesTheSame(t *testing.T) {
	spec := testSpec(t)
	x, _ := ops.Random([]int{6, 5}, ops.Float64, 7, []any{4, 2}, spec)
	lit := literal(t, spec, []int{6, 5}, []any{3, 5}, seq(30))
	y, _ := ops.Elemwise("add", ops.Operand{Array: x}, ops.Operand{Array: lit})
	y, _ = ops.Elemwise("maximum", ops.Operand{Array: y}, ops.Operand{Scalar: &plan.Scalar{Kind: 'f', F: math.Inf(-1)}})
	m, _ := ops.Reduce("mean", y, []int{0}, true, nil, 2)
	mm, _ := ops.Matmul(y, lit)
	_ = mm
	two := 2
	s, _ := ops.GetItem(y, []ops.Index{{Kind: ops.IndexSlice, Step: &two}})
	p, _ := ops.PadConstant(s, [][2]int{{1, 1}, {0, 0}}, plan.Scalar{Kind: 'f', F: math.NaN()})
	tk, _ := ops.Take(p, []int64{4, 0, 2}, 0)
	outs := []*plan.Array{m, tk}

	b, err := plan.Marshal(outs)
	if err != nil {
		t.Fatal(err)
	}
	back, err := plan.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	want := compute(t, Options{}, outs...)
	got := compute(t, Options{}, back...)
	for i := range want {
		for j := range want[i] {
			if !(want[i][j] == got[i][j] || math.IsNaN(want[i][j]) && math.IsNaN(got[i][j])) {
				t.Fatalf("output %d element %d: %v after a round trip, %v before", i, j, got[i][j], want[i][j])
			}
		}
	}
	for i := range outs {
		k1, _ := plan.Key(outs[i])
		k2, _ := plan.Key(back[i])
		if k1 != k2 {
			t.Errorf("output %d: key %s after a round trip, %s before", i, k2, k1)
		}
	}
	k1, _ := plan.Key(m)
	k2, _ := plan.Key(tk)
	if k1 == k2 {
		t.Error("different arrays have the same key")
	}
	if !slices.Equal(back[1].Shape, tk.Shape) || back[1].Name != tk.Name {
		t.Errorf("decoded array %v, want %v", back[1], tk)
	}
	for _, bad := range []string{``, `{"version": 99}`, `{"version":1,"arrays":[{"op":3}],"ops":[],"outputs":[0]}`, `{"version":1,"arrays":[],"ops":[],"outputs":[2]}`} {
		if _, err := plan.Unmarshal([]byte(bad)); err == nil {
			t.Errorf("Unmarshal(%q) succeeded", bad)
		}
	}
}
