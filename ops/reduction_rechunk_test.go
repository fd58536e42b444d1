package ops

import (
	"testing"

	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// TestRechunkSource: a reduction finds the source of a chain of rechunk
// copies only when the copies change the chunks of reduced axes alone,
// and only through plain copies; fitsBudget refuses a reduction with an
// op over allowed_mem (Reduce then keeps the rechunk).
func TestRechunkSource(t *testing.T) {
	spec := &plan.Spec{WorkDir: t.TempDir(), AllowedMem: 1 << 30}
	lit, err := FromBuffer([]int{12, 10}, zarr.Float64, make([]byte, 12*10*8), []any{3, 5}, spec)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := Elemwise("negative", Operand{Array: lit})
	r1, _ := Rechunk(x, []any{4, 5})  // axis 0 only
	r2, _ := Rechunk(r1, []any{6, 5}) // a chain, axis 0 only
	r3, _ := Rechunk(x, []any{4, 2})  // both axes
	r4, _ := Rechunk(r3, []any{6, 2}) // axis 0 of r3
	neg, _ := Elemwise("negative", Operand{Array: r1})
	for _, c := range []struct {
		name string
		a    *plan.Array
		axes []int
		want *plan.Array
	}{
		{"all axes", r3, []int{0, 1}, x},
		{"chain, reduced axis", r2, []int{0}, x},
		{"chain, kept axis changed", r3, []int{0}, nil},
		{"chain, other axis", r2, []int{1}, nil},
		{"chain, part of it", r4, []int{0}, r3},
		{"not a rechunk", neg, []int{0, 1}, nil},
		{"source itself", x, []int{0, 1}, nil},
	} {
		if got := rechunkSource(c.a, c.axes); got != c.want {
			t.Errorf("%s: source %v, want %v", c.name, got, c.want)
		}
	}
	out, err := Reduce("sum", r3, nil, false, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !fitsBudget(out, x) {
		t.Fatal("a small sum does not fit 1 GiB")
	}
	spec.AllowedMem = 100 // every op is now over budget
	if fitsBudget(out, x) {
		t.Fatal("fitsBudget accepts ops over allowed_mem")
	}
	// Reduce keeps the rechunk when the reduction of the source does not fit.
	kept, err := Reduce("sum", r3, nil, false, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	reads := map[*plan.Array]bool{}
	var walk func(a *plan.Array)
	walk = func(a *plan.Array) {
		if a.Op == nil || reads[a] {
			return
		}
		reads[a] = true
		for _, in := range a.Op.InputArrays() {
			walk(in)
		}
	}
	walk(kept)
	if !reads[r3] {
		t.Error("the sum over budget does not read the rechunk")
	}
}
