package zarr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/gcerrors"
)

// blobStore is a Store on a gocloud.dev/blob bucket. It implements
// ReaderInto, Lister and RangeGetter.
type blobStore struct {
	desc   string // the store's URL, for error messages
	prefix string // "" or a key prefix ending in "/"
	shared bool   // the bucket outlives this store (a named mem:// store)

	// dir is the root directory of a file store, opened lazily: a
	// directory that does not exist yet is created by the first Set.
	dir string

	bucket atomic.Pointer[blob.Bucket]
	mu     sync.Mutex // serialises opening and closing
	closed atomic.Bool
}

// fileblobOptions are the options of every file store: no ".attrs" side
// files (other Zarr readers would see them), temporary files beside their
// target so the final rename stays on one file system and is atomic.
func fileblobOptions() *fileblob.Options {
	return &fileblob.Options{
		CreateDir: true,
		NoTempDir: true,
		Metadata:  fileblob.MetadataDontWrite,
	}
}

func newFileStore(absDir string) (*blobStore, error) {
	s := &blobStore{desc: "file://" + absDir, dir: absDir}
	info, err := os.Stat(absDir)
	switch {
	case err == nil && !info.IsDir():
		return nil, fmt.Errorf("%w: store path %q is not a directory", ErrInvalid, absDir)
	case err == nil:
		if _, err := s.open(false); err != nil {
			return nil, err
		}
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("zarr: open store %q: %w", absDir, err)
	}
	return s, nil
}

var (
	memBucketsMu sync.Mutex
	memBuckets   = map[string]*blob.Bucket{}
)

func openMemBlobStore(name, path string) (*blobStore, error) {
	s := &blobStore{desc: "mem://" + name}
	if path != "" {
		p, err := cleanNodePath(path)
		if err != nil {
			return nil, err
		}
		s.prefix = p + "/"
		s.desc += "/" + p
	}
	opts := &memblob.Options{NoMD5: true}
	if name == "" {
		s.bucket.Store(memblob.OpenBucket(opts))
		return s, nil
	}
	memBucketsMu.Lock()
	defer memBucketsMu.Unlock()
	b := memBuckets[name]
	if b == nil {
		b = memblob.OpenBucket(opts)
		memBuckets[name] = b
	}
	s.bucket.Store(b)
	s.shared = true
	return s, nil
}

var errStoreClosed = errors.New("zarr: store is closed")

// open returns the bucket, or nil for a file store whose directory does
// not exist yet, unless create is set: then the directory is created.
func (s *blobStore) open(create bool) (*blob.Bucket, error) {
	if s.closed.Load() {
		return nil, errStoreClosed
	}
	if b := s.bucket.Load(); b != nil {
		return b, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return nil, errStoreClosed
	}
	if b := s.bucket.Load(); b != nil {
		return b, nil
	}
	if !create {
		if _, err := os.Stat(s.dir); errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
	}
	b, err := fileblob.OpenBucket(s.dir, fileblobOptions())
	if err != nil {
		return nil, fmt.Errorf("zarr: open store %s: %w", s.desc, err)
	}
	s.bucket.Store(b)
	return b, nil
}

// Close implements io.Closer; see the package function Close.
func (s *blobStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Swap(true) || s.shared {
		return nil
	}
	if b := s.bucket.Load(); b != nil {
		return b.Close()
	}
	return nil
}

func (s *blobStore) storeErr(op, key string, err error) error {
	if gcerrors.Code(err) == gcerrors.NotFound {
		return fmt.Errorf("%w: key %q in %s", ErrNotFound, key, s.desc)
	}
	return fmt.Errorf("zarr: %s %q in %s: %w", op, key, s.desc, err)
}

// reader opens key for reading, or returns an error wrapping ErrNotFound.
func (s *blobStore) reader(ctx context.Context, op, key string, offset, length int64) (*blob.Reader, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	b, err := s.open(false)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, fmt.Errorf("%w: key %q in %s", ErrNotFound, key, s.desc)
	}
	r, err := b.NewRangeReader(ctx, s.prefix+key, offset, length, nil)
	if err != nil {
		return nil, s.storeErr(op, key, err)
	}
	return r, nil
}

