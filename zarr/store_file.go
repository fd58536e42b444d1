package zarr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
)

// fileStore is a Store on a local directory, using the operating system
// directly: the fast path for local disk (the portable blob writer costs
// several times the disk's speed in hashing and buffering). Each value is
// one file named by its key. A write goes to a temporary file beside its
// target, which is then renamed into place, so writes are atomic per key;
// temporary files (".cubego-*.tmp") are never listed. The directory is
// created by the first Set. It implements ReaderInto, Lister, DirLister,
// RangeGetter, SuffixGetter and Prefetcher.
type fileStore struct {
	dir    string
	closed atomic.Bool
}

const fileTempPrefix = ".cubego-"

func newFileStore(absDir string) (*fileStore, error) {
	info, err := os.Stat(absDir)
	switch {
	case err == nil && !info.IsDir():
		return nil, fmt.Errorf("%w: store path %q is not a directory", ErrInvalid, absDir)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("zarr: open store %q: %w", absDir, err)
	}
	return &fileStore{dir: absDir}, nil
}

var (
	_ Store             = (*fileStore)(nil)
	_ ReaderInto        = (*fileStore)(nil)
	_ Lister            = (*fileStore)(nil)
	_ DirLister         = (*fileStore)(nil)
	_ RangeGetter       = (*fileStore)(nil)
	_ SuffixGetter      = (*fileStore)(nil)
	_ Prefetcher        = (*fileStore)(nil)
	_ ResidencyReporter = (*fileStore)(nil)
)

func (s *fileStore) String() string { return "file://" + s.dir }

// Close marks the store closed; it holds no resources.
func (s *fileStore) Close() error {
	s.closed.Store(true)
	return nil
}

// path checks key and the store's state and returns the key's file.
func (s *fileStore) path(ctx context.Context, key string) (string, error) {
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	if s.closed.Load() {
		return "", errStoreClosed
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return filepath.Join(s.dir, filepath.FromSlash(key)), nil
}

func (s *fileStore) err(op, key string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		// Missing, or a path through a file: no value here.
		return fmt.Errorf("%w: key %q in store %s", ErrNotFound, key, s)
	}
	return fmt.Errorf("zarr: %s %q in store %s: %w", op, key, s, err)
}

// open opens a key's file for reading. Only a regular file (or a link to
// one) holds a value: a directory, named pipe, socket or device at a key
// is an error naming the key, wrapping ErrIO. The type is checked before
// the file is opened and again on the open file, which is opened
// non-blocking, so a named pipe put there in between cannot block a read.
func (s *fileStore) open(ctx context.Context, op, key string) (*os.File, int64, error) {
	p, err := s.path(ctx, key)
	if err != nil {
		return nil, 0, err
	}
	info, err := os.Stat(p)
	if err != nil {
		return nil, 0, s.err(op, key, err)
	}
	if !info.Mode().IsRegular() {
		return nil, 0, s.notRegular(op, key, info.Mode())
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, s.err(op, key, err)
	}
	if info, err = f.Stat(); err != nil {
		f.Close()
		return nil, 0, s.err(op, key, err)
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, 0, s.notRegular(op, key, info.Mode())
	}
	return f, info.Size(), nil
}

// notRegular is the error for something other than a value at a key.
func (s *fileStore) notRegular(op, key string, mode fs.FileMode) error {
	kind := "special file"
	switch {
	case mode.IsDir():
		kind = "directory"
	case mode&fs.ModeNamedPipe != 0:
		kind = "named pipe (FIFO)"
	case mode&fs.ModeSocket != 0:
		kind = "socket"
	case mode&fs.ModeDevice != 0:
		kind = "device"
	}
	return fmt.Errorf("%w: %s %q in store %s: it is a %s, not a file holding a value", ErrIO, op, key, s, kind)
}

// Get implements Store.
func (s *fileStore) Get(ctx context.Context, key string) ([]byte, error) {
	f, size, err := s.open(ctx, "get", key)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, size)
	if err := readAtv(f, [][]byte{b}, 0); err != nil {
		return nil, s.err("get", key, err)
	}
	return b, nil
}

// GetInto implements ReaderInto.
func (s *fileStore) GetInto(ctx context.Context, key string, dst []byte) (int, error) {
	f, size, err := s.open(ctx, "get", key)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if size > int64(len(dst)) {
		return 0, fmt.Errorf("%w: key %q in store %s holds %d bytes, more than the %d expected", ErrCorrupt, key, s, size, len(dst))
	}
	if err := readAtv(f, [][]byte{dst[:size]}, 0); err != nil {
		return 0, s.err("get", key, err)
	}
	return int(size), nil
}

// GetRange implements RangeGetter.
func (s *fileStore) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	if offset < 0 {
		return nil, fmt.Errorf("%w: negative offset %d", ErrInvalid, offset)
	}
	f, size, err := s.open(ctx, "get range of", key)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if offset >= size {
		return []byte{}, nil
	}
	n := size - offset
	if length >= 0 && length < n {
		n = length
	}
	b := make([]byte, n)
	if _, err := f.ReadAt(b, offset); err != nil && !errors.Is(err, io.EOF) {
		return nil, s.err("get range of", key, err)
	}
	return b, nil
}

