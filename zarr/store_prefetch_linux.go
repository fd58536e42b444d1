package zarr

import (
	"context"

	"golang.org/x/sys/unix"
)

// Prefetch implements Prefetcher: it asks the kernel to read the key's
// file into the page cache (posix_fadvise POSIX_FADV_WILLNEED on the whole
// file), which starts the reads and returns without waiting for them. A
// missing key, or anything but a regular file at it, is skipped: the read
// that follows reports it.
func (s *fileStore) Prefetch(ctx context.Context, key string) error {
	f, _, err := s.open(ctx, "prefetch", key)
	if err != nil {
		return nil
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_WILLNEED); err != nil {
		return s.err("prefetch", key, err)
	}
	return nil
}
