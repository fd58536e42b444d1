//go:build !(goexperiment.simd && amd64)

package kernels

// expLimit is vector_exp_amd64.go's range bound (its tests compile in
// every build; without the SIMD build they find no vector loops).
const expLimit = 708

// vectorMath is vector_amd64.go's list of vector exp and log kernels: none
// without the SIMD build.
func vectorMath() []mathVariant { return nil }
