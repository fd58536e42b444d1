//go:build goexperiment.simd && amd64

package kernels

import "simd/archsimd"

// The micro-kernels of gemm (gemm.go): a 4-row by 2-vector tile of C kept in
// registers while the packed panels stream through, one fused multiply-add
// per vector per step. They are unrolled by hand because the compiler keeps
// only named vector variables in registers. 4×2 vectors is the largest tile
// that does not spill with today's compiler (6 or 8 rows do: measured 3–4×
// slower).

func init() {
	switch {
	case archsimd.X86.AVX512():
		gemmKernels64 = gemmKernels[float64]{mr: 4, nr: 16, kernel: gemmKernel64x512}
		gemmKernels32 = gemmKernels[float32]{mr: 4, nr: 32, kernel: gemmKernel32x512}
	case archsimd.X86.AVX2() && archsimd.X86.FMA():
		gemmKernels64 = gemmKernels[float64]{mr: 4, nr: 8, kernel: gemmKernel64x256}
		gemmKernels32 = gemmKernels[float32]{mr: 4, nr: 16, kernel: gemmKernel32x256}
	}
}

// gemmKernel64x512 adds the 4×16 product of the packed panels ap (kk×4) and bp
// (kk×16) to c, whose rows are ldc apart:
// c[i*ldc+j] += Σ_p ap[p*4+i] * bp[p*16+j].
func gemmKernel64x512(kk int, ap, bp, c []float64, ldc int) {
	var c00, c01, c10, c11, c20, c21, c30, c31 archsimd.Float64x8
	ap = ap[:kk*4]
	bp = bp[:kk*16]
	for p := range kk {
		b := bp[p*16 : p*16+16 : p*16+16]
		a := ap[p*4 : p*4+4 : p*4+4]
		b0 := archsimd.LoadFloat64x8Slice(b[0:8])
		b1 := archsimd.LoadFloat64x8Slice(b[8:16])
		a0 := archsimd.BroadcastFloat64x8(a[0])
		c00 = a0.MulAdd(b0, c00)
		c01 = a0.MulAdd(b1, c01)
		a1 := archsimd.BroadcastFloat64x8(a[1])
		c10 = a1.MulAdd(b0, c10)
		c11 = a1.MulAdd(b1, c11)
		a2 := archsimd.BroadcastFloat64x8(a[2])
		c20 = a2.MulAdd(b0, c20)
		c21 = a2.MulAdd(b1, c21)
		a3 := archsimd.BroadcastFloat64x8(a[3])
		c30 = a3.MulAdd(b0, c30)
		c31 = a3.MulAdd(b1, c31)
	}
	s00 := c[0*ldc+0 : 0*ldc+8]
	archsimd.LoadFloat64x8Slice(s00).Add(c00).StoreSlice(s00)
	s01 := c[0*ldc+8 : 0*ldc+16]
	archsimd.LoadFloat64x8Slice(s01).Add(c01).StoreSlice(s01)
	s10 := c[1*ldc+0 : 1*ldc+8]
	archsimd.LoadFloat64x8Slice(s10).Add(c10).StoreSlice(s10)
	s11 := c[1*ldc+8 : 1*ldc+16]
	archsimd.LoadFloat64x8Slice(s11).Add(c11).StoreSlice(s11)
	s20 := c[2*ldc+0 : 2*ldc+8]
	archsimd.LoadFloat64x8Slice(s20).Add(c20).StoreSlice(s20)
	s21 := c[2*ldc+8 : 2*ldc+16]
	archsimd.LoadFloat64x8Slice(s21).Add(c21).StoreSlice(s21)
	s30 := c[3*ldc+0 : 3*ldc+8]
	archsimd.LoadFloat64x8Slice(s30).Add(c30).StoreSlice(s30)
	s31 := c[3*ldc+8 : 3*ldc+16]
	archsimd.LoadFloat64x8Slice(s31).Add(c31).StoreSlice(s31)
}

