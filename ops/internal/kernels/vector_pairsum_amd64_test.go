//go:build goexperiment.simd && amd64

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cubego/cubego/zarr"
)

// BenchmarkPairwiseSumInCache sums a run that stays in cache: 2,000
// elements (L1) and 131,044 (1 MiB of float64, L2: a band W4's fold sums
// right after reading it), the nodes above the leaves folding two leaves
// at once.
func BenchmarkPairwiseSumInCache(b *testing.B) {
	for _, n := range []int{2000, 131044} {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(i%1000) - 499.5
		}
		x32 := make([]float32, n)
		for i, v := range x {
			x32[i] = float32(v)
		}
		b.Run(fmt.Sprint("float64/", n), func(b *testing.B) {
			b.SetBytes(int64(n * 8))
			for b.Loop() {
				clearUpper()
				pairwiseSumFloat64(x)
			}
		})
		b.Run(fmt.Sprint("float32/", n), func(b *testing.B) {
			b.SetBytes(int64(n * 4))
			for b.Loop() {
				clearUpper()
				pairwiseSumFloat32(x32)
			}
		})
	}
}

// TestPairwiseSumBits checks the float64 and float32 sums of a contiguous
// run, whose nodes just above the leaves fold two leaves at once
// (leafPairFloat64, leafPairFloat32), against pairwiseSum, bit for bit:
// every run length up to a few trees of leaves and some long ones, at
// aligned and unaligned starts, with AVX-512 and with AVX2 alone.
func TestPairwiseSumBits(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 5))
	hostile := as[float64](hostileValues(r, zarr.Float64, 140000))
	ordinary := randomFloats(r, 140012, false)[12:] // past the special values it starts with
	lengths := []int{131044, 139993, 65536, 100001, 46341}
	for n := range 2100 {
		lengths = append(lengths, n)
	}
	defer func(v bool) { hasAVX512 = v }(hasAVX512)
	for _, wide := range []bool{hasAVX512, false} {
		hasAVX512 = wide
		for _, v := range [][]float64{hostile, ordinary} {
			v32 := make([]float32, len(v))
			for i, f := range v {
				v32[i] = float32(f)
			}
			for _, n := range lengths {
				for _, o := range []int{0, 1, 3} {
					want, got := pairwiseSum(v[o:o+n], 0, 1, n), pairwiseSumFloat64(v[o:o+n])
					if math.Float64bits(want) != math.Float64bits(got) && !(want != want && got != got) {
						t.Fatalf("float64, AVX-512 %v, n=%d at %d: %v, pairwiseSum %v", wide, n, o, got, want)
					}
					want32, got32 := pairwiseSum(v32[o:o+n], 0, 1, n), pairwiseSumFloat32(v32[o:o+n])
					if math.Float32bits(want32) != math.Float32bits(got32) && !(want32 != want32 && got32 != got32) {
						t.Fatalf("float32, AVX-512 %v, n=%d at %d: %v, pairwiseSum %v", wide, n, o, got32, want32)
					}
				}
			}
		}
	}
}
