package zarr

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
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
	desc   string        // the store's URL, for error messages
	prefix string        // "" or a key prefix ending in "/"
	shared bool          // the bucket outlives this store (a named mem:// store)
	policy requestPolicy // timeouts and retries of each request

	bucket atomic.Pointer[blob.Bucket]
	mu     sync.Mutex // serialises opening and closing
	closed atomic.Bool
}

// newBucketStore returns a store on an open bucket (an object store),
// rooted at prefix ("" or a key without slashes at the ends), whose
// requests follow policy. Close closes the bucket.
func newBucketStore(desc string, b *blob.Bucket, prefix string, policy requestPolicy) *blobStore {
	s := &blobStore{desc: desc, policy: policy}
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

// request runs one request under the store's policy (timeout, retries)
// and turns its failure into the package's errors, naming op and key.
func (s *blobStore) request(ctx context.Context, op, key string, try attempt) error {
	attempts, stalled, err := s.policy.run(ctx, try)
	if err == nil {
		return nil
	}
	return s.failure(ctx, op, key, err, attempts, stalled)
}

// failure classifies a request's error: ErrNotFound for a missing key,
// ErrTimeout, ErrPermission, ErrUnavailable (could not connect, or kept
// failing with transient errors), else ErrIO; the caller's cancellation
// stays context.Canceled.
func (s *blobStore) failure(ctx context.Context, op, key string, err error, attempts int, stalled bool) error {
	tries := ""
	if attempts > 1 {
		tries = fmt.Sprintf(" after %d attempts", attempts)
	}
	where := fmt.Sprintf("%s %q in %s", op, key, s.desc)
	var ne net.Error
	switch {
	case ctx.Err() != nil:
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("%w: %s: %w", ErrTimeout, where, ctx.Err())
		}
		return fmt.Errorf("zarr: %s: %w", where, ctx.Err())
	case errors.Is(err, ErrInvalid), errors.Is(err, ErrCorrupt), errors.Is(err, ErrNotFound), errors.Is(err, errStoreClosed):
		return err
	case gcerrors.Code(err) == gcerrors.NotFound:
		return fmt.Errorf("%w: key %q in %s", ErrNotFound, key, s.desc)
	case stalled:
		return fmt.Errorf("%w: %s: no progress for %v%s (storage options \"timeout\" and \"retries\")",
			ErrTimeout, where, s.policy.timeout, tries)
	case gcerrors.Code(err) == gcerrors.PermissionDenied:
		return fmt.Errorf("%w: %s: %w", ErrPermission, where, err)
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("%w: %s%s: %w", ErrTimeout, where, tries, err)
	case connectionFailure(err), transient(err):
		return fmt.Errorf("%w: %s%s: %w", ErrUnavailable, where, tries, err)
	}
	return fmt.Errorf("%w: %s: %w", ErrIO, where, err)
}

// bucketFor checks key and returns the open bucket.
func (s *blobStore) bucketFor(key string) (*blob.Bucket, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	return s.open()
}

