package ops

import (
	"encoding/binary"

	"github.com/cubego/cubego/plan"
)

// CStrides returns the C-order element strides of a shape.
func CStrides(shape []int) []int {
	s := make([]int, len(shape))
	acc := 1
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= shape[i]
	}
	return s
}

// StridedCopy copies a box of count[d] elements per dimension from src to
// dst, each given by a starting element offset and element strides (which
// may be negative or zero). It means:
//
//	for every index i in the box:
//	    dst[dstOff + Σ i[d]*dstStrides[d]] = src[srcOff + Σ i[d]*srcStrides[d]]
//
// Runs that are contiguous in both buffers along the last dimension are
// moved with copy().
func StridedCopy(elem int, count []int, dst []byte, dstOff int, dstStrides []int, src []byte, srcOff int, srcStrides []int) {
	n := len(count)
	for _, c := range count {
		if c == 0 {
			return
		}
	}
	if n == 0 {
		copy(dst[dstOff*elem:(dstOff+1)*elem], src[srcOff*elem:(srcOff+1)*elem])
		return
	}
	// Merge trailing dimensions that are contiguous in both buffers.
	inner := count[n-1]
	ds, ss := dstStrides[n-1], srcStrides[n-1]
	outer := n - 1
	if ds == 1 && ss == 1 {
		for outer > 0 && dstStrides[outer-1] == inner && srcStrides[outer-1] == inner {
			inner *= count[outer-1]
			outer--
		}
	}
	idx := make([]int, outer)
	d, s := dstOff, srcOff
	for {
		if ds == 1 && ss == 1 {
			copy(dst[d*elem:(d+inner)*elem], src[s*elem:(s+inner)*elem])
		} else {
			copyRun(elem, inner, dst, d, ds, src, s, ss)
		}
		// Advance the odometer over the outer dimensions.
		k := outer - 1
		for ; k >= 0; k-- {
			idx[k]++
			d += dstStrides[k]
			s += srcStrides[k]
			if idx[k] < count[k] {
				break
			}
			d -= dstStrides[k] * count[k]
			s -= srcStrides[k] * count[k]
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

// copyRun copies n elements with strides; it means
// for i < n: dst[d+i*ds] = src[s+i*ss].
func copyRun(elem, n int, dst []byte, d, ds int, src []byte, s, ss int) {
	switch elem {
	case 8:
		for range n {
			binary.LittleEndian.PutUint64(dst[d*8:], binary.LittleEndian.Uint64(src[s*8:]))
			d += ds
			s += ss
		}
	case 4:
		for range n {
			binary.LittleEndian.PutUint32(dst[d*4:], binary.LittleEndian.Uint32(src[s*4:]))
			d += ds
			s += ss
		}
	case 2:
		for range n {
			binary.LittleEndian.PutUint16(dst[d*2:], binary.LittleEndian.Uint16(src[s*2:]))
			d += ds
			s += ss
		}
	case 1:
		for range n {
			dst[d] = src[s]
			d += ds
			s += ss
		}
	default:
		for range n {
			copy(dst[d*elem:(d+1)*elem], src[s*elem:(s+1)*elem])
			d += ds
			s += ss
		}
	}
}

// CopyRegionFrom copies region r of a C-contiguous array (shape, data) into
// the C-contiguous buffer dst of the region's shape.
func CopyRegionFrom(elem int, shape []int, data []byte, r plan.Region, dst []byte) {
	strides := CStrides(shape)
	off := 0
	srcStrides := make([]int, len(shape))
	for d := range shape {
		off += r.Start[d] * strides[d]
		srcStrides[d] = r.Step[d] * strides[d]
	}
	StridedCopy(elem, r.Count, dst, 0, CStrides(r.Count), data, off, srcStrides)
}
