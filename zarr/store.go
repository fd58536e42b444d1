package zarr

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// Store is a key-value store holding the metadata documents and chunks of
// Zarr nodes. Keys are "/"-separated relative paths such as "x/zarr.json"
// or "x/c/1/0".
//
// Implementations are safe for concurrent use. Get returns a value the
// caller owns; Set does not retain value after it returns.
type Store interface {
	// Get returns the value stored under key. A missing key is an error
	// wrapping ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// Set stores value under key, replacing any previous value. It is
	// atomic per key: a concurrent reader sees the old or the new value,
	// never a part of one.
	Set(ctx context.Context, key string, value []byte) error
	// Delete removes key. A missing key is not an error.
	Delete(ctx context.Context, key string) error
}

// ReaderInto is implemented by stores that can read a value into a buffer
// the caller provides, so reading a chunk allocates nothing value-sized.
type ReaderInto interface {
	// GetInto reads the whole value stored under key into dst and returns
	// its length. A value longer than dst is an error wrapping ErrCorrupt;
	// a missing key is an error wrapping ErrNotFound.
	GetInto(ctx context.Context, key string, dst []byte) (int, error)
}

// Mapper is implemented by stores that can map a value into memory
// read-only instead of copying it (a local file on Linux: mmap), so that a
// raw chunk is read without a copy. The mapped bytes are the operating
// system's page cache, not the process's heap: the kernel may drop them
// under memory pressure and read them again on access.
type Mapper interface {
	// Map returns the value under key mapped read-only (PROT_READ: a write
	// through it faults, it never reaches the value) and the function that
	// unmaps it, which must be called once nothing uses the bytes. A
	// missing key wraps ErrNotFound. If the value is truncated while
	// mapped, touching the lost pages raises SIGBUS: callers touch the
	// bytes only on goroutines running with debug.SetPanicOnFault(true),
	// where that is a panic they recover.
	Map(ctx context.Context, key string) (data []byte, unmap func(), err error)
}

// DirectReader is implemented by stores that can read a value into a
// buffer bypassing the operating system's page cache (O_DIRECT on a local
// file): for data read once and larger than the cache, which would only
// evict other pages, this saves the copy out of the cache and the work of
// filling and reclaiming it. GetDirect reads the whole value under key
// into dst, which must be its exact size; it declines (false, nil) where
// it cannot (a missing key, another size, a file system or buffer
// alignment that does not allow it), and the caller then reads as usual.
type DirectReader interface {
	GetDirect(ctx context.Context, key string, dst []byte) (bool, error)
}

// DirectWriter is implemented by stores that can write a value bypassing
// the operating system's page cache (O_DIRECT on a local file): for data
// written once, not read back soon, and larger than the kernel lets wait
// in its cache before it paces writers to the disk, this saves the copy
// into the cache and the work of filling and reclaiming it, and keeps the
// disk busy from the first write instead of from the moment the cache is
// full. SetDirect stores value under key as Set does (atomically; not
// synced); it declines (false, nil) where it cannot (a file system or
// buffer alignment that does not allow it), and the caller then writes as
// usual.
type DirectWriter interface {
	SetDirect(ctx context.Context, key string, value []byte) (bool, error)
}

// Lister is implemented by stores that can enumerate their keys.
type Lister interface {
	// List returns the keys that start with prefix, sorted. The prefix is a
	// plain string prefix: "x/" lists the keys inside node "x".
	List(ctx context.Context, prefix string) ([]string, error)
}

// DirLister is implemented by stores that can list one level of keys, as
// a file system lists a directory (object stores do it with a delimiter).
type DirLister interface {
	// ListDir returns the keys directly under prefix ("" or a key prefix
	// ending in "/") and the sub-prefixes ("a/b/") holding more keys,
	// both sorted.
	ListDir(ctx context.Context, prefix string) (keys, dirs []string, err error)
}

// RangeGetter is implemented by stores that can read part of a value.
type RangeGetter interface {
	// GetRange returns up to length bytes of the value under key starting
	// at offset (length < 0 reads to the end). A range past the end of the
	// value is cut short, not an error; a missing key wraps ErrNotFound.
	GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error)
}

