//go:build cgo && !purezstd

package zarr

import (
	"fmt"
	"strings"

	dd "github.com/DataDog/zstd"
)

// When cgo is on and the purezstd build tag is not set (the default build
// of the library), the zstd codec compresses and decompresses with
// libzstd, the reference C library, which github.com/DataDog/zstd compiles
// from its bundled sources (no system library needed, only cgo). On this machine it decodes 2.8× and encodes
// 1.6× faster than klauspost/compress (docs/zarr.md). Frames with a
// checksum are still written by klauspost (DataDog/zstd's one-shot API has
// no checksum flag); libzstd verifies checksums when it reads them.
const useLibzstd = true

// libzstdCompress appends one frame of src at level to dst.
func libzstdCompress(dst, src []byte, level int) ([]byte, error) {
	bound := dd.CompressBound(len(src))
	if cap(dst)-len(dst) < bound {
		grown := make([]byte, len(dst), len(dst)+bound)
		copy(grown, dst)
		dst = grown
	}
	out, err := dd.CompressLevel(dst[len(dst):len(dst)+bound], src, level)
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	return dst[:len(dst)+len(out)], nil
}

// libzstdDecompress decodes the frames of src into dst (both non-empty),
// refusing output beyond len(dst).
func libzstdDecompress(dst, src []byte) (int, error) {
	n, err := dd.DecompressInto(dst, src)
	if err != nil {
		if strings.Contains(err.Error(), "too small") {
			return 0, fmt.Errorf("zstd: decoded data exceeds %d bytes", len(dst))
		}
		return 0, fmt.Errorf("zstd: %w", err)
	}
	return n, nil
}
