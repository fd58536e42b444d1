package zarr

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
)

// Array is an open Zarr array (v3 or v2): its metadata and the store
// holding its chunks. Its methods are safe for concurrent use.
type Array struct {
	store Store
	path  string // node path, "" for the store root
	meta  ArrayMetadata
	pipe  *pipeline

	chunkBytes int
	grid       []int
	keyPrefix  string // "<path>/c" (default encoding) or "<path>/" (v2)
	keySep     string
	keyV2      bool

	fillPattern

	// shard is the sharding codec when inner chunks can be read on their
	// own (sharding is the array→bytes codec with nothing around it).
	shard *shardingCodec

	readerInto ReaderInto // the store's fast path, or nil

	writeEmptyChunks atomic.Bool
	// missingIsError makes a missing chunk an error instead of the fill value.
	missingIsError atomic.Bool
}

const metadataKey = "zarr.json"

func nodeKey(path, name string) string {
	if path == "" {
		return name
	}
	return path + "/" + name
}

// CreateArray writes the metadata of a new array at path ("" is the store
// root) and returns it open: zarr.json for Zarr v3, .zarray and .zattrs
// for v2 (meta.ZarrFormat 2). It validates meta first and replaces any
// existing metadata at path, of either format; existing chunks are left
// alone.
func CreateArray(ctx context.Context, s Store, path string, meta ArrayMetadata) (*Array, error) {
	p, err := cleanNodePath(path)
	if err != nil {
		return nil, err
	}
	meta = meta.clone()
	docs, err := meta.Documents()
	if err != nil {
		return nil, err
	}
	// Reparse so the open array holds the canonical metadata (codecs as
	// written, attributes as JSON values) that OpenArray would return.
	var canon ArrayMetadata
	if meta.format() == 2 {
		canon, err = ParseArrayMetadataV2(docs[zarrayKey], docs[zattrsKey])
	} else {
		canon, err = ParseArrayMetadata(docs[metadataKey])
	}
	if err != nil {
		return nil, err
	}
	// Remove the other format's metadata, so readers that try v3 first
	// (as zarr-python does) find this array.
	stale := []string{zarrayKey, zattrsKey}
	if meta.format() == 2 {
		stale = []string{metadataKey}
	}
	for _, k := range stale {
		if err := s.Delete(ctx, nodeKey(p, k)); err != nil {
			return nil, err
		}
	}
	// The attributes first, so the array appears with them.
	for _, k := range []string{zattrsKey, zarrayKey, metadataKey} {
		if doc, ok := docs[k]; ok {
			if err := s.Set(ctx, nodeKey(p, k), doc); err != nil {
				return nil, err
			}
		}
	}
	return newArray(s, p, canon)
}

// OpenArray opens the array at path ("" is the store root), Zarr v3
// (zarr.json) or, when there is none, v2 (.zarray and .zattrs). A missing
// array is an error wrapping ErrNotFound; unsupported data types, codecs
// or extensions give errors wrapping ErrNotImplemented that name them.
func OpenArray(ctx context.Context, s Store, path string) (*Array, error) {
	p, err := cleanNodePath(path)
	if err != nil {
		return nil, err
	}
	meta, err := readArrayMetadata(ctx, s, p)
	if err != nil {
		return nil, err
	}
	return newArray(s, p, meta)
}

// readArrayMetadata reads and parses the metadata of the array at p.
func readArrayMetadata(ctx context.Context, s Store, p string) (ArrayMetadata, error) {
	key := nodeKey(p, metadataKey)
	doc, err := s.Get(ctx, key)
	switch {
	case err == nil:
		meta, err := ParseArrayMetadata(doc)
		if err != nil {
			return meta, fmt.Errorf("%w (in %s)", err, key)
		}
		return meta, nil
	case !errors.Is(err, ErrNotFound):
		return ArrayMetadata{}, err
	}
	zkey := nodeKey(p, zarrayKey)
	zarray, err := s.Get(ctx, zkey)
	if errors.Is(err, ErrNotFound) {
		if _, gerr := s.Get(ctx, nodeKey(p, zgroupKey)); gerr == nil {
			return ArrayMetadata{}, fmt.Errorf("%w: %q is a group, not an array", ErrNotFound, p)
		}
		return ArrayMetadata{}, fmt.Errorf("%w: no array at %q (no %s or %s)", ErrNotFound, p, key, zkey)
	}
	if err != nil {
		return ArrayMetadata{}, err
	}
	zattrs, err := s.Get(ctx, nodeKey(p, zattrsKey))
	if errors.Is(err, ErrNotFound) {
		zattrs, err = nil, nil
	}
	if err != nil {
		return ArrayMetadata{}, err
	}
	meta, err := ParseArrayMetadataV2(zarray, zattrs)
	if err != nil {
		return meta, fmt.Errorf("%w (in %s)", err, zkey)
	}
	return meta, nil
}

