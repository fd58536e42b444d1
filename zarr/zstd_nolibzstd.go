//go:build !cgo || purezstd

package zarr

import "errors"

// Without cgo, or with the purezstd build tag, the zstd codec is
// klauspost/compress alone (useLibzstd is false, so these are never
// called).
const useLibzstd = false

var errNoLibzstd = errors.New("zstd: libzstd is not compiled in (cgo off or build tag purezstd)")

func libzstdCompress(dst, src []byte, level int) ([]byte, error) { return nil, errNoLibzstd }

func libzstdDecompress(dst, src []byte) (int, error) { return 0, errNoLibzstd }
