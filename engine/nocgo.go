//go:build !cgo

package engine

import "github.com/apache/arrow-go/v18/arrow/memory"

// cubego needs cgo: chunk buffers are C memory (Arrow's mallocator, see
// malloc.go), so that a freed buffer leaves the process at once and RSS
// follows the projected memory. Without cgo the build fails here, with an
// error whose identifier says what to do; there is deliberately no pure-Go
// fallback, whose memory the Go heap would keep.
func newCAllocator() memory.Allocator {
	return cubego_requires_cgo__build_with_CGO_ENABLED_1_and_a_C_compiler
}
