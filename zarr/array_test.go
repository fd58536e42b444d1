package zarr_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cubego/cubego/zarr"
)

var allDataTypes = []zarr.DataType{
	zarr.Bool, zarr.Int8, zarr.Int16, zarr.Int32, zarr.Int64,
	zarr.Uint8, zarr.Uint16, zarr.Uint32, zarr.Uint64,
	zarr.Float16, zarr.Float32, zarr.Float64, zarr.Complex64, zarr.Complex128,
}

// codecChains are the chains every data type is tested with.
var codecChains = map[string][]zarr.Codec{
	"default":    nil,
	"little":     {zarr.BytesCodec()},
	"big":        {{Name: "bytes", Configuration: map[string]any{"endian": "big"}}},
	"zstd":       {zarr.BytesCodec(), zarr.ZstdCodec(0, false)},
	"big+zstd":   {{Name: "bytes", Configuration: map[string]any{"endian": "big"}}, zarr.ZstdCodec(5, true)},
	"zstd+zstd":  {zarr.BytesCodec(), zarr.ZstdCodec(1, false), zarr.ZstdCodec(1, true)},
	"big+zstdx2": {{Name: "bytes", Configuration: map[string]any{"endian": "big"}}, zarr.ZstdCodec(1, false), zarr.ZstdCodec(1, true)},
	"transpose":  {zarr.TransposeCodec([]int{1, 0}), zarr.BytesCodec()},
	"transpose+big+gzip": {zarr.TransposeCodec([]int{1, 0}), {Name: "bytes", Configuration: map[string]any{"endian": "big"}},
		zarr.GzipCodec(5)},
	"crc32c":                  {zarr.BytesCodec(), zarr.Crc32cCodec()},
	"gzip+crc32c":             {zarr.BytesCodec(), zarr.GzipCodec(1), zarr.Crc32cCodec()},
	"blosc_lz4_shuffle":       {zarr.BytesCodec(), zarr.BloscCodec("lz4", 5, "shuffle", 0, 0)},
	"blosc_lz4hc_noshuffle":   {zarr.BytesCodec(), zarr.BloscCodec("lz4hc", 9, "noshuffle", 0, 0)},
	"blosc_zstd_bitshuffle":   {zarr.BytesCodec(), zarr.BloscCodec("zstd", 3, "bitshuffle", 0, 0)},
	"blosc_zlib_shuffle":      {zarr.BytesCodec(), zarr.BloscCodec("zlib", 1, "shuffle", 0, 0)},
	"blosc_blosclz_shuffle":   {zarr.BytesCodec(), zarr.BloscCodec("blosclz", 5, "shuffle", 0, 0)},
	"blosc_snappy_bitshuffle": {zarr.BytesCodec(), zarr.BloscCodec("snappy", 5, "bitshuffle", 0, 0)},
	"shard_end":               {zarr.ShardingCodec([]int{1, 3}, []zarr.Codec{zarr.BytesCodec(), zarr.ZstdCodec(0, false)}, "end")},
	"shard_start":             {zarr.ShardingCodec([]int{2, 1}, nil, "start")},
	"shard_nested": {zarr.ShardingCodec([]int{1, 3}, []zarr.Codec{
		zarr.ShardingCodec([]int{1, 1}, []zarr.Codec{zarr.BytesCodec(), zarr.GzipCodec(1)}, "start")}, "end")},
	"transpose+shard": {zarr.TransposeCodec([]int{1, 0}), zarr.ShardingCodec([]int{3, 1},
		[]zarr.Codec{zarr.TransposeCodec([]int{1, 0}), zarr.BytesCodec(), zarr.Crc32cCodec()}, "end")},
}

// getOnlyStore hides the optional interfaces of a store, so arrays take
// their general paths.
type getOnlyStore struct{ s zarr.Store }