// SuffixGetter is implemented by stores that can read the end of a value
// (the index of a shard stored at its end).
type SuffixGetter interface {
	// GetSuffix returns the last n bytes of the value under key, all of
	// it when it is shorter. A missing key wraps ErrNotFound.
	GetSuffix(ctx context.Context, key string, n int64) ([]byte, error)
}

// Prefetcher is implemented by stores that can start reading a value
// ahead of the Get that needs it at no memory cost to the process: a local
// file store asks the kernel to read the file into its page cache, so the
// later read finds it there instead of waiting for the disk. Prefetch does
// not wait for the reads; it is advice, and a key it cannot prefetch is
// not an error (the read reports it).
type Prefetcher interface {
	Prefetch(ctx context.Context, key string) error
}

// RangePrefetcher is implemented by stores that can prefetch part of a
// value (see Prefetcher): the bytes [offset, offset+length), or to the end
// when length < 0.
type RangePrefetcher interface {
	PrefetchRange(ctx context.Context, key string, offset, length int64) error
}

// ResidencyReporter is implemented by stores that can tell how much of a
// value a read would find in memory without touching the disk: a local
// file store reports the fraction of the file's pages in the page cache.
// It is a hint for the order of reads, and reads nothing.
type ResidencyReporter interface {
	Resident(ctx context.Context, key string) (fraction float64, ok bool)
}

// OpenStore opens the store named by rawURL:
//
//   - "file:///abs/dir" or a plain local path (relative or absolute): a
//     directory on the local file system, created when the first value is
//     written. Values are written to a temporary file beside their target
//     and renamed into place, so writes are atomic per key; no side files
//     (".attrs") are written.
//   - "mem://name": an in-memory store shared by every OpenStore call with
//     the same name in this process; "mem://" alone opens a fresh private
//     store. A path after the name ("mem://name/sub") roots the store at
//     that prefix.
//   - "s3://bucket/prefix", and "gs://" and "azblob://" in builds with the
//     gcs and azure tags: object stores, configured by the environment;
//     OpenStoreWithOptions takes storage options.
//
// Release the store with Close.
func OpenStore(ctx context.Context, rawURL string) (Store, error) {
	return OpenStoreWithOptions(ctx, rawURL, nil)
}

func openFileStore(path string) (Store, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: empty store path", ErrInvalid)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%w: store path %q: %v", ErrInvalid, path, err)
	}
	return newFileStore(abs)
}

// Close releases the resources behind s (for example an open bucket). It
// does nothing for stores that hold none.
func Close(s Store) error {
	if c, ok := s.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// ValidateKey reports whether key is a valid store key: a non-empty
// "/"-separated relative path with no empty, "." or ".." segments, no
// backslash and no NUL. Errors wrap ErrInvalid.
func ValidateKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalid)
	}
	if strings.HasPrefix(key, "/") {
		return fmt.Errorf("%w: key %q is absolute", ErrInvalid, key)
	}
	if strings.ContainsAny(key, "\\\x00") {
		return fmt.Errorf("%w: key %q contains a backslash or NUL", ErrInvalid, key)
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch seg {
		case "":
			return fmt.Errorf("%w: key %q has an empty segment", ErrInvalid, key)
		case ".", "..":
			return fmt.Errorf("%w: key %q has a %q segment", ErrInvalid, key, seg)
		}
	}
	return nil
}

// validatePrefix checks a List prefix: "" or a key, optionally with a
// trailing "/".
func validatePrefix(prefix string) error {
	p := strings.TrimSuffix(prefix, "/")
	if p == "" {
		if prefix != "" {
			return fmt.Errorf("%w: list prefix %q", ErrInvalid, prefix)
		}
		return nil
	}
	return ValidateKey(p)
}

// cleanNodePath checks a node path: "" (the store root) or a key. Leading
// and trailing slashes are removed first.
func cleanNodePath(path string) (string, error) {
	p := strings.Trim(path, "/")
	if p == "" {
		return "", nil
	}
	if err := ValidateKey(p); err != nil {
		return "", fmt.Errorf("%w: node path %q", ErrInvalid, path)
	}
	return p, nil
}
