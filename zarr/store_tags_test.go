//go:build gcs || azure

package zarr_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cubego/cubego/zarr"
)

// TestTaggedStoreOptions checks the option handling of the object stores
// that build tags compile in; it sends no request.
func TestTaggedStoreOptions(t *testing.T) {
	ctx := context.Background()
	for _, scheme := range []string{"gs", "azblob"} {
		if _, err := zarr.OpenStoreWithOptions(ctx, scheme+"://bucket/p", map[string]any{"bogus": 1}); err != nil &&
			!errors.Is(err, zarr.ErrInvalid) && !errors.Is(err, zarr.ErrNotImplemented) {
			t.Errorf("%s with an unknown option: %v", scheme, err)
		}
	}
}