func (g getOnlyStore) Get(ctx context.Context, k string) ([]byte, error) { return g.s.Get(ctx, k) }
func (g getOnlyStore) Set(ctx context.Context, k string, v []byte) error {
	return g.s.Set(ctx, k, v)
}
func (g getOnlyStore) Delete(ctx context.Context, k string) error { return g.s.Delete(ctx, k) }

// randomChunk fills a chunk with valid elements of dt (bools are 0 or 1).
func randomChunk(rng *rand.Rand, dt zarr.DataType, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
		if dt == zarr.Bool {
			b[i] &= 1
		}
	}
	return b
}

func testStores(t *testing.T) map[string]zarr.Store {
	file, err := zarr.OpenStore(context.Background(), filepath.Join(t.TempDir(), "s.zarr"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zarr.Close(file) })
	return map[string]zarr.Store{
		"memory":  zarr.NewMemoryStore(),
		"getonly": getOnlyStore{zarr.NewMemoryStore()},
		"file":    file,
	}
}

func TestArrayReadWrite(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	for storeName, s := range testStores(t) {
		for chainName, chain := range codecChains {
			for _, dt := range allDataTypes {
				name := fmt.Sprintf("%s/%s/%s", storeName, chainName, dt)
				meta := zarr.ArrayMetadata{
					Shape: []int{5, 7}, ChunkShape: []int{2, 3}, DataType: dt, Codecs: chain,
					FillValue: bytes.Repeat([]byte{1}, dt.Size()),
				}
				path := strings.ReplaceAll(chainName+"/"+dt.String(), "+", "_")
				a, err := zarr.CreateArray(ctx, s, path, meta)
				if err != nil {
					t.Fatalf("%s: CreateArray: %v", name, err)
				}
				if got := a.GridShape(); !slices.Equal(got, []int{3, 3}) {
					t.Errorf("%s: GridShape = %v", name, got)
				}
				if got, want := a.ChunkBytes(), 6*dt.Size(); got != want {
					t.Errorf("%s: ChunkBytes = %d, want %d", name, got, want)
				}
				written := map[[2]int][]byte{}
				for i := range 3 {
					for j := range 3 {
						if (i+j)%3 == 0 {
							continue // left missing
						}
						c := randomChunk(rng, dt, a.ChunkBytes())
						written[[2]int{i, j}] = c
						if err := a.WriteChunk(ctx, []int{i, j}, c); err != nil {
							t.Fatalf("%s: WriteChunk: %v", name, err)
						}
					}
				}
				b, err := zarr.OpenArray(ctx, s, path)
				if err != nil {
					t.Fatalf("%s: OpenArray: %v", name, err)
				}
				if !reflect.DeepEqual(b.Metadata(), a.Metadata()) {
					t.Errorf("%s: reopened metadata differs:\n%#v\n%#v", name, b.Metadata(), a.Metadata())
				}
				dst := make([]byte, b.ChunkBytes())
				for i := range 3 {
					for j := range 3 {
						want, ok := written[[2]int{i, j}]
						if !ok {
							want = bytes.Repeat([]byte{1}, b.ChunkBytes())
						}
						if err := b.ReadChunk(ctx, []int{i, j}, dst); err != nil {
							t.Fatalf("%s: ReadChunk(%d, %d): %v", name, i, j, err)
						}
						if !bytes.Equal(dst, want) {
							t.Fatalf("%s: chunk (%d, %d) = %x, want %x", name, i, j, dst, want)
						}
					}
				}
			}
		}
	}
}

func TestArrayStoredBytes(t *testing.T) {
	ctx := context.Background()
	s := zarr.NewMemoryStore()
	chunk := le([]int32{1, -2, 3, 0x01020304})
	for _, tc := range []struct {
		codec zarr.Codec
		want  []byte
	}{
		{zarr.BytesCodec(), chunk},
		{zarr.Codec{Name: "bytes", Configuration: map[string]any{"endian": "big"}}, be([]int32{1, -2, 3, 0x01020304})},
	} {
		a, err := zarr.CreateArray(ctx, s, "x", zarr.ArrayMetadata{
			Shape: []int{4}, ChunkShape: []int{4}, DataType: zarr.Int32, Codecs: []zarr.Codec{tc.codec},
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.WriteChunk(ctx, []int{0}, chunk); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, "x/c/0")
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("%v: stored %x, %v; want %x", tc.codec, got, err, tc.want)
		}
	}
}

