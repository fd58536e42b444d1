package zarr_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cubego/cubego/zarr"
)

// The fixtures under testdata/fixtures were written by zarr-python 3
// (testdata/generate.py); each array has its whole contents beside it in
// expected.bin as little-endian C-order bytes.

type fixtureCase struct {
	Path         string   `json:"path"`
	Shape        []int    `json:"shape"`
	ChunkShape   []int    `json:"chunk_shape"`
	DataType     string   `json:"data_type"`
	FillValueHex string   `json:"fill_value_hex"`
	Missing      []string `json:"missing"`
	ZarrFormat   int      `json:"zarr_format"`
}

type fixtureGroup struct {
	Path         string         `json:"path"`
	ZarrFormat   int            `json:"zarr_format"`
	Consolidated bool           `json:"consolidated"`
	Attributes   map[string]any `json:"attributes"`
	Members      [][2]string    `json:"members"`
}

type fixtureManifest struct {
	Cases  []fixtureCase
	Groups []fixtureGroup
}

func loadManifest(t *testing.T) fixtureManifest {
	t.Helper()
	b, err := os.ReadFile("testdata/fixtures/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m fixtureManifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Cases) == 0 || len(m.Groups) == 0 {
		t.Fatal("no fixtures")
	}
	return m
}

func loadFixtures(t *testing.T) []fixtureCase { return loadManifest(t).Cases }

