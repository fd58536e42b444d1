package blosc

import "encoding/binary"

// shuffle writes the bytes of src grouped by their position in an element:
// first byte 0 of every element, then byte 1, and so on. Bytes after the
// last whole element are copied as they are. As a simple loop:
//
//	for i := range n { for j := range ts { dst[j*n+i] = src[i*ts+j] } }
func shuffle(dst, src []byte, ts int) {
	n := len(src) / ts
	if ts == 1 || n == 0 {
		copy(dst, src)
		return
	}
	switch ts {
	case 2:
		// Eight elements at a time: their low bytes, then their high bytes.
		m := n &^ 7
		lo, hi := dst[:n], dst[n:2*n]
		for i := 0; i < m; i += 8 {
			a := binary.LittleEndian.Uint64(src[2*i:])
			b := binary.LittleEndian.Uint64(src[2*i+8:])
			binary.LittleEndian.PutUint64(lo[i:], packEven(a)|packEven(b)<<32)
			binary.LittleEndian.PutUint64(hi[i:], packEven(a>>8)|packEven(b>>8)<<32)
		}
		for i := m; i < n; i++ {
			lo[i], hi[i] = src[2*i], src[2*i+1]
		}
	case 4:
		d0, d1, d2, d3 := dst[:n], dst[n:2*n], dst[2*n:3*n], dst[3*n:4*n]
		for i := range n {
			e := src[4*i : 4*i+4]
			d0[i], d1[i], d2[i], d3[i] = e[0], e[1], e[2], e[3]
		}
	case 8:
		// Eight elements at a time: an 8×8 byte transpose in registers.
		m := n &^ 7
		var w [8]uint64
		for i := 0; i < m; i += 8 {
			for r := range w {
				w[r] = binary.LittleEndian.Uint64(src[8*(i+r):])
			}
			transposeBytes(&w)
			for c, v := range w {
				binary.LittleEndian.PutUint64(dst[c*n+i:], v)
			}
		}
		for i := m; i < n; i++ {
			for j := range 8 {
				dst[j*n+i] = src[8*i+j]
			}
		}
	default:
		for j := range ts {
			row := dst[j*n : (j+1)*n]
			for i := range row {
				row[i] = src[i*ts+j]
			}
		}
	}
	copy(dst[n*ts:], src[n*ts:])
}

// packEven returns bytes 0, 2, 4 and 6 of x as the low four bytes.
func packEven(x uint64) uint64 {
	x &= 0x00FF00FF00FF00FF
	x = (x | x>>8) & 0x0000FFFF0000FFFF
	return (x | x>>16) & 0xFFFFFFFF
}

// spreadEven inverts packEven: the low four bytes of x become bytes 0, 2,
// 4 and 6.
func spreadEven(x uint64) uint64 {
	x &= 0xFFFFFFFF
	x = (x | x<<16) & 0x0000FFFF0000FFFF
	return (x | x<<8) & 0x00FF00FF00FF00FF
}

// transposeBytes transposes the 8×8 byte matrix whose row r is w[r] (byte
// c of the row at bits 8c): byte c of w[r] moves to byte r of w[c]. It
// swaps the off-diagonal 4×4, then 2×2, then 1×1 blocks.
func transposeBytes(w *[8]uint64) {
	for i := range 4 {
		t := (w[i]>>32 ^ w[i+4]) & 0x00000000FFFFFFFF
		w[i] ^= t << 32
		w[i+4] ^= t
	}
	for _, i := range [4]int{0, 1, 4, 5} {
		t := (w[i]>>16 ^ w[i+2]) & 0x0000FFFF0000FFFF
		w[i] ^= t << 16
		w[i+2] ^= t
	}
	for _, i := range [4]int{0, 2, 4, 6} {
		t := (w[i]>>8 ^ w[i+1]) & 0x00FF00FF00FF00FF
		w[i] ^= t << 8
		w[i+1] ^= t
	}
}