// GetRangesInto implements RangesReaderInto: one open, and one vectored
// positioned read (preadv) per run of ranges that follow each other in
// the file.
func (s *fileStore) GetRangesInto(ctx context.Context, key string, offsets []int64, dsts [][]byte) error {
	f, size, done, err := s.openShared(ctx, "get ranges of", key)
	if err != nil {
		return err
	}
	defer done()
	if err := s.checkRanges(key, size, offsets, dsts); err != nil {
		return err
	}
	for i := 0; i < len(offsets); {
		j, end := i+1, offsets[i]+int64(len(dsts[i]))
		for j < len(offsets) && offsets[j] == end {
			end += int64(len(dsts[j]))
			j++
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := readAtv(f, dsts[i:j], offsets[i]); err != nil {
			return s.err("get ranges of", key, err)
		}
		i = j
	}
	return nil
}

// GetCachedRangesInto implements CachedRangesReaderInto: one open, and
// one non-blocking read per range, stopping at the first range not wholly
// in the page cache (readCachedAt).
func (s *fileStore) GetCachedRangesInto(ctx context.Context, key string, offsets []int64, dsts [][]byte) (bool, error) {
	f, size, done, err := s.openShared(ctx, "get ranges of", key)
	if err != nil {
		return false, err
	}
	defer done()
	if err := s.checkRanges(key, size, offsets, dsts); err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false, s.err("get ranges of", key, err)
	}
	for i, off := range offsets {
		if !readCachedAt(rc, dsts[i], off) {
			return false, nil
		}
	}
	return true, nil
}

// checkRanges reports a range of dsts at offsets reaching past the end of
// key's value of size bytes as corrupt.
func (s *fileStore) checkRanges(key string, size int64, offsets []int64, dsts [][]byte) error {
	for i, off := range offsets {
		if off < 0 || off+int64(len(dsts[i])) > size {
			return fmt.Errorf("%w: range [%d, %d) of key %q in store %s, which holds %d bytes", ErrCorrupt, off, off+int64(len(dsts[i])), key, s, size)
		}
	}
	return nil
}

// GetSuffix implements SuffixGetter.
func (s *fileStore) GetSuffix(ctx context.Context, key string, n int64) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("%w: negative suffix length %d", ErrInvalid, n)
	}
	f, size, err := s.open(ctx, "get suffix of", key)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	n = min(n, size)
	b := make([]byte, n)
	if _, err := f.ReadAt(b, size-n); err != nil && !errors.Is(err, io.EOF) {
		return nil, s.err("get suffix of", key, err)
	}
	return b, nil
}

// Set implements Store.
func (s *fileStore) Set(ctx context.Context, key string, value []byte) error {
	p, err := s.path(ctx, key)
	if err != nil {
		return err
	}
	forgetOpenFile(ctx, p)
	f, err := s.createTemp(key, filepath.Dir(p))
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(value)
	cerr := f.Close()
	if err := errors.Join(werr, cerr, ctx.Err()); err != nil {
		os.Remove(tmp)
		return s.err("set", key, err)
	}
	return s.publish(key, tmp, p)
}

// createTemp creates the temporary file a value of key is written to
// before publish renames it into place, in dir (made if missing). Its
// name marks it as this package's, so that sweeps remove it if the
// writer dies.
func (s *fileStore) createTemp(key, dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, fileTempPrefix+tempOwner+"-*.tmp")
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(dir, 0o755); err == nil {
			f, err = os.CreateTemp(dir, fileTempPrefix+tempOwner+"-*.tmp")
		}
	}
	if err != nil {
		return nil, s.err("set", key, err)
	}
	return f, nil
}

// publish makes the complete temporary file tmp the value of key at p,
// atomically; on failure it removes tmp.
func (s *fileStore) publish(key, tmp, p string) error {
	// CreateTemp makes files readable by the owner only; values are plain
	// data files like any other Zarr writer's.
	_ = os.Chmod(tmp, 0o644)
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return s.err("set", key, err)
	}
	return nil
}

// Delete implements Store.
func (s *fileStore) Delete(ctx context.Context, key string) error {
	p, err := s.path(ctx, key)
	if err != nil {
		return err
	}
	forgetOpenFile(ctx, p)
	info, err := os.Lstat(p)
	if err != nil || info.IsDir() {
		return nil // missing, or a directory of other keys: no value here
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s.err("delete", key, err)
	}
	return nil
}

// List implements Lister.
func (s *fileStore) List(ctx context.Context, prefix string) ([]string, error) {
	if err := validatePrefix(prefix); err != nil {
		return nil, err
	}
	if s.closed.Load() {
		return nil, errStoreClosed
	}
	var keys []string
	// Walk only the deepest directory the prefix names.
	root := s.dir
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		root = filepath.Join(s.dir, filepath.FromSlash(prefix[:i]))
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), fileTempPrefix) {
			return nil
		}
		rel, err := filepath.Rel(s.dir, p)
		if err != nil {
			return err
		}
		if k := filepath.ToSlash(rel); strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("zarr: list %q in store %s: %w", prefix, s, err)
	}
	slices.Sort(keys)
	return keys, nil
}

// ListDir implements DirLister.
func (s *fileStore) ListDir(ctx context.Context, prefix string) (keys, dirs []string, err error) {
	if err := validatePrefix(prefix); err != nil {
		return nil, nil, err
	}
	if s.closed.Load() {
		return nil, nil, errStoreClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		return nil, nil, fmt.Errorf("%w: ListDir prefix %q must end in /", ErrInvalid, prefix)
	}
	entries, err := os.ReadDir(filepath.Join(s.dir, filepath.FromSlash(prefix)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("zarr: list %q in store %s: %w", prefix, s, err)
	}
	for _, e := range entries {
		switch {
		case strings.HasPrefix(e.Name(), fileTempPrefix):
		case e.IsDir():
			dirs = append(dirs, prefix+e.Name()+"/")
		default:
			keys = append(keys, prefix+e.Name())
		}
	}
	return keys, dirs, nil
}
