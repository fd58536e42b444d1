//go:build !linux

package zarr

import "context"

// GetDirect implements DirectReader; off Linux it always declines.
func (s *fileStore) GetDirect(ctx context.Context, key string, dst []byte) (bool, error) {
	return false, nil
}
