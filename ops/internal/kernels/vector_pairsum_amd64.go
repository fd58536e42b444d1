//go:build goexperiment.simd && amd64

package kernels

import (
	"simd/archsimd"
	"unsafe"
)

// Pairwise sums fold the two leaves under a node together. Almost every
// node of numpy's summation tree just above its leaves has two leaves of
// pairwiseBlock elements (a run of 131,044 float64 has 507 such nodes of
// 511), and a leaf summed alone is bound by its loop and its epilogue, not
// by the cache: the one-leaf loop ran at 59 GB/s over a 1 MiB run in L2,
// where the two-leaf node below runs at 91 GB/s, and in W4's fold (each
// band summed right after it is read) at 18-19 us a band against 14. Each
// leaf keeps its own eight lanes, added in the same order from zero, and
// the lanes are combined as blockSum combines its accumulators, in
// registers, so the sums have the same bits as pairwiseSum's. float32,
// whose leaf is one vector chain, gains more: 50-57 against 26-33 GB/s in
// cache.

var hasAVX512 = archsimd.X86.AVX512()

// leafPairFloat64 returns the sum of the two leaves x[:h] and x[h:] of a
// node of numpy's tree, or ok false where the node is not one this file
// folds (a leaf length that is not a multiple of 8: only the last leaf of
// a run).
func leafPairFloat64(x []float64, h int) (s float64, ok bool) {
	n := len(x)
	if n%8 != 0 || n-h > pairwiseBlock {
		return 0, false
	}
	p := unsafe.Pointer(unsafe.SliceData(x))
	switch {
	case n == 2*pairwiseBlock && hasAVX512:
		return fullLeafPair512(p), true
	case n == 2*pairwiseBlock:
		return fullLeafPair256(p), true
	case hasAVX512:
		return leafPair512(p, h, n-h), true
	}
	return leafPair256(p, h, n-h), true
}

func f64x8(p unsafe.Pointer, off int) *[8]float64 { return (*[8]float64)(unsafe.Add(p, off)) }
func f64x4(p unsafe.Pointer, off int) *[4]float64 { return (*[4]float64)(unsafe.Add(p, off)) }

// lanesSum8 returns the two leaves' sums added: each leaf's eight lanes
// (a, b: lanes 0-3 and 4-7) combined as ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)).
func lanesSum8(a0, a1, b0, b1 archsimd.Float64x4) float64 {
	pa := a0.AddPairsGrouped(a1) // [l0+l1, l4+l5, l2+l3, l6+l7]
	pb := b0.AddPairsGrouped(b1)
	qa := pa.GetLo().Add(pa.GetHi()) // [(l0+l1)+(l2+l3), (l4+l5)+(l6+l7)]
	qb := pb.GetLo().Add(pb.GetHi())
	r := qa.AddPairs(qb) // [leaf a, leaf b]
	s := r.AddPairs(r).GetElem(0)
	clearUpper()
	return s
}

// leafPair512 folds leaves of na <= nb <= pairwiseBlock elements (multiples
// of 8) at p and p+na, one 8-lane vector each.
func leafPair512(p unsafe.Pointer, na, nb int) float64 {
	q := unsafe.Add(p, na*8)
	var a, b archsimd.Float64x8
	i := 0
	for ; i < na*8; i += 64 {
		a = a.Add(archsimd.LoadFloat64x8(f64x8(p, i)))
		b = b.Add(archsimd.LoadFloat64x8(f64x8(q, i)))
	}
	for ; i < nb*8; i += 64 {
		b = b.Add(archsimd.LoadFloat64x8(f64x8(q, i)))
	}
	return lanesSum8(a.GetLo(), a.GetHi(), b.GetLo(), b.GetHi())
}

