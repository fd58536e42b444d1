package zarr

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// The "sharding_indexed" codec (zarr-specs codecs/sharding-indexed) stores
// a chunk (a shard) as a grid of inner chunks, each encoded with its own
// codec chain, and an index of their byte ranges at the start or the end:
// per inner chunk in C order, two uint64 (offset from the start of the
// shard, length), encoded with index_codecs so its size is fixed;
// (2^64-1, 2^64-1) marks an inner chunk that is not stored, which reads as
// the fill value.
//
// Encoding writes the whole shard: the inner chunks in C order, those
// equal to the fill value left out, then (or before them) the index.
// Decoding reads any layout whose index is valid; every inner chunk is
// decoded into a buffer of exactly its size.

func init() { registerCodec("sharding_indexed", newShardingCodec) }

// ShardingCodec returns the "sharding_indexed" array→bytes codec: shards
// of inner chunks of chunkShape, each encoded with codecs (nil means
// [BytesCodec()]), the index at indexLocation "start" or "end" ("" means
// "end"), encoded with bytes and crc32c as zarr-python does.
func ShardingCodec(chunkShape []int, codecs []Codec, indexLocation string) Codec {
	if codecs == nil {
		codecs = []Codec{BytesCodec()}
	}
	if indexLocation == "" {
		indexLocation = "end"
	}
	return Codec{Name: "sharding_indexed", Configuration: map[string]any{
		"chunk_shape":    slices.Clone(chunkShape),
		"codecs":         cloneCodecs(codecs),
		"index_codecs":   []Codec{BytesCodec(), Crc32cCodec()},
		"index_location": indexLocation,
	}}
}

type shardingCodec struct {
	spec       chunkSpec // the shard
	innerSpec  chunkSpec
	grid       []int // inner chunks per dimension
	nInner     int
	inner      *pipeline
	index      *pipeline
	indexSize  int // stored size of the index
	atStart    bool
	innerBytes int
	fill       fillPattern
}

const emptyEntry = math.MaxUint64

func newShardingCodec(config map[string]any, spec chunkSpec) (codec, error) {
	const name = "sharding_indexed"
	if err := checkConfigKeys(name, config, "chunk_shape", "codecs", "index_codecs", "index_location"); err != nil {
		return nil, err
	}
	shape, ok, err := configInts(name, config, "chunk_shape")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: codec %q: no chunk_shape", ErrInvalid, name)
	}
	if len(shape) != len(spec.shape) {
		return nil, fmt.Errorf("%w: codec %q: chunk_shape %v for %d-d shards", ErrInvalid, name, shape, len(spec.shape))
	}
	c := &shardingCodec{spec: spec, grid: make([]int, len(shape)), nInner: 1}
	for i, d := range shape {
		if d < 1 || spec.shape[i]%d != 0 {
			return nil, fmt.Errorf("%w: codec %q: chunk_shape %v does not divide the shard shape %v", ErrInvalid, name, shape, spec.shape)
		}
		c.grid[i] = spec.shape[i] / d
		c.nInner *= c.grid[i]
	}
	c.innerSpec = chunkSpec{shape: shape, dataType: spec.dataType, fillValue: spec.fillValue}
	c.innerBytes = c.innerSpec.byteSize()
	c.fill = newFillPattern(spec.fill())

	codecs, _, err := configCodecs(name, config, "codecs")
	if err != nil {
		return nil, err
	}
	if c.inner, err = newPipeline(codecs, c.innerSpec); err != nil {
		return nil, fmt.Errorf("%w (in codec %q, codecs)", err, name)
	}
	indexCodecs, ok, err := configCodecs(name, config, "index_codecs")
	if err != nil {
		return nil, err
	}
	if !ok {
		indexCodecs = []Codec{BytesCodec(), Crc32cCodec()}
	}
	indexSpec := chunkSpec{shape: append(slices.Clone(c.grid), 2), dataType: Uint64, fillValue: le64(emptyEntry)}
	if c.index, err = newPipeline(indexCodecs, indexSpec); err != nil {
		return nil, fmt.Errorf("%w (in codec %q, index_codecs)", err, name)
	}
	if c.indexSize = c.index.exactStoredSize(); c.indexSize < 0 {
		return nil, fmt.Errorf("%w: codec %q: index_codecs %v without a fixed encoded size", ErrNotImplemented, name, c.index.codecs)
	}
	loc, ok, err := configString(name, config, "index_location")
	if err != nil {
		return nil, err
	}
	switch {
	case !ok || loc == "end":
	case loc == "start":
		c.atStart = true
	default:
		return nil, fmt.Errorf("%w: codec %q: index_location %q (want \"start\" or \"end\")", ErrInvalid, name, loc)
	}
	return c, nil
}

func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func (c *shardingCodec) metadata() Codec {
	loc := "end"
	if c.atStart {
		loc = "start"
	}
	return Codec{Name: "sharding_indexed", Configuration: map[string]any{
		"chunk_shape":    slices.Clone(c.innerSpec.shape),
		"codecs":         cloneCodecs(c.inner.codecs),
		"index_codecs":   cloneCodecs(c.index.codecs),
		"index_location": loc,
	}}
}

func (c *shardingCodec) encodedSize(int) int {
	return c.indexSize + c.nInner*c.inner.storedSizeBound()
}

func (c *shardingCodec) passThrough() bool { return false }

// innerOrigin sets origin to the element coordinates, in the shard, of the
// inner chunk with linear (C-order) index i.
func (c *shardingCodec) innerOrigin(i int, origin []int) {
	for d := len(c.grid) - 1; d >= 0; d-- {
		origin[d] = i % c.grid[d] * c.innerSpec.shape[d]
		i /= c.grid[d]
	}
}