// newArray opens an array on validated metadata.
func newArray(s Store, path string, meta ArrayMetadata) (*Array, error) {
	pipe, err := meta.resolve()
	if err != nil {
		return nil, err
	}
	if meta.FillValue == nil {
		meta.FillValue = meta.fillValue()
	}
	a := &Array{
		store:      s,
		path:       path,
		meta:       meta,
		pipe:       pipe,
		chunkBytes: meta.chunkSpec().byteSize(),
		grid:       make([]int, len(meta.Shape)),
	}
	for i, d := range meta.Shape {
		c := meta.ChunkShape[i]
		a.grid[i] = d / c
		if d%c != 0 {
			a.grid[i]++
		}
	}
	enc := meta.chunkKeyEncoding()
	a.keySep = enc.Separator
	a.keyV2 = enc.Name == "v2"
	switch {
	case !a.keyV2:
		a.keyPrefix = nodeKey(path, "c")
	case path != "":
		a.keyPrefix = path + "/"
	}
	a.fillPattern = newFillPattern(meta.FillValue)
	if sc, ok := pipe.a2b.(*shardingCodec); ok && len(pipe.a2a) == 0 && len(pipe.b2b) == 0 {
		a.shard = sc
	}
	a.readerInto, _ = s.(ReaderInto)
	return a, nil
}

// Metadata returns a copy of the array's metadata. FillValue is always
// set, and Codecs are in canonical form.
func (a *Array) Metadata() ArrayMetadata { return a.meta.clone() }

// ChunkShape returns a copy of the array's chunk shape: Metadata().ChunkShape
// without copying the codecs and attributes, for callers that run per chunk.
func (a *Array) ChunkShape() []int { return append([]int{}, a.meta.ChunkShape...) }

// Store returns the store holding the array.
func (a *Array) Store() Store { return a.store }

// Path returns the array's node path in its store ("" for the root).
func (a *Array) Path() string { return a.path }

// ChunkBytes returns the size of one decoded chunk: the product of the
// chunk shape times the element size. Edge chunks have this size too.
func (a *Array) ChunkBytes() int { return a.chunkBytes }

// GridShape returns the number of chunks along each dimension; a 0-d
// array has one chunk and an empty grid shape.
func (a *Array) GridShape() []int { return append([]int{}, a.grid...) }

// SetWriteEmptyChunks sets whether WriteChunk stores chunks whose elements
// all equal the fill value. It is off by default (as in zarr-python): such
// chunks are not written and an existing key is deleted, since a missing
// chunk reads as the fill value.
func (a *Array) SetWriteEmptyChunks(write bool) { a.writeEmptyChunks.Store(write) }

// SetMissingChunksAreErrors sets whether reading a chunk whose key is
// missing is an error wrapping ErrMissingChunk (naming the key) instead of
// the fill value. Arrays whose every chunk is written (intermediates, with
// SetWriteEmptyChunks(true)) set it, so a chunk deleted while in use can
// never read as the fill value.
func (a *Array) SetMissingChunksAreErrors(on bool) { a.missingIsError.Store(on) }

// missing handles a chunk key that is not in the store: the fill value, or
// an error when the array's chunks must all exist.
func (a *Array) missing(key string, dst []byte) error {
	if a.missingIsError.Load() {
		return fmt.Errorf("%w: chunk %s of array %q is not in the store, though every chunk of this array is written (was it deleted while in use?)", ErrMissingChunk, key, a.path)
	}
	a.fill(dst)
	return nil
}

// ChunkKey returns the store key of the chunk at coords, including the
// array's path: "x/c/1/0" for the default encoding, "x/c" for a 0-d
// array, "x/1.0" for the "v2" encoding. It does not check that coords lie
// in the grid.
func (a *Array) ChunkKey(coords []int) string {
	b := make([]byte, 0, len(a.keyPrefix)+8*len(coords)+1)
	b = append(b, a.keyPrefix...)
	if a.keyV2 {
		if len(coords) == 0 {
			return string(append(b, '0'))
		}
		for i, c := range coords {
			if i > 0 {
				b = append(b, a.keySep...)
			}
			b = strconv.AppendInt(b, int64(c), 10)
		}
		return string(b)
	}
	for _, c := range coords {
		b = append(b, a.keySep...)
		b = strconv.AppendInt(b, int64(c), 10)
	}
	return string(b)
}

