package kernels

import (
	"math/bits"

	"github.com/cubego/cubego/zarr"
)

// Random numbers are counter based: the value of an element is a pure
// function of the seed and the element's flat C-order index in the whole
// array, so any chunking of the array gives identical values. The bits of
// element i are the i-th output of splitmix64 started from a scrambled seed:
// mix64(key + (i+1)·γ).

const gamma = 0x9e3779b97f4a7c15 // γ, splitmix64's increment

// mix64 is splitmix64's output function (Stafford's "Mix13").
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// streamKey scrambles a seed so that nearby seeds give unrelated streams.
func streamKey(seed uint64) uint64 { return mix64(seed ^ 0x6a09e667f3bcc909) }

func randomBits(key, i uint64) uint64 { return mix64(key + (i+1)*gamma) }

// RandomUniform fills dst with uniform values in [0, 1) for the C-order
// region [regionStart, regionStart+regionShape) of an array of shape:
// float64 values carry 53 random bits, float32 24 and float16 11. Other
// dtypes, or a region outside shape, leave dst unchanged; only as many
// whole elements as dst holds are written.
func RandomUniform(dst []byte, dt zarr.DataType, seed uint64, shape []int, regionStart []int, regionShape []int) {
	clearUpper()
	key := streamKey(seed)
	switch dt {
	case zarr.Float64:
		d := as[float64](dst)
		walkRegion(len(d), shape, regionStart, regionShape, func(pos int, flat uint64, cnt int) {
			row := d[pos : pos+cnt]
			for i := range row {
				row[i] = float64(randomBits(key, flat+uint64(i))>>11) * 0x1p-53
			}
		})
	case zarr.Float32:
		d := as[float32](dst)
		walkRegion(len(d), shape, regionStart, regionShape, func(pos int, flat uint64, cnt int) {
			row := d[pos : pos+cnt]
			for i := range row {
				row[i] = float32(randomBits(key, flat+uint64(i))>>40) * 0x1p-24
			}
		})
	case zarr.Float16:
		d := as[uint16](dst)
		walkRegion(len(d), shape, regionStart, regionShape, func(pos int, flat uint64, cnt int) {
			row := d[pos : pos+cnt]
			for i := range row {
				row[i] = float64ToHalf(float64(randomBits(key, flat+uint64(i))>>53) * 0x1p-11)
			}
		})
	}
}

// RandomIntegers fills dst with integers uniform in [low, high) (all low
// when high <= low), converted to dt as Cast converts int64, for the region
// of shape as in RandomUniform. Bounded values are unbiased (Lemire's
// multiply-and-reject, with deterministic redraws).
func RandomIntegers(dst []byte, dt zarr.DataType, seed uint64, low, high int64, shape, regionStart, regionShape []int) {
	clearUpper()
	size := dt.Size()
	if size == 0 {
		return
	}
	key := streamKey(seed)
	r := uint64(high) - uint64(low) // the range, exact modulo 2^64
	if high <= low {
		r = 0
	}
	k := castKernel(zarr.Int64, dt)
	var tmp [blockLen]int64
	walkRegion(len(dst)/size, shape, regionStart, regionShape, func(pos int, flat uint64, cnt int) {
		for lo := 0; lo < cnt; lo += blockLen {
			v := tmp[:min(blockLen, cnt-lo)]
			for i := range v {
				v[i] = low + int64(boundedRandom(key, flat+uint64(lo+i), r))
			}
			p := pos + lo
			k(dst[p*size:(p+len(v))*size], bytesOfSlice(v), nil, nil)
		}
	})
}

// boundedRandom returns a uniform value in [0, r) (0 when r is 0) from the
// bits of element i, redrawing deterministically on rejection.
func boundedRandom(key, i, r uint64) uint64 {
	if r == 0 {
		return 0
	}
	x := randomBits(key, i)
	hi, lo := bits.Mul64(x, r)
	if lo < r {
		t := -r % r
		for lo < t {
			x = mix64(x + gamma)
			hi, lo = bits.Mul64(x, r)
		}
	}
	return hi
}

// walkRegion calls row for each C-order row of the region [start,
// start+rshape) of an array of shape: pos is the row's first element in the
// region (C order), flat its flat index in the whole array, cnt its length.
// It stops after limit elements and does nothing for an invalid region.
func walkRegion(limit int, shape, start, rshape []int, row func(pos int, flat uint64, cnt int)) {
	nd := len(shape)
	if len(start) != nd || len(rshape) != nd {
		return
	}
	n := 1
	for d := range nd {
		if start[d] < 0 || rshape[d] < 0 || start[d] > shape[d] || rshape[d] > shape[d]-start[d] {
			return
		}
		n *= rshape[d]
	}
	n = min(n, limit)
	if n == 0 {
		return
	}
	cs := cStrides(shape)
	if nd == 0 {
		row(0, 0, 1)
		return
	}
	var flat uint64
	for d := range nd {
		flat += uint64(start[d] * cs[d])
	}
	rowLen := rshape[nd-1]
	idx := make([]int, nd-1)
	for pos := 0; pos < n; pos += rowLen {
		row(pos, flat, min(rowLen, n-pos))
		for d := nd - 2; d >= 0; d-- {
			idx[d]++
			flat += uint64(cs[d])
			if idx[d] < rshape[d] {
				break
			}
			flat -= uint64(cs[d] * rshape[d])
			idx[d] = 0
		}
	}
}
