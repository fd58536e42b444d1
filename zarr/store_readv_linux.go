package zarr

import (
	"errors"
	"io"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// maxIovecs is the most buffers one preadv call takes (Linux's IOV_MAX).
const maxIovecs = 1024

// readAtv fills bufs from f's bytes starting at off, in order and without
// gaps, with as few preadv calls as IOV_MAX allows: a box read of many
// short runs that are adjacent in the file and scattered in memory (a
// band of rows of a C-order chunk going into a wider block) costs one
// system call and one copy instead of one call per run or a copy through
// a scratch buffer. Bytes in the page cache are read without blocking
// first (readCached), the rest with a blocking read.
func readAtv(f *os.File, bufs [][]byte, off int64) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	for len(bufs) > 0 && len(bufs[0]) == 0 {
		bufs = bufs[1:]
	}
	for len(bufs) > 0 {
		batch := bufs[:min(len(bufs), maxIovecs)]
		var n int
		var rerr error
		if m := readCached(rc, batch, off); m > 0 {
			n = m
		} else if err := rc.Read(func(fd uintptr) bool {
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

// maxCachedRead is the most bytes one non-blocking read (readCached)
// copies: about 0.6 ms at this host's 6–7 GB/s per core, so that the
// goroutine's P, which the read holds, is back soon enough for a garbage
// collection waiting to stop the world.
const maxCachedRead = 4 << 20

// noNowait is set once the kernel is found to refuse RWF_NOWAIT reads.
var noNowait atomic.Bool

// readCached reads into bufs, from off, up to maxCachedRead of the bytes
// that are in the page cache (preadv2 with RWF_NOWAIT, Linux 4.14 and
// later), and returns how many it read: 0 when the first page is not
// cached, the kernel refuses the flag or the read fails (the blocking
// read that follows then reads, or reports, them).
//
// The call is a raw system call, which the Go scheduler does not see: a
// read from the page cache is a copy that never waits, so the goroutine
// keeps its P through it. Through the scheduler's system call (Syscall)
// a read longer than 20 µs has its P handed to another thread, and
// returns to find it gone. A task folding 1 MiB bands of cached chunks
// (W4's swap-axes sum) made that handoff and the wakeups after it for
// each band: 1.7 of 2 cores stayed busy and the case took 3.08–3.40 s;
// reading through readCached, 1.95 were and it took 2.03–2.28 s.
func readCached(rc syscall.RawConn, bufs [][]byte, off int64) int {
	if noNowait.Load() {
		return 0
	}
	iov := make([]unix.Iovec, 0, min(len(bufs), maxIovecs))
	total := 0
	for _, b := range bufs {
		if len(iov) == cap(iov) || total == maxCachedRead {
			break
		}
		if len(b) == 0 {
			continue
		}
		b = b[:min(len(b), maxCachedRead-total)]
		v := unix.Iovec{Base: &b[0]}
		v.SetLen(len(b))
		iov = append(iov, v)
		total += len(b)
	}
	if len(iov) == 0 {
		return 0
	}
	var r uintptr
	var e syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		r, _, e = unix.RawSyscall6(unix.SYS_PREADV2, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)),
			uintptr(off), uintptr(uint64(off)>>32>>32), unix.RWF_NOWAIT)
	}); err != nil {
		return 0
	}
	runtime.KeepAlive(iov)
	runtime.KeepAlive(bufs)
	switch e {
	case 0:
		return int(r)
	case unix.EOPNOTSUPP, unix.ENOSYS: // the flag, or preadv2 itself, unknown
		noNowait.Store(true)
	}
	return 0
}

// readCachedAt fills b with f's bytes from off if they are all in the page
// cache, with non-blocking reads (readCached), and reports whether it did.
func readCachedAt(rc syscall.RawConn, b []byte, off int64) bool {
	for len(b) > 0 {
		n := readCached(rc, [][]byte{b}, off)
		if n == 0 {
			return false
		}
		b, off = b[n:], off+int64(n)
	}
	return true
}
