//go:build !(goexperiment.simd && amd64)

package kernels

// clearUpper is a no-op without the SIMD build (see avx_simd_amd64.go).
func clearUpper() {}
