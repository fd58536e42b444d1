package zarr

import (
	"context"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Resident implements ResidencyReporter: the fraction of the pages of the
// key's file that are in the page cache. A missing or empty file reports
// false.
func (s *fileStore) Resident(ctx context.Context, key string) (float64, bool) {
	f, size, err := s.open(ctx, "resident", key)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	in, pages, err := residentPages(f, size)
	if err != nil || pages == 0 {
		return 0, false
	}
	return float64(in) / float64(pages), true
}

// residentPages counts the pages of the first size bytes of f that are in
// the page cache: by cachestat(2) (cachedPages) where the kernel has it,
// else by mincore over a read-only mapping, which reads nothing but maps
// the whole file and costs a byte per page.
func residentPages(f *os.File, size int64) (in, pages int, err error) {
	if size == 0 {
		return 0, 0, nil
	}
	if in, pages, ok := cachedPages(f, 0, size); ok {
		return int(min(in, pages)), int(pages), nil
	}
	return mincorePages(f, size)
}

// mincorePages is residentPages by mincore.
func mincorePages(f *os.File, size int64) (in, pages int, err error) {
	if size != int64(int(size)) {
		return 0, 0, fmt.Errorf("zarr: %s: %d bytes do not fit a mapping", f.Name(), size)
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return 0, 0, err
	}
	defer unix.Munmap(m)
	ps := unix.Getpagesize()
	vec := make([]byte, (len(m)+ps-1)/ps)
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		return 0, 0, errno
	}
	for _, v := range vec {
		in += int(v & 1)
	}
	return in, len(vec), nil
}
