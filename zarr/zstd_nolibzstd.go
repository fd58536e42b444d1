//go:build !libzstd

package zarr

import "errors"

// Without the libzstd build tag the zstd codec is klauspost/compress alone
// (useLibzstd is false, so these are never called).
const useLibzstd = false

var errNoLibzstd = errors.New("zstd: libzstd is not compiled in (build tag libzstd)")

func libzstdCompress(dst, src []byte, level int) ([]byte, error) { return nil, errNoLibzstd }

func libzstdDecompress(dst, src []byte) (int, error) { return 0, errNoLibzstd }
