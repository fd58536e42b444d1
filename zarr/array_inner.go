package zarr

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Inner chunks: the read granularity of a sharded array. ReadChunk and
// WriteChunk address the array's chunk grid, whose chunks are whole shards
// when the array is sharded; ReadInnerChunk reads one inner chunk of a
// shard with two ranged reads (the shard's index, then the chunk's bytes)
// when the store is a RangeGetter. For an array that is not sharded (or
// whose shards are wrapped in other codecs, so inner chunks cannot be
// found without decoding the whole shard) an inner chunk is a chunk.

// InnerChunkShape returns the shape of the chunks ReadInnerChunk reads:
// the sharding codec's chunk_shape, or the chunk shape.
func (a *Array) InnerChunkShape() []int {
	if a.shard != nil {
		return slices.Clone(a.shard.innerSpec.shape)
	}
	return slices.Clone(a.meta.ChunkShape)
}

// InnerChunkBytes returns the size of one decoded inner chunk.
func (a *Array) InnerChunkBytes() int {
	if a.shard != nil {
		return a.shard.innerBytes
	}
	return a.chunkBytes
}

// InnerGridShape returns the number of inner chunks along each dimension
// that hold elements of the array (inner chunks wholly in the padding of
// the last shard are left out).
func (a *Array) InnerGridShape() []int {
	g := a.GridShape()
	if a.shard != nil {
		for i, n := range a.meta.Shape {
			c := a.shard.innerSpec.shape[i]
			g[i] = (n + c - 1) / c
		}
	}
	return g
}

// ReadInnerChunk decodes the inner chunk at coords (in InnerGridShape)
// into dst, which must hold exactly InnerChunkBytes bytes. A missing shard
// or inner chunk reads as the fill value. On a sharded array it reads the
// shard's index and then the chunk's bytes with ranged reads when the
// store implements RangeGetter (and, for an index at the end, SuffixGetter;
// otherwise the whole shard is read). The two reads are not atomic
// together: reading a shard while it is rewritten may fail with ErrCorrupt,
// never return a mix of two versions that decodes.
func (a *Array) ReadInnerChunk(ctx context.Context, coords []int, dst []byte) error {
	sc := a.shard
	if sc == nil {
		return a.ReadChunk(ctx, coords, dst)
	}
	grid := a.InnerGridShape()
	if len(coords) != len(grid) {
		return fmt.Errorf("%w: inner chunk %v of %d-d array %q", ErrInvalid, coords, len(grid), a.path)
	}
	shard := make([]int, len(coords))
	within := make([]int, len(coords))
	for i, c := range coords {
		if c < 0 || c >= grid[i] {
			return fmt.Errorf("%w: inner chunk %v outside the grid %v of array %q", ErrInvalid, coords, grid, a.path)
		}
		shard[i], within[i] = c/sc.grid[i], c%sc.grid[i]
	}
	if len(dst) != sc.innerBytes {
		return fmt.Errorf("%w: buffer of %d bytes for inner chunk %v of array %q (want %d)", ErrInvalid, len(dst), coords, a.path, sc.innerBytes)
	}
	key := a.ChunkKey(shard)
	i := sc.innerIndex(within)

	data, ok, err := a.innerEncoded(ctx, key, i, nil)
	if errors.Is(err, ErrNotFound) {
		return a.missing(key, dst)
	}
	if err != nil {
		return err
	}
	if !ok {
		a.fill(dst)
		return nil
	}
	if err := sc.inner.decode(dst, data); err != nil {
		return fmt.Errorf("%w: chunk %s: sharding_indexed codec: inner chunk %d: %w", ErrCorrupt, key, i, err)
	}
	return nil
}

