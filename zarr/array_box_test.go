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
	for _, s := range []zarr.Store{file, zarr.NewMemoryStore()} {
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
			band := i%10 == 5
			if band {
				// A band of whole rows (adjacent in the chunk, scattered in
				// dst), more of them than one vectored read takes.
				nd, cs = 2, []int{1100 + r.IntN(1000), 1 + r.IntN(4)}
				shape = []int{2 * cs[0], cs[1]}
			}
			a, err := zarr.CreateArray(ctx, s, fmt.Sprintf("x%d", i), zarr.ArrayMetadata{Shape: shape, ChunkShape: cs, DataType: zarr.Float64, Codecs: []zarr.Codec{zarr.BytesCodec()}})
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
				for _, scratch := range [][]byte{make([]byte, a.ChunkBytes()), nil} {
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
						t.Fatalf("case %d chunk %v box %v+%v (scratch %d, pad %d): wrong elements", i, cs, start, count, len(scratch), pad)
					}
				}
			}
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
