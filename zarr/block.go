package zarr

import "bytes"

// copyBlock copies a block of shape block from src, an array of shape
// srcShape in C order, starting at srcOrigin, into dst, an array of shape
// dstShape, starting at dstOrigin. Elements are elem bytes. As a simple
// loop over every index k of the block:
//
//	dst[dstOrigin+k] = src[srcOrigin+k]
//
// It copies whole rows of the last dimension at once.
func copyBlock(dst []byte, dstShape, dstOrigin []int, src []byte, srcShape, srcOrigin []int, block []int, elem int) {
	n := len(block)
	if n == 0 {
		copy(dst[:elem], src[:elem])
		return
	}
	for _, b := range block {
		if b == 0 {
			return
		}
	}
	// Strides in bytes.
	dstStride := make([]int, n)
	srcStride := make([]int, n)
	ds, ss := elem, elem
	for i := n - 1; i >= 0; i-- {
		dstStride[i], srcStride[i] = ds, ss
		ds *= dstShape[i]
		ss *= srcShape[i]
	}
	dOff, sOff := 0, 0
	for i := range n {
		dOff += dstOrigin[i] * dstStride[i]
		sOff += srcOrigin[i] * srcStride[i]
	}
	row := block[n-1] * elem
	idx := make([]int, n)
	for {
		copy(dst[dOff:dOff+row], src[sOff:sOff+row])
		d := n - 2
		for ; d >= 0; d-- {
			idx[d]++
			dOff += dstStride[d]
			sOff += srcStride[d]
			if idx[d] < block[d] {
				break
			}
			dOff -= idx[d] * dstStride[d]
			sOff -= idx[d] * srcStride[d]
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// fillPattern is a fill element repeated over fillBlockSize bytes (every
// element size divides it), for filling and comparing chunks.
type fillPattern struct {
	block []byte
	zero  bool
}

const fillBlockSize = 4096

func newFillPattern(elem []byte) fillPattern {
	return fillPattern{block: bytes.Repeat(elem, fillBlockSize/len(elem)), zero: fillElementIsZero(elem)}
}

// fill sets every element of dst to the fill value.
func (f fillPattern) fill(dst []byte) {
	if f.zero {
		clear(dst)
		return
	}
	for i := 0; i < len(dst); i += fillBlockSize {
		copy(dst[i:], f.block)
	}
}

// matches reports whether every element of src equals the fill value, bit
// for bit (so -0.0 is not 0.0, and NaNs match only the fill's payload).
func (f fillPattern) matches(src []byte) bool {
	for i := 0; i < len(src); i += fillBlockSize {
		end := min(i+fillBlockSize, len(src))
		if !bytes.Equal(src[i:end], f.block[:end-i]) {
			return false
		}
	}
	return true
}
