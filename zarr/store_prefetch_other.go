//go:build !linux

package zarr

import "context"

// Prefetch implements Prefetcher; off Linux it does nothing (the reads
// that follow go to the file as they would without it).
func (s *fileStore) Prefetch(ctx context.Context, key string) error { return nil }

// PrefetchRange implements RangePrefetcher; off Linux it does nothing.
func (s *fileStore) PrefetchRange(ctx context.Context, key string, offset, length int64) error {
	return nil
}
