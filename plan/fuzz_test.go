package plan_test

import (
	"errors"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
)

// planSeeds returns the JSON graphs (plan.Marshal, the payload of Python's
// Array.__reduce__) of a few plans: creation functions, elementwise ops,
// slicing, rechunking, reductions and matmul.
func planSeeds(tb testing.TB) [][]byte {
	must := func(a *plan.Array, err error) *plan.Array {
		if err != nil {
			tb.Fatal(err)
		}
		return a
	}
	spec := plan.DefaultSpec()
	x := must(ops.Full([]int{10, 6}, ops.Float64, plan.Scalar{Kind: 'f', F: 1.5}, 4, spec))
	r := must(ops.Random([]int{10, 6}, ops.Float32, 7, []any{5, 3}, spec))
	ar := must(ops.Arange(0, 12, 1, ops.Int64, 5, spec))
	lit := must(ops.FromBuffer([]int{2, 2}, ops.Int32, make([]byte, 16), nil, spec))
	sum := must(ops.Elemwise("add", ops.Operand{Array: x}, ops.Operand{Array: must(ops.AsType(r, ops.Float64))}))
	two := 2
	sl := must(ops.GetItem(sum, []ops.Index{{Kind: ops.IndexSlice, Step: &two}, {Kind: ops.IndexInt, Int: 1}}))
	rc := must(ops.Rechunk(x, []any{10, 1}))
	red := must(ops.Reduce("mean", sum, []int{0}, false, nil, 0))
	mm := must(ops.Matmul(x, must(ops.PermuteDims(x, []int{1, 0}))))
	var out [][]byte
	for _, as := range [][]*plan.Array{{x}, {sl}, {rc, red}, {mm}, {ar, lit}} {
		b, err := plan.Marshal(as)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// FuzzPlanJSON: arbitrary bytes given to plan.Unmarshal (cg_arrays_from_json,
// unpickling an Array) are a plan.ErrValue or a graph that plans: it
// builds, projects memory and serialises again, without a panic.
func FuzzPlanJSON(f *testing.F) {
	for _, s := range planSeeds(f) {
		f.Add(s)
	}
	f.Add([]byte(`{"version": 1, "arrays": [{"name": "a", "shape": [34359738368], "dtype": "uint8",
		"chunks": [[1]], "spec": {"allowed_mem": 1000000}, "op": -1}], "ops": [], "outputs": [0]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		outs, err := plan.Unmarshal(data)
		if err != nil {
			if !errors.Is(err, plan.ErrValue) {
				t.Fatalf("Unmarshal: an error that is not a plan.ErrValue: %v", err)
			}
			return
		}
		for _, a := range outs {
			if err := plan.CheckGrid(a.Shape, a.Chunks, a.DType.Size()); err != nil {
				t.Fatalf("Unmarshal accepted an array with an invalid grid: %v", err)
			}
		}
		p, err := plan.Build(outs)
		if err != nil {
			return
		}
		for _, o := range p.Ops {
			_ = o.Op.TaskGrid()
		}
		_ = p.Validate()
		_ = p.Stats()
		if _, err := plan.Marshal(outs); err != nil {
			t.Fatalf("Marshal of an unmarshalled graph: %v", err)
		}
		for _, a := range outs {
			if _, err := plan.Key(a); err != nil {
				t.Fatalf("Key: %v", err)
			}
		}
	})
}
