package plan

import (
	"fmt"
	"math"
	"math/big"
	"strings"
)

// MaxBlocks is the most block sizes the chunking of one array may list,
// over all its axes together (4,194,304: 32 MiB of sizes in Go, and what
// Python's Array.chunks tuple can hold without using gigabytes).
//
// A chunking is a list of block sizes per axis, so its size is the sum of
// the axes' block counts, not their product: a 10⁶ × 10⁶ grid of 10¹²
// blocks lists 2·10⁶ sizes and is described cheaply; it is refused only if
// it is run and needs more memory than allowed. One axis of 2³⁵ blocks
// (shape [2**35], chunks [1]) would list 2³⁵ sizes (256 GiB), so it is
// refused here, before anything is allocated, with an error saying to
// choose larger chunks.
const MaxBlocks = 1 << 22

// BlockCount returns the number of blocks of size c that cover an axis of
// n elements (a zero-length axis has one block, of size 0). c must be
// positive when n is.
func BlockCount(n, c int) int {
	if n == 0 || c >= n {
		return 1
	}
	k := n / c
	if n%c != 0 {
		k++
	}
	return k
}

// RegularChunks returns blocks of size c covering n elements, the last one
// possibly smaller. It refuses, before allocating them, more than
// MaxBlocks blocks, and a chunk size below 1 for a non-empty axis.
func RegularChunks(n, c int) ([]int, error) {
	if n < 0 {
		return nil, Errorf(ErrValue, "negative dimensions are not allowed: an axis of length %d", n)
	}
	if n == 0 {
		return []int{0}, nil
	}
	if c < 1 {
		return nil, Errorf(ErrValue, "chunk size must be positive, got %d for an axis of length %d", c, n)
	}
	if c >= n {
		return []int{n}, nil
	}
	k := BlockCount(n, c)
	if k > MaxBlocks {
		return nil, Errorf(ErrValue, "chunks of %d along an axis of length %d make %d blocks, more than the %d blocks an array may have (over all its axes); choose larger chunks",
			c, n, k, MaxBlocks)
	}
	out := make([]int, 0, k)
	for s := 0; s < n; s += c {
		out = append(out, min(c, n-s))
	}
	return out, nil
}

// CheckShape refuses a negative dimension, and a shape whose number of
// elements, or of bytes with items of itemSize bytes, overflows int64.
func CheckShape(shape []int, itemSize int) error {
	for _, n := range shape {
		if n < 0 {
			return Errorf(ErrValue, "negative dimensions are not allowed: shape %s", shapeText(shape))
		}
	}
	if _, ok := ProdChecked(shape); !ok {
		return Errorf(ErrValue, "shape %s has %s elements: the number of elements overflows int64",
			shapeText(shape), bigProd(shape, 1))
	}
	if _, ok := ProdChecked(append([]int{max(itemSize, 1)}, shape...)); !ok {
		return Errorf(ErrValue, "shape %s of %d-byte items has %s bytes: the size in bytes overflows int64",
			shapeText(shape), itemSize, bigProd(shape, itemSize))
	}
	return nil
}

// CheckGrid checks that chunks is a chunking of an array of shape with
// items of itemSize bytes that cubego can represent: a list of
// non-negative block sizes per axis that sum to the axis length (positive
// ones for a non-empty axis), at most MaxBlocks of them over all axes, and
// a shape, size in bytes and number of blocks that fit in int64. Every
// array cubego builds passes it; arrays decoded from JSON are checked
// with it.
func CheckGrid(shape []int, chunks [][]int, itemSize int) error {
	if err := CheckShape(shape, itemSize); err != nil {
		return err
	}
	if len(chunks) != len(shape) {
		return Errorf(ErrValue, "chunks have %d axes but shape %s has %d", len(chunks), shapeText(shape), len(shape))
	}
	total := 0
	for d, c := range chunks {
		total += len(c)
		if total > MaxBlocks {
			return Errorf(ErrValue, "shape %s with chunks of %s has more than %d blocks along its axes together (the most an array may have); choose larger chunks",
				shapeText(shape), chunkShapeText(chunks), MaxBlocks)
		}
		if len(c) == 0 {
			return Errorf(ErrValue, "chunks for axis %d of shape %s are empty (a zero-length axis has the single block 0)", d, shapeText(shape))
		}
		sum := 0
		for _, b := range c {
			if b < 0 || (b == 0 && shape[d] != 0) || b > shape[d]-sum {
				return Errorf(ErrValue, "chunks for axis %d do not cover its length %d with positive block sizes (shape %s)", d, shape[d], shapeText(shape))
			}
			sum += b
		}
		if sum != shape[d] {
			return Errorf(ErrValue, "chunks for axis %d sum to %d, not the axis length %d", d, sum, shape[d])
		}
	}
	nb := make([]int, len(chunks))
	for d, c := range chunks {
		nb[d] = len(c)
	}
	if _, ok := ProdChecked(nb); !ok {
		return Errorf(ErrValue, "shape %s with chunks of %s has %s blocks: the number of blocks overflows int64",
			shapeText(shape), chunkShapeText(chunks), bigProd(nb, 1))
	}
	return nil
}

// ProdChecked returns the product of non-negative ints as int64, and
// false when it overflows int64 (a zero factor makes it 0, however large
// the others).
func ProdChecked(xs []int) (int64, bool) {
	for _, x := range xs {
		if x == 0 {
			return 0, true
		}
	}
	p := int64(1)
	for _, x := range xs {
		if x < 0 {
			return 0, false
		}
		if p > math.MaxInt64/int64(x) {
			return 0, false
		}
		p *= int64(x)
	}
	return p, true
}

// MulSat returns a·b for non-negative a and b, or math.MaxInt64 when the
// product overflows: for byte counts compared with a budget.
func MulSat(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

func bigProd(xs []int, by int) string {
	p := big.NewInt(int64(by))
	for _, x := range xs {
		p.Mul(p, big.NewInt(int64(x)))
	}
	return p.String()
}

// shapeText renders a shape as Python does: (3,), (2, 4), ().
func shapeText(shape []int) string {
	parts := make([]string, len(shape))
	for i, n := range shape {
		parts[i] = fmt.Sprint(n)
	}
	if len(shape) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// chunkShapeText renders a chunking by its largest block per axis.
func chunkShapeText(chunks [][]int) string {
	cs := make([]int, len(chunks))
	for i, c := range chunks {
		cs[i] = MaxChunk(c)
	}
	return shapeText(cs)
}
