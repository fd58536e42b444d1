package zarr

import (
	"math/bits"
	"sync"
)

// Scratch buffers for encoded chunks come from pools of size classes
// spaced a quarter of a power of two apart (4 KiB, 5 KiB, 6 KiB, 7 KiB,
// 8 KiB, 10 KiB, ...), so a buffer is at most 25% larger than asked for
// and chunks of similar sizes share buffers.

const minPoolSize = 4 << 10

var bufferPools [4 * 64]sync.Pool

// sizeClass returns the pool index and buffer capacity for n bytes.
func sizeClass(n int) (class, size int) {
	if n <= minPoolSize {
		n = minPoolSize
	}
	e := bits.Len(uint(n-1)) - 1 // 2^e < n ≤ 2^(e+1)
	step := 1 << (e - 2)
	q := (n - 1 - 1<<e) / step // 0..3
	return 4*e + q, 1<<e + (q+1)*step
}

// getBuffer returns a buffer of length n from the pool. Return it with
// putBuffer; the caller may replace *b with a grown slice first.
func getBuffer(n int) *[]byte {
	class, size := sizeClass(n)
	if b, ok := bufferPools[class].Get().(*[]byte); ok {
		*b = (*b)[:n]
		return b
	}
	b := make([]byte, n, size)
	return &b
}

// putBuffer returns b to the pool of the largest class its capacity
// fills.
func putBuffer(b *[]byte) {
	c := cap(*b)
	if c < minPoolSize {
		return
	}
	class, size := sizeClass(c)
	if size > c { // c lies inside a class: file it one class down
		class--
	}
	*b = (*b)[:0]
	bufferPools[class].Put(b)
}