func be(v any) []byte {
	var b bytes.Buffer
	_ = binary.Write(&b, binary.BigEndian, v)
	return b.Bytes()
}

func TestChunkKeys(t *testing.T) {
	ctx := context.Background()
	s := zarr.NewMemoryStore()
	for _, tc := range []struct {
		path   string
		shape  []int
		enc    zarr.ChunkKeyEncoding
		coords []int
		want   string
	}{
		{"", []int{10, 10}, zarr.ChunkKeyEncoding{}, []int{1, 0}, "c/1/0"},
		{"x", []int{10, 10}, zarr.ChunkKeyEncoding{}, []int{1, 0}, "x/c/1/0"},
		{"/a/b/", []int{100}, zarr.ChunkKeyEncoding{}, []int{12}, "a/b/c/12"},
		{"x", []int{}, zarr.ChunkKeyEncoding{}, []int{}, "x/c"},
		{"", []int{}, zarr.ChunkKeyEncoding{}, nil, "c"},
		{"x", []int{10, 10}, zarr.ChunkKeyEncoding{Name: "default", Separator: "."}, []int{1, 0}, "x/c.1.0"},
		{"x", []int{10, 10}, zarr.ChunkKeyEncoding{Name: "v2"}, []int{1, 0}, "x/1.0"},
		{"x", []int{10, 10}, zarr.ChunkKeyEncoding{Name: "v2", Separator: "/"}, []int{1, 0}, "x/1/0"},
		{"", []int{10, 10}, zarr.ChunkKeyEncoding{Name: "v2"}, []int{1, 0}, "1.0"},
		{"x", []int{}, zarr.ChunkKeyEncoding{Name: "v2"}, nil, "x/0"},
		{"", []int{}, zarr.ChunkKeyEncoding{Name: "v2"}, nil, "0"},
	} {
		chunks := slices.Repeat([]int{1}, len(tc.shape))
		a, err := zarr.CreateArray(ctx, s, tc.path, zarr.ArrayMetadata{
			Shape: tc.shape, ChunkShape: chunks, DataType: zarr.Uint8, ChunkKeyEncoding: tc.enc,
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := a.ChunkKey(tc.coords); got != tc.want {
			t.Errorf("path %q %v: ChunkKey(%v) = %q, want %q", tc.path, tc.enc, tc.coords, got, tc.want)
		}
		if err := a.WriteChunk(ctx, tc.coords, []byte{9}); err != nil {
			t.Fatal(err)
		}
		if v, err := s.Get(ctx, tc.want); err != nil || !bytes.Equal(v, []byte{9}) {
			t.Errorf("chunk not stored under %q: %v", tc.want, err)
		}
	}
}

func TestArrayZeroD(t *testing.T) {
	ctx := context.Background()
	s := zarr.NewMemoryStore()
	a, err := zarr.CreateArray(ctx, s, "s", zarr.ArrayMetadata{
		DataType: zarr.Float64, FillValue: le(math.Pi), Codecs: codecChains["zstd"],
	})
	if err != nil {
		t.Fatal(err)
	}
	if g := a.GridShape(); len(g) != 0 || a.ChunkBytes() != 8 {
		t.Errorf("0-d: GridShape %v, ChunkBytes %d", g, a.ChunkBytes())
	}
	dst := make([]byte, 8)
	if err := a.ReadChunk(ctx, nil, dst); err != nil || !bytes.Equal(dst, le(math.Pi)) {
		t.Errorf("0-d missing chunk = %x, %v", dst, err)
	}
	if err := a.WriteChunk(ctx, []int{}, le(2.5)); err != nil {
		t.Fatal(err)
	}
	if err := a.ReadChunk(ctx, []int{}, dst); err != nil || !bytes.Equal(dst, le(2.5)) {
		t.Errorf("0-d chunk = %x, %v", dst, err)
	}
	if err := a.ReadChunk(ctx, []int{0}, dst); !errors.Is(err, zarr.ErrInvalid) {
		t.Errorf("0-d ReadChunk([0]): %v, want ErrInvalid", err)
	}
}

func TestArrayZeroSize(t *testing.T) {
	ctx := context.Background()
	a, err := zarr.CreateArray(ctx, zarr.NewMemoryStore(), "", zarr.ArrayMetadata{
		Shape: []int{0, 5}, ChunkShape: []int{3, 3}, DataType: zarr.Int8,
	})
	if err != nil {
		t.Fatal(err)
	}
	if g := a.GridShape(); !slices.Equal(g, []int{0, 2}) {
		t.Errorf("GridShape = %v, want [0 2]", g)
	}
	if err := a.ReadChunk(ctx, []int{0, 0}, make([]byte, 9)); !errors.Is(err, zarr.ErrInvalid) {
		t.Errorf("ReadChunk in an empty grid: %v, want ErrInvalid", err)
	}
}

func TestArrayChunkShapeIsACopy(t *testing.T) {
	a, err := zarr.CreateArray(context.Background(), zarr.NewMemoryStore(), "", zarr.ArrayMetadata{
		Shape: []int{7, 5}, ChunkShape: []int{3, 2}, DataType: zarr.Int8,
	})
	if err != nil {
		t.Fatal(err)
	}
	c := a.ChunkShape()
	if !slices.Equal(c, a.Metadata().ChunkShape) {
		t.Fatalf("ChunkShape = %v, Metadata().ChunkShape = %v", c, a.Metadata().ChunkShape)
	}
	c[0] = 99
	if got := a.ChunkShape(); !slices.Equal(got, []int{3, 2}) {
		t.Errorf("ChunkShape after changing a returned copy = %v, want [3 2]", got)
	}
}

func TestWriteEmptyChunks(t *testing.T) {
	ctx := context.Background()
	s := zarr.NewMemoryStore()
	nan := le(uint32(0x7fc00000))
	a, err := zarr.CreateArray(ctx, s, "x", zarr.ArrayMetadata{
		Shape: []int{2048}, ChunkShape: []int{1500}, DataType: zarr.Float32, FillValue: nan,
	})
	if err != nil {
		t.Fatal(err)
	}
	allNaN := bytes.Repeat(nan, 1500)
	exists := func(k string) bool {
		_, err := s.Get(ctx, k)
		return err == nil
	}
	// A chunk of fill values is not written and deletes an existing key.
	data := bytes.Clone(allNaN)
	data[len(data)-1] = 0 // last element differs
	if err := a.WriteChunk(ctx, []int{0}, data); err != nil || !exists("x/c/0") {
		t.Fatalf("a non-fill chunk was not written: %v", err)
	}
	if err := a.WriteChunk(ctx, []int{0}, allNaN); err != nil || exists("x/c/0") {
		t.Fatalf("a fill chunk left its key behind: %v", err)
	}
	if err := a.WriteChunk(ctx, []int{1}, allNaN); err != nil || exists("x/c/1") {
		t.Fatalf("a fill chunk was written: %v", err)
	}
	// Bit-for-bit comparison: another NaN payload is not the fill value.
	other := bytes.Clone(allNaN)
	copy(other[4*700:], le(uint32(0x7fc00001)))
	if err := a.WriteChunk(ctx, []int{1}, other); err != nil || !exists("x/c/1") {
		t.Fatalf("a chunk with another NaN was not written: %v", err)
	}
	a.SetWriteEmptyChunks(true)
	if err := a.WriteChunk(ctx, []int{0}, allNaN); err != nil || !exists("x/c/0") {
		t.Fatalf("with write_empty_chunks a fill chunk was not written: %v", err)
	}
	dst := make([]byte, a.ChunkBytes())
	if err := a.ReadChunk(ctx, []int{0}, dst); err != nil || !bytes.Equal(dst, allNaN) {
		t.Errorf("read back the fill chunk: %v", err)
	}
	// Zero fill (the default): a chunk of zeros is empty, -0.0 is not.
	z, _ := zarr.CreateArray(ctx, s, "z", zarr.ArrayMetadata{Shape: []int{8}, ChunkShape: []int{8}, DataType: zarr.Float64})
	if err := z.WriteChunk(ctx, []int{0}, make([]byte, 64)); err != nil || exists("z/c/0") {
		t.Errorf("a zero chunk was written: %v", err)
	}
	negZero := make([]byte, 64)
	copy(negZero[56:], le(math.Copysign(0, -1)))
	if err := z.WriteChunk(ctx, []int{0}, negZero); err != nil || !exists("z/c/0") {
		t.Errorf("a chunk holding -0.0 was not written: %v", err)
	}
}

func TestArrayErrors(t *testing.T) {
	ctx := context.Background()
	s := zarr.NewMemoryStore()
	a, err := zarr.CreateArray(ctx, s, "x", zarr.ArrayMetadata{
		Shape: []int{10, 10}, ChunkShape: []int{4, 4}, DataType: zarr.Int16, Codecs: codecChains["zstd"],
	})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, a.ChunkBytes())
	for _, coords := range [][]int{nil, {0}, {0, 0, 0}, {-1, 0}, {3, 0}, {0, 3}} {
		if err := a.ReadChunk(ctx, coords, buf); !errors.Is(err, zarr.ErrInvalid) {
			t.Errorf("ReadChunk(%v): %v, want ErrInvalid", coords, err)
		}
		if err := a.WriteChunk(ctx, coords, buf); !errors.Is(err, zarr.ErrInvalid) {
			t.Errorf("WriteChunk(%v): %v, want ErrInvalid", coords, err)
		}
	}
	for _, n := range []int{0, len(buf) - 1, len(buf) + 1} {
		if err := a.ReadChunk(ctx, []int{0, 0}, make([]byte, n)); !errors.Is(err, zarr.ErrInvalid) {
			t.Errorf("ReadChunk into %d bytes: %v, want ErrInvalid", n, err)
		}
		if err := a.WriteChunk(ctx, []int{0, 0}, make([]byte, n)); !errors.Is(err, zarr.ErrInvalid) {
			t.Errorf("WriteChunk of %d bytes: %v, want ErrInvalid", n, err)
		}
	}
	// Corrupt chunks: errors wrap ErrCorrupt and name the key.
	big, _ := zarr.CreateArray(ctx, s, "big", zarr.ArrayMetadata{
		Shape: []int{1000}, ChunkShape: []int{1000}, DataType: zarr.Int16, Codecs: codecChains["zstd"],
	})
	src := randomChunk(rand.New(rand.NewPCG(5, 5)), zarr.Int16, big.ChunkBytes()*2)
	_ = big.WriteChunk(ctx, []int{0}, src[:big.ChunkBytes()])
	good, _ := s.Get(ctx, "big/c/0")
	_ = a.WriteChunk(ctx, []int{0, 0}, src[:a.ChunkBytes()])
	small, _ := s.Get(ctx, "x/c/0/0")
	for name, v := range map[string][]byte{
		"garbage":         []byte("garbage"),
		"truncated":       good[:len(good)/2],
		"too large":       good, // decodes to 2000 bytes, the chunk is 32
		"empty":           {},
		"trailing frames": append(bytes.Clone(small), small...),
	} {
		if err := s.Set(ctx, "x/c/1/1", v); err != nil {
			t.Fatal(err)
		}
		err := a.ReadChunk(ctx, []int{1, 1}, buf)
		if !errors.Is(err, zarr.ErrCorrupt) || !strings.Contains(err.Error(), "x/c/1/1") {
			t.Errorf("%s: ReadChunk error %v, want ErrCorrupt naming x/c/1/1", name, err)
		}
	}
	// Pass-through chains: a stored value of the wrong size.
	p, _ := zarr.CreateArray(ctx, s, "p", zarr.ArrayMetadata{Shape: []int{4}, ChunkShape: []int{4}, DataType: zarr.Int32})
	for _, st := range []zarr.Store{s, getOnlyStore{s}} {
		pa, _ := zarr.OpenArray(ctx, st, "p")
		for _, n := range []int{15, 17, 0} {
			_ = s.Set(ctx, "p/c/0", make([]byte, n))
			err := pa.ReadChunk(ctx, []int{0}, make([]byte, p.ChunkBytes()))
			if !errors.Is(err, zarr.ErrCorrupt) || !strings.Contains(err.Error(), "p/c/0") {
				t.Errorf("%T: %d stored bytes: %v, want ErrCorrupt naming p/c/0", st, n, err)
			}
		}
	}
	// Opening.
	if _, err := zarr.OpenArray(ctx, s, "nothing/here"); !errors.Is(err, zarr.ErrNotFound) || !strings.Contains(err.Error(), "nothing/here") {
		t.Errorf("OpenArray of a missing array: %v, want ErrNotFound naming the path", err)
	}
	_ = s.Set(ctx, "str/zarr.json", bytes.Replace(mustGet(t, s, "x/zarr.json"), []byte(`"int16"`), []byte(`"string"`), 1))
	if _, err := zarr.OpenArray(ctx, s, "str"); !errors.Is(err, zarr.ErrNotImplemented) || !strings.Contains(err.Error(), "string") || !strings.Contains(err.Error(), "str/zarr.json") {
		t.Errorf("OpenArray of a string array: %v, want ErrNotImplemented naming the type and key", err)
	}
	_ = s.Set(ctx, "bad/zarr.json", []byte("{"))
	if _, err := zarr.OpenArray(ctx, s, "bad"); !errors.Is(err, zarr.ErrInvalid) {
		t.Errorf("OpenArray of bad JSON: %v, want ErrInvalid", err)
	}
	for _, p := range []string{"../x", "a//b", "a\\b"} {
		if _, err := zarr.OpenArray(ctx, s, p); !errors.Is(err, zarr.ErrInvalid) {
			t.Errorf("OpenArray(%q): %v, want ErrInvalid", p, err)
		}
		if _, err := zarr.CreateArray(ctx, s, p, zarr.ArrayMetadata{DataType: zarr.Int8}); !errors.Is(err, zarr.ErrInvalid) {
			t.Errorf("CreateArray(%q): %v, want ErrInvalid", p, err)
		}
	}
	if _, err := zarr.CreateArray(ctx, s, "y", zarr.ArrayMetadata{Shape: []int{3}, ChunkShape: []int{0}, DataType: zarr.Int8}); !errors.Is(err, zarr.ErrInvalid) {
		t.Errorf("CreateArray with a zero chunk: %v, want ErrInvalid", err)
	}
	if _, err := zarr.CreateArray(ctx, s, "y", zarr.ArrayMetadata{Shape: []int{3}, ChunkShape: []int{1}, DataType: zarr.Int8, Codecs: []zarr.Codec{zarr.BytesCodec(), {Name: "lzma"}}}); !errors.Is(err, zarr.ErrNotImplemented) || !strings.Contains(err.Error(), "lzma") {
		t.Errorf("CreateArray with an unknown codec: %v, want ErrNotImplemented", err)
	}
}

func mustGet(t *testing.T, s zarr.Store, k string) []byte {
	t.Helper()
	v, err := s.Get(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestReadChunkLongEncoding: a stored chunk longer than this package's
// encoding bound (another writer's framing) is still read.
func TestReadChunkLongEncoding(t *testing.T) {
	ctx := context.Background()
	s := zarr.NewMemoryStore()
	a, _ := zarr.CreateArray(ctx, s, "", zarr.ArrayMetadata{
		Shape: []int{64}, ChunkShape: []int{64}, DataType: zarr.Uint8, Codecs: codecChains["zstd"],
	})
	src := randomChunk(rand.New(rand.NewPCG(1, 1)), zarr.Uint8, 64)
	_ = a.WriteChunk(ctx, []int{0}, src)
	enc := mustGet(t, s, "c/0")
	// A zstd skippable frame of 200 KiB padding in front of the data.
	pad := make([]byte, 8+200<<10)
	binary.LittleEndian.PutUint32(pad, 0x184D2A50)
	binary.LittleEndian.PutUint32(pad[4:], 200<<10)
	_ = s.Set(ctx, "c/0", append(pad, enc...))
	dst := make([]byte, 64)
	if err := a.ReadChunk(ctx, []int{0}, dst); err != nil || !bytes.Equal(dst, src) {
		t.Errorf("ReadChunk of a padded chunk: %v", err)
	}
}

func TestCreateArrayMetadata(t *testing.T) {
	ctx := context.Background()
	s := zarr.NewMemoryStore()
	meta := zarr.ArrayMetadata{
		Shape: []int{3, 4}, ChunkShape: []int{2, 2}, DataType: zarr.Uint64,
		FillValue:      le(uint64(math.MaxUint64)),
		Attributes:     map[string]any{"units": "m", "n": 3, "list": []any{1, "a"}},
		DimensionNames: []string{"y", ""},
	}
	a, err := zarr.CreateArray(ctx, s, "", meta)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(mustGet(t, s, "zarr.json"))
	for _, want := range []string{`"fill_value": 18446744073709551615`, `"units": "m"`, `"dimension_names": [`, `null`, `"name": "bytes"`, `"endian": "little"`} {
		if !strings.Contains(doc, want) {
			t.Errorf("zarr.json lacks %s:\n%s", want, doc)
		}
	}
	// Metadata is a copy: changing it does not change the array.
	m := a.Metadata()
	m.Shape[0] = 100
	m.Attributes["units"] = "km"
	if a.Metadata().Shape[0] != 3 || a.Metadata().Attributes["units"] != "m" {
		t.Errorf("Metadata() returned shared state")
	}
	// The caller's metadata is not retained either.
	meta.ChunkShape[0] = 1
	if a.Metadata().ChunkShape[0] != 2 {
		t.Errorf("CreateArray retained the caller's slices")
	}
	got := a.Metadata()
	if got.Codecs == nil || got.FillValue == nil || got.ChunkKeyEncoding.Separator != "/" {
		t.Errorf("Metadata() not canonical: %#v", got)
	}
	// Overwriting metadata.
	if _, err := zarr.CreateArray(ctx, s, "", zarr.ArrayMetadata{Shape: []int{1}, ChunkShape: []int{1}, DataType: zarr.Int8}); err != nil {
		t.Fatal(err)
	}
	b, err := zarr.OpenArray(ctx, s, "")
	if err != nil || b.Metadata().DataType != zarr.Int8 {
		t.Errorf("CreateArray did not replace the metadata: %v", err)
	}
}

func TestArrayConcurrent(t *testing.T) {
	ctx := context.Background()
	for name, s := range testStores(t) {
		a, err := zarr.CreateArray(ctx, s, "c", zarr.ArrayMetadata{
			Shape: []int{64, 64}, ChunkShape: []int{8, 8}, DataType: zarr.Float64, Codecs: codecChains["big+zstd"],
		})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(g), 1))
				dst := make([]byte, a.ChunkBytes())
				for i := range 8 {
					coords := []int{g, i}
					src := randomChunk(rng, zarr.Float64, a.ChunkBytes())
					if err := a.WriteChunk(ctx, coords, src); err != nil {
						t.Errorf("%s: %v", name, err)
						return
					}
					if err := a.ReadChunk(ctx, coords, dst); err != nil || !bytes.Equal(dst, src) {
						t.Errorf("%s: chunk %v read back wrong: %v", name, coords, err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
}

// TestReadChunkAllocations: reading a chunk allocates nothing of the
// chunk's size, on the pass-through fast path and through zstd.
func TestReadChunkAllocations(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation test (sync.Pool drops items under the race detector)")
	}
	ctx := context.Background()
	for _, chain := range []string{"little", "zstd", "big+zstd"} {
		s := zarr.NewMemoryStore()
		a, _ := zarr.CreateArray(ctx, s, "a", zarr.ArrayMetadata{
			Shape: []int{256, 256}, ChunkShape: []int{256, 256}, DataType: zarr.Float64, Codecs: codecChains[chain],
		})
		src := randomChunk(rand.New(rand.NewPCG(1, 1)), zarr.Float64, a.ChunkBytes())
		if err := a.WriteChunk(ctx, []int{0, 0}, src); err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, a.ChunkBytes())
		_ = a.ReadChunk(ctx, []int{0, 0}, dst) // warm the pools
		const runs = 20
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for range runs {
			if err := a.ReadChunk(ctx, []int{0, 0}, dst); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		perRead := (after.TotalAlloc - before.TotalAlloc) / runs
		if perRead > uint64(a.ChunkBytes())/8 {
			t.Errorf("%s: ReadChunk allocates %d bytes per call for a %d-byte chunk", chain, perRead, a.ChunkBytes())
		}
		if !bytes.Equal(dst, src) {
			t.Errorf("%s: wrong data", chain)
		}
	}
}

func BenchmarkReadChunk(b *testing.B) {
	ctx := context.Background()
	for _, chain := range []string{"little", "big", "zstd"} {
		b.Run(chain, func(b *testing.B) {
			s := zarr.NewMemoryStore()
			a, _ := zarr.CreateArray(ctx, s, "a", zarr.ArrayMetadata{
				Shape: []int{512, 512}, ChunkShape: []int{512, 512}, DataType: zarr.Float64, Codecs: codecChains[chain],
			})
			src := make([]byte, a.ChunkBytes())
			for i := range src {
				src[i] = byte(i % 7)
			}
			_ = a.WriteChunk(ctx, []int{0, 0}, src)
			dst := make([]byte, a.ChunkBytes())
			b.SetBytes(int64(len(dst)))
			for b.Loop() {
				if err := a.ReadChunk(ctx, []int{0, 0}, dst); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// An array whose chunks must all exist reports a missing one, naming its
// key, instead of reading the fill value; plain and sharded arrays alike.
func TestMissingChunksAreErrors(t *testing.T) {
	ctx := context.Background()
	for name, codecs := range map[string][]zarr.Codec{
		"plain":   nil,
		"sharded": {zarr.ShardingCodec([]int{2}, nil, "end")},
	} {
		s := zarr.NewMemoryStore()
		z, err := zarr.CreateArray(ctx, s, "x", zarr.ArrayMetadata{Shape: []int{8}, ChunkShape: []int{4}, DataType: zarr.Float64, Codecs: codecs})
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, z.ChunkBytes())
		if err := z.ReadChunk(ctx, []int{1}, buf); err != nil {
			t.Fatalf("%s: a missing chunk of a plain array: %v", name, err)
		}
		z.SetMissingChunksAreErrors(true)
		err = z.ReadChunk(ctx, []int{1}, buf)
		if !errors.Is(err, zarr.ErrMissingChunk) || !errors.Is(err, zarr.ErrNotFound) || !strings.Contains(err.Error(), "x/c/1") {
			t.Errorf("%s: got %v, want ErrMissingChunk naming x/c/1", name, err)
		}
	}
}
