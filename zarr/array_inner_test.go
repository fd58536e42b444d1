package zarr_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/cubego/cubego/zarr"
)

// rangeCounter counts the bytes a store hands out, by any read, and
// records the ranges it is asked to prefetch.
type rangeCounter struct {
	zarr.Store
	bytes, wholeGets int64
	prefetched       []prefetch
}

type prefetch struct {
	key       string
	off, size int64
}

func (s *rangeCounter) PrefetchRange(ctx context.Context, key string, off, n int64) error {
	s.prefetched = append(s.prefetched, prefetch{key, off, n})
	return nil
}

func (s *rangeCounter) Get(ctx context.Context, key string) ([]byte, error) {
	v, err := s.Store.Get(ctx, key)
	s.bytes += int64(len(v))
	s.wholeGets++
	return v, err
}

func (s *rangeCounter) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	v, err := s.Store.(zarr.RangeGetter).GetRange(ctx, key, off, n)
	s.bytes += int64(len(v))
	return v, err
}

func (s *rangeCounter) GetSuffix(ctx context.Context, key string, n int64) ([]byte, error) {
	v, err := s.Store.(zarr.SuffixGetter).GetSuffix(ctx, key, n)
	s.bytes += int64(len(v))
	return v, err
}

func (s *rangeCounter) GetRangesInto(ctx context.Context, key string, offsets []int64, dsts [][]byte) error {
	for _, d := range dsts {
		s.bytes += int64(len(d))
	}
	return s.Store.(zarr.RangesReaderInto).GetRangesInto(ctx, key, offsets, dsts)
}