// checkChunk validates chunk coordinates and a buffer length.
func (a *Array) checkChunk(coords []int, n int, what string) error {
	if len(coords) != len(a.grid) {
		return fmt.Errorf("%w: chunk %v of %d-d array %q", ErrInvalid, coords, len(a.grid), a.path)
	}
	for i, c := range coords {
		if c < 0 || c >= a.grid[i] {
			return fmt.Errorf("%w: chunk %v outside the grid %v of array %q", ErrInvalid, coords, a.grid, a.path)
		}
	}
	if n != a.chunkBytes {
		return fmt.Errorf("%w: %s of %d bytes for chunk %v of array %q (want %d)", ErrInvalid, what, n, coords, a.path, a.chunkBytes)
	}
	return nil
}

// ReadChunk decodes the chunk at coords into dst, which must hold exactly
// ChunkBytes bytes; elements are little-endian in C order. A missing chunk
// reads as the fill value (or is an error, see SetMissingChunksAreErrors). Data that does not decode to exactly one chunk
// is an error wrapping ErrCorrupt that names the chunk key. After an
// error the contents of dst are unspecified.
func (a *Array) ReadChunk(ctx context.Context, coords []int, dst []byte) error {
	if err := a.checkChunk(coords, len(dst), "buffer"); err != nil {
		return err
	}
	key := a.ChunkKey(coords)

	// Fast path: stored bytes are the chunk itself; read them straight
	// into dst. As a simple loop: dst = Get(key).
	if a.pipe.passThrough && a.readerInto != nil {
		n, err := a.readerInto.GetInto(ctx, key, dst)
		switch {
		case errors.Is(err, ErrNotFound):
			return a.missing(key, dst)
		case errors.Is(err, ErrCorrupt):
			return fmt.Errorf("%w: chunk %s: longer than %d bytes", ErrCorrupt, key, len(dst))
		case err != nil:
			return err
		case n != len(dst):
			return fmt.Errorf("%w: chunk %s: %d bytes, want %d", ErrCorrupt, key, n, len(dst))
		}
		return nil
	}

	enc, release, err := a.getEncoded(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return a.missing(key, dst)
	}
	if err != nil {
		return err
	}
	defer release()
	if err := a.pipe.decode(dst, enc); err != nil {
		return fmt.Errorf("%w: chunk %s: %w", ErrCorrupt, key, err)
	}
	return nil
}

// MapChunk returns the stored chunk at coords mapped read-only from its
// store (see Mapper) instead of read into a buffer, and the function that
// unmaps it: ChunkBytes bytes of elements in C order, the same ReadChunk
// would give, without a copy. It declines (ok false: read the chunk with
// ReadChunk instead, which reports any error) unless the chunk is stored
// raw (no compressor or other codec changing the bytes), its elements are
// in the host's byte order, the store can map values, and the chunk's
// value exists and holds exactly ChunkBytes bytes. The bytes must not be
// written, and are touched only on goroutines running with
// debug.SetPanicOnFault(true) (see Mapper).
func (a *Array) MapChunk(ctx context.Context, coords []int) (data []byte, unmap func(), ok bool) {
	m, isMapper := a.store.(Mapper)
	if !isMapper || !a.pipe.passThrough || !hostLittleEndian || a.chunkBytes == 0 ||
		a.checkChunk(coords, a.chunkBytes, "buffer") != nil {
		return nil, nil, false
	}
	b, release, err := m.Map(ctx, a.ChunkKey(coords))
	if err != nil {
		return nil, nil, false
	}
	if len(b) != a.chunkBytes {
		release()
		return nil, nil, false
	}
	return b, release, true
}

// CanReadDirect reports whether ReadChunkDirect may read this array's
// chunks: they are stored raw in the host's byte order in a store that
// reads directly (a local file store).
func (a *Array) CanReadDirect() bool {
	_, ok := a.store.(DirectReader)
	return ok && a.pipe.passThrough && hostLittleEndian && a.chunkBytes > 0
}

// ReadChunkDirect reads the stored chunk at coords into dst (ChunkBytes
// bytes) bypassing the page cache (see DirectReader). It declines (false,
// nil: read the chunk with ReadChunk instead) unless the chunk is stored
// raw in the host's byte order, the store reads directly, and the chunk's
// value exists and holds exactly ChunkBytes bytes.
func (a *Array) ReadChunkDirect(ctx context.Context, coords []int, dst []byte) (bool, error) {
	if !a.CanReadDirect() || len(dst) != a.chunkBytes || a.checkChunk(coords, a.chunkBytes, "buffer") != nil {
		return false, nil
	}
	return a.store.(DirectReader).GetDirect(ctx, a.ChunkKey(coords), dst)
}

