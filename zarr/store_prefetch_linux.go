package zarr

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Prefetch implements Prefetcher: it asks the kernel to read the key's
// file into the page cache (posix_fadvise POSIX_FADV_WILLNEED), which
// starts the reads and returns without waiting for them to complete. A
// missing key, or anything but a regular file at it, is skipped: the read
// that follows reports it.
//
// The kernel reads at most its readahead limit per call (the larger of the
// device's read_ahead_kb and max_sectors_kb: 8 MiB of a 32 MiB chunk on a
// disk with the usual limits of a cloud volume), so a file is advised in
// windows of that size, one call each.
func (s *fileStore) Prefetch(ctx context.Context, key string) error {
	return s.PrefetchRange(ctx, key, 0, -1)
}

// PrefetchRange implements RangePrefetcher: Prefetch of the bytes
// [offset, offset+length) of the key's file (length < 0: to its end).
func (s *fileStore) PrefetchRange(ctx context.Context, key string, offset, length int64) error {
	f, size, done, err := s.openShared(ctx, "prefetch", key)
	if err != nil {
		return nil
	}
	defer done()
	end := size
	if length >= 0 {
		end = min(size, offset+length)
	}
	if offset = max(offset, 0); offset >= end || allCached(f, offset, end-offset) {
		return nil
	}
	step := int64(prefetchWindow(f))
	for off := offset; off < end; off += step {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := unix.Fadvise(int(f.Fd()), off, min(step, end-off), unix.FADV_WILLNEED); err != nil {
			return s.err("prefetch", key, err)
		}
	}
	return nil
}

// allCached reports whether every page of the n bytes of f from off is
// in the page cache, so advising them would read nothing: WILLNEED looks
// each page up in the cache one by one (some 60 µs for 4 MiB cached),
// cachestat walks the cache's entries in order (some 6 µs), so a prefetch
// of cached data, as when a task reads bands of warm chunks, costs
// little. False when unknown (an older kernel: the advice is then always
// given).
func allCached(f *os.File, off, n int64) bool {
	in, pages, ok := cachedPages(f, off, n)
	return ok && in >= pages
}

// cachedPages counts the pages of the n bytes of f from off that are in
// the page cache, and the pages of the range, with cachestat(2) (Linux
// 6.5 and later); ok is false where the kernel lacks it.
func cachedPages(f *os.File, off, n int64) (in, pages int64, ok bool) {
	if noCachestat.Load() {
		return 0, 0, false
	}
	var st unix.Cachestat_t
	err := unix.Cachestat(uint(f.Fd()), &unix.CachestatRange{Off: uint64(off), Len: uint64(n)}, &st, 0)
	if err != nil {
		if errors.Is(err, unix.ENOSYS) {
			noCachestat.Store(true)
		}
		return 0, 0, false
	}
	ps := int64(unix.Getpagesize())
	return int64(st.Cache), (off+n+ps-1)/ps - off/ps, true
}

// noCachestat is set once cachestat(2) is found missing.
var noCachestat atomic.Bool

// minPrefetchWindow is the window when the device's limits are unknown:
// the kernel's default readahead, which every device reads in one call.
const minPrefetchWindow = 128 << 10

var prefetchWindows sync.Map // device number → window in bytes

// prefetchWindow returns the most bytes of f one WILLNEED call reads: the
// larger of read_ahead_kb and max_sectors_kb of the device holding it
// (from /sys/dev/block, the partition's disk for a partition), at least
// minPrefetchWindow, looked up once per device.
func prefetchWindow(f *os.File) int {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return minPrefetchWindow
	}
	if w, ok := prefetchWindows.Load(st.Dev); ok {
		return w.(int)
	}
	w := minPrefetchWindow
	dev := fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	for _, q := range []string{dev + "/queue", dev + "/../queue"} {
		ra, err1 := readSysKB(q + "/read_ahead_kb")
		io, err2 := readSysKB(q + "/max_sectors_kb")
		if err1 == nil || err2 == nil {
			w = max(w, ra, io)
			break
		}
	}
	prefetchWindows.Store(st.Dev, w)
	return w
}

// readSysKB reads a sysfs file holding a size in KiB and returns bytes.
func readSysKB(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	kb, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || kb < 0 {
		return 0, fmt.Errorf("zarr: %s: %q is not a size", path, b)
	}
	return min(kb, 1<<20) << 10, nil
}
