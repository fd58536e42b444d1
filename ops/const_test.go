package ops

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/cubego/cubego/plan"
)

// Constant virtual inputs read as broadcast blocks give the bytes the
// filled regions gave, for maps and reductions (float sums keep their
// order) of every dtype, broadcast shapes, where and astype, and ops whose
// inputs are all constant; and the kernel does take them as broadcast
// blocks where it may (a test that cannot pass with the optimisation off).
func TestConstInputsMatchFilledRegions(t *testing.T) {
	spec := &plan.Spec{AllowedMem: 1 << 30}
	must := func(a *plan.Array, err error) *plan.Array {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	f := func(v float64) plan.Scalar { return plan.Scalar{Kind: 'f', F: v} }
	i := func(v int64) plan.Scalar { return plan.Scalar{Kind: 'i', I: v} }
	arr := func(a *plan.Array) Operand { return Operand{Array: a} }
	sc := func(s plan.Scalar) Operand { return Operand{Scalar: &s} }
	shape, chunks := []int{300, 1100}, []int{300, 1100}
	x := must(Random(shape, Float64, 3, chunks, spec))
	x32 := must(AsType(x, Float32))
	xi := must(AsType(must(Elemwise("multiply", arr(x), sc(f(100)))), Int32))
	tenth := must(Full(shape, Float64, f(0.1), chunks, spec))
	third32 := must(Full(shape, Float32, f(1.0/3), chunks, spec))
	seven := must(Full(shape, Int32, i(7), chunks, spec))
	yes := must(Full(shape, Bool, plan.Scalar{Kind: 'b', B: true}, chunks, spec))
	cplx := must(Full(shape, Complex128, plan.Scalar{Kind: 'c', C: complex(0.1, -0.3)}, chunks, spec))
	nan := must(Full(shape, Float64, f(math.NaN()), chunks, spec))
	ones := must(Full(shape, Float64, f(1), chunks, spec))
	row := must(Full([]int{1, 1100}, Float64, f(0.7), []int{1, 1100}, spec))
	col := must(Random([]int{300, 1}, Float64, 5, []int{300, 1}, spec))
	empty := must(Empty(shape, Float64, chunks, spec))
	cases := []struct {
		name string
		out  func() *plan.Array
		core string
	}{
		{"add-stored", func() *plan.Array { return must(Elemwise("add", arr(tenth), arr(x))) }, "map"},
		{"mul-f4", func() *plan.Array { return must(Elemwise("multiply", arr(third32), arr(x32))) }, "map"},
		{"floordiv-i4", func() *plan.Array { return must(Elemwise("floor_divide", arr(xi), arr(seven))) }, "map"},
		{"ones-times-2", func() *plan.Array { return must(Elemwise("multiply", arr(ones), sc(f(2)))) }, "map"},
		{"exp-const", func() *plan.Array { return must(Elemwise("exp", arr(tenth))) }, "map"},
		{"const-plus-const", func() *plan.Array { return must(Elemwise("add", arr(tenth), arr(ones))) }, "map"},
		{"broadcast-row", func() *plan.Array { return must(Elemwise("subtract", arr(x), arr(row))) }, "map"},
		{"broadcast-col-const", func() *plan.Array { return must(Elemwise("multiply", arr(col), arr(tenth))) }, "map"},
		{"where", func() *plan.Array {
			c := must(Elemwise("less", arr(x), sc(f(0.5))))
			return must(Where(c, arr(tenth), arr(x)))
		}, "map"},
		{"where-const-cond", func() *plan.Array { return must(Where(yes, arr(x), arr(tenth))) }, "map"},
		{"astype", func() *plan.Array { return must(Elemwise("add", arr(must(AsType(seven, Float64))), arr(x))) }, "map"},
		{"complex", func() *plan.Array { return must(Elemwise("multiply", arr(cplx), arr(must(AsType(x, Complex128))))) }, "map"},
		{"and-bool", func() *plan.Array {
			c := must(Elemwise("less", arr(x), sc(f(0.5))))
			return must(Elemwise("logical_and", arr(c), arr(yes)))
		}, "map"},
		{"empty-plus", func() *plan.Array { return must(Elemwise("add", arr(empty), arr(x))) }, "map"},
	}
	reduce := func(fn string, a *plan.Array, axes []int) *plan.Array {
		t.Helper()
		switch fn {
		case "argmax", "nanargmin":
			var axis *int
			if len(axes) == 1 {
				axis = &axes[0]
			}
			return must(ArgReduce(fn, a, axis, false))
		case "var", "nanmean":
			return must(Var(fn, a, axes, false, 0, nil))
		}
		return must(Reduce(fn, a, axes, false, nil, 0))
	}
	for _, fn := range []string{"sum", "mean", "max", "min", "prod", "argmax", "nanargmin", "var", "nanmean"} {
		for _, axes := range [][]int{{0, 1}, {0}, {1}} {
			cases = append(cases,
				struct {
					name string
					out  func() *plan.Array
					core string
				}{fmt.Sprintf("%s%v-bare", fn, axes), func() *plan.Array { return reduce(fn, tenth, axes) }, "reduce"},
				struct {
					name string
					out  func() *plan.Array
					core string
				}{fmt.Sprintf("%s%v-plus-one", fn, axes), func() *plan.Array {
					return reduce(fn, must(Elemwise("add", arr(tenth), sc(f(1)))), axes)
				}, "reduce"},
				struct {
					name string
					out  func() *plan.Array
					core string
				}{fmt.Sprintf("%s%v-f4", fn, axes), func() *plan.Array {
					return reduce(fn, must(Elemwise("multiply", arr(third32), sc(f(3)))), axes)
				}, "reduce"},
				struct {
					name string
					out  func() *plan.Array
					core string
				}{fmt.Sprintf("%s%v-with-stored", fn, axes), func() *plan.Array {
					return reduce(fn, must(Elemwise("multiply", arr(tenth), arr(x))), axes)
				}, "reduce"},
			)
			if fn != "nanargmin" { // all NaN: fails, as numpy raises
				cases = append(cases, struct {
					name string
					out  func() *plan.Array
					core string
				}{fmt.Sprintf("%s%v-nan", fn, axes), func() *plan.Array {
					return reduce(fn, must(Elemwise("add", arr(nan), arr(tenth))), axes)
				}, "reduce"})
			}
		}
	}
	for _, fn := range []string{"sum", "prod", "max"} {
		cases = append(cases, struct {
			name string
			out  func() *plan.Array
			core string
		}{fn + "-int32", func() *plan.Array { return must(Reduce(fn, seven, []int{0, 1}, false, nil, 0)) }, "reduce"})
	}
	cases = append(cases, struct {
		name string
		out  func() *plan.Array
		core string
	}{"any-bool", func() *plan.Array { return must(Reduce("any", yes, []int{1}, false, nil, 0)) }, "reduce"},
		struct {
			name string
			out  func() *plan.Array
			core string
		}{"sum-complex", func() *plan.Array {
			return must(Reduce("sum", must(Elemwise("multiply", arr(cplx), sc(f(3)))), []int{0, 1}, false, nil, 0))
		}, "reduce"})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := plan.Build([]*plan.Array{c.out()})
			if err != nil {
				t.Fatal(err)
			}
			p.Fuse()
			// The op reading the constant inputs.
			var op *plan.Op
			for _, o := range p.Ops {
				for _, in := range o.Op.Inputs {
					if g := in.Array.Generator; g != nil && g.Kind == "full" && op == nil {
						op = o.Op
					}
				}
			}
			if op == nil {
				t.Fatal("no op reads a constant input")
			}
			if op.Kernel.Core != c.core {
				t.Fatalf("first op's core is %q, want %q", op.Kernel.Core, c.core)
			}
			k, err := NewTaskKernel(op)
			if err != nil {
				t.Fatal(err)
			}
			taken := 0
			for i, in := range op.Inputs {
				g := in.Array.Generator
				isFull := g != nil && g.Kind == "full"
				if k.ConstInput(i) != nil && !isFull {
					t.Fatalf("input %d (%s) taken as a broadcast block but not constant", i, in.Array)
				}
				if k.ConstInput(i) != nil {
					taken++
				}
			}
			// A reduction of a bare constant input (or of its cast) fills
			// it: the fold is the one a stored array would get.
			e := op.Kernel.Exprs[0]
			bare := op.Kernel.Core == "reduce" && (e.Op == "input" || plan.FoldsCast(op.Kernel.Reduce, e))
			if want := !bare; want && taken == 0 {
				t.Fatalf("no constant input taken as a broadcast block (inputs %v)", op.Inputs)
			} else if !want && taken != 0 {
				t.Fatalf("a reduction of a bare constant input takes it as a broadcast block")
			}
			filled := *k
			filled.consts = nil
			want := runFirstTask(t, op, &filled)
			got := runFirstTask(t, op, k)
			if !bytes.Equal(got, want) {
				t.Fatalf("broadcast constant inputs give other bytes than filled regions")
			}
			// And split across helpers.
			if got := runFirstTask(t, op, k.WithHelpers(&lender{n: 3})); !bytes.Equal(got, want) {
				t.Fatalf("split steps with broadcast constant inputs give other bytes than filled regions")
			}
		})
	}
}

// Cores other than map and reduce (matmul, scan, sort...) read their
// inputs as C-ordered blocks: a constant input is filled for them.
func TestConstInputsOnlyForStridedCores(t *testing.T) {
	spec := &plan.Spec{AllowedMem: 1 << 30}
	ones, err := Full([]int{40, 40}, Float64, plan.Scalar{Kind: 'f', F: 1}, []int{20, 20}, spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, core := range []string{"matmul", "cumsum", "sort", "piecewise", "python"} {
		op := &plan.Op{Inputs: []plan.Input{{Array: ones}, {Array: ones}}, Kernel: plan.Kernel{Core: core}}
		if c := constInputs(op); c != nil {
			t.Fatalf("%s kernel takes constant inputs as broadcast blocks", core)
		}
	}
}
