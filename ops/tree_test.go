package ops

import (
	"errors"
	"slices"
	"testing"

	"github.com/cubego/cubego/plan"
)

// rounds returns the ops of a reduction's rounds, first to last.
func rounds(out *plan.Array, fn string) []*plan.Op {
	var ops []*plan.Op
	for a := out; a != nil && a.Op != nil && a.Op.Func == fn; a = a.Op.Inputs[0].Array {
		ops = append([]*plan.Op{a.Op}, ops...)
	}
	return ops
}

func tasks(ops []*plan.Op) []int64 {
	var n []int64
	for _, op := range ops {
		n = append(n, op.NumTasks())
	}
	return n
}

func TestReductionRoundsFromSplitAndMemory(t *testing.T) {
	spec := &plan.Spec{AllowedMem: 200_000_000, ReservedMem: 10_000_000}
	x, err := Full([]int{4000, 30}, Float64, plan.Scalar{Kind: 'f', F: 1}, []any{1, 30}, spec)
	if err != nil {
		t.Fatal(err)
	}
	build := map[string]func(Split) (*plan.Array, error){
		"sum": func(s Split) (*plan.Array, error) { return ReduceSplit("sum", x, []int{0}, false, nil, s) },
		"var": func(s Split) (*plan.Array, error) { return Moments("var", x, []int{0}, false, 0, nil, s) },
		"argmax": func(s Split) (*plan.Array, error) {
			axis := 0
			return ArgReduceSplit("argmax", x, &axis, false, s)
		},
	}
	for fn, b := range build {
		for _, c := range []struct {
			split Split
			want  []int64
		}{
			{Split{Every: 4}, []int64{1000, 250, 63, 16, 4, 1}},
			{Split{Every: 16}, []int64{250, 16, 1}},
			{Split{PerAxis: map[int]int{-2: 40}}, []int64{100, 3, 1}},
			{Split{}, []int64{250, 1}},
		} {
			out, err := b(c.split)
			if err != nil {
				t.Fatal(err)
			}
			rs := rounds(out, fn)
			if got := tasks(rs); !slices.Equal(got, c.want) {
				t.Errorf("%s split %+v: tasks per round %v, want %v", fn, c.split, got, c.want)
			}
			for _, op := range rs {
				if pm := plan.ProjectedMem(op); pm > spec.AllowedMem {
					t.Errorf("%s split %+v: %s projects %d > allowed %d", fn, c.split, op, pm, spec.AllowedMem)
				}
			}
			if !slices.Equal(out.Shape, []int{30}) || out.DType != map[string]DType{"sum": Float64, "var": Float64, "argmax": Int64}[fn] {
				t.Errorf("%s: result %v %s", fn, out.Shape, out.DType)
			}
		}
	}
}