// TestByInnerChunks: the view of a sharded array (index at either end,
// zstd inside) has the inner chunks as its grid; each of its chunks is
// what ReadInnerChunk gives, costs ranged reads of about the chunk's
// stored bytes (never the whole shard), and a missing shard or an inner
// chunk left out of its shard reads as the fill value. The view cannot be
// written, and an array that is not sharded is its own view.
func TestByInnerChunks(t *testing.T) {
	ctx := context.Background()
	for _, loc := range []string{"end", "start"} {
		t.Run(loc, func(t *testing.T) {
			mem := zarr.NewMemoryStore()
			meta := zarr.ArrayMetadata{
				Shape: []int{40, 30}, ChunkShape: []int{20, 30}, DataType: zarr.Float64,
				FillValue: binary.LittleEndian.AppendUint64(nil, math.Float64bits(-1)),
				Codecs: []zarr.Codec{zarr.ShardingCodec([]int{10, 10},
					[]zarr.Codec{zarr.BytesCodec(), zarr.ZstdCodec(0, false)}, loc)},
			}
			a, err := zarr.CreateArray(ctx, mem, "x", meta)
			if err != nil {
				t.Fatal(err)
			}
			// Shard (0, 0) holds distinct values but its inner chunk (1, 2),
			// which is all fill value and so left out; shard (1, 0) is
			// never written.
			shard := make([]byte, a.ChunkBytes())
			for i := range 20 * 30 {
				v := float64(i)
				if r, c := i/30, i%30; r >= 10 && c >= 20 {
					v = -1
				}
				binary.LittleEndian.PutUint64(shard[8*i:], math.Float64bits(v))
			}
			if err := a.WriteChunk(ctx, []int{0, 0}, shard); err != nil {
				t.Fatal(err)
			}

			counter := &rangeCounter{Store: mem}
			b, err := zarr.OpenArray(ctx, counter, "x")
			if err != nil {
				t.Fatal(err)
			}
			view, err := b.ByInnerChunks()
			if err != nil {
				t.Fatal(err)
			}
			if got := view.ChunkShape(); !slices.Equal(got, []int{10, 10}) {
				t.Errorf("view chunk shape %v, want [10 10]", got)
			}
			if got := view.GridShape(); !slices.Equal(got, []int{4, 3}) {
				t.Errorf("view grid %v, want [4 3]", got)
			}
			if got := view.Metadata().ChunkShape; !slices.Equal(got, []int{10, 10}) {
				t.Errorf("view metadata chunk shape %v, want [10 10]", got)
			}
			if view.ChunkBytes() != 800 {
				t.Errorf("view chunk bytes %d, want 800", view.ChunkBytes())
			}

			got := make([]byte, 800)
			want := make([]byte, 800)
			fill := make([]byte, 800)
			for i := range 100 {
				binary.LittleEndian.PutUint64(fill[8*i:], math.Float64bits(-1))
			}
			for r := range 4 {
				for c := range 3 {
					coords := []int{r, c}
					if err := b.ReadInnerChunk(ctx, coords, want); err != nil {
						t.Fatal(err)
					}
					counter.prefetched = nil
					if !view.PrefetchChunk(ctx, coords) {
						t.Errorf("view.PrefetchChunk(%v) did not ask the store", coords)
					}
					counter.bytes, counter.wholeGets = 0, 0
					if err := view.ReadChunk(ctx, coords, got); err != nil {
						t.Fatalf("view.ReadChunk(%v): %v", coords, err)
					}
					// The prefetch names the shard and exactly the bytes
					// the read takes after the index; nothing for a chunk
					// that is not stored.
					stored := r < 2 && !(r == 1 && c == 2)
					if stored {
						if len(counter.prefetched) != 1 || counter.prefetched[0].key != "x/c/0/0" ||
							counter.prefetched[0].size != counter.bytes-(6*16+4) {
							t.Errorf("chunk %v: prefetched %v, want the %d bytes read of x/c/0/0", coords, counter.prefetched, counter.bytes-(6*16+4))
						}
					} else if len(counter.prefetched) != 0 {
						t.Errorf("chunk %v, not stored: prefetched %v", coords, counter.prefetched)
					}
					if !slices.Equal(got, want) {
						t.Errorf("view chunk %v differs from ReadInnerChunk", coords)
					}
					if r >= 2 || r == 1 && c == 2 {
						if !slices.Equal(got, fill) {
							t.Errorf("view chunk %v is not the fill value", coords)
						}
					} else if v := math.Float64frombits(binary.LittleEndian.Uint64(got)); v != float64(r*10*30+c*10) {
						t.Errorf("view chunk %v starts with %v, want %d", coords, v, r*10*30+c*10)
					}
					// The shard's index (6 entries, 16 bytes each, and a
					// checksum) and at most the chunk's stored bytes.
					if counter.wholeGets != 0 || counter.bytes > 6*16+4+800+64 {
						t.Errorf("view chunk %v read %d bytes with %d whole reads; want ranged reads of the index and the chunk", coords, counter.bytes, counter.wholeGets)
					}
				}
			}

			if err := view.WriteChunk(ctx, []int{0, 0}, got); !errors.Is(err, zarr.ErrInvalid) {
				t.Errorf("writing through the view: %v, want ErrInvalid", err)
			}
			if err := b.ReadChunk(ctx, []int{0, 0}, shard); err != nil {
				t.Fatal(err)
			}
			if v := math.Float64frombits(binary.LittleEndian.Uint64(shard[8:])); v != 1 {
				t.Errorf("after the refused write the shard holds %v at (0, 1), want 1", v)
			}
			if err := view.ReadChunk(ctx, []int{4, 0}, got); !errors.Is(err, zarr.ErrInvalid) {
				t.Errorf("chunk outside the view's grid: %v, want ErrInvalid", err)
			}
		})
	}

	plain, err := zarr.CreateArray(ctx, zarr.NewMemoryStore(), "p", zarr.ArrayMetadata{
		Shape: []int{4}, ChunkShape: []int{2}, DataType: zarr.Int32})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := plain.ByInnerChunks(); err != nil || v != plain {
		t.Errorf("an array without shards: view %p (%v), want itself %p", v, err, plain)
	}
}

// TestByInnerChunksCorruptIndex: an inner chunk whose index entry points
// past the shard is an error wrapping ErrCorrupt, not data.
func TestByInnerChunksCorruptIndex(t *testing.T) {
	ctx := context.Background()
	mem := zarr.NewMemoryStore()
	a, err := zarr.CreateArray(ctx, mem, "", zarr.ArrayMetadata{
		Shape: []int{4}, ChunkShape: []int{4}, DataType: zarr.Int32,
		Codecs: []zarr.Codec{zarr.ShardingCodec([]int{2}, []zarr.Codec{zarr.BytesCodec()}, "start")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.WriteChunk(ctx, []int{0}, []byte{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	view, err := a.ByInnerChunks()
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, 8)
	if err := view.ReadChunk(ctx, []int{1}, dst); err != nil || binary.LittleEndian.Uint32(dst) != 3 {
		t.Fatalf("inner chunk 1: %v %v, want 3 4", err, dst)
	}
	// Cut the shard short: its second inner chunk now lies past the end.
	v, err := mem.Get(ctx, "c/0")
	if err != nil {
		t.Fatal(err)
	}
	if err := mem.Set(ctx, "c/0", v[:len(v)-4]); err != nil {
		t.Fatal(err)
	}
	if err := view.ReadChunk(ctx, []int{1}, dst); !errors.Is(err, zarr.ErrCorrupt) {
		t.Errorf("inner chunk past the shard's end: %v, want ErrCorrupt", err)
	}
}