// CanWriteDirect reports whether WriteChunkDirect may write this array's
// chunks: they are stored raw in the host's byte order in a store that
// writes directly (a local file store).
func (a *Array) CanWriteDirect() bool {
	_, ok := a.store.(DirectWriter)
	return ok && a.pipe.passThrough && hostLittleEndian && a.chunkBytes > 0
}

// WriteChunkDirect is WriteChunk bypassing the page cache (see
// DirectWriter): it stores src, exactly ChunkBytes bytes, as the chunk at
// coords, or deletes the key of a chunk that equals the fill value as
// WriteChunk does. It declines (false, nil: write the chunk with
// WriteChunk instead) unless the chunk is stored raw in the host's byte
// order and the store writes src directly.
func (a *Array) WriteChunkDirect(ctx context.Context, coords []int, src []byte) (bool, error) {
	if !a.CanWriteDirect() {
		return false, nil
	}
	key, done, err := a.startWrite(ctx, coords, src)
	if done {
		return key != "", err // a bad chunk is not written; a deleted one is
	}
	return a.store.(DirectWriter).SetDirect(ctx, key, src)
}

// hostLittleEndian reports whether the host stores elements
// little-endian, as raw chunks hold them.
var hostLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// PrefetchChunk starts reading the stored chunk at coords into the
// store's cache (see Prefetcher), so that a ReadChunk of it soon after
// does not wait for the disk. It holds no memory of the process's and
// does nothing on a store that cannot prefetch, or for coords outside the
// grid. It reports whether the store was asked.
func (a *Array) PrefetchChunk(ctx context.Context, coords []int) bool {
	p, ok := a.store.(Prefetcher)
	if !ok || len(coords) != len(a.grid) {
		return false
	}
	for i, c := range coords {
		if c < 0 || c >= a.grid[i] {
			return false
		}
	}
	_ = p.Prefetch(ctx, a.ChunkKey(coords))
	return true
}

// ChunkResident reports the fraction of the stored chunk at coords that
// is in the store's memory (the page cache of a local file store, see
// ResidencyReporter); ok is false on a store that cannot tell, for a
// missing chunk, or for coords outside the grid.
func (a *Array) ChunkResident(ctx context.Context, coords []int) (fraction float64, ok bool) {
	r, isR := a.store.(ResidencyReporter)
	if !isR || len(coords) != len(a.grid) {
		return 0, false
	}
	for i, c := range coords {
		if c < 0 || c >= a.grid[i] {
			return 0, false
		}
	}
	return r.Resident(ctx, a.ChunkKey(coords))
}

// getEncoded reads the stored bytes of a chunk, into a pooled buffer when
// the store implements ReaderInto.
func (a *Array) getEncoded(ctx context.Context, key string) ([]byte, func(), error) {
	if a.readerInto != nil {
		buf := getBuffer(a.pipe.storedSizeBound())
		n, err := a.readerInto.GetInto(ctx, key, *buf)
		if err == nil {
			return (*buf)[:n], func() { putBuffer(buf) }, nil
		}
		putBuffer(buf)
		if !errors.Is(err, ErrCorrupt) {
			return nil, nil, err
		}
		// Longer than this package would write (another writer's
		// framing): read it whole.
	}
	v, err := a.store.Get(ctx, key)
	return v, func() {}, err
}

// WriteChunk encodes src, exactly ChunkBytes bytes of little-endian
// elements in C order, and stores it as the chunk at coords, atomically.
// Unless SetWriteEmptyChunks(true) was called, a chunk whose elements all
// equal the fill value is not stored, and an existing key is deleted.
func (a *Array) WriteChunk(ctx context.Context, coords []int, src []byte) error {
	key, done, err := a.startWrite(ctx, coords, src)
	if done {
		return err
	}
	enc, release, err := a.pipe.encode(src)
	if err != nil {
		return fmt.Errorf("zarr: encode chunk %s: %w", key, err)
	}
	defer release()
	return a.store.Set(ctx, key, enc)
}

// startWrite is the start of WriteChunk and WriteChunkDirect: it checks
// src for the chunk at coords and returns its key, or, unless
// SetWriteEmptyChunks(true) was called, deletes the key of a chunk whose
// elements all equal the fill value; done reports that the write is over
// (a bad chunk, with an empty key, or the delete's result in err).
func (a *Array) startWrite(ctx context.Context, coords []int, src []byte) (key string, done bool, err error) {
	if err := a.checkChunk(coords, len(src), "source"); err != nil {
		return "", true, err
	}
	key = a.ChunkKey(coords)
	if !a.writeEmptyChunks.Load() && a.matches(src) {
		return key, true, a.store.Delete(ctx, key)
	}
	return key, false, nil
}