// leafPair256 is leafPair512 with two 4-lane vectors a leaf (AVX2).
func leafPair256(p unsafe.Pointer, na, nb int) float64 {
	q := unsafe.Add(p, na*8)
	var a0, a1, b0, b1 archsimd.Float64x4
	i := 0
	for ; i < na*8; i += 64 {
		a0 = a0.Add(archsimd.LoadFloat64x4(f64x4(p, i)))
		a1 = a1.Add(archsimd.LoadFloat64x4(f64x4(p, i+32)))
		b0 = b0.Add(archsimd.LoadFloat64x4(f64x4(q, i)))
		b1 = b1.Add(archsimd.LoadFloat64x4(f64x4(q, i+32)))
	}
	for ; i < nb*8; i += 64 {
		b0 = b0.Add(archsimd.LoadFloat64x4(f64x4(q, i)))
		b1 = b1.Add(archsimd.LoadFloat64x4(f64x4(q, i+32)))
	}
	return lanesSum8(a0, a1, b0, b1)
}

// fullLeafPair512 is leafPair512 for two leaves of pairwiseBlock elements,
// unrolled: the loop's own instructions cost more than its loads in L2 (a
// loop over blocks of four vectors of each leaf, inlined, measured 7% slower
// for float64 in L2 and 15% for float32).
func fullLeafPair512(p unsafe.Pointer) float64 {
	q := unsafe.Add(p, pairwiseBlock*8)
	var a, b archsimd.Float64x8
	a = a.Add(archsimd.LoadFloat64x8(f64x8(p, 0)))
	b = b.Add(archsimd.LoadFloat64x8(f64x8(q, 0)))
	a = a.Add(archsimd.LoadFloat64x8(f64x8(p, 64)))
	b = b.Add(archsimd.LoadFloat64x8(f64x8(q, 64)))
	a = a.Add(archsimd.LoadFloat64x8(f64x8(p, 128)))
	b = b.Add(archsimd.LoadFloat64x8(f64x8(q, 128)))
	a = a.Add(archsimd.LoadFloat64x8(f64x8(p, 192)))
	b = b.Add(archsimd.LoadFloat64x8(f64x8(q, 192)))
	a = a.Add(archsimd.LoadFloat64x8(f64x8(p, 256)))
	b = b.Add(archsimd.LoadFloat64x8(f64x8(q, 256)))
	a = a.Add(archsimd.LoadFloat64x8(f64x8(p, 320)))
	b = b.Add(archsimd.LoadFloat64x8(f64x8(q, 320)))
	a = a.Add(archsimd.LoadFloat64x8(f64x8(p, 384)))
	b = b.Add(archsimd.LoadFloat64x8(f64x8(q, 384)))
	a = a.Add(archsimd.LoadFloat64x8(f64x8(p, 448)))
	b = b.Add(archsimd.LoadFloat64x8(f64x8(q, 448)))
	a = a.Add(archsimd.LoadFloat64x8(f64x8(p, 512)))
	b = b.Add(archsimd.LoadFloat64x8(f64x8(q, 512)))
	a = a.Add(archsimd.LoadFloat64x8(f64x8(p, 576)))
	b = b.Add(archsimd.LoadFloat64x8(f64x8(q, 576)))
	a = a.Add(archsimd.LoadFloat64x8(f64x8(p, 640)))
	b = b.Add(archsimd.LoadFloat64x8(f64x8(q, 640)))
	a = a.Add(archsimd.LoadFloat64x8(f64x8(p, 704)))
	b = b.Add(archsimd.LoadFloat64x8(f64x8(q, 704)))
	a = a.Add(archsimd.LoadFloat64x8(f64x8(p, 768)))
	b = b.Add(archsimd.LoadFloat64x8(f64x8(q, 768)))
	a = a.Add(archsimd.LoadFloat64x8(f64x8(p, 832)))
	b = b.Add(archsimd.LoadFloat64x8(f64x8(q, 832)))
	a = a.Add(archsimd.LoadFloat64x8(f64x8(p, 896)))
	b = b.Add(archsimd.LoadFloat64x8(f64x8(q, 896)))
	a = a.Add(archsimd.LoadFloat64x8(f64x8(p, 960)))
	b = b.Add(archsimd.LoadFloat64x8(f64x8(q, 960)))
	return lanesSum8(a.GetLo(), a.GetHi(), b.GetLo(), b.GetHi())
}