// innerEncoded returns the stored bytes of inner chunk i of the shard
// under key: ok is false when the shard's index marks the chunk as not
// stored (it reads as the fill value), and a missing shard is an error
// wrapping ErrNotFound. It reads the index and then the chunk with ranged
// reads when the store can (see ReadInnerChunk), else the whole shard.
// The bytes go into into when they fit and the store reads ranges into
// buffers (RangesReaderInto).
func (a *Array) innerEncoded(ctx context.Context, key string, i int, into []byte) (data []byte, ok bool, err error) {
	sc := a.shard
	stored, ranged, err := a.shardIndex(ctx, key)
	if !ranged {
		whole, err := a.store.Get(ctx, key)
		if err != nil {
			return nil, false, err
		}
		stored, err := sc.indexOf(whole)
		if err != nil {
			return nil, false, fmt.Errorf("%w: chunk %s: %w", ErrCorrupt, key, err)
		}
		off, n, ok, err := a.innerEntry(key, i, stored, int64(len(whole)))
		if !ok || err != nil {
			return nil, false, err
		}
		return whole[off : off+n], true, nil
	}
	if err != nil {
		return nil, false, err
	}
	off, n, ok, err := a.innerEntry(key, i, stored, -1)
	if !ok || err != nil {
		return nil, false, err
	}
	if rr, isRR := a.store.(RangesReaderInto); isRR && int64(len(into)) >= n {
		data = into[:n]
		err = rr.GetRangesInto(ctx, key, []int64{off}, [][]byte{data})
		if errors.Is(err, ErrCorrupt) {
			err = fmt.Errorf("%w: chunk %s: inner chunk %d at [%d, +%d) outside the shard", ErrCorrupt, key, i, off, n)
		}
	} else {
		data, err = a.store.(RangeGetter).GetRange(ctx, key, off, n)
		if err == nil && int64(len(data)) != n {
			err = fmt.Errorf("%w: chunk %s: inner chunk %d at [%d, +%d) outside the shard", ErrCorrupt, key, i, off, n)
		}
	}
	if errors.Is(err, ErrNotFound) {
		return nil, false, fmt.Errorf("%w: chunk %s: removed while its inner chunk %d was read", ErrCorrupt, key, i)
	}
	if err != nil {
		return nil, false, err
	}
	return data, true, nil
}

// shardIndex reads the stored index of the shard under key with one
// ranged read; ranged is false (and nothing is read) when the store cannot
// read the index on its own: no RangeGetter, or no SuffixGetter for an
// index at the end.
func (a *Array) shardIndex(ctx context.Context, key string) (stored []byte, ranged bool, err error) {
	sc := a.shard
	if rg, ok := a.store.(RangeGetter); ok && sc.atStart {
		stored, err = rg.GetRange(ctx, key, 0, int64(sc.indexSize))
		return stored, true, err
	}
	if _, ok := a.store.(RangeGetter); ok && !sc.atStart {
		if sg, ok := a.store.(SuffixGetter); ok {
			stored, err = sg.GetSuffix(ctx, key, int64(sc.indexSize))
			return stored, true, err
		}
	}
	return nil, false, nil
}

// innerEntry decodes a shard's stored index and returns inner chunk i's
// byte range within a shard of size bytes (size < 0: not checked).
func (a *Array) innerEntry(key string, i int, stored []byte, size int64) (off, n int64, ok bool, err error) {
	entries, err := a.shard.decodeIndex(stored)
	if err != nil {
		return 0, 0, false, fmt.Errorf("%w: chunk %s: %w", ErrCorrupt, key, err)
	}
	off, n, ok, err = a.shard.entry(entries, i, size)
	if err != nil {
		return 0, 0, false, fmt.Errorf("%w: chunk %s: %w", ErrCorrupt, key, err)
	}
	return off, n, ok, nil
}

// ByInnerChunks returns a read-only view of a whose chunks are a's inner
// chunks: on a sharded array whose inner chunks can be read on their own,
// an Array whose ChunkShape is the inner chunk shape, whose grid is
// InnerGridShape and whose ReadChunk reads one inner chunk as
// ReadInnerChunk does (its Metadata names the inner chunk shape and
// codecs); otherwise a itself. This is the grid readers use, as
// zarr-python's Array.chunks is: reading a block costs its inner chunks,
// not its whole shard. In the view a missing shard or inner chunk always
// reads as the fill value, and WriteChunk fails with ErrInvalid.
func (a *Array) ByInnerChunks() (*Array, error) {
	sc := a.shard
	if sc == nil {
		return a, nil
	}
	meta := a.meta.clone()
	meta.ChunkShape = slices.Clone(sc.innerSpec.shape)
	meta.Codecs = cloneCodecs(sc.inner.codecs)
	meta.ChunkKeyEncoding = ChunkKeyEncoding{Name: "default", Separator: "/"}
	s := &innerStore{outer: a, prefix: nodeKey(a.path, "c")}
	return newArray(s, a.path, meta)
}