// innerIndex returns the linear index of the inner chunk at coords (in
// inner chunks, within the shard).
func (c *shardingCodec) innerIndex(coords []int) int {
	i := 0
	for d, g := range c.grid {
		i = i*g + coords[d]
	}
	return i
}

func (c *shardingCodec) encode(dst, src []byte) ([]byte, error) {
	if len(src) != c.spec.byteSize() {
		return nil, fmt.Errorf("sharding_indexed codec: shard has %d bytes, want %d", len(src), c.spec.byteSize())
	}
	base := len(dst)
	if c.atStart {
		dst = append(dst, make([]byte, c.indexSize)...)
	}
	entries := make([]byte, 16*c.nInner)
	buf := getBuffer(c.innerBytes)
	defer putBuffer(buf)
	whole := c.nInner == 1
	origin := make([]int, len(c.grid))
	zero := make([]int, len(c.grid))
	elem := c.spec.dataType.Size()
	for i := range c.nInner {
		chunk := src
		if !whole {
			c.innerOrigin(i, origin)
			chunk = (*buf)[:c.innerBytes]
			copyBlock(chunk, c.innerSpec.shape, zero, src, c.spec.shape, origin, c.innerSpec.shape, elem)
		}
		if c.fill.matches(chunk) {
			binary.LittleEndian.PutUint64(entries[16*i:], emptyEntry)
			binary.LittleEndian.PutUint64(entries[16*i+8:], emptyEntry)
			continue
		}
		enc, release, err := c.inner.encode(chunk)
		if err != nil {
			return nil, err
		}
		binary.LittleEndian.PutUint64(entries[16*i:], uint64(len(dst)-base))
		binary.LittleEndian.PutUint64(entries[16*i+8:], uint64(len(enc)))
		dst = append(dst, enc...)
		release()
	}
	index, release, err := c.index.encode(entries)
	if err != nil {
		return nil, err
	}
	defer release()
	if len(index) != c.indexSize {
		return nil, fmt.Errorf("sharding_indexed codec: index encoded to %d bytes, want %d", len(index), c.indexSize)
	}
	if c.atStart {
		copy(dst[base:], index)
	} else {
		dst = append(dst, index...)
	}
	return dst, nil
}

// indexOf returns the stored index of a whole shard, or an error when the
// shard is shorter than its index.
func (c *shardingCodec) indexOf(shard []byte) ([]byte, error) {
	if len(shard) < c.indexSize {
		return nil, fmt.Errorf("sharding_indexed codec: shard of %d bytes is shorter than its %d-byte index", len(shard), c.indexSize)
	}
	if c.atStart {
		return shard[:c.indexSize], nil
	}
	return shard[len(shard)-c.indexSize:], nil
}

// decodeIndex decodes a stored index into (offset, length) pairs.
func (c *shardingCodec) decodeIndex(stored []byte) ([]uint64, error) {
	if len(stored) != c.indexSize {
		return nil, fmt.Errorf("sharding_indexed codec: index of %d bytes, want %d", len(stored), c.indexSize)
	}
	raw := make([]byte, 16*c.nInner)
	if err := c.index.decode(raw, stored); err != nil {
		return nil, fmt.Errorf("sharding_indexed codec: index: %w", err)
	}
	entries := make([]uint64, 2*c.nInner)
	for i := range entries {
		entries[i] = binary.LittleEndian.Uint64(raw[8*i:])
	}
	return entries, nil
}

// entry returns inner chunk i's byte range; ok is false for an empty
// chunk. The range must lie within size bytes (size < 0: not checked).
func (c *shardingCodec) entry(entries []uint64, i int, size int64) (off, n int64, ok bool, err error) {
	o, l := entries[2*i], entries[2*i+1]
	if o == emptyEntry && l == emptyEntry {
		return 0, 0, false, nil
	}
	if o > math.MaxInt64/2 || l > math.MaxInt64/2 || (size >= 0 && int64(o+l) > size) {
		return 0, 0, false, fmt.Errorf("sharding_indexed codec: inner chunk %d at [%d, +%d) outside the %d-byte shard", i, o, l, size)
	}
	return int64(o), int64(l), true, nil
}

func (c *shardingCodec) decode(dst, src []byte) error {
	if len(dst) != c.spec.byteSize() {
		return fmt.Errorf("sharding_indexed codec: shard buffer of %d bytes, want %d", len(dst), c.spec.byteSize())
	}
	stored, err := c.indexOf(src)
	if err != nil {
		return err
	}
	entries, err := c.decodeIndex(stored)
	if err != nil {
		return err
	}
	whole := c.nInner == 1
	var buf *[]byte
	if !whole {
		buf = getBuffer(c.innerBytes)
		defer putBuffer(buf)
	}
	origin := make([]int, len(c.grid))
	zero := make([]int, len(c.grid))
	elem := c.spec.dataType.Size()
	for i := range c.nInner {
		off, n, ok, err := c.entry(entries, i, int64(len(src)))
		if err != nil {
			return err
		}
		chunk := dst
		if !whole {
			chunk = (*buf)[:c.innerBytes]
		}
		if !ok {
			c.fill.fill(chunk)
		} else if err := c.inner.decode(chunk, src[off:off+n]); err != nil {
			return fmt.Errorf("sharding_indexed codec: inner chunk %d: %w", i, err)
		}
		if !whole {
			c.innerOrigin(i, origin)
			copyBlock(dst, c.spec.shape, origin, chunk, c.innerSpec.shape, zero, c.innerSpec.shape, elem)
		}
	}
	return nil
}
