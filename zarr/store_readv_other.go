//go:build !linux

package zarr

import (
	"os"
	"syscall"
)

// readAtv fills bufs from f's bytes starting at off, in order and without
// gaps, one positioned read per buffer.
func readAtv(f *os.File, bufs [][]byte, off int64) error {
	for _, b := range bufs {
		if _, err := f.ReadAt(b, off); err != nil {
			return err
		}
		off += int64(len(b))
	}
	return nil
}

// readCachedAt reports false: without RWF_NOWAIT reads, whether bytes are
// cached is not known.
func readCachedAt(rc syscall.RawConn, b []byte, off int64) bool { return false }
