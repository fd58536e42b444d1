package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestGemmBlocks compares gemm with the plain triple loop over shapes that
// cross every block boundary (mr, nr, mc, kc, nc) and leave edge tiles,
// with each operand stored as is or transposed.
func TestGemmBlocks(t *testing.T) {
	if gemmKernels64.kernel == nil {
		t.Skip("no SIMD gemm kernels in this build (GOEXPERIMENT=simd on amd64 with AVX2+FMA)")
	}
	r := rand.New(rand.NewPCG(3, 4))
	shapes := [][3]int{{1, 1, 1}, {4, 1, 16}, {5, 7, 4}, {97, 300, 1030}, {96, 256, 1024}, {13, 513, 33}, {200, 2, 2100}}
	for _, sh := range shapes {
		m, k, n := sh[0], sh[1], sh[2]
		for _, first := range []bool{true, false} {
			for tr := range 4 {
				transA, transB := tr&1 != 0, tr&2 != 0
				t.Run(fmt.Sprintf("%dx%dx%d/first=%v/tA=%v/tB=%v", m, k, n, first, transA, transB), func(t *testing.T) {
					a, b, c := randFloats(r, m*k), randFloats(r, k*n), randFloats(r, m*n)
					want := append([]float64(nil), c...)
					for i := range m {
						for j := range n {
							s := 0.0
							if !first {
								s = want[i*n+j]
							}
							for p := range k {
								s += a[i*k+p] * b[p*n+j]
							}
							want[i*n+j] = s
						}
					}
					if first {
						for i := range c {
							c[i] = math.NaN() // first must overwrite, never read, c
						}
					}
					sa, sb := a, b // as stored
					if transA {
						sa = transposed(a, m, k)
					}
					if transB {
						sb = transposed(b, k, n)
					}
					if !gemm(gemmKernels64, &gemmPack64, m, k, n, sa, sb, c, transA, transB, first) {
						t.Fatal("gemm declined")
					}
					for i := range want {
						if math.Abs(c[i]-want[i]) > 1e-12*float64(k+1) {
							t.Fatalf("float64 c[%d] = %v, want %v", i, c[i], want[i])
						}
					}
					if !first {
						return
					}
					a32, b32, c32 := toFloat32(a), toFloat32(b), make([]float32, m*n)
					if !gemm(gemmKernels32, &gemmPack32, m, k, n, toFloat32(sa), toFloat32(sb), c32, transA, transB, true) {
						t.Fatal("gemm declined float32")
					}
					for i := range m {
						for j := range n {
							s := 0.0
							for p := range k {
								s += float64(a32[i*k+p]) * float64(b32[p*n+j])
							}
							if math.Abs(float64(c32[i*n+j])-s) > 1e-5*float64(k+1) {
								t.Fatalf("float32 c[%d,%d] = %v, want %v", i, j, c32[i*n+j], s)
							}
						}
					}
				})
			}
		}
	}
}

// transposed returns the c×r transpose of the row-major r×c matrix x.
func transposed[T any](x []T, r, c int) []T {
	y := make([]T, len(x))
	for i := range r {
		for j := range c {
			y[j*r+i] = x[i*c+j]
		}
	}
	return y
}

func randFloats(r *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = r.Float64()*2 - 1
	}
	return x
}

func toFloat32(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}
