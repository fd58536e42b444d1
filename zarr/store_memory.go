package zarr

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// memoryStore is a Store in a Go map, safe for concurrent use.
type memoryStore struct {
	mu sync.RWMutex
	m  map[string][]byte
}

// NewMemoryStore returns an empty in-memory store, safe for concurrent use.
// It also implements ReaderInto, Lister, RangeGetter and SuffixGetter. Values are copied
// in and out, so callers may reuse their buffers.
func NewMemoryStore() Store {
	return &memoryStore{m: make(map[string][]byte)}
}

func (s *memoryStore) lookup(ctx context.Context, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	s.mu.RLock()
	v, ok := s.m[key]
	s.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: key %q", ErrNotFound, key)
	}
	// Stored slices are never modified in place (Set stores a fresh copy),
	// so v may be read after the lock is released.
	return v, nil
}

// Get implements Store.
func (s *memoryStore) Get(ctx context.Context, key string) ([]byte, error) {
	v, err := s.lookup(ctx, key)
	if err != nil {
		return nil, err
	}
	return slices.Clone(v), nil
}

// GetInto implements ReaderInto.
func (s *memoryStore) GetInto(ctx context.Context, key string, dst []byte) (int, error) {
	v, err := s.lookup(ctx, key)
	if err != nil {
		return 0, err
	}
	if len(v) > len(dst) {
		return 0, fmt.Errorf("%w: key %q holds %d bytes, more than the %d-byte buffer", ErrCorrupt, key, len(v), len(dst))
	}
	return copy(dst, v), nil
}

// GetRange implements RangeGetter.
func (s *memoryStore) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	if offset < 0 {
		return nil, fmt.Errorf("%w: negative offset %d for key %q", ErrInvalid, offset, key)
	}
	v, err := s.lookup(ctx, key)
	if err != nil {
		return nil, err
	}
	return slices.Clone(cutRange(v, offset, length)), nil
}

// GetRangesInto implements RangesReaderInto.
func (s *memoryStore) GetRangesInto(ctx context.Context, key string, offsets []int64, dsts [][]byte) error {
	v, err := s.lookup(ctx, key)
	if err != nil {
		return err
	}
	for i, off := range offsets {
		if off < 0 || off+int64(len(dsts[i])) > int64(len(v)) {
			return fmt.Errorf("%w: range [%d, %d) of key %q, which holds %d bytes", ErrCorrupt, off, off+int64(len(dsts[i])), key, len(v))
		}
		copy(dsts[i], v[off:])
	}
	return nil
}

// GetCachedRangesInto implements CachedRangesReaderInto: a memory store
// holds every value at hand.
func (s *memoryStore) GetCachedRangesInto(ctx context.Context, key string, offsets []int64, dsts [][]byte) (bool, error) {
	if err := s.GetRangesInto(ctx, key, offsets, dsts); err != nil {
		return false, err
	}
	return true, nil
}

// GetSuffix implements SuffixGetter.
func (s *memoryStore) GetSuffix(ctx context.Context, key string, n int64) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("%w: negative suffix length %d for key %q", ErrInvalid, n, key)
	}
	v, err := s.lookup(ctx, key)
	if err != nil {
		return nil, err
	}
	return slices.Clone(v[max(int64(len(v))-n, 0):]), nil
}

// cutRange returns the part of v that the range (offset, length) covers.
func cutRange(v []byte, offset, length int64) []byte {
	if offset >= int64(len(v)) {
		return v[:0]
	}
	v = v[offset:]
	if length >= 0 && length < int64(len(v)) {
		v = v[:length]
	}
	return v
}

// Set implements Store.
func (s *memoryStore) Set(ctx context.Context, key string, value []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := ValidateKey(key); err != nil {
		return err
	}
	v := slices.Clone(value)
	if v == nil {
		v = []byte{}
	}
	s.mu.Lock()
	s.m[key] = v
	s.mu.Unlock()
	return nil
}

// Delete implements Store.
func (s *memoryStore) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := ValidateKey(key); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.m, key)
	s.mu.Unlock()
	return nil
}

// List implements Lister.
func (s *memoryStore) List(ctx context.Context, prefix string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := validatePrefix(prefix); err != nil {
		return nil, err
	}
	s.mu.RLock()
	var keys []string
	for k := range s.m {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	s.mu.RUnlock()
	slices.Sort(keys)
	return keys, nil
}

// ListDir implements DirLister.
func (s *memoryStore) ListDir(ctx context.Context, prefix string) (keys, dirs []string, err error) {
	all, err := s.List(ctx, prefix)
	if err != nil {
		return nil, nil, err
	}
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		return nil, nil, fmt.Errorf("%w: directory prefix %q does not end in \"/\"", ErrInvalid, prefix)
	}
	for _, k := range all {
		rest := k[len(prefix):]
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			d := prefix + rest[:i+1]
			if len(dirs) == 0 || dirs[len(dirs)-1] != d {
				dirs = append(dirs, d)
			}
			continue
		}
		keys = append(keys, k)
	}
	return keys, dirs, nil
}