// gemmKernel64x256 adds the 4×8 product of the packed panels ap (kk×4) and bp
// (kk×8) to c, whose rows are ldc apart:
// c[i*ldc+j] += Σ_p ap[p*4+i] * bp[p*8+j].
func gemmKernel64x256(kk int, ap, bp, c []float64, ldc int) {
	var c00, c01, c10, c11, c20, c21, c30, c31 archsimd.Float64x4
	ap = ap[:kk*4]
	bp = bp[:kk*8]
	for p := range kk {
		b := bp[p*8 : p*8+8 : p*8+8]
		a := ap[p*4 : p*4+4 : p*4+4]
		b0 := archsimd.LoadFloat64x4Slice(b[0:4])
		b1 := archsimd.LoadFloat64x4Slice(b[4:8])
		a0 := archsimd.BroadcastFloat64x4(a[0])
		c00 = a0.MulAdd(b0, c00)
		c01 = a0.MulAdd(b1, c01)
		a1 := archsimd.BroadcastFloat64x4(a[1])
		c10 = a1.MulAdd(b0, c10)
		c11 = a1.MulAdd(b1, c11)
		a2 := archsimd.BroadcastFloat64x4(a[2])
		c20 = a2.MulAdd(b0, c20)
		c21 = a2.MulAdd(b1, c21)
		a3 := archsimd.BroadcastFloat64x4(a[3])
		c30 = a3.MulAdd(b0, c30)
		c31 = a3.MulAdd(b1, c31)
	}
	s00 := c[0*ldc+0 : 0*ldc+4]
	archsimd.LoadFloat64x4Slice(s00).Add(c00).StoreSlice(s00)
	s01 := c[0*ldc+4 : 0*ldc+8]
	archsimd.LoadFloat64x4Slice(s01).Add(c01).StoreSlice(s01)
	s10 := c[1*ldc+0 : 1*ldc+4]
	archsimd.LoadFloat64x4Slice(s10).Add(c10).StoreSlice(s10)
	s11 := c[1*ldc+4 : 1*ldc+8]
	archsimd.LoadFloat64x4Slice(s11).Add(c11).StoreSlice(s11)
	s20 := c[2*ldc+0 : 2*ldc+4]
	archsimd.LoadFloat64x4Slice(s20).Add(c20).StoreSlice(s20)
	s21 := c[2*ldc+4 : 2*ldc+8]
	archsimd.LoadFloat64x4Slice(s21).Add(c21).StoreSlice(s21)
	s30 := c[3*ldc+0 : 3*ldc+4]
	archsimd.LoadFloat64x4Slice(s30).Add(c30).StoreSlice(s30)
	s31 := c[3*ldc+4 : 3*ldc+8]
	archsimd.LoadFloat64x4Slice(s31).Add(c31).StoreSlice(s31)
}

// gemmKernel32x512 adds the 4×32 product of the packed panels ap (kk×4) and bp
// (kk×32) to c, whose rows are ldc apart:
// c[i*ldc+j] += Σ_p ap[p*4+i] * bp[p*32+j].
func gemmKernel32x512(kk int, ap, bp, c []float32, ldc int) {
	var c00, c01, c10, c11, c20, c21, c30, c31 archsimd.Float32x16
	ap = ap[:kk*4]
	bp = bp[:kk*32]
	for p := range kk {
		b := bp[p*32 : p*32+32 : p*32+32]
		a := ap[p*4 : p*4+4 : p*4+4]
		b0 := archsimd.LoadFloat32x16Slice(b[0:16])
		b1 := archsimd.LoadFloat32x16Slice(b[16:32])
		a0 := archsimd.BroadcastFloat32x16(a[0])
		c00 = a0.MulAdd(b0, c00)
		c01 = a0.MulAdd(b1, c01)
		a1 := archsimd.BroadcastFloat32x16(a[1])
		c10 = a1.MulAdd(b0, c10)
		c11 = a1.MulAdd(b1, c11)
		a2 := archsimd.BroadcastFloat32x16(a[2])
		c20 = a2.MulAdd(b0, c20)
		c21 = a2.MulAdd(b1, c21)
		a3 := archsimd.BroadcastFloat32x16(a[3])
		c30 = a3.MulAdd(b0, c30)
		c31 = a3.MulAdd(b1, c31)
	}
	s00 := c[0*ldc+0 : 0*ldc+16]
	archsimd.LoadFloat32x16Slice(s00).Add(c00).StoreSlice(s00)
	s01 := c[0*ldc+16 : 0*ldc+32]
	archsimd.LoadFloat32x16Slice(s01).Add(c01).StoreSlice(s01)
	s10 := c[1*ldc+0 : 1*ldc+16]
	archsimd.LoadFloat32x16Slice(s10).Add(c10).StoreSlice(s10)
	s11 := c[1*ldc+16 : 1*ldc+32]
	archsimd.LoadFloat32x16Slice(s11).Add(c11).StoreSlice(s11)
	s20 := c[2*ldc+0 : 2*ldc+16]
	archsimd.LoadFloat32x16Slice(s20).Add(c20).StoreSlice(s20)
	s21 := c[2*ldc+16 : 2*ldc+32]
	archsimd.LoadFloat32x16Slice(s21).Add(c21).StoreSlice(s21)
	s30 := c[3*ldc+0 : 3*ldc+16]
	archsimd.LoadFloat32x16Slice(s30).Add(c30).StoreSlice(s30)
	s31 := c[3*ldc+16 : 3*ldc+32]
	archsimd.LoadFloat32x16Slice(s31).Add(c31).StoreSlice(s31)
}

