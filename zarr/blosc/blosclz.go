package blosc

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The blosclz stream format (a FastLZ level 2 variant): a sequence of
// instructions, the first always a literal run.
//
//	literal  000LLLLL, then L+1 bytes copied as they are
//	match    LLLDDDDD [ext...] dddddddd: a copy of a previous part of the
//	         output. LLL in 1..6 gives a length LLL+2; LLL = 7 means the
//	         length is 9 plus the extension bytes, read while they are 255.
//	         The distance back is (DDDDD<<8 | dddddddd) + 1, up to 8191;
//	         DDDDD = 31 with dddddddd = 255 marks a far match whose
//	         distance is the next two bytes (big-endian) plus 8192.
//
// The first byte's top three bits are ignored (FastLZ keeps its level
// there).

const (
	blosclzMaxDistance = 8191
	blosclzMaxFar      = 65535 + blosclzMaxDistance
	blosclzHashLog     = 14
	blosclzMinMatch    = 4
	blosclzTail        = 12 // the last bytes are always literals
)

var errBloscLZ = errors.New("blosclz: invalid stream")

// decodeBloscLZ decodes a blosclz stream that must fill dst exactly.
func decodeBloscLZ(dst, src []byte) error {
	if len(src) == 0 {
		if len(dst) == 0 {
			return nil
		}
		return fmt.Errorf("%w: empty", errBloscLZ)
	}
	ip, op := 1, 0
	ctrl := int(src[0] & 31)
	for {
		if ctrl >= 32 {
			length := ctrl>>5 - 1
			ofs := (ctrl & 31) << 8
			if length == 6 {
				for {
					if ip >= len(src) {
						return fmt.Errorf("%w: truncated match length", errBloscLZ)
					}
					code := int(src[ip])
					ip++
					length += code
					if code != 255 {
						break
					}
					if length > len(dst) {
						return fmt.Errorf("%w: match longer than the output", errBloscLZ)
					}
				}
			}
			if ip >= len(src) {
				return fmt.Errorf("%w: truncated match", errBloscLZ)
			}
			code := int(src[ip])
			ip++
			length += 3
			dist := ofs + code + 1
			if code == 255 && ofs == 31<<8 {
				if ip+2 > len(src) {
					return fmt.Errorf("%w: truncated far match", errBloscLZ)
				}
				dist = int(binary.BigEndian.Uint16(src[ip:])) + blosclzMaxDistance + 1
				ip += 2
			}
			if dist > op {
				return fmt.Errorf("%w: match distance %d before the start", errBloscLZ, dist)
			}
			if op+length > len(dst) {
				return fmt.Errorf("%w: output longer than %d bytes", errBloscLZ, len(dst))
			}
			ref := op - dist
			if dist >= length {
				copy(dst[op:op+length], dst[ref:ref+length])
			} else {
				for i := range length {
					dst[op+i] = dst[ref+i]
				}
			}
			op += length
		} else {
			n := ctrl + 1
			if op+n > len(dst) {
				return fmt.Errorf("%w: output longer than %d bytes", errBloscLZ, len(dst))
			}
			if ip+n > len(src) {
				return fmt.Errorf("%w: truncated literal run", errBloscLZ)
			}
			copy(dst[op:], src[ip:ip+n])
			op += n
			ip += n
		}
		if ip >= len(src) {
			break
		}
		ctrl = int(src[ip])
		ip++
	}
	if op != len(dst) {
		return fmt.Errorf("%w: decoded %d bytes, want %d", errBloscLZ, op, len(dst))
	}
	return nil
}

// blosclzCompress writes a blosclz stream of src into dst (its whole
// length is the limit) with a greedy hash-chain-free LZ77 search, and
// returns its length, or 0 when it does not fit. level only matters in
// that level 1 searches less.
func blosclzCompress(dst, src []byte, level int) int {
	n := len(src)
	if n < blosclzTail+blosclzMinMatch {
		return literalsOnly(dst, src)
	}
	var table [1 << blosclzHashLog]int32
	for i := range table {
		table[i] = -1
	}
	hash := func(p int) int {
		return int(binary.LittleEndian.Uint32(src[p:]) * 2654435761 >> (32 - blosclzHashLog))
	}
	op := 0
	anchor := 0
	limit := n - blosclzTail
	step := 1
	if level <= 1 {
		step = 2
	}
	for ip := 0; ip < limit; {
		h := hash(ip)
		cand := int(table[h])
		table[h] = int32(ip)
		dist := ip - cand
		if cand < 0 || dist > blosclzMaxFar || ip == 0 ||
			binary.LittleEndian.Uint32(src[cand:]) != binary.LittleEndian.Uint32(src[ip:]) {
			ip += step
			continue
		}
		length := blosclzMinMatch
		for ip+length < limit && src[cand+length] == src[ip+length] {
			length++
		}
		if dist > blosclzMaxDistance && length < 5 {
			ip += step
			continue // a far match costs two more bytes
		}
		var ok bool
		if op, ok = emitLiterals(dst, op, src[anchor:ip]); !ok {
			return 0
		}
		if op, ok = emitMatch(dst, op, length, dist); !ok {
			return 0
		}
		ip += length
		anchor = ip
		if ip < limit {
			table[hash(ip-1)] = int32(ip - 1)
		}
	}
	op, ok := emitLiterals(dst, op, src[anchor:])
	if !ok {
		return 0
	}
	return op
}

func literalsOnly(dst, src []byte) int {
	op, ok := emitLiterals(dst, 0, src)
	if !ok {
		return 0
	}
	return op
}

// emitLiterals writes lit as literal runs of at most 32 bytes.
func emitLiterals(dst []byte, op int, lit []byte) (int, bool) {
	for len(lit) > 0 {
		k := min(len(lit), 32)
		if op+1+k > len(dst) {
			return op, false
		}
		dst[op] = byte(k - 1)
		copy(dst[op+1:], lit[:k])
		op += 1 + k
		lit = lit[k:]
	}
	return op, true
}

// emitMatch writes a match of length ≥ 3 at distance dist ≥ 1.
func emitMatch(dst []byte, op, length, dist int) (int, bool) {
	d := dist - 1
	l := length - 2
	far := d >= blosclzMaxDistance
	if far {
		d -= blosclzMaxDistance
	}
	need := 2 + l/255 + 3
	if op+need > len(dst) {
		return op, false
	}
	hi := d >> 8
	if far {
		hi = 31
	}
	if l < 7 {
		dst[op] = byte(l<<5 | hi)
		op++
	} else {
		dst[op] = byte(7<<5 | hi)
		op++
		for l -= 7; l >= 255; l -= 255 {
			dst[op] = 255
			op++
		}
		dst[op] = byte(l)
		op++
	}
	if far {
		dst[op] = 255
		dst[op+1] = byte(d >> 8)
		dst[op+2] = byte(d)
		return op + 3, true
	}
	dst[op] = byte(d)
	return op + 1, true
}
