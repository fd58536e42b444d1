package zarr

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// maxIovecs is the most buffers one preadv call takes (Linux's IOV_MAX).
const maxIovecs = 1024

// readAtv fills bufs from f's bytes starting at off, in order and without
// gaps, with as few preadv calls as IOV_MAX allows: a box read of many
// short runs that are adjacent in the file and scattered in memory (a
// band of rows of a C-order chunk going into a wider block) costs one
// system call and one copy instead of one call per run or a copy through
// a scratch buffer.
func readAtv(f *os.File, bufs [][]byte, off int64) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	for len(bufs) > 0 {
		batch := bufs[:min(len(bufs), maxIovecs)]
		var n int
		var rerr error
		if err := rc.Read(func(fd uintptr) bool {
			for {
				n, rerr = unix.Preadv(int(fd), batch, off)
				if !errors.Is(rerr, unix.EINTR) {
					return true
				}
			}
		}); err != nil {
			return err
		}
		if rerr != nil {
			return rerr
		}
		if n == 0 {
			return io.ErrUnexpectedEOF
		}
		off += int64(n)
		// Drop the buffers filled; a short read leaves a partly filled one.
		for n > 0 && len(bufs) > 0 {
			if n < len(bufs[0]) {
				bufs = append([][]byte{bufs[0][n:]}, bufs[1:]...)
				n = 0
				break
			}
			n -= len(bufs[0])
			bufs = bufs[1:]
		}
		for len(bufs) > 0 && len(bufs[0]) == 0 {
			bufs = bufs[1:]
		}
	}
	return nil
}
