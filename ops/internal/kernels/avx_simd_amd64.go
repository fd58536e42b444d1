//go:build goexperiment.simd && amd64

package kernels

import "simd/archsimd"

// Built with GOEXPERIMENT=simd (Go 1.26), the process often runs with the
// upper halves of the vector registers dirty, and then every legacy-SSE
// instruction, which is all of Go's scalar float arithmetic, pays a
// false-dependency penalty: a plain float64 add loop runs at 6.9 GB/s
// instead of 20.4 GB/s on this machine (a stand-alone go test -bench, with
// and without VZEROUPPER before each pass). Clearing them once at start-up
// is not enough: they come back dirty between calls. So every exported
// kernel clears them on entry; VZEROUPPER costs a cycle.
var hasAVX = archsimd.X86.AVX()

func clearUpper() {
	if hasAVX {
		archsimd.ClearAVXUpperBits()
	}
}
