package zarr_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/cubego/cubego/zarr"
)

// TestReadChunkBox: random boxes of raw chunks, read into a strided
// destination from file and memory stores (with scratch large enough to
// group runs, and with none so every run is its own read), hold exactly
// the elements ReadChunk gives, and leave the rest of dst alone.
func TestReadChunkBox(t *testing.T) {
	ctx := context.Background()
	file, err := zarr.OpenStore(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	stores := []zarr.Store{file, zarr.NewMemoryStore(), rangesOnly{file}, uncached{file}}
	for si, s := range stores {
		for i := range 60 {
			nd := 1 + r.IntN(3)
			cs := make([]int, nd)
			shape := make([]int, nd)
			for d := range nd {
				cs[d] = 1 + r.IntN(40)
				shape[d] = cs[d] * 2
			}
			if i%10 == 0 {
				// Rows of 320 kB: gaps over BoxReadGap.
				nd, cs, shape = 2, []int{1 + r.IntN(8), 40000}, []int{16, 40000}
			}
			if i%10 == 7 {
				// Rows of 16–48 kB, from which the box takes a few
				// elements: gaps long enough to read the runs one by one
				// when they are cached (the column of W6's a[1:, 1:]).
				nd, cs, shape = 2, []int{2 + r.IntN(30), 2048 + r.IntN(4096)}, []int{64, 6144 * 2}
			}
			band := i%10 == 5
			if band {
				// A band of whole rows (adjacent in the chunk, scattered in
				// dst), more of them than one vectored read takes.
				nd, cs = 2, []int{1100 + r.IntN(1000), 1 + r.IntN(4)}
				shape = []int{2 * cs[0], cs[1]}
			}
			a, err := zarr.CreateArray(ctx, s, fmt.Sprintf("s%dx%d", si, i), zarr.ArrayMetadata{Shape: shape, ChunkShape: cs, DataType: zarr.Float64, Codecs: []zarr.Codec{zarr.BytesCodec()}})
			if err != nil {
				t.Fatal(err)
			}
			chunk := make([]byte, a.ChunkBytes())
			for k := range len(chunk) / 8 {
				binary.LittleEndian.PutUint64(chunk[8*k:], uint64(k+1))
			}
			coords := make([]int, nd)
			coords[0] = 1
			if err := a.WriteChunk(ctx, coords, chunk); err != nil {
				t.Fatal(err)
			}
			start, count := make([]int, nd), make([]int, nd)
			for d := range nd {
				start[d] = r.IntN(cs[d])
				count[d] = 1 + r.IntN(cs[d]-start[d])
			}
			if i%10 == 7 {
				count[1] = min(count[1], 1+r.IntN(3))
			}
			if band {
				start[0], count[0] = r.IntN(10), cs[0]-10
				start[1], count[1] = 0, cs[1]
			}
			if i%3 == 1 {
				// Whole along every dimension but the first.
				for d := 1; d < nd; d++ {
					start[d], count[d] = 0, cs[d]
				}
			}
			// dst is the box inside a larger region, offset by one element
			// along each dimension, or exactly the box (its rows contiguous:
			// dimensions the box spans whole are read as one run).
			for _, pad := range []int{2, 0} {
				region := make([]int, nd)
				for d := range nd {
					region[d] = count[d] + pad
				}
				strides := cstrides(region)
				off := 0
				for d := range nd {
					off += strides[d] * pad / 2
				}
				// Scratch takes the gaps read through: whole, in 3-byte
				// pieces, or not at all (every run its own read).
				for _, scratch := range [][]byte{make([]byte, a.ChunkBytes()), make([]byte, 3), nil} {
					dst := make([]byte, 8*prod(region))
					ok, err := a.ReadChunkBox(ctx, coords, start, count, dst, off, strides, scratch)
					if err != nil || !ok {
						t.Fatalf("case %d chunk %v box %v+%v: read %v, %v", i, cs, start, count, ok, err)
					}
					want := make([]byte, len(dst))
					cstr := cstrides(cs)
					idx := make([]int, nd)
					for e := range prod(count) {
						rest, src, to := e, 0, off
						for d := nd - 1; d >= 0; d-- {
							idx[d] = rest % count[d]
							rest /= count[d]
							src += (start[d] + idx[d]) * cstr[d]
							to += idx[d] * strides[d]
						}
						copy(want[8*to:8*to+8], chunk[8*src:8*src+8])
					}
					if string(dst) != string(want) {
						t.Fatalf("store %d case %d chunk %v box %v+%v (scratch %d, pad %d): wrong elements", si, i, cs, start, count, len(scratch), pad)
					}
				}
			}
		}
	}
}

// rangesOnly is a store that reads ranges but cannot tell which are
// cached: ReadChunkBox reads every box across its short gaps.
type rangesOnly struct{ zarr.Store }

func (s rangesOnly) GetRangesInto(ctx context.Context, key string, offsets []int64, dsts [][]byte) error {
	return s.Store.(zarr.RangesReaderInto).GetRangesInto(ctx, key, offsets, dsts)
}

// uncached is a store whose cached reads always find a range missing,
// after writing junk into the first destination: ReadChunkBox must read
// the box again, through its gaps.
type uncached struct{ zarr.Store }

func (s uncached) GetRangesInto(ctx context.Context, key string, offsets []int64, dsts [][]byte) error {
	return s.Store.(zarr.RangesReaderInto).GetRangesInto(ctx, key, offsets, dsts)
}

func (s uncached) GetCachedRangesInto(ctx context.Context, key string, offsets []int64, dsts [][]byte) (bool, error) {
	for i := range dsts[0] {
		dsts[0][i] = 0xff
	}
	return false, nil
}

// recorder counts a store's range reads and the ranges and gap pieces
// they ask for.
type recorder struct {
	zarr.Store
	reads, cachedReads, ranges int
	longest                    int
	// scattered is set by a request whose ranges do not follow each
	// other (a file reads them with more than one system call).
	scattered bool
}

func (s *recorder) GetRangesInto(ctx context.Context, key string, offsets []int64, dsts [][]byte) error {
	s.reads++
	s.ranges += len(offsets)
	for i, d := range dsts {
		s.longest = max(s.longest, len(d))
		s.scattered = s.scattered || i > 0 && offsets[i] != offsets[i-1]+int64(len(dsts[i-1]))
	}
	return s.Store.(zarr.RangesReaderInto).GetRangesInto(ctx, key, offsets, dsts)
}

func (s *recorder) GetCachedRangesInto(ctx context.Context, key string, offsets []int64, dsts [][]byte) (bool, error) {
	s.cachedReads++
	s.ranges += len(offsets)
	return s.Store.(zarr.CachedRangesReaderInto).GetCachedRangesInto(ctx, key, offsets, dsts)
}

// TestReadChunkBoxRequests: the boxes of W6's a[1:, 1:] in a (64, 4096)
// chunk cost one request each. The rows but their first element go
// straight into dst with the one-element gaps read into scratch, never a
// copy of the chunk; the column (gaps of 32 kB) is read run by run from
// the page cache, or, where that is refused, through its gaps in pieces no
// longer than scratch.
func TestReadChunkBoxRequests(t *testing.T) {
	ctx := context.Background()
	file, err := zarr.OpenStore(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rows, cols := 64, 4096
	chunk := make([]byte, 8*rows*cols)
	for k := range rows * cols {
		binary.LittleEndian.PutUint64(chunk[8*k:], uint64(k+1))
	}
	elem := func(b []byte, k int) uint64 { return binary.LittleEndian.Uint64(b[8*k:]) }
	for _, tc := range []struct {
		name          string
		store         func(*recorder) zarr.Store
		start, count  []int
		reads, cached int
	}{
		{"rows", func(r *recorder) zarr.Store { return r }, []int{1, 1}, []int{rows - 1, cols - 1}, 1, 0},
		{"column", func(r *recorder) zarr.Store { return r }, []int{1, 0}, []int{rows - 1, 1}, 0, 1},
		{"column uncached", func(r *recorder) zarr.Store { return uncached{r} }, []int{1, 0}, []int{rows - 1, 1}, 1, 0},
	} {
		rec := &recorder{Store: file}
		a, err := zarr.CreateArray(ctx, tc.store(rec), tc.name, zarr.ArrayMetadata{Shape: []int{rows, cols}, ChunkShape: []int{rows, cols}, DataType: zarr.Float64, Codecs: []zarr.Codec{zarr.BytesCodec()}})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.WriteChunk(ctx, []int{0, 0}, chunk); err != nil {
			t.Fatal(err)
		}
		*rec = recorder{Store: file}
		scratch := make([]byte, 4000)
		dst := make([]byte, 8*prod(tc.count))
		ok, err := a.ReadChunkBox(ctx, []int{0, 0}, tc.start, tc.count, dst, 0, []int{tc.count[1], 1}, scratch)
		if err != nil || !ok {
			t.Fatalf("%s: read %v, %v", tc.name, ok, err)
		}
		for i := range tc.count[0] {
			for j := range tc.count[1] {
				if got, want := elem(dst, i*tc.count[1]+j), uint64((tc.start[0]+i)*cols+tc.start[1]+j+1); got != want {
					t.Fatalf("%s: element (%d, %d) = %d, want %d", tc.name, i, j, got, want)
				}
			}
		}
		if rec.reads != tc.reads || rec.cachedReads != tc.cached {
			t.Errorf("%s: %d range requests and %d cached ones, want %d and %d", tc.name, rec.reads, rec.cachedReads, tc.reads, tc.cached)
		}
		if tc.reads > 0 && rec.scattered {
			t.Errorf("%s: ranges with holes between them, want the box's span read in one pass", tc.name)
		}
		if tc.name == "rows" && (rec.ranges != 2*(rows-1)-1 || rec.longest != 8*(cols-1)) {
			t.Errorf("rows: %d ranges, longest %d bytes; want a row and a gap per row (%d), rows of %d bytes", rec.ranges, rec.longest, 2*(rows-1)-1, 8*(cols-1))
		}
		if tc.name == "column uncached" && rec.longest > len(scratch) {
			t.Errorf("column uncached: a piece of %d bytes, longer than scratch (%d)", rec.longest, len(scratch))
		}
	}
}

// TestReadChunkBoxDeclines: a missing chunk, a compressed chunk and a
// strided destination are not read (ReadChunk's work); a raw chunk file
// cut short is an error that names it.
func TestReadChunkBoxDeclines(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := zarr.OpenStore(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	meta := zarr.ArrayMetadata{Shape: []int{8, 8}, ChunkShape: []int{4, 4}, DataType: zarr.Float64, Codecs: []zarr.Codec{zarr.BytesCodec()}}
	raw, err := zarr.CreateArray(ctx, s, "raw", meta)
	if err != nil {
		t.Fatal(err)
	}
	meta.Codecs = []zarr.Codec{zarr.BytesCodec(), zarr.ZstdCodec(0, false)}
	packed, err := zarr.CreateArray(ctx, s, "packed", meta)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, raw.ChunkBytes())
	for k := range chunk {
		chunk[k] = byte(k + 1)
	}
	for _, a := range []*zarr.Array{raw, packed} {
		if err := a.WriteChunk(ctx, []int{0, 0}, chunk); err != nil {
			t.Fatal(err)
		}
	}
	dst := make([]byte, 8*4)
	box := func(a *zarr.Array, coords []int, strides []int) (bool, error) {
		return a.ReadChunkBox(ctx, coords, []int{1, 1}, []int{2, 2}, dst, 0, strides, nil)
	}
	if ok, err := box(raw, []int{1, 1}, []int{2, 1}); ok || err != nil {
		t.Errorf("missing chunk: %v, %v; want false, nil", ok, err)
	}
	if ok, err := box(packed, []int{0, 0}, []int{2, 1}); ok || err != nil {
		t.Errorf("compressed chunk: %v, %v; want false, nil", ok, err)
	}
	if ok, err := box(raw, []int{0, 0}, []int{2, 2}); ok || err != nil {
		t.Errorf("strided destination: %v, %v; want false, nil", ok, err)
	}
	if _, err := raw.ReadChunkBox(ctx, []int{0, 0}, []int{3, 0}, []int{2, 2}, dst, 0, []int{2, 1}, nil); !errors.Is(err, zarr.ErrInvalid) {
		t.Errorf("box outside the chunk: %v, want ErrInvalid", err)
	}
	key := filepath.Join(dir, "raw", "c", "0", "0")
	if err := os.Truncate(key, 40); err != nil {
		t.Fatal(err)
	}
	if _, err := box(raw, []int{0, 0}, []int{2, 1}); !errors.Is(err, zarr.ErrCorrupt) {
		t.Errorf("truncated chunk: %v, want ErrCorrupt", err)
	}
}

func cstrides(shape []int) []int {
	s := make([]int, len(shape))
	n := 1
	for d := len(shape) - 1; d >= 0; d-- {
		s[d] = n
		n *= shape[d]
	}
	return s
}

func prod(shape []int) int {
	n := 1
	for _, v := range shape {
		n *= v
	}
	return n
}
