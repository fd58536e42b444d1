package zarr

import (
	"context"
	"errors"
	"fmt"
	"slices"
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

// InnerGridShape returns the number of inner chunks along each dimension.
func (a *Array) InnerGridShape() []int {
	g := a.GridShape()
	if a.shard != nil {
		for i := range g {
			g[i] *= a.shard.grid[i]
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

	rg, ranged := a.store.(RangeGetter)
	sg, suffix := a.store.(SuffixGetter)
	if !ranged || (!sc.atStart && !suffix) {
		whole, err := a.store.Get(ctx, key)
		if errors.Is(err, ErrNotFound) {
			return a.missing(key, dst)
		}
		if err != nil {
			return err
		}
		stored, err := sc.indexOf(whole)
		if err != nil {
			return fmt.Errorf("%w: chunk %s: %w", ErrCorrupt, key, err)
		}
		return a.decodeInner(key, i, whole, stored, dst, int64(len(whole)))
	}

	var stored []byte
	var err error
	if sc.atStart {
		stored, err = rg.GetRange(ctx, key, 0, int64(sc.indexSize))
	} else {
		stored, err = sg.GetSuffix(ctx, key, int64(sc.indexSize))
	}
	if errors.Is(err, ErrNotFound) {
		return a.missing(key, dst)
	}
	if err != nil {
		return err
	}
	entries, err := sc.decodeIndex(stored)
	if err != nil {
		return fmt.Errorf("%w: chunk %s: %w", ErrCorrupt, key, err)
	}
	off, n, ok, err := sc.entry(entries, i, -1)
	if err != nil {
		return fmt.Errorf("%w: chunk %s: %w", ErrCorrupt, key, err)
	}
	if !ok {
		a.fill(dst)
		return nil
	}
	data, err := rg.GetRange(ctx, key, off, n)
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("%w: chunk %s: removed while its inner chunk %d was read", ErrCorrupt, key, i)
	}
	if err != nil {
		return err
	}
	if int64(len(data)) != n {
		return fmt.Errorf("%w: chunk %s: inner chunk %d at [%d, +%d) outside the shard", ErrCorrupt, key, i, off, n)
	}
	if err := sc.inner.decode(dst, data); err != nil {
		return fmt.Errorf("%w: chunk %s: sharding_indexed codec: inner chunk %d: %w", ErrCorrupt, key, i, err)
	}
	return nil
}

// decodeInner decodes inner chunk i from a whole shard.
func (a *Array) decodeInner(key string, i int, whole, stored, dst []byte, size int64) error {
	sc := a.shard
	entries, err := sc.decodeIndex(stored)
	if err != nil {
		return fmt.Errorf("%w: chunk %s: %w", ErrCorrupt, key, err)
	}
	off, n, ok, err := sc.entry(entries, i, size)
	if err != nil {
		return fmt.Errorf("%w: chunk %s: %w", ErrCorrupt, key, err)
	}
	if !ok {
		a.fill(dst)
		return nil
	}
	if err := sc.inner.decode(dst, whole[off:off+n]); err != nil {
		return fmt.Errorf("%w: chunk %s: sharding_indexed codec: inner chunk %d: %w", ErrCorrupt, key, i, err)
	}
	return nil
}