// forEachChunk calls f with the coordinates of every chunk of a grid.
func forEachChunk(grid []int, f func(coords []int)) {
	for _, g := range grid {
		if g == 0 {
			return
		}
	}
	coords := make([]int, len(grid))
	for {
		f(slices.Clone(coords))
		i := len(grid) - 1
		for ; i >= 0; i-- {
			coords[i]++
			if coords[i] < grid[i] {
				break
			}
			coords[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// copyChunk copies elements between a whole array (C order) and one of
// its chunks: toChunk copies array→chunk, else chunk→array. Chunk
// elements outside the array are left alone.
func copyChunk(full []byte, shape []int, chunk []byte, chunkShape, coords []int, elem int, toChunk bool) {
	n := len(shape)
	idx := make([]int, n) // index inside the chunk
	for {
		inside := true
		fullOff, chunkOff := 0, 0
		for d := range n {
			g := coords[d]*chunkShape[d] + idx[d]
			if g >= shape[d] {
				inside = false
			}
			fullOff = fullOff*shape[d] + g
			chunkOff = chunkOff*chunkShape[d] + idx[d]
		}
		if inside {
			f, c := full[fullOff*elem:(fullOff+1)*elem], chunk[chunkOff*elem:(chunkOff+1)*elem]
			if toChunk {
				copy(c, f)
			} else {
				copy(f, c)
			}
		}
		d := n - 1
		for ; d >= 0; d-- {
			idx[d]++
			if idx[d] < chunkShape[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// readAllChunks reads a whole array into C-order bytes.
func readAllChunks(t *testing.T, a *zarr.Array) []byte {
	t.Helper()
	m := a.Metadata()
	elem := m.DataType.Size()
	n := elem
	for _, d := range m.Shape {
		n *= d
	}
	full := make([]byte, n)
	chunk := make([]byte, a.ChunkBytes())
	forEachChunk(a.GridShape(), func(coords []int) {
		if err := a.ReadChunk(context.Background(), coords, chunk); err != nil {
			t.Fatalf("ReadChunk(%v): %v", coords, err)
		}
		copyChunk(full, m.Shape, chunk, m.ChunkShape, coords, elem, false)
	})
	return full
}

// writeAllChunks writes a whole array from C-order bytes; edge chunks are
// padded with the fill value.
func writeAllChunks(t *testing.T, a *zarr.Array, full []byte) {
	t.Helper()
	m := a.Metadata()
	elem := m.DataType.Size()
	forEachChunk(a.GridShape(), func(coords []int) {
		chunk := bytes.Repeat(m.FillValue, a.ChunkBytes()/elem)
		copyChunk(full, m.Shape, chunk, m.ChunkShape, coords, elem, true)
		if err := a.WriteChunk(context.Background(), coords, chunk); err != nil {
			t.Fatalf("WriteChunk(%v): %v", coords, err)
		}
	})
}

func TestFixtures(t *testing.T) {
	ctx := context.Background()
	s, err := zarr.OpenStore(ctx, "testdata/fixtures")
	if err != nil {
		t.Fatal(err)
	}
	defer zarr.Close(s)
	for _, fc := range loadFixtures(t) {
		t.Run(fc.Path, func(t *testing.T) {
			a, err := zarr.OpenArray(ctx, s, fc.Path)
			if err != nil {
				t.Fatal(err)
			}
			m := a.Metadata()
			if !slices.Equal(m.Shape, fc.Shape) || !slices.Equal(m.ChunkShape, fc.ChunkShape) || m.DataType.String() != fc.DataType {
				t.Errorf("metadata %v %v %s, want %v %v %s", m.Shape, m.ChunkShape, m.DataType, fc.Shape, fc.ChunkShape, fc.DataType)
			}
			if got := hex.EncodeToString(m.FillValue); got != fc.FillValueHex {
				t.Errorf("fill value %s, want %s", got, fc.FillValueHex)
			}
			for _, k := range fc.Missing {
				if _, err := s.Get(ctx, fc.Path+"/"+k); !errors.Is(err, zarr.ErrNotFound) {
					t.Errorf("chunk %s exists; the fixture expects it missing (%v)", k, err)
				}
			}
			want, err := os.ReadFile(filepath.Join("testdata/fixtures", fc.Path, "expected.bin"))
			if err != nil {
				t.Fatal(err)
			}
			if got := readAllChunks(t, a); !bytes.Equal(got, want) {
				t.Errorf("array contents differ from expected.bin:\n got %x\nwant %x", got, want)
			}

			if m.ZarrFormat != fc.ZarrFormat {
				t.Errorf("zarr format %d, want %d", m.ZarrFormat, fc.ZarrFormat)
			}
			// Inner chunks (of shards, or plain chunks) read alone.
			inner := make([]byte, a.InnerChunkBytes())
			elem := m.DataType.Size()
			full := make([]byte, len(want))
			forEachChunk(a.InnerGridShape(), func(coords []int) {
				if err := a.ReadInnerChunk(ctx, coords, inner); err != nil {
					t.Fatalf("ReadInnerChunk(%v): %v", coords, err)
				}
				copyChunk(full, m.Shape, inner, a.InnerChunkShape(), coords, elem, false)
			})
			if !bytes.Equal(full, want) {
				t.Errorf("inner chunks differ from expected.bin")
			}
			// The same through the view whose chunks are the inner chunks.
			view, err := a.ByInnerChunks()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(view.ChunkShape(), a.InnerChunkShape()) || !slices.Equal(view.GridShape(), a.InnerGridShape()) {
				t.Errorf("view of chunks %v, grid %v; want the inner %v, %v", view.ChunkShape(), view.GridShape(), a.InnerChunkShape(), a.InnerGridShape())
			}
			if got := readAllChunks(t, view); !bytes.Equal(got, want) {
				t.Errorf("the inner-chunk view differs from expected.bin")
			}

			// The metadata survives our writer, and our encoder writes the
			// same chunks (byte for byte where nothing is compressed).
			orig := a.Metadata()
			mem := zarr.NewMemoryStore()
			b, err := zarr.CreateArray(ctx, mem, fc.Path, orig)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(b.Metadata(), a.Metadata()) {
				t.Errorf("metadata after our writer:\n%#v\nwant\n%#v", b.Metadata(), a.Metadata())
			}
			writeAllChunks(t, b, want)
			if got := readAllChunks(t, b); !bytes.Equal(got, want) {
				t.Errorf("rewritten array differs")
			}
			compressed := m.Compressor != nil || m.Filters != nil
			for _, c := range m.Codecs {
				compressed = compressed || c.Name != "bytes"
			}
			forEachChunk(a.GridShape(), func(coords []int) {
				key := a.ChunkKey(coords)
				theirs, err1 := s.Get(ctx, key)
				ours, err2 := mem.Get(ctx, key)
				if errors.Is(err1, zarr.ErrNotFound) != errors.Is(err2, zarr.ErrNotFound) {
					t.Errorf("chunk %s: zarr-python stored it: %v, we stored it: %v", key, err1 == nil, err2 == nil)
				}
				if !compressed && err1 == nil && err2 == nil && !bytes.Equal(theirs, ours) {
					t.Errorf("chunk %s: stored bytes differ from zarr-python's", key)
				}
			})
		})
	}
}

func TestFixtureGroups(t *testing.T) {
	ctx := context.Background()
	s, err := zarr.OpenStore(ctx, "testdata/fixtures")
	if err != nil {
		t.Fatal(err)
	}
	defer zarr.Close(s)
	for _, fg := range loadManifest(t).Groups {
		t.Run(fg.Path, func(t *testing.T) {
			// Count the store's reads: a consolidated group reads nothing
			// more to list its members and open its arrays.
			cs := &countingStore{Store: s}
			g, err := zarr.OpenGroup(ctx, cs, fg.Path)
			if err != nil {
				t.Fatal(err)
			}
			if g.ZarrFormat() != fg.ZarrFormat || g.Consolidated() != fg.Consolidated {
				t.Errorf("format %d consolidated %v, want %d %v", g.ZarrFormat(), g.Consolidated(), fg.ZarrFormat, fg.Consolidated)
			}
			attrs := g.Attributes()
			if attrs["title"] != fg.Attributes["title"] || fmt.Sprint(attrs["n"]) != "1" {
				t.Errorf("attributes %v, want %v", attrs, fg.Attributes)
			}
			opened := cs.gets.Load()
			members, err := g.Members(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var got [][2]string
			for _, m := range members {
				got = append(got, [2]string{m.Name, m.NodeType})
			}
			if !reflect.DeepEqual(got, fg.Members) {
				t.Errorf("members %v, want %v", got, fg.Members)
			}
			a, err := g.OpenArray(ctx, "sub/b")
			if err != nil {
				t.Fatal(err)
			}
			if fg.Consolidated && cs.gets.Load() != opened {
				t.Errorf("consolidated group: %d more reads to list and open", cs.gets.Load()-opened)
			}
			if a.Path() != fg.Path+"/sub/b" || a.Metadata().ZarrFormat != fg.ZarrFormat {
				t.Errorf("array %q format %d", a.Path(), a.Metadata().ZarrFormat)
			}
			sub, err := g.OpenGroup(ctx, "sub")
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(sub.Attributes()["x"]) != "[1 2]" {
				t.Errorf("sub attributes %v", sub.Attributes())
			}
			if _, err := zarr.OpenArray(ctx, s, fg.Path); !errors.Is(err, zarr.ErrNotFound) && !errors.Is(err, zarr.ErrInvalid) {
				t.Errorf("OpenArray of a group: %v", err)
			}
			if _, err := zarr.OpenGroup(ctx, s, fg.Path+"/a"); !errors.Is(err, zarr.ErrNotFound) && !errors.Is(err, zarr.ErrInvalid) {
				t.Errorf("OpenGroup of an array: %v", err)
			}
		})
	}
}

var updateSeeds = flag.Bool("update-seeds", false, "rewrite the FuzzParseArrayMetadata seeds from the fixtures")

// TestFuzzSeedsCurrent checks that the fuzz seed corpus holds every
// fixture's zarr.json; -update-seeds rewrites them.
func TestFuzzSeedsCurrent(t *testing.T) {
	for _, fc := range loadFixtures(t) {
		name, target := "zarr.json", "FuzzParseArrayMetadata"
		if fc.ZarrFormat == 2 {
			name, target = ".zarray", "FuzzParseArrayMetadataV2"
		}
		doc, err := os.ReadFile(filepath.Join("testdata/fixtures", fc.Path, name))
		if err != nil {
			t.Fatal(err)
		}
		seed := filepath.Join("testdata/fuzz", target, "fixture_"+strings.ReplaceAll(fc.Path, "/", "_"))
		want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", doc)
		if *updateSeeds {
			if err := os.MkdirAll(filepath.Dir(seed), 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(seed, []byte(want), 0o666); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(seed)
		if err != nil || string(got) != want {
			t.Errorf("fuzz seed %s is missing or stale; run go test ./zarr -run TestFuzzSeedsCurrent -args -update-seeds", seed)
		}
	}
}

// pythonCheck reads arrays written by this package with zarr-python and
// compares them with expected.bin and the fill value.
const pythonCheck = `
import json, os, sys
import numpy as np
import zarr
root = sys.argv[1]
cases = json.load(open(os.path.join(root, "cases.json")))
bad = 0
for c in cases:
    a = zarr.open_array(os.path.join(root, c["path"]), mode="r")
    dt = np.dtype(c["data_type"]).newbyteorder("<")
    got = np.ascontiguousarray(a[...], dtype=dt).tobytes()
    want = open(os.path.join(root, c["path"], "expected.bin"), "rb").read()
    fill = np.asarray(a.fill_value, dtype=dt).tobytes().hex()
    if got != want or list(a.shape) != c["shape"] or fill != c["fill_value_hex"]:
        print("MISMATCH", c["path"], got.hex()[:64], want.hex()[:64], fill, c["fill_value_hex"])
        bad += 1
print("checked", len(cases), "arrays,", bad, "mismatches")
sys.exit(1 if bad else 0)
`

// TestPythonReadsOurArrays writes arrays with this package and reads
// them with zarr-python. It runs when CUBEGO_ZARR_PYTHON names a python
// with zarr 3 and numpy installed.
func TestPythonReadsOurArrays(t *testing.T) {
	python := os.Getenv("CUBEGO_ZARR_PYTHON")
	if python == "" {
		t.Skip("CUBEGO_ZARR_PYTHON is not set")
	}
	ctx := context.Background()
	root := t.TempDir()
	s, err := zarr.OpenStore(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	defer zarr.Close(s)
	rng := rand.New(rand.NewPCG(7, 7))
	var cases []fixtureCase
	add := func(name string, meta zarr.ArrayMetadata, data []byte) {
		t.Helper()
		a, err := zarr.CreateArray(ctx, s, name, meta)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		writeAllChunks(t, a, data)
		if err := os.WriteFile(filepath.Join(root, name, "expected.bin"), data, 0o666); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, fixtureCase{
			Path: name, Shape: nonNilInts(meta.Shape), DataType: meta.DataType.String(),
			FillValueHex: hex.EncodeToString(a.Metadata().FillValue),
		})
	}
	elems := func(shape []int) int {
		n := 1
		for _, d := range shape {
			n *= d
		}
		return n
	}
	for chainName, chain := range codecChains {
		if chainName == "transpose+shard" {
			// Valid Zarr, but zarr-python 3 checks the inner chunk shape
			// against the untransposed chunk shape and refuses it.
			continue
		}
		for _, dt := range allDataTypes {
			shape := []int{5, 7}
			meta := zarr.ArrayMetadata{Shape: shape, ChunkShape: []int{2, 3}, DataType: dt, Codecs: chain}
			if dt.Size() == 1 && len(chain) > 0 && chain[0].Name == "bytes" {
				// Also the endian-free form zarr-python writes for 1-byte types.
				meta.Codecs = append([]zarr.Codec{{Name: "bytes"}}, chain[1:]...)
			}
			data := randomChunk(rng, dt, elems(shape)*dt.Size())
			add(strings.ReplaceAll(chainName, "+", "_")+"_"+dt.String(), meta, data)
		}
	}
	// Zarr v2 with every compressor and filter.
	for name := range v2Variants {
		for _, dt := range allDataTypes {
			meta, ok := v2Meta(name, dt, []int{5, 7}, []int{2, 3})
			if !ok {
				continue
			}
			data := randomChunk(rng, dt, 35*dt.Size())
			if meta.Filters != nil {
				data = smallValues(rng, dt, 35*dt.Size())
			}
			add(name+"_"+dt.String(), meta, data)
		}
	}
	// Chunks large enough that Blosc compresses and splits its blocks, and
	// shards of many inner chunks.
	big := []int{70, 50}
	for _, dt := range []zarr.DataType{zarr.Float64, zarr.Int16, zarr.Uint8, zarr.Complex64} {
		data := smallValues(rng, dt, 3500*dt.Size())
		if dt == zarr.Complex64 {
			data = randomChunk(rng, dt, 3500*dt.Size())
		}
		for chainName, chain := range codecChains {
			if !strings.HasPrefix(chainName, "blosc") && !strings.HasPrefix(chainName, "shard_") || strings.Contains(chainName, "snappy") {
				continue // numcodecs has no snappy
			}
			if strings.HasPrefix(chainName, "shard_") {
				chain = []zarr.Codec{zarr.ShardingCodec([]int{8, 16}, []zarr.Codec{zarr.BytesCodec(), zarr.BloscCodec("lz4", 5, "shuffle", 0, 0)}, "start")}
				if chainName == "shard_end" {
					chain = []zarr.Codec{zarr.ShardingCodec([]int{16, 8}, []zarr.Codec{zarr.ShardingCodec([]int{4, 4}, nil, "end"), zarr.Crc32cCodec()}, "end")}
				}
			}
			add("big_"+chainName+"_"+dt.String(), zarr.ArrayMetadata{Shape: big, ChunkShape: []int{32, 32}, DataType: dt, Codecs: chain}, data)
		}
		for _, name := range []string{"v2_blosc", "v2_blosc_auto", "v2_lz4", "v2_big_F"} {
			meta, _ := v2Meta(name, dt, big, []int{32, 32})
			add("big_"+name+"_"+dt.String(), meta, data)
		}
	}

	// Special fill values, with chunks left missing because they hold only
	// the fill value.
	nan32 := le(uint32(0x7fc00000))
	data := bytes.Repeat(nan32, 24)
	copy(data[4*20:], le(float32(1.5)))
	add("fill_nan", zarr.ArrayMetadata{Shape: []int{24}, ChunkShape: []int{5}, DataType: zarr.Float32, FillValue: nan32}, data)
	payload := le(uint64(0x7ff8000000000123))
	add("fill_nan_payload", zarr.ArrayMetadata{Shape: []int{3}, ChunkShape: []int{2}, DataType: zarr.Float64, FillValue: payload},
		slices.Concat(payload, le(2.0), payload))
	cfill := le([2]float64{math.Inf(-1), math.Float64frombits(0x7ff8000000000000)})
	add("fill_complex", zarr.ArrayMetadata{Shape: []int{3}, ChunkShape: []int{2}, DataType: zarr.Complex128, FillValue: cfill},
		slices.Concat(cfill, cfill, le([2]float64{1, 2})))
	umax := le(uint64(math.MaxUint64))
	add("fill_uint64_max", zarr.ArrayMetadata{Shape: []int{3}, ChunkShape: []int{2}, DataType: zarr.Uint64, FillValue: umax},
		slices.Concat(umax, umax, le(uint64(5))))
	add("fill_float16", zarr.ArrayMetadata{Shape: []int{2}, ChunkShape: []int{1}, DataType: zarr.Float16, FillValue: le(uint16(0x2e66))},
		slices.Concat(le(uint16(0x2e66)), le(uint16(0x3c00))))
	add("zero_d", zarr.ArrayMetadata{DataType: zarr.Int64, FillValue: le(int64(-1))}, le(int64(math.MinInt64)))
	add("zero_d_v2", zarr.ArrayMetadata{DataType: zarr.Int64, ChunkKeyEncoding: zarr.ChunkKeyEncoding{Name: "v2"}}, le(int64(12)))
	grid := randomChunk(rng, zarr.Int32, 4*30)
	add("separator_dot", zarr.ArrayMetadata{Shape: []int{5, 6}, ChunkShape: []int{2, 4}, DataType: zarr.Int32,
		ChunkKeyEncoding: zarr.ChunkKeyEncoding{Separator: "."}}, grid)
	add("key_v2", zarr.ArrayMetadata{Shape: []int{5, 6}, ChunkShape: []int{2, 4}, DataType: zarr.Int32,
		ChunkKeyEncoding: zarr.ChunkKeyEncoding{Name: "v2"}}, grid)
	add("attrs_3d", zarr.ArrayMetadata{Shape: []int{3, 4, 5}, ChunkShape: []int{2, 3, 2}, DataType: zarr.Uint16,
		Attributes: map[string]any{"big": uint64(math.MaxUint64), "s": "<&>"}, DimensionNames: []string{"z", "", "x"}},
		randomChunk(rng, zarr.Uint16, 2*60))

	manifest, _ := json.Marshal(cases)
	if err := os.WriteFile(filepath.Join(root, "cases.json"), manifest, 0o666); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "check.py")
	if err := os.WriteFile(script, []byte(pythonCheck), 0o666); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(python, script, root).CombinedOutput()
	t.Logf("zarr-python: %s", out)
	if err != nil {
		t.Fatalf("zarr-python could not read our arrays: %v", err)
	}
}

func nonNilInts(s []int) []int {
	if s == nil {
		return []int{}
	}
	return s
}
