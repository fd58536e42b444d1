package engine

import (
	"math"
	"strings"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
)

// quadraticMeans returns mean(u*u), mean(v*v) and mean(u*v) along axis 0
// (W2's shape of computation) over u and v of shape n × 6 in chunks of c.
func quadraticMeans(t *testing.T, spec *plan.Spec, n int, c any, fn string) []*plan.Array {
	t.Helper()
	vals := func(seed float64) []float64 {
		v := make([]float64, n*6)
		for i := range v {
			v[i] = math.Sin(seed*float64(i+1)) * 3
		}
		if fn == "max" {
			v[7] = math.NaN() // propagates into one element of each max
		}
		return v
	}
	u := literal(t, spec, []int{n, 6}, []any{c, 4}, vals(1))
	v := literal(t, spec, []int{n, 6}, []any{c, 4}, vals(2))
	var outs []*plan.Array
	for _, xy := range [][2]*plan.Array{{u, u}, {v, v}, {u, v}} {
		prod, err := ops.Elemwise("multiply", ops.Operand{Array: xy[0]}, ops.Operand{Array: xy[1]})
		if err != nil {
			t.Fatal(err)
		}
		r, err := ops.ReduceSplit(fn, prod, []int{0}, false, nil, ops.Split{Every: 3})
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, r)
	}
	return outs
}

// stackedOps returns the ops of a fused plan of outs that stack
// reductions, and the plan.
func stackedOps(t *testing.T, outs []*plan.Array) ([]*plan.Op, *plan.Plan) {
	t.Helper()
	p, err := plan.Build(outs)
	if err != nil {
		t.Fatal(err)
	}
	p.Fuse()
	var stacked []*plan.Op
	for _, o := range p.Ops {
		if o.Op.Kernel.Stack > 0 {
			stacked = append(stacked, o.Op)
		}
	}
	return stacked, p
}

func TestSiblingReductionsStackAndMatchUnfused(t *testing.T) {
	for _, tc := range []struct {
		fn     string
		n      int
		chunks any
	}{
		{"mean", 40, 4}, // three rounds: the first stacks, the last returns
		{"sum", 9, 9},   // one round: the stacked op's slices are copied out
		{"max", 30, 7},  // ragged last chunk, a NaN in u
		{"min", 12, 5},
	} {
		t.Run(tc.fn, func(t *testing.T) {
			spec := testSpec(t)
			outs := quadraticMeans(t, spec, tc.n, tc.chunks, tc.fn)
			want := compute(t, Options{}, outs...)
			stacked, _ := stackedOps(t, outs)
			if len(stacked) != 1 || stacked[0].Kernel.Stack != 3 || len(stacked[0].InputArrays()) != 2 {
				t.Fatalf("want one op stacking 3 reductions of u and v, got %v", stacked)
			}
			got, _ := computeFused(t, outs...)
			for k := range outs {
				for i := range want[k] {
					if math.Float64bits(got[k][i]) != math.Float64bits(want[k][i]) {
						t.Fatalf("reduction %d element %d: stacked %v, alone %v", k, i, got[k][i], want[k][i])
					}
				}
			}
		})
	}
}

func TestSiblingReductionsNeedASharedInputAndTheMemory(t *testing.T) {
	spec := testSpec(t)
	u := literal(t, spec, []int{20, 6}, []any{4, 6}, seq(120))
	v := literal(t, spec, []int{20, 6}, []any{4, 6}, seq(120))
	su, _ := ops.ReduceSplit("sum", u, []int{0}, false, nil, ops.Split{Every: 2})
	sv, _ := ops.ReduceSplit("sum", v, []int{0}, false, nil, ops.Split{Every: 2})
	// No array in common: stacking would read nothing less.
	if stacked, _ := stackedOps(t, []*plan.Array{su, sv}); len(stacked) != 0 {
		t.Fatalf("sum(u) and sum(v) stacked: %v", stacked)
	}
	outs := quadraticMeans(t, spec, 40, 4, "mean")
	_, p := stackedOps(t, outs[2:])
	// Enough memory for mean(u*v) alone, not for three reductions stacked.
	spec.AllowedMem = p.MaxProjectedMem()
	stacked, p := stackedOps(t, outs)
	if len(stacked) != 0 {
		t.Fatalf("stacked over allowed_mem %d: %v", spec.AllowedMem, stacked)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestStackedPlanSurvivesSerialization(t *testing.T) {
	// A worker rebuilds the plan from the array graph and finds its op by
	// name: the stacked op and its output's key must come out the same.
	spec := testSpec(t)
	outs := quadraticMeans(t, spec, 40, 4, "mean")
	stacked, _ := stackedOps(t, outs)
	b, err := plan.Marshal(outs)
	if err != nil {
		t.Fatal(err)
	}
	again, err := plan.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	rebuilt, _ := stackedOps(t, again)
	if len(stacked) != 1 || len(rebuilt) != 1 || rebuilt[0].Name != stacked[0].Name || !strings.Contains(stacked[0].Name, "+") {
		t.Fatalf("stacked ops %v, rebuilt %v", stacked, rebuilt)
	}
	k1, err1 := plan.Key(stacked[0].Output)
	k2, err2 := plan.Key(rebuilt[0].Output)
	if err1 != nil || err2 != nil || k1 != k2 {
		t.Fatalf("keys %q (%v) and %q (%v) differ", k1, err1, k2, err2)
	}
	if _, err := ops.NewTaskKernel(rebuilt[0]); err != nil {
		t.Fatal(err)
	}
}

func TestReductionsOfStackedResultsAreRight(t *testing.T) {
	// r1 and r2 are siblings over m1 and m2, which are themselves stacked:
	// their readers read slices of the stacked output, and are not stacked
	// again from the inputs they had before.
	spec := testSpec(t)
	u := literal(t, spec, []int{8, 6}, []any{8, 3}, seq(48))
	v := literal(t, spec, []int{8, 6}, []any{8, 3}, seq(48))
	prod := func(fn string, a, b *plan.Array) *plan.Array {
		r, err := ops.Elemwise(fn, ops.Operand{Array: a}, ops.Operand{Array: b})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	sum := func(a *plan.Array) *plan.Array {
		r, err := ops.Reduce("sum", a, []int{0}, false, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	m1, m2 := sum(prod("multiply", u, u)), sum(prod("multiply", u, v))
	outs := []*plan.Array{sum(prod("add", m1, m2)), sum(prod("multiply", m1, m2))}
	want := compute(t, Options{}, outs...)
	if stacked, _ := stackedOps(t, outs); len(stacked) != 1 || stacked[0].Kernel.Stack != 2 {
		t.Fatalf("want m1 and m2 stacked, got %v", stacked)
	}
	got, _ := computeFused(t, outs...)
	for k := range outs {
		if got[k][0] != want[k][0] {
			t.Fatalf("reduction %d: stacked %v, alone %v", k, got[k][0], want[k][0])
		}
	}
}
