package kernels

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/cubego/cubego/zarr"
)

// naiveMatmul is the reference: c[b,i,j] (+)= sum_p a[b,i,p]*b[b,p,j]
// computed element by element in big integers, float64 or complex128.
func naiveMatmul(dt zarr.DataType, c, a, b []byte, batch, m, k, n int, first bool) []byte {
	size := dt.Size()
	out := append([]byte(nil), c...)
	elem := func(buf []byte, i int) []byte { return buf[i*size : (i+1)*size] }
	for bi := range batch {
		for i := range m {
			for j := range n {
				ci := bi*m*n + i*n + j
				switch {
				case dt == zarr.Bool:
					v := !first && c[ci] != 0
					for p := range k {
						v = v || a[bi*m*k+i*k+p] != 0 && b[bi*k*n+p*n+j] != 0
					}
					out[ci] = b2u(v)
				case isIntegerType(dt):
					v := big.NewInt(0)
					if !first {
						v = getBig(dt, c, ci)
					}
					for p := range k {
						v.Add(v, new(big.Int).Mul(getBig(dt, a, bi*m*k+i*k+p), getBig(dt, b, bi*k*n+p*n+j)))
					}
					copy(out[ci*size:], wrappedBytes(v, dt))
				case dt == zarr.Float32 || dt == zarr.Float64:
					var v float64
					if !first {
						v = floatElem(dt, elem(c, ci))
					}
					for p := range k {
						v += floatElem(dt, elem(a, bi*m*k+i*k+p)) * floatElem(dt, elem(b, bi*k*n+p*n+j))
					}
					copy(out[ci*size:], floatBytes(dt, []float64{v}))
				default:
					var v complex128
					if !first {
						v = complexElem(dt, elem(c, ci))
					}
					for p := range k {
						v += complexElem(dt, elem(a, bi*m*k+i*k+p)) * complexElem(dt, elem(b, bi*k*n+p*n+j))
					}
					copy(out[ci*size:], ScalarBytes(Scalar{Kind: 'c', C: v}, dt))
				}
			}
		}
	}
	return out
}

func TestMatmulReference(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	shapes := []struct {
		batch   []int
		m, k, n int
	}{
		{nil, 5, 7, 4},
		{[]int{2, 3}, 3, 4, 2},
		{[]int{1}, 1, 1, 1},
		{nil, 17, 33, 9},
		{[]int{2}, 3, 0, 2}, // k = 0: zeros (first) or unchanged
		{[]int{2}, 0, 3, 2},
		{[]int{0}, 2, 3, 2},
	}
	for _, dt := range allDTypes {
		for _, sh := range shapes {
			for _, first := range []bool{true, false} {
				name := fmt.Sprintf("%s batch %v %dx%dx%d first %v", dt, sh.batch, sh.m, sh.k, sh.n, first)
				batch := 1
				for _, e := range sh.batch {
					batch *= e
				}
				a := randomMatmulData(r, dt, batch*sh.m*sh.k)
				b := randomMatmulData(r, dt, batch*sh.k*sh.n)
				c := randomMatmulData(r, dt, batch*sh.m*sh.n)
				if first && (dt == zarr.Float64 || dt == zarr.Complex128) {
					// first must overwrite, never read, the accumulator
					for i := range batch * sh.m * sh.n {
						copy(c[i*dt.Size():], ScalarBytes(Scalar{Kind: 'f', F: math.NaN()}, dt))
					}
				}
				want := naiveMatmul(dt, c, a, b, batch, sh.m, sh.k, sh.n, first)
				shp := func(x, y int) []int { return append(append([]int(nil), sh.batch...), x, y) }
				err := Matmul(Contiguous(dt, c, shp(sh.m, sh.n)), Contiguous(dt, a, shp(sh.m, sh.k)), Contiguous(dt, b, shp(sh.k, sh.n)), first)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				tol := 1e-12
				if dt == zarr.Float32 || dt == zarr.Complex64 {
					tol = 1e-5
				}
				for i := range batch * sh.m * sh.n {
					g, w := c[i*dt.Size():(i+1)*dt.Size()], want[i*dt.Size():(i+1)*dt.Size()]
					if !closeReduce(dt, g, w, tol) {
						t.Errorf("%s: element %d = %s, want %s", name, i, formatElem(dt, g), formatElem(dt, w))
						break
					}
				}
			}
		}
	}
}

func randomMatmulData(r *rand.Rand, dt zarr.DataType, n int) []byte {
	switch dt {
	case zarr.Float32, zarr.Float64, zarr.Complex64, zarr.Complex128:
		var b []byte
		for range n {
			b = append(b, ScalarBytes(Scalar{Kind: 'c', C: complex(r.Float64()*2-1, r.Float64()*2-1)}, dt)...)
		}
		return b
	}
	return randomReduceData(r, dt, n, 0)
}

func TestMatmulErrors(t *testing.T) {
	f := func(shape ...int) Operand {
		n := 1
		for _, e := range shape {
			n *= e
		}
		return Contiguous(zarr.Float64, make([]byte, n*8), shape)
	}
	for name, err := range map[string]error{
		"1-d":            Matmul(f(3), f(3), f(3), true),
		"inner mismatch": Matmul(f(2, 2), f(2, 3), f(2, 2), true),
		"acc mismatch":   Matmul(f(2, 3), f(2, 2), f(2, 2), true),
		"batch mismatch": Matmul(f(2, 2, 2), f(3, 2, 2), f(2, 2, 2), true),
		"rank mismatch":  Matmul(f(2, 2, 2), f(2, 2), f(2, 2, 2), true),
		"dtype mismatch": Matmul(f(2, 2), f(2, 2), Contiguous(zarr.Float32, make([]byte, 16), []int{2, 2}), true),
		"short data":     Matmul(f(2, 2), Contiguous(zarr.Float64, make([]byte, 24), []int{2, 2}), f(2, 2), true),
		"strided":        Matmul(f(2, 2), Operand{DType: zarr.Float64, Data: make([]byte, 32), Shape: []int{2, 2}, Strides: []int{1, 2}}, f(2, 2), true),
		"float16":        Matmul(Contiguous(zarr.Float16, make([]byte, 8), []int{2, 2}), Contiguous(zarr.Float16, make([]byte, 8), []int{2, 2}), Contiguous(zarr.Float16, make([]byte, 8), []int{2, 2}), true),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