// innerStore serves the chunks of ByInnerChunks' view: the key of inner
// chunk (i, j, …) under the default encoding is read as that inner chunk
// of its shard in the outer array's store. A chunk the shard's index marks
// as not stored is missing (ErrNotFound), so it reads as the fill value.
type innerStore struct {
	outer  *Array
	prefix string // the view's chunk key prefix, "<path>/c"
}

// locate returns the key of the shard holding the inner chunk under key,
// and the chunk's index within the shard.
func (s *innerStore) locate(key string) (shardKey string, i int, err error) {
	a, sc := s.outer, s.outer.shard
	bad := fmt.Errorf("%w: %q is not an inner chunk key of array %q", ErrInvalid, key, a.path)
	rest, found := strings.CutPrefix(key, s.prefix)
	if !found {
		return "", 0, bad
	}
	var parts []string
	if rest != "" {
		if rest[0] != '/' {
			return "", 0, bad
		}
		parts = strings.Split(rest[1:], "/")
	}
	if len(parts) != len(sc.grid) {
		return "", 0, bad
	}
	shard := make([]int, len(parts))
	within := make([]int, len(parts))
	for d, p := range parts {
		c, err := strconv.Atoi(p)
		if err != nil || c < 0 || c >= a.grid[d]*sc.grid[d] {
			return "", 0, bad
		}
		shard[d], within[d] = c/sc.grid[d], c%sc.grid[d]
	}
	return a.ChunkKey(shard), sc.innerIndex(within), nil
}

func (s *innerStore) read(ctx context.Context, key string, into []byte) ([]byte, error) {
	shardKey, i, err := s.locate(key)
	if err != nil {
		return nil, err
	}
	data, ok, err := s.outer.innerEncoded(ctx, shardKey, i, into)
	if err == nil && !ok {
		err = fmt.Errorf("%w: inner chunk %d of chunk %s is not stored", ErrNotFound, i, shardKey)
	}
	return data, err
}

// Get implements Store.
func (s *innerStore) Get(ctx context.Context, key string) ([]byte, error) {
	data, err := s.read(ctx, key, nil)
	if err != nil {
		return nil, err
	}
	return slices.Clip(data), nil
}

// GetInto implements ReaderInto: the chunk's bytes go straight into dst
// when the outer store reads ranges into buffers.
func (s *innerStore) GetInto(ctx context.Context, key string, dst []byte) (int, error) {
	data, err := s.read(ctx, key, dst)
	if err != nil {
		return 0, err
	}
	if len(data) > len(dst) {
		return 0, fmt.Errorf("%w: %s: %d bytes, longer than the %d-byte buffer", ErrCorrupt, key, len(data), len(dst))
	}
	if len(data) > 0 && &data[0] != &dst[0] {
		copy(dst, data)
	}
	return len(data), nil
}

// Prefetch implements Prefetcher: when the outer store prefetches ranges
// (RangePrefetcher, a local file store), it reads the shard's index and
// asks for the inner chunk's bytes, so that the engine's read-ahead of the
// next block reaches sharded sources too. Errors are dropped: the read
// reports them.
func (s *innerStore) Prefetch(ctx context.Context, key string) error {
	rp, ok := s.outer.store.(RangePrefetcher)
	if !ok {
		return nil
	}
	a := s.outer
	shardKey, i, err := s.locate(key)
	if err != nil {
		return nil
	}
	stored, ranged, err := a.shardIndex(ctx, shardKey)
	if !ranged || err != nil {
		return nil
	}
	if off, n, ok, err := a.innerEntry(shardKey, i, stored, -1); ok && err == nil {
		_ = rp.PrefetchRange(ctx, shardKey, off, n)
	}
	return nil
}

// Set implements Store: the view is read-only.
func (s *innerStore) Set(ctx context.Context, key string, value []byte) error {
	return fmt.Errorf("%w: cannot write %s: the inner chunks of array %q are a read-only view", ErrInvalid, key, s.outer.path)
}

// Delete implements Store: the view is read-only.
func (s *innerStore) Delete(ctx context.Context, key string) error {
	return s.Set(ctx, key, nil)
}