// gemmKernel32x256 adds the 4×16 product of the packed panels ap (kk×4) and bp
// (kk×16) to c, whose rows are ldc apart:
// c[i*ldc+j] += Σ_p ap[p*4+i] * bp[p*16+j].
func gemmKernel32x256(kk int, ap, bp, c []float32, ldc int) {
	var c00, c01, c10, c11, c20, c21, c30, c31 archsimd.Float32x8
	ap = ap[:kk*4]
	bp = bp[:kk*16]
	for p := range kk {
		b := bp[p*16 : p*16+16 : p*16+16]
		a := ap[p*4 : p*4+4 : p*4+4]
		b0 := archsimd.LoadFloat32x8Slice(b[0:8])
		b1 := archsimd.LoadFloat32x8Slice(b[8:16])
		a0 := archsimd.BroadcastFloat32x8(a[0])
		c00 = a0.MulAdd(b0, c00)
		c01 = a0.MulAdd(b1, c01)
		a1 := archsimd.BroadcastFloat32x8(a[1])
		c10 = a1.MulAdd(b0, c10)
		c11 = a1.MulAdd(b1, c11)
		a2 := archsimd.BroadcastFloat32x8(a[2])
		c20 = a2.MulAdd(b0, c20)
		c21 = a2.MulAdd(b1, c21)
		a3 := archsimd.BroadcastFloat32x8(a[3])
		c30 = a3.MulAdd(b0, c30)
		c31 = a3.MulAdd(b1, c31)
	}
	s00 := c[0*ldc+0 : 0*ldc+8]
	archsimd.LoadFloat32x8Slice(s00).Add(c00).StoreSlice(s00)
	s01 := c[0*ldc+8 : 0*ldc+16]
	archsimd.LoadFloat32x8Slice(s01).Add(c01).StoreSlice(s01)
	s10 := c[1*ldc+0 : 1*ldc+8]
	archsimd.LoadFloat32x8Slice(s10).Add(c10).StoreSlice(s10)
	s11 := c[1*ldc+8 : 1*ldc+16]
	archsimd.LoadFloat32x8Slice(s11).Add(c11).StoreSlice(s11)
	s20 := c[2*ldc+0 : 2*ldc+8]
	archsimd.LoadFloat32x8Slice(s20).Add(c20).StoreSlice(s20)
	s21 := c[2*ldc+8 : 2*ldc+16]
	archsimd.LoadFloat32x8Slice(s21).Add(c21).StoreSlice(s21)
	s30 := c[3*ldc+0 : 3*ldc+8]
	archsimd.LoadFloat32x8Slice(s30).Add(c30).StoreSlice(s30)
	s31 := c[3*ldc+8 : 3*ldc+16]
	archsimd.LoadFloat32x8Slice(s31).Add(c31).StoreSlice(s31)
}
