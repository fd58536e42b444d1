package zarr

import (
	"errors"
	"fmt"
)

// Sentinel errors of the zarr package; wrap them with fmt.Errorf("%w: ...").
var (
	// ErrNotFound means a key, array or group does not exist. A missing
	// chunk key is not an error for readers: it reads as the fill value.
	ErrNotFound = errors.New("zarr: not found")
	// ErrNotImplemented means valid Zarr that this package does not support
	// (a data type, codec or extension), named in the wrapped message.
	ErrNotImplemented = errors.New("zarr: not implemented")
	// ErrInvalid means malformed metadata, configuration or arguments.
	ErrInvalid = errors.New("zarr: invalid")
	// ErrCorrupt means stored bytes that cannot be decoded.
	ErrCorrupt = errors.New("zarr: corrupt data")
	// ErrMissingChunk means a chunk key is missing from an array whose
	// chunks must all exist (Array.SetMissingChunksAreErrors): an
	// intermediate deleted while it was in use. It wraps ErrNotFound.
	ErrMissingChunk = fmt.Errorf("%w: missing chunk", ErrNotFound)
)