// fullLeafPair256 is fullLeafPair512 with two 4-lane vectors a leaf.
func fullLeafPair256(p unsafe.Pointer) float64 {
	q := unsafe.Add(p, pairwiseBlock*8)
	var a0, a1, b0, b1 archsimd.Float64x4
	a0 = a0.Add(archsimd.LoadFloat64x4(f64x4(p, 0)))
	a1 = a1.Add(archsimd.LoadFloat64x4(f64x4(p, 32)))
	b0 = b0.Add(archsimd.LoadFloat64x4(f64x4(q, 0)))
	b1 = b1.Add(archsimd.LoadFloat64x4(f64x4(q, 32)))
	a0 = a0.Add(archsimd.LoadFloat64x4(f64x4(p, 64)))
	a1 = a1.Add(archsimd.LoadFloat64x4(f64x4(p, 96)))
	b0 = b0.Add(archsimd.LoadFloat64x4(f64x4(q, 64)))
	b1 = b1.Add(archsimd.LoadFloat64x4(f64x4(q, 96)))
	a0 = a0.Add(archsimd.LoadFloat64x4(f64x4(p, 128)))
	a1 = a1.Add(archsimd.LoadFloat64x4(f64x4(p, 160)))
	b0 = b0.Add(archsimd.LoadFloat64x4(f64x4(q, 128)))
	b1 = b1.Add(archsimd.LoadFloat64x4(f64x4(q, 160)))
	a0 = a0.Add(archsimd.LoadFloat64x4(f64x4(p, 192)))
	a1 = a1.Add(archsimd.LoadFloat64x4(f64x4(p, 224)))
	b0 = b0.Add(archsimd.LoadFloat64x4(f64x4(q, 192)))
	b1 = b1.Add(archsimd.LoadFloat64x4(f64x4(q, 224)))
	a0 = a0.Add(archsimd.LoadFloat64x4(f64x4(p, 256)))
	a1 = a1.Add(archsimd.LoadFloat64x4(f64x4(p, 288)))
	b0 = b0.Add(archsimd.LoadFloat64x4(f64x4(q, 256)))
	b1 = b1.Add(archsimd.LoadFloat64x4(f64x4(q, 288)))
	a0 = a0.Add(archsimd.LoadFloat64x4(f64x4(p, 320)))
	a1 = a1.Add(archsimd.LoadFloat64x4(f64x4(p, 352)))
	b0 = b0.Add(archsimd.LoadFloat64x4(f64x4(q, 320)))
	b1 = b1.Add(archsimd.LoadFloat64x4(f64x4(q, 352)))
	a0 = a0.Add(archsimd.LoadFloat64x4(f64x4(p, 384)))
	a1 = a1.Add(archsimd.LoadFloat64x4(f64x4(p, 416)))
	b0 = b0.Add(archsimd.LoadFloat64x4(f64x4(q, 384)))
	b1 = b1.Add(archsimd.LoadFloat64x4(f64x4(q, 416)))
	a0 = a0.Add(archsimd.LoadFloat64x4(f64x4(p, 448)))
	a1 = a1.Add(archsimd.LoadFloat64x4(f64x4(p, 480)))
	b0 = b0.Add(archsimd.LoadFloat64x4(f64x4(q, 448)))
	b1 = b1.Add(archsimd.LoadFloat64x4(f64x4(q, 480)))
	a0 = a0.Add(archsimd.LoadFloat64x4(f64x4(p, 512)))
	a1 = a1.Add(archsimd.LoadFloat64x4(f64x4(p, 544)))
	b0 = b0.Add(archsimd.LoadFloat64x4(f64x4(q, 512)))
	b1 = b1.Add(archsimd.LoadFloat64x4(f64x4(q, 544)))
	a0 = a0.Add(archsimd.LoadFloat64x4(f64x4(p, 576)))
	a1 = a1.Add(archsimd.LoadFloat64x4(f64x4(p, 608)))
	b0 = b0.Add(archsimd.LoadFloat64x4(f64x4(q, 576)))
	b1 = b1.Add(archsimd.LoadFloat64x4(f64x4(q, 608)))
	a0 = a0.Add(archsimd.LoadFloat64x4(f64x4(p, 640)))
	a1 = a1.Add(archsimd.LoadFloat64x4(f64x4(p, 672)))
	b0 = b0.Add(archsimd.LoadFloat64x4(f64x4(q, 640)))
	b1 = b1.Add(archsimd.LoadFloat64x4(f64x4(q, 672)))
	a0 = a0.Add(archsimd.LoadFloat64x4(f64x4(p, 704)))
	a1 = a1.Add(archsimd.LoadFloat64x4(f64x4(p, 736)))
	b0 = b0.Add(archsimd.LoadFloat64x4(f64x4(q, 704)))
	b1 = b1.Add(archsimd.LoadFloat64x4(f64x4(q, 736)))
	a0 = a0.Add(archsimd.LoadFloat64x4(f64x4(p, 768)))
	a1 = a1.Add(archsimd.LoadFloat64x4(f64x4(p, 800)))
	b0 = b0.Add(archsimd.LoadFloat64x4(f64x4(q, 768)))
	b1 = b1.Add(archsimd.LoadFloat64x4(f64x4(q, 800)))
	a0 = a0.Add(archsimd.LoadFloat64x4(f64x4(p, 832)))
	a1 = a1.Add(archsimd.LoadFloat64x4(f64x4(p, 864)))
	b0 = b0.Add(archsimd.LoadFloat64x4(f64x4(q, 832)))
	b1 = b1.Add(archsimd.LoadFloat64x4(f64x4(q, 864)))
	a0 = a0.Add(archsimd.LoadFloat64x4(f64x4(p, 896)))
	a1 = a1.Add(archsimd.LoadFloat64x4(f64x4(p, 928)))
	b0 = b0.Add(archsimd.LoadFloat64x4(f64x4(q, 896)))
	b1 = b1.Add(archsimd.LoadFloat64x4(f64x4(q, 928)))
	a0 = a0.Add(archsimd.LoadFloat64x4(f64x4(p, 960)))
	a1 = a1.Add(archsimd.LoadFloat64x4(f64x4(p, 992)))
	b0 = b0.Add(archsimd.LoadFloat64x4(f64x4(q, 960)))
	b1 = b1.Add(archsimd.LoadFloat64x4(f64x4(q, 992)))
	return lanesSum8(a0, a1, b0, b1)
}

