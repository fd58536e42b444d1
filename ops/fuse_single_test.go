package ops

import (
	"testing"

	"github.com/cubego/cubego/plan"
)

// Single-input fusion (Cubed's simple_optimize_dag) fuses chains only: an op
// with one input array absorbs the op producing it, while the default
// (multiple-input) fusion also fuses fan-ins.
func TestSingleInputFusion(t *testing.T) {
	spec := &plan.Spec{AllowedMem: 100_000_000}
	unary := func(fn string, x *plan.Array) *plan.Array {
		out, err := Elemwise(fn, Operand{Array: x})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	source := func() *plan.Array {
		x, err := Full([]int{8, 8}, Float64, plan.Scalar{Kind: 'f', F: 2}, []any{4, 4}, spec)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	a, b := unary("negative", source()), unary("negative", source())
	sum, err := Elemwise("add", Operand{Array: a}, Operand{Array: b})
	if err != nil {
		t.Fatal(err)
	}
	tail := unary("sqrt", unary("abs", sum))
	chain := unary("sqrt", unary("abs", unary("negative", source())))
	for _, c := range []struct {
		out                  *plan.Array
		unfused, single, all int
	}{
		{chain, 3, 1, 1},
		{sum, 3, 3, 1},
		{tail, 5, 3, 1}, // abs and sqrt fuse into the add, which keeps its two inputs
	} {
		count := func(fuse func(*plan.Plan)) int {
			p, err := plan.Build([]*plan.Array{c.out})
			if err != nil {
				t.Fatal(err)
			}
			fuse(p)
			return len(p.Ops)
		}
		unfused := count(func(*plan.Plan) {})
		single := count(func(p *plan.Plan) { p.FuseWith(plan.FuseOptions{SingleInput: true}) })
		all := count(func(p *plan.Plan) { p.Fuse() })
		if unfused != c.unfused || single != c.single || all != c.all {
			t.Errorf("%s: ops unfused %d, single-input %d, all %d; want %d, %d, %d",
				c.out.Name, unfused, single, all, c.unfused, c.single, c.all)
		}
	}
}
