//go:build !linux

package zarr

import "context"

// GetDirect implements DirectReader; off Linux it always declines.
func (s *fileStore) GetDirect(ctx context.Context, key string, dst []byte) (bool, error) {
	return false, nil
}

// SetDirect implements DirectWriter; off Linux it always declines.
func (s *fileStore) SetDirect(ctx context.Context, key string, value []byte) (bool, error) {
	return false, nil
}
