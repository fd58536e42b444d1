package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cubego/cubego/zarr"
)

// TestCopyStrided checks transposes (every axis permutation), broadcasts
// and slices of every element size against the one-element-at-a-time copy.
func TestCopyStrided(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for _, dt := range []zarr.DataType{zarr.Uint8, zarr.Int16, zarr.Float32, zarr.Float64, zarr.Complex128} {
		for _, base := range [][]int{{70, 45}, {3, 40, 33}, {2, 3, 4, 5}, {1, 37}, {300}} {
			for pi, perm := range permutations(len(base)) {
				shape := make([]int, len(base))
				strides := make([]int, len(base))
				bs := cStrides(base)
				for i, p := range perm {
					shape[i], strides[i] = base[p], bs[p]
				}
				views := map[string]Operand{
					"transpose": {Shape: shape, Strides: strides},
					"offset":    {Shape: shape, Strides: strides, Offset: 3},
				}
				if pi == 0 {
					bc := append([]int(nil), strides...)
					bc[0] = 0
					views["broadcast"] = Operand{Shape: shape, Strides: bc}
					ev := append([]int(nil), strides...)
					ev[len(ev)-1] *= 2
					views["every other"] = Operand{Shape: append(append([]int(nil), shape[:len(shape)-1]...), (shape[len(shape)-1]+1)/2), Strides: ev}
				}
				for name, v := range views {
					n := 1
					for _, e := range base {
						n *= e
					}
					v.DType = dt
					v.Data = randomBytes(r, dt, 2*n+3)
					m := 1
					for _, e := range v.Shape {
						m *= e
					}
					got := make([]byte, m*dt.Size())
					if err := CopyStrided(Contiguous(dt, got, v.Shape), v); err != nil {
						t.Fatalf("%s %v perm %v %s: %v", dt, base, perm, name, err)
					}
					if string(got) != string(naiveMaterialize(v)) {
						t.Errorf("%s %v perm %v %s: wrong copy", dt, base, perm, name)
					}
				}
			}
		}
	}
	if err := CopyStrided(Contiguous(zarr.Int8, make([]byte, 2), []int{2}), Contiguous(zarr.Uint8, make([]byte, 2), []int{2})); err == nil {
		t.Error("dtype mismatch: no error")
	}
}

func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := append(append(append([]int(nil), p[:i]...), n-1), p[i:]...)
			out = append(out, q)
		}
	}
	// the identity first
	for i, p := range out {
		if fmt.Sprint(p) == fmt.Sprint(identity(n)) {
			out[0], out[i] = out[i], out[0]
		}
	}
	return out
}

func identity(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}