// leafPairFloat32 is leafPairFloat64 for float32, whose leaf's eight lanes
// are one 4-byte-lane vector: two leaves are two vector chains instead of
// one.
func leafPairFloat32(x []float32, h int) (s float32, ok bool) {
	n := len(x)
	if n%8 != 0 || n-h > pairwiseBlock {
		return 0, false
	}
	p := unsafe.Pointer(unsafe.SliceData(x))
	if n == 2*pairwiseBlock {
		return fullLeafPairFloat32(p), true
	}
	q := unsafe.Add(p, h*4)
	var a, b archsimd.Float32x8
	i := 0
	for ; i < h*4; i += 32 {
		a = a.Add(archsimd.LoadFloat32x8(f32x8(p, i)))
		b = b.Add(archsimd.LoadFloat32x8(f32x8(q, i)))
	}
	for ; i < (n-h)*4; i += 32 {
		b = b.Add(archsimd.LoadFloat32x8(f32x8(q, i)))
	}
	return lanesSum8Float32(a, b), true
}

func f32x8(p unsafe.Pointer, off int) *[8]float32 { return (*[8]float32)(unsafe.Add(p, off)) }

// lanesSum8Float32 is lanesSum8 for two float32 leaves' lanes a and b.
func lanesSum8Float32(a, b archsimd.Float32x8) float32 {
	p := a.AddPairsGrouped(b)     // [a0+a1, a2+a3, b0+b1, b2+b3 | a4+a5, a6+a7, b4+b5, b6+b7]
	p = p.AddPairsGrouped(p)      // [a0123, b0123, a0123, b0123 | a4567, b4567, ...]
	q := p.GetLo().Add(p.GetHi()) // [leaf a, leaf b, leaf a, leaf b]
	s := q.AddPairs(q).GetElem(0)
	clearUpper()
	return s
}

