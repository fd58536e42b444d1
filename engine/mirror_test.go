package engine

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
)

// a @ a.T and a.T @ a compute the blocks on and above the diagonal and
// write each off-diagonal one twice: the result is the full product,
// exactly symmetric, within the projection, whatever the chunks.
func TestMatmulMirrorsSymmetricProducts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	dir := t.TempDir()
	for c, tc := range []struct {
		shape  []int
		chunks []any
	}{
		{[]int{7, 5}, []any{3, 2}},
		{[]int{9, 9}, []any{9, 4}},
		{[]int{1, 6}, []any{1, 6}},
		{[]int{10, 3}, []any{4, 3}},
	} {
		m, k := tc.shape[0], tc.shape[1]
		v := make([]float64, m*k)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		spec := testSpec(t)
		for _, stored := range []bool{false, true} {
			a := literal(t, spec, tc.shape, tc.chunks, v)
			if stored {
				a = storedArray(t, spec, dir, string(rune('a'+c)), tc.shape, tc.chunks, v)
			}
			at, err := ops.PermuteDims(a, []int{1, 0})
			if err != nil {
				t.Fatal(err)
			}
			for _, left := range []bool{true, false} {
				x, y, n := a, at, m // a @ a.T: (m, m)
				if !left {
					x, y, n = at, a, k // a.T @ a: (k, k)
				}
				prod, err := ops.Matmul(x, y)
				if err != nil {
					t.Fatal(err)
				}
				if !prod.Op.Mirror {
					t.Fatalf("%v chunks %v left %v: product not mirrored", tc.shape, tc.chunks, left)
				}
				p, err := plan.Build([]*plan.Array{prod})
				if err != nil {
					t.Fatal(err)
				}
				res, bad, err := executeWithinProjection(p)
				if err != nil {
					t.Fatal(err)
				}
				if len(bad) > 0 {
					t.Errorf("%v: tasks over their projection: %v", tc.shape, bad)
				}
				buf := make([]byte, prod.NBytes())
				if err := res.Read(context.Background(), 0, buf); err != nil {
					t.Fatal(err)
				}
				res.Close()
				got := toFloats(prod.DType, buf)
				for i := range n {
					for j := range n {
						want := 0.0
						for q := range k * m / n {
							if left {
								want += v[i*k+q] * v[j*k+q]
							} else {
								want += v[q*k+i] * v[q*k+j]
							}
						}
						if !near(got[i*n+j], want) {
							t.Fatalf("%v chunks %v left %v stored %v: c[%d,%d] = %v, want %v", tc.shape, tc.chunks, left, stored, i, j, got[i*n+j], want)
						}
						if got[i*n+j] != got[j*n+i] {
							t.Fatalf("%v: c[%d,%d] = %v but c[%d,%d] = %v", tc.shape, i, j, got[i*n+j], j, i, got[j*n+i])
						}
					}
				}
			}
		}
	}
}

// Only a product of an array with its own transpose is mirrored.
func TestMatmulMirrorOnlyForSelfTranspose(t *testing.T) {
	spec := testSpec(t)
	a := literal(t, spec, []int{4, 4}, []any{2, 2}, seq(16))
	b := literal(t, spec, []int{4, 4}, []any{2, 2}, seq(16))
	at, _ := ops.PermuteDims(a, []int{1, 0})
	bt, _ := ops.PermuteDims(b, []int{1, 0})
	for name, pair := range map[string][2]*plan.Array{"a @ b.T": {a, bt}, "a @ a": {a, a}, "a.T @ a.T": {at, at}} {
		c, err := ops.Matmul(pair[0], pair[1])
		if err != nil {
			t.Fatal(err)
		}
		if c.Op.Mirror {
			t.Errorf("%s is mirrored", name)
		}
	}
	c, _ := ops.Matmul(a, at)
	data, err := plan.Marshal([]*plan.Array{c})
	if err != nil {
		t.Fatal(err)
	}
	outs, err := plan.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	if !outs[0].Op.Mirror {
		t.Error("Mirror lost in the plan's serialised form")
	}
}
