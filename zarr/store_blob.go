package zarr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/gcerrors"
)

// blobStore is a Store on a gocloud.dev/blob bucket. It implements
// ReaderInto, Lister, RangeGetter and SuffixGetter.
type blobStore struct {
	desc   string // the store's URL, for error messages
	prefix string // "" or a key prefix ending in "/"
	shared bool   // the bucket outlives this store (a named mem:// store)

	bucket atomic.Pointer[blob.Bucket]
	mu     sync.Mutex // serialises opening and closing
	closed atomic.Bool
}

// newBucketStore returns a store on an open bucket (an object store),
// rooted at prefix ("" or a key without slashes at the ends). Close closes
// the bucket.
func newBucketStore(desc string, b *blob.Bucket, prefix string) *blobStore {
	s := &blobStore{desc: desc}
	if prefix != "" {
		s.prefix = prefix + "/"
	}
	s.bucket.Store(b)
	return s
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

// open returns the store's bucket, or an error once the store is closed.
func (s *blobStore) open() (*blob.Bucket, error) {
	if s.closed.Load() {
		return nil, errStoreClosed
	}
	return s.bucket.Load(), nil
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
	b, err := s.open()
	if err != nil {
		return nil, err
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
	if err != nil && offset > 0 && !errors.Is(err, ErrNotFound) {
		// Object stores refuse a range that starts past the end (S3:
		// 416 InvalidRange); the store's contract is an empty value.
		if b, _ := s.open(); b != nil {
			if attrs, aerr := b.Attributes(ctx, s.prefix+key); aerr == nil && offset >= attrs.Size {
				return []byte{}, nil
			}
		}
	}
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

// GetSuffix implements SuffixGetter: the value's size, then a ranged read
// (object stores have no suffix reads through gocloud.dev/blob).
func (s *blobStore) GetSuffix(ctx context.Context, key string, n int64) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("%w: negative suffix length %d for key %q", ErrInvalid, n, key)
	}
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	b, err := s.open()
	if err != nil {
		return nil, err
	}
	attrs, err := b.Attributes(ctx, s.prefix+key)
	if err != nil {
		return nil, s.storeErr("get suffix of", key, err)
	}
	return s.GetRange(ctx, key, max(attrs.Size-n, 0), n)
}

// Set implements Store.
func (s *blobStore) Set(ctx context.Context, key string, value []byte) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := s.open()
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
	b, err := s.open()
	if err != nil {
		return err
	}
	if err := b.Delete(ctx, s.prefix+key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return s.storeErr("delete", key, err)
	}
	return nil
}

// List implements Lister.
func (s *blobStore) List(ctx context.Context, prefix string) ([]string, error) {
	if err := validatePrefix(prefix); err != nil {
		return nil, err
	}
	b, err := s.open()
	if err != nil {
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
		if obj.IsDir {
			continue
		}
		keys = append(keys, strings.TrimPrefix(obj.Key, s.prefix))
	}
	slices.Sort(keys)
	return keys, nil
}

// ListDir implements DirLister.
func (s *blobStore) ListDir(ctx context.Context, prefix string) (keys, dirs []string, err error) {
	if err := validatePrefix(prefix); err != nil {
		return nil, nil, err
	}
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		return nil, nil, fmt.Errorf("%w: directory prefix %q does not end in \"/\"", ErrInvalid, prefix)
	}
	b, err := s.open()
	if err != nil {
		return nil, nil, err
	}
	it := b.List(&blob.ListOptions{Prefix: s.prefix + prefix, Delimiter: "/"})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, s.storeErr("list", prefix, err)
		}
		k := strings.TrimPrefix(obj.Key, s.prefix)
		switch {
		case obj.IsDir:
			dirs = append(dirs, k)
		default:
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	slices.Sort(dirs)
	return keys, dirs, nil
}
