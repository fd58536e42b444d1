package zarr

import (
	"context"
	"fmt"
	"math"

	"golang.org/x/sys/unix"
)

var _ Mapper = (*fileStore)(nil)

// Map implements Mapper: the key's file mapped read-only and shared
// (MAP_SHARED with PROT_READ, so nothing can be written through it), with
// MAP_POPULATE, so the pages are mapped at once: the call reads what is
// not in the page cache yet, as a read would, and later accesses take no
// page faults. The file is closed before returning (the mapping keeps
// it). An empty file maps to an empty slice.
//
// The file store writes a value to a temporary file renamed over its key
// (and so does zarr-python's LocalStore), so a mapped file is replaced,
// never truncated, by such writers; another program truncating it in place
// makes the lost pages raise SIGBUS (see Mapper).
func (s *fileStore) Map(ctx context.Context, key string) ([]byte, func(), error) {
	f, size, err := s.open(ctx, "map", key)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if size == 0 {
		return []byte{}, func() {}, nil
	}
	if size > math.MaxInt {
		return nil, nil, fmt.Errorf("%w: key %q in store %s holds %d bytes, too many to map", ErrInvalid, key, s, size)
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, nil, s.err("map", key, err)
	}
	return b, func() { _ = unix.Munmap(b) }, nil
}
