package plan_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

func statsSpec() *plan.Spec {
	return &plan.Spec{AllowedMem: 100_000_000, ReservedMem: 1_000_000}
}

// stored returns an existing Zarr array as the plan sees it (no I/O).
func stored(shape []int, chunks [][]int, spec *plan.Spec) *plan.Array {
	a := plan.NewArray(shape, zarr.Float64, chunks, spec)
	a.Source = &plan.ZarrRef{Store: "mem://stats", Path: a.Name}
	return a
}

func mustBuild(t *testing.T, fuse bool, outs ...*plan.Array) *plan.Plan {
	t.Helper()
	p, err := plan.Build(outs)
	if err != nil {
		t.Fatal(err)
	}
	if fuse {
		p.Fuse()
	}
	return p
}

// mustFn returns a function that unwraps an (array, error) result.
func mustFn(t *testing.T) func(*plan.Array, error) *plan.Array {
	return func(a *plan.Array, err error) *plan.Array {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
}

func TestStatsElementwiseChain(t *testing.T) {
	spec := statsSpec()
	must := mustFn(t)
	x := must(ops.Random([]int{100, 100}, zarr.Float64, 1, []any{10, 10}, spec))
	one := &plan.Scalar{Kind: 'i', I: 1}
	two := &plan.Scalar{Kind: 'i', I: 2}
	y := must(ops.Elemwise("add", ops.Operand{Array: x}, ops.Operand{Scalar: one}))
	z := must(ops.Elemwise("multiply", ops.Operand{Array: y}, ops.Operand{Scalar: two}))

	s := mustBuild(t, false, z).Stats()
	if s.NumOps != 2 || s.NumTasks != 200 || s.NumStages != 2 || s.NumIntermediateArrays != 1 {
		t.Errorf("unfused: %d ops, %d tasks, %d stages, %d intermediates; want 2, 200, 2, 1",
			s.NumOps, s.NumTasks, s.NumStages, s.NumIntermediateArrays)
	}
	// The second op reads y (stored) once; x is virtual and never read.
	if s.TotalNBytesRead != 80_000 || s.TotalNBytesWritten != 160_000 {
		t.Errorf("unfused: read %d, written %d; want 80000, 160000", s.TotalNBytesRead, s.TotalNBytesWritten)
	}
	if got := []int{s.Ops[0].Stage, s.Ops[1].Stage}; !reflect.DeepEqual(got, []int{0, 1}) {
		t.Errorf("stages %v, want [0 1]", got)
	}
	if !reflect.DeepEqual(s.Ops[1].Inputs, []string{y.Name}) || !reflect.DeepEqual(s.Ops[1].Outputs, []string{z.Name}) {
		t.Errorf("op 1 reads %v and writes %v", s.Ops[1].Inputs, s.Ops[1].Outputs)
	}
	roles := map[string]string{}
	for _, a := range s.Arrays {
		roles[a.Name] = a.Role
	}
	want := map[string]string{x.Name: plan.RoleVirtual, y.Name: plan.RoleIntermediate, z.Name: plan.RoleOutput}
	if !reflect.DeepEqual(roles, want) || s.NumArrays != 3 {
		t.Errorf("roles %v, want %v", roles, want)
	}

	f := mustBuild(t, true, z).Stats()
	if f.NumOps != 1 || f.NumTasks != 100 || f.NumStages != 1 || f.NumIntermediateArrays != 0 {
		t.Errorf("fused: %d ops, %d tasks, %d stages, %d intermediates; want 1, 100, 1, 0",
			f.NumOps, f.NumTasks, f.NumStages, f.NumIntermediateArrays)
	}
	if f.TotalNBytesRead != 0 || f.TotalNBytesWritten != 80_000 {
		t.Errorf("fused: read %d, written %d; want 0, 80000", f.TotalNBytesRead, f.TotalNBytesWritten)
	}
	if f.Ops[0].Func != "add+multiply" || f.MaxProjectedMem != f.Ops[0].ProjectedMem {
		t.Errorf("fused op %+v, max projected %d", f.Ops[0], f.MaxProjectedMem)
	}
}

func TestStatsStagesOfIndependentOps(t *testing.T) {
	spec := statsSpec()
	must := mustFn(t)
	a := stored([]int{40, 40}, [][]int{{20, 20}, {20, 20}}, spec)
	b := stored([]int{40, 40}, [][]int{{20, 20}, {20, 20}}, spec)
	na := must(ops.Elemwise("negative", ops.Operand{Array: a}))
	nb := must(ops.Elemwise("negative", ops.Operand{Array: b}))
	// Two reductions of independent arrays, then a sum of their results.
	sa := must(ops.Reduce("sum", na, []int{0}, false, nil, 2))
	sb := must(ops.Reduce("sum", nb, []int{0}, false, nil, 2))
	c := must(ops.Elemwise("add", ops.Operand{Array: sa}, ops.Operand{Array: sb}))
	p := mustBuild(t, false, c)
	stages := p.Stages()
	if len(stages) != 3 || len(stages[0]) != 2 || len(stages[1]) != 2 || len(stages[2]) != 1 {
		var sizes []int
		for _, s := range stages {
			sizes = append(sizes, len(s))
		}
		t.Fatalf("stage sizes %v, want [2 2 1]", sizes)
	}
	s := p.Stats()
	if s.NumStages != 3 || s.NumOps != 5 || s.NumIntermediateArrays != 4 {
		t.Errorf("%d stages, %d ops, %d intermediates; want 3, 5, 4", s.NumStages, s.NumOps, s.NumIntermediateArrays)
	}
	// Inputs a and b are read once each by the negations, na and nb once
	// each by the reductions, sa and sb by the final add.
	want := int64(4*12_800 + 2*320)
	if s.TotalNBytesRead != want {
		t.Errorf("read %d bytes, want %d", s.TotalNBytesRead, want)
	}
	// Fusion folds each negation into its reduction round.
	f := mustBuild(t, true, c).Stats()
	if f.NumOps != 3 || f.NumStages != 2 || f.NumIntermediateArrays != 2 {
		t.Errorf("fused: %d ops, %d stages, %d intermediates; want 3, 2, 2", f.NumOps, f.NumStages, f.NumIntermediateArrays)
	}
}

func TestStatsMatmulReadsRepeatedPerOutputBlock(t *testing.T) {
	spec := statsSpec()
	must := mustFn(t)
	a := stored([]int{40, 60}, [][]int{{20, 20}, {30, 30}}, spec)
	b := stored([]int{60, 40}, [][]int{{30, 30}, {10, 10, 10, 10}}, spec)
	c := must(ops.Matmul(a, b))
	s := mustBuild(t, true, c).Stats()
	if s.NumOps != 1 || s.NumTasks != 8 {
		t.Fatalf("%d ops, %d tasks; want 1, 8", s.NumOps, s.NumTasks)
	}
	// Each of the 4 column blocks of c reads all of a; each of the 2 row
	// blocks reads all of b.
	if want := int64(4*40*60*8 + 2*60*40*8); s.TotalNBytesRead != want {
		t.Errorf("read %d bytes, want %d", s.TotalNBytesRead, want)
	}
	if s.Arrays[0].Role != plan.RoleInput {
		t.Errorf("a has role %q, want input", s.Arrays[0].Role)
	}
}

func TestStatsOpsExceedingMemoryAndDOT(t *testing.T) {
	spec := &plan.Spec{AllowedMem: 2_000_000, ReservedMem: 0}
	must := mustFn(t)
	small := must(ops.Random([]int{100}, zarr.Float64, 1, []any{10}, spec))
	big := must(ops.Random([]int{1_000_000}, zarr.Float64, 1, []any{200_000}, spec))
	bigger := must(ops.Random([]int{1_000_000}, zarr.Float64, 1, []any{500_000}, spec))
	s1 := must(ops.Elemwise("negative", ops.Operand{Array: small}))
	s2 := must(ops.Elemwise("negative", ops.Operand{Array: big}))
	s3 := must(ops.Elemwise("negative", ops.Operand{Array: bigger}))
	s := mustBuild(t, true, s1, s2, s3).Stats()
	if !reflect.DeepEqual(s.OpsExceedingMemory, []string{s3.Op.Name, s2.Op.Name}) {
		t.Errorf("ops exceeding memory %v, want [%s %s] (worst first)", s.OpsExceedingMemory, s3.Op.Name, s2.Op.Name)
	}
	if s.Ops[0].ExceedsMemory || !s.Ops[1].ExceedsMemory || !s.Ops[2].ExceedsMemory {
		t.Errorf("exceeds flags %v %v %v", s.Ops[0].ExceedsMemory, s.Ops[1].ExceedsMemory, s.Ops[2].ExceedsMemory)
	}
	dot := s.DOT()
	for _, want := range []string{
		"digraph cubego {",
		`"` + s2.Op.Name + `" [shape=box, style="rounded,filled", fillcolor="#f4a6a6", color=red`,
		`"` + s1.Op.Name + `" [shape=box, style="rounded,filled", fillcolor="#dde8f5", color=black`,
		`"` + small.Name + `" [shape=ellipse, style=dashed`,
		`"` + s1.Name + `" [shape=ellipse, style=bold`,
		`"` + small.Name + `" -> "` + s1.Op.Name + `";`,
		`"` + s1.Op.Name + `" -> "` + s1.Name + `";`,
		`negative\ntasks: 10\nprojected memory: `,
	} {
		if !strings.Contains(dot, want) {
			t.Errorf("DOT lacks %q:\n%s", want, dot)
		}
	}
}

func TestStatsEmptyPlan(t *testing.T) {
	spec := statsSpec()
	must := mustFn(t)
	x := must(ops.Random([]int{4}, zarr.Float64, 1, []any{2}, spec))
	s := mustBuild(t, true, x).Stats()
	if s.NumOps != 0 || s.NumStages != 0 || s.NumArrays != 1 || s.MaxProjectedMem != spec.ReservedMem {
		t.Errorf("%+v", s)
	}
	if !strings.Contains(s.DOT(), `style=dashed`) {
		t.Error("the virtual output is not drawn dashed")
	}
}