// Get implements Store.
func (s *blobStore) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := s.bucketFor(key)
	if err != nil {
		return nil, err
	}
	var v []byte
	err = s.request(ctx, "get", key, func(ctx context.Context, progress func()) error {
		r, err := b.NewReader(ctx, s.prefix+key, nil)
		if err != nil {
			return err
		}
		defer r.Close()
		progress()
		v, err = readAll(progressReader{r, progress}, r.Size())
		return err
	})
	if err != nil {
		return nil, err
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
	b, err := s.bucketFor(key)
	if err != nil {
		return 0, err
	}
	var n int
	err = s.request(ctx, "get", key, func(ctx context.Context, progress func()) error {
		r, err := b.NewReader(ctx, s.prefix+key, nil)
		if err != nil {
			return err
		}
		defer r.Close()
		progress()
		pr := progressReader{r, progress}
		n, err = io.ReadFull(pr, dst)
		switch err {
		case nil:
			// dst is full: the value fits only if nothing follows.
			var extra [1]byte
			m, err := io.ReadFull(pr, extra[:])
			if m > 0 {
				return fmt.Errorf("%w: key %q in %s is longer than the %d-byte buffer", ErrCorrupt, key, s.desc, len(dst))
			}
			if err != io.EOF {
				return err
			}
			return nil
		case io.EOF, io.ErrUnexpectedEOF:
			if int64(n) < r.Size() {
				return io.ErrUnexpectedEOF // the body was cut short
			}
			return nil
		default:
			return err
		}
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// GetRange implements RangeGetter.
func (s *blobStore) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	if offset < 0 {
		return nil, fmt.Errorf("%w: negative offset %d for key %q", ErrInvalid, offset, key)
	}
	b, err := s.bucketFor(key)
	if err != nil {
		return nil, err
	}
	var v []byte
	err = s.request(ctx, "get range of", key, func(ctx context.Context, progress func()) error {
		r, err := b.NewRangeReader(ctx, s.prefix+key, offset, length, nil)
		if err != nil {
			return err
		}
		defer r.Close()
		progress()
		size := r.Size() - offset
		if length >= 0 && length < size {
			size = length
		}
		v, err = readAll(progressReader{r, progress}, size)
		return err
	})
	if err != nil && offset > 0 && !errors.Is(err, ErrNotFound) && ctx.Err() == nil {
		// Object stores refuse a range that starts past the end (S3:
		// 416 InvalidRange); the store's contract is an empty value.
		if size, serr := s.size(ctx, "get range of", key); serr == nil && offset >= size {
			return []byte{}, nil
		}
	}
	if err != nil {
		return nil, err
	}
	return v, nil
}

// size returns the size of the value under key.
func (s *blobStore) size(ctx context.Context, op, key string) (int64, error) {
	b, err := s.bucketFor(key)
	if err != nil {
		return 0, err
	}
	var size int64
	err = s.request(ctx, op, key, func(ctx context.Context, _ func()) error {
		attrs, err := b.Attributes(ctx, s.prefix+key)
		if err != nil {
			return err
		}
		size = attrs.Size
		return nil
	})
	return size, err
}

// GetSuffix implements SuffixGetter: the value's size, then a ranged read
// (object stores have no suffix reads through gocloud.dev/blob).
func (s *blobStore) GetSuffix(ctx context.Context, key string, n int64) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("%w: negative suffix length %d for key %q", ErrInvalid, n, key)
	}
	size, err := s.size(ctx, "get suffix of", key)
	if err != nil {
		return nil, err
	}
	return s.GetRange(ctx, key, max(size-n, 0), n)
}

// Set implements Store. A failed or cancelled upload never replaces the
// old value: the object is written only when the upload completes.
func (s *blobStore) Set(ctx context.Context, key string, value []byte) error {
	b, err := s.bucketFor(key)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	opts := &blob.WriterOptions{ContentType: "application/octet-stream"}
	return s.request(ctx, "set", key, func(ctx context.Context, progress func()) error {
		return b.Upload(ctx, s.prefix+key, progressReader{bytes.NewReader(value), progress}, opts)
	})
}

// Delete implements Store.
func (s *blobStore) Delete(ctx context.Context, key string) error {
	b, err := s.bucketFor(key)
	if err != nil {
		return err
	}
	return s.request(ctx, "delete", key, func(ctx context.Context, _ func()) error {
		if err := b.Delete(ctx, s.prefix+key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
			return err
		}
		return nil
	})
}

// List implements Lister.
func (s *blobStore) List(ctx context.Context, prefix string) ([]string, error) {
	if err := validatePrefix(prefix); err != nil {
		return nil, err
	}
	var keys []string
	err := s.listing(ctx, prefix, "", func() { keys = keys[:0] }, func(obj *blob.ListObject) {
		if !obj.IsDir {
			keys = append(keys, strings.TrimPrefix(obj.Key, s.prefix))
		}
	})
	if err != nil {
		return nil, err
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
	err = s.listing(ctx, prefix, "/", func() { keys, dirs = keys[:0], dirs[:0] }, func(obj *blob.ListObject) {
		k := strings.TrimPrefix(obj.Key, s.prefix)
		if obj.IsDir {
			dirs = append(dirs, k)
		} else {
			keys = append(keys, k)
		}
	})
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(keys)
	slices.Sort(dirs)
	return keys, dirs, nil
}

// listing lists the objects under prefix (grouped by delimiter, if not
// empty) as one retried request: reset forgets what a failed attempt
// gathered, add takes each object in turn.
func (s *blobStore) listing(ctx context.Context, prefix, delimiter string, reset func(), add func(*blob.ListObject)) error {
	b, err := s.open()
	if err != nil {
		return err
	}
	return s.request(ctx, "list", prefix, func(ctx context.Context, progress func()) error {
		reset()
		it := b.List(&blob.ListOptions{Prefix: s.prefix + prefix, Delimiter: delimiter})
		for {
			obj, err := it.Next(ctx)
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			progress()
			add(obj)
		}
	})
}
