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
	// ErrIO means a store could not be read or written: a local file
	// system error, something other than a regular file at a key (a
	// directory, a FIFO, a device), or an object store's failure.
	// ErrTimeout, ErrUnavailable and ErrPermission are kinds of it.
	ErrIO = errors.New("zarr: storage error")
	// ErrTimeout means a storage request made no progress within the
	// store's timeout (storage option "timeout"), on every attempt.
	ErrTimeout = fmt.Errorf("%w: timed out", ErrIO)
	// ErrUnavailable means a store could not be reached, or kept failing
	// with transient errors (connection refused or reset, HTTP 5xx,
	// throttling) after its retries (storage option "retries").
	ErrUnavailable = fmt.Errorf("%w: unavailable", ErrIO)
	// ErrPermission means the store refused access to a key.
	ErrPermission = fmt.Errorf("%w: permission denied", ErrIO)
	// ErrMissingChunk means a chunk key is missing from an array whose
	// chunks must all exist (Array.SetMissingChunksAreErrors): an
	// intermediate deleted while it was in use. It wraps ErrNotFound.
	ErrMissingChunk = fmt.Errorf("%w: missing chunk", ErrNotFound)
)