// Get implements Store.
func (s *blobStore) Get(ctx context.Context, key string) ([]byte, error) {
	r, err := s.reader(ctx, "get", key, 0, -1)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	v, err := readAll(r, r.Size())
	if err != nil {
		return nil, s.storeErr("get", key, err)
	}
	return v, nil
}

// readAll reads r to its end into a buffer sized for the expected size.
// It does not trust size: a value replaced between the size lookup and
// the read is still read whole.
func readAll(r io.Reader, size int64) ([]byte, error) {
	buf := make([]byte, 0, max(size, 0)+1)
	for {
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// GetInto implements ReaderInto.
func (s *blobStore) GetInto(ctx context.Context, key string, dst []byte) (int, error) {
	r, err := s.reader(ctx, "get", key, 0, -1)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	n, err := io.ReadFull(r, dst)
	switch err {
	case nil:
		// dst is full: the value fits only if nothing follows.
		var extra [1]byte
		m, err := io.ReadFull(r, extra[:])
		if m > 0 {
			return 0, fmt.Errorf("%w: key %q in %s is longer than the %d-byte buffer", ErrCorrupt, key, s.desc, len(dst))
		}
		if err != io.EOF {
			return 0, s.storeErr("get", key, err)
		}
		return n, nil
	case io.EOF, io.ErrUnexpectedEOF:
		return n, nil
	default:
		return 0, s.storeErr("get", key, err)
	}
}

// GetRange implements RangeGetter.
func (s *blobStore) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	if offset < 0 {
		return nil, fmt.Errorf("%w: negative offset %d for key %q", ErrInvalid, offset, key)
	}
	r, err := s.reader(ctx, "get range of", key, offset, length)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	size := r.Size() - offset
	if length >= 0 && length < size {
		size = length
	}
	v, err := readAll(r, size)
	if err != nil {
		return nil, s.storeErr("get range of", key, err)
	}
	return v, nil
}

// Set implements Store.
func (s *blobStore) Set(ctx context.Context, key string, value []byte) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := s.open(true)
	if err != nil {
		return err
	}
	// Cancelling the writer's context before Close aborts the write, so a
	// failed write never replaces the old value.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := b.NewWriter(wctx, s.prefix+key, &blob.WriterOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return s.storeErr("set", key, err)
	}
	if _, err := w.Write(value); err != nil {
		cancel()
		_ = w.Close()
		return s.storeErr("set", key, err)
	}
	if err := w.Close(); err != nil {
		return s.storeErr("set", key, err)
	}
	return nil
}

// Delete implements Store.
func (s *blobStore) Delete(ctx context.Context, key string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	b, err := s.open(false)
	if err != nil || b == nil {
		return err
	}
	if s.dir != "" {
		// A key naming a directory of other keys does not exist as a
		// key; removing the (possibly empty) directory is not Delete's job.
		if info, err := os.Lstat(filepath.Join(s.dir, filepath.FromSlash(key))); err == nil && info.IsDir() {
			return nil
		}
	}
	if err := b.Delete(ctx, s.prefix+key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return s.storeErr("delete", key, err)
	}
	return nil
}

// fileblobTemp matches the temporary files fileblob writes beside a key
// while a Set is in flight ("<key>.<hex nanoseconds>.tmp").
var fileblobTemp = regexp.MustCompile(`\.[0-9a-f]+\.tmp$`)

// List implements Lister.
func (s *blobStore) List(ctx context.Context, prefix string) ([]string, error) {
	if err := validatePrefix(prefix); err != nil {
		return nil, err
	}
	b, err := s.open(false)
	if err != nil || b == nil {
		return nil, err
	}
	var keys []string
	it := b.List(&blob.ListOptions{Prefix: s.prefix + prefix})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, s.storeErr("list", prefix, err)
		}
		if obj.IsDir || (s.dir != "" && fileblobTemp.MatchString(obj.Key)) {
			continue
		}
		keys = append(keys, strings.TrimPrefix(obj.Key, s.prefix))
	}
	slices.Sort(keys)
	return keys, nil
}