// unshuffle inverts shuffle. As a simple loop:
//
//	for i := range n { for j := range ts { dst[i*ts+j] = src[j*n+i] } }
func unshuffle(dst, src []byte, ts int) {
	n := len(src) / ts
	if ts == 1 || n == 0 {
		copy(dst, src)
		return
	}
	switch ts {
	case 2:
		m := n &^ 7
		lo, hi := src[:n], src[n:2*n]
		for i := 0; i < m; i += 8 {
			l := binary.LittleEndian.Uint64(lo[i:])
			h := binary.LittleEndian.Uint64(hi[i:])
			binary.LittleEndian.PutUint64(dst[2*i:], spreadEven(l)|spreadEven(h)<<8)
			binary.LittleEndian.PutUint64(dst[2*i+8:], spreadEven(l>>32)|spreadEven(h>>32)<<8)
		}
		for i := m; i < n; i++ {
			dst[2*i], dst[2*i+1] = lo[i], hi[i]
		}
	case 4:
		s0, s1, s2, s3 := src[:n], src[n:2*n], src[2*n:3*n], src[3*n:4*n]
		for i := range n {
			e := dst[4*i : 4*i+4]
			e[0], e[1], e[2], e[3] = s0[i], s1[i], s2[i], s3[i]
		}
	case 8:
		// Gathering a byte from each plane measures faster here than the
		// byte transpose shuffle uses.
		s := src[:8*n]
		for i := range n {
			v := uint64(s[i]) | uint64(s[n+i])<<8 | uint64(s[2*n+i])<<16 | uint64(s[3*n+i])<<24 |
				uint64(s[4*n+i])<<32 | uint64(s[5*n+i])<<40 | uint64(s[6*n+i])<<48 | uint64(s[7*n+i])<<56
			binary.LittleEndian.PutUint64(dst[8*i:], v)
		}
	default:
		for j := range ts {
			row := src[j*n : (j+1)*n]
			for i, b := range row {
				dst[i*ts+j] = b
			}
		}
	}
	copy(dst[n*ts:], src[n*ts:])
}

// transpose8x8 transposes the 8×8 bit matrix held in x, row r being byte r
// and column c bit c: bit 8r+c moves to 8c+r.
func transpose8x8(x uint64) uint64 {
	t := (x ^ (x >> 7)) & 0x00AA00AA00AA00AA
	x ^= t ^ (t << 7)
	t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCC
	x ^= t ^ (t << 14)
	t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0
	x ^= t ^ (t << 28)
	return x
}

// bitShuffle writes the bit planes of the elements of src: plane 8j+k
// holds bit k of byte j of every element, one bit per element, least
// significant bit first. As c-blosc 1.x does, a block whose element count
// is not a multiple of eight is copied as it is, and so are bytes after
// the last element. tmp is scratch space of len(src). As a simple loop
// over the n elements:
//
//	for e := range n { for b := range 8*ts {
//		bit := src[e*ts+b/8]>>(b%8)&1
//		dst[(b*n+e)/8] |= bit << (e%8) } }
func bitShuffle(dst, src []byte, ts int, tmp []byte) {
	n := len(src) / ts
	if n == 0 || n%8 != 0 {
		copy(dst, src)
		return
	}
	grouped := n * ts
	shuffle(tmp[:grouped], src[:grouped], ts) // byte j of every element in row j
	rowBytes := n / 8
	for j := range ts {
		row := tmp[j*n : (j+1)*n]
		for g := range rowBytes {
			x := transpose8x8(binary.LittleEndian.Uint64(row[8*g:]))
			for k := range 8 {
				dst[(8*j+k)*rowBytes+g] = byte(x >> (8 * k))
			}
		}
	}
	copy(dst[grouped:], src[grouped:])
}

// bitUnshuffle inverts bitShuffle; tmp is scratch space of len(src).
func bitUnshuffle(dst, src []byte, ts int, tmp []byte) {
	n := len(src) / ts
	if n == 0 || n%8 != 0 {
		copy(dst, src)
		return
	}
	grouped := n * ts
	rowBytes := n / 8
	for j := range ts {
		row := tmp[j*n : (j+1)*n]
		for g := range rowBytes {
			var x uint64
			for k := range 8 {
				x |= uint64(src[(8*j+k)*rowBytes+g]) << (8 * k)
			}
			binary.LittleEndian.PutUint64(row[8*g:], transpose8x8(x))
		}
	}
	unshuffle(dst[:grouped], tmp[:grouped], ts)
	copy(dst[grouped:], src[grouped:])
}
