//go:build !linux

package zarr

import "context"

// Resident implements ResidencyReporter; off Linux it reports nothing.
func (s *fileStore) Resident(ctx context.Context, key string) (float64, bool) { return 0, false }
