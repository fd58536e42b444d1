//go:build goexperiment.simd && amd64

package kernels

import (
	"fmt"
	"testing"
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