func TestMemoryFanInIsTheLargestThatFits(t *testing.T) {
	// 500 partial results of 0.8 MB after the first round.
	spec := &plan.Spec{AllowedMem: 45_000_000, ReservedMem: 1_000_000}
	x, err := Full([]int{8000, 100_000}, Float64, plan.Scalar{Kind: 'f', F: 1}, []any{1, 100_000}, spec)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Reduce("sum", x, []int{0}, false, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	rs := rounds(out, "sum")
	if got := tasks(rs); !slices.Equal(got, []int64{500, 10, 1}) {
		t.Fatalf("tasks per round %v, want [500 10 1]", got)
	}
	second := rs[1]
	if m := second.Inputs[0].Dims[0]; m.Kind != plan.Ranges || m.Ranges[0] != [2]int{0, 50} {
		t.Fatalf("second round reads %+v, want ranges of 50 partial results", m)
	}
	if pm := plan.ProjectedMem(second); pm > spec.AllowedMem {
		t.Errorf("second round projects %d > %d", pm, spec.AllowedMem)
	}
	// One more partial result per task would not fit.
	tr := &tree{fn: "sum", kernel: "sum", x: x, axes: []int{0}, operand: plan.InputExpr(0, Float64), partial: Float64, out: Float64}
	if pm := plan.ProjectedMem(tr.round(second.Inputs[0].Array, false, []int{51}, true, false, true)); pm <= spec.AllowedMem {
		t.Errorf("51 partial results project %d, within %d", pm, spec.AllowedMem)
	}
	// Partial results too large to hold 16 at once: the rounds stream 16.
	small := &plan.Spec{AllowedMem: 25_000_000, ReservedMem: 1_000_000}
	y, _ := Full([]int{8000, 100_000}, Float64, plan.Scalar{Kind: 'f', F: 1}, []any{1, 100_000}, small)
	out, err = Moments("var", y, []int{0}, false, 0, nil, Split{})
	if err != nil {
		t.Fatal(err)
	}
	if got := tasks(rounds(out, "var")); !slices.Equal(got, []int64{500, 32, 2, 1}) {
		t.Errorf("var in 25 MB: tasks per round %v, want [500 32 2 1]", got)
	}
}

func TestRecordRounds(t *testing.T) {
	spec := &plan.Spec{AllowedMem: 100_000_000, ReservedMem: 1_000_000}
	x, err := Full([]int{9, 10, 7}, Float32, plan.Scalar{Kind: 'f', F: 1}, []any{2, 3, 7}, spec)
	if err != nil {
		t.Fatal(err)
	}
	v, err := Moments("std", x, []int{0, 1}, true, 1, nil, Split{Every: 4})
	if err != nil {
		t.Fatal(err)
	}
	rs := rounds(v, "std")
	if len(rs) < 3 {
		t.Fatalf("%d rounds, want at least 3", len(rs))
	}
	for i, op := range rs {
		k := op.Kernel
		last := i == len(rs)-1
		if k.RecordIn != (i > 0) || k.RecordOut != !last || k.Correction != 1 || k.Reduce != "std" {
			t.Errorf("round %d: kernel %+v", i, k)
		}
		if !last {
			if op.Output.DType != Float64 || op.Output.Shape[0] != 4 || !slices.Equal(op.Output.Chunks[0], []int{4}) {
				t.Errorf("round %d: records %v %s %v", i, op.Output.Shape, op.Output.DType, op.Output.Chunks)
			}
			continue
		}
		// The last round holds two record buffers of its output's lanes.
		if want := int64(2 * 4 * 8 * 7); op.ExtraMem != want || op.Output.DType != Float32 {
			t.Errorf("last round: extra %d (want %d), dtype %s", op.ExtraMem, want, op.Output.DType)
		}
		if !slices.Equal(op.Output.Shape, []int{1, 1, 7}) {
			t.Errorf("last round shape %v", op.Output.Shape)
		}
	}
	if e := rs[0].Kernel.Exprs[0]; e.Op != "astype" || e.DType != Float64 {
		t.Errorf("first round operand %+v, want a cast to float64", e)
	}
	// The kernel fields survive serialisation.
	b, err := plan.Marshal([]*plan.Array{v})
	if err != nil {
		t.Fatal(err)
	}
	back, err := plan.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if k := back[0].Op.Kernel; k.RecordIn != rs[len(rs)-1].Kernel.RecordIn || k.Correction != 1 || k.Reduce != "std" {
		t.Errorf("unmarshalled kernel %+v", k)
	}
	if k := back[0].Op.Inputs[0].Array.Op.Kernel; !k.RecordOut {
		t.Errorf("unmarshalled middle kernel %+v", k)
	}

	// Arg records: int64 for signed and bool, uint64 unsigned, float64 floats.
	for dt, rec := range map[DType]DType{Bool: Int64, Int8: Int64, Uint16: Uint64, Float32: Float64} {
		y, _ := Full([]int{5, 4}, dt, plan.Scalar{Kind: 'i', I: 1}, []any{2, 2}, spec)
		a, err := ArgReduceSplit("nanargmin", y, nil, true, Split{Every: 2})
		if err != nil {
			t.Fatal(err)
		}
		rs := rounds(a, "nanargmin")
		if a.DType != Int64 || !slices.Equal(a.Shape, []int{1, 1}) || rs[0].Output.DType != rec || rs[0].Output.Shape[0] != 2 {
			t.Errorf("%s: result %v %s, records %s", dt, a.Shape, a.DType, rs[0].Output.DType)
		}
	}
}

func TestRecordReductionErrors(t *testing.T) {
	spec := &plan.Spec{AllowedMem: 100_000_000}
	z, _ := Full([]int{3}, Complex64, plan.Scalar{Kind: 'f', F: 1}, nil, spec)
	b, _ := Full([]int{3}, Bool, plan.Scalar{Kind: 'i', I: 1}, nil, spec)
	e, _ := Full([]int{0, 3}, Float64, plan.Scalar{Kind: 'f'}, nil, spec)
	x, _ := Full([]int{4, 3}, Float64, plan.Scalar{Kind: 'f'}, 2, spec)
	zero, three := 0, 3
	cases := []struct {
		name string
		err  error
		call func() (*plan.Array, error)
	}{
		{"argmax complex", plan.ErrType, func() (*plan.Array, error) { return ArgReduce("argmax", z, nil, false) }},
		{"argmax empty", plan.ErrValue, func() (*plan.Array, error) { return ArgReduce("argmax", e, &zero, false) }},
		{"argmax axis", plan.ErrValue, func() (*plan.Array, error) { return ArgReduce("argmax", x, &three, false) }},
		{"argmedian", plan.ErrNotImplemented, func() (*plan.Array, error) { return ArgReduce("argmedian", x, nil, false) }},
		{"var bool", plan.ErrType, func() (*plan.Array, error) { return Var("var", b, nil, false, 0, nil) }},
		{"var int dtype", plan.ErrType, func() (*plan.Array, error) { d := Int32; return Var("var", x, nil, false, 0, &d) }},
		{"nanvar complex", plan.ErrNotImplemented, func() (*plan.Array, error) { return Var("nanvar", z, nil, false, 0, nil) }},
		{"split per axis", plan.ErrValue, func() (*plan.Array, error) {
			return ReduceSplit("sum", x, nil, false, nil, Split{PerAxis: map[int]int{0: 1}})
		}},
		{"split axis", plan.ErrValue, func() (*plan.Array, error) {
			return ReduceSplit("sum", x, nil, false, nil, Split{PerAxis: map[int]int{2: 4}})
		}},
	}
	for _, c := range cases {
		if _, err := c.call(); !errors.Is(err, c.err) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.err)
		}
	}
	// Empty lanes: NaN variance, as numpy; an empty argmax result is fine.
	v, err := Var("var", e, []int{0}, false, 0, nil)
	if err != nil || v.Generator == nil || !slices.Equal(v.Shape, []int{3}) {
		t.Errorf("var over an empty axis: %v %v", v, err)
	}
	one := 1
	if a, err := ArgReduce("argmax", e, &one, false); err != nil || !slices.Equal(a.Shape, []int{0}) {
		t.Errorf("argmax of a zero-size result: %v %v", a, err)
	}
}

func TestDistribute(t *testing.T) {
	for _, c := range []struct {
		total  int64
		counts []int
		want   []int
		ok     bool
	}{
		{100, []int{1000}, []int{100}, true},
		{100, []int{40}, []int{40}, true},
		{100, []int{50, 50}, []int{10, 10}, true},
		{100, []int{3, 500}, []int{3, 33}, true},
		{100, []int{1, 500}, []int{1, 100}, true},
		{3, []int{50, 50}, nil, false},
	} {
		got, ok := distribute(c.total, c.counts)
		if ok != c.ok || (ok && !slices.Equal(got, c.want)) {
			t.Errorf("distribute(%d, %v) = %v %v, want %v %v", c.total, c.counts, got, ok, c.want, c.ok)
		}
	}
}