// fullLeafPairFloat32 is leafPairFloat32 for two leaves of pairwiseBlock
// elements, unrolled.
func fullLeafPairFloat32(p unsafe.Pointer) float32 {
	q := unsafe.Add(p, pairwiseBlock*4)
	var a, b archsimd.Float32x8
	a = a.Add(archsimd.LoadFloat32x8(f32x8(p, 0)))
	b = b.Add(archsimd.LoadFloat32x8(f32x8(q, 0)))
	a = a.Add(archsimd.LoadFloat32x8(f32x8(p, 32)))
	b = b.Add(archsimd.LoadFloat32x8(f32x8(q, 32)))
	a = a.Add(archsimd.LoadFloat32x8(f32x8(p, 64)))
	b = b.Add(archsimd.LoadFloat32x8(f32x8(q, 64)))
	a = a.Add(archsimd.LoadFloat32x8(f32x8(p, 96)))
	b = b.Add(archsimd.LoadFloat32x8(f32x8(q, 96)))
	a = a.Add(archsimd.LoadFloat32x8(f32x8(p, 128)))
	b = b.Add(archsimd.LoadFloat32x8(f32x8(q, 128)))
	a = a.Add(archsimd.LoadFloat32x8(f32x8(p, 160)))
	b = b.Add(archsimd.LoadFloat32x8(f32x8(q, 160)))
	a = a.Add(archsimd.LoadFloat32x8(f32x8(p, 192)))
	b = b.Add(archsimd.LoadFloat32x8(f32x8(q, 192)))
	a = a.Add(archsimd.LoadFloat32x8(f32x8(p, 224)))
	b = b.Add(archsimd.LoadFloat32x8(f32x8(q, 224)))
	a = a.Add(archsimd.LoadFloat32x8(f32x8(p, 256)))
	b = b.Add(archsimd.LoadFloat32x8(f32x8(q, 256)))
	a = a.Add(archsimd.LoadFloat32x8(f32x8(p, 288)))
	b = b.Add(archsimd.LoadFloat32x8(f32x8(q, 288)))
	a = a.Add(archsimd.LoadFloat32x8(f32x8(p, 320)))
	b = b.Add(archsimd.LoadFloat32x8(f32x8(q, 320)))
	a = a.Add(archsimd.LoadFloat32x8(f32x8(p, 352)))
	b = b.Add(archsimd.LoadFloat32x8(f32x8(q, 352)))
	a = a.Add(archsimd.LoadFloat32x8(f32x8(p, 384)))
	b = b.Add(archsimd.LoadFloat32x8(f32x8(q, 384)))
	a = a.Add(archsimd.LoadFloat32x8(f32x8(p, 416)))
	b = b.Add(archsimd.LoadFloat32x8(f32x8(q, 416)))
	a = a.Add(archsimd.LoadFloat32x8(f32x8(p, 448)))
	b = b.Add(archsimd.LoadFloat32x8(f32x8(q, 448)))
	a = a.Add(archsimd.LoadFloat32x8(f32x8(p, 480)))
	b = b.Add(archsimd.LoadFloat32x8(f32x8(q, 480)))
	return lanesSum8Float32(a, b)
}
