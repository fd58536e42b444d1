package zarr

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Fuzz targets for every decoder and metadata parser: arbitrary input
// never panics and never yields more than the chunk's size. Their seed
// corpora are committed under testdata/fuzz; TestFuzzSeeds checks them
// and -update-codec-seeds rewrites them.

var updateCodecSeeds = flag.Bool("update-codec-seeds", false, "rewrite the codec fuzz seed corpora under testdata/fuzz")

// fuzzSeed is one committed seed of a fuzz target.
type fuzzSeed struct {
	target, name string
	data         []byte
	size         uint16
}

// codecSeeds returns the seeds of the codec fuzz targets: valid encodings
// of a few chunks, so the fuzzer starts from real streams.
func codecSeeds(t testing.TB) []fuzzSeed {
	var seeds []fuzzSeed
	add := func(target string, c bytesToBytesCodec) {
		for _, n := range []int{0, 1, 100, 3000} {
			src := bytes.Repeat([]byte("cubego zarr "), n/12+1)[:n]
			enc, err := c.encode(nil, src)
			if err != nil {
				t.Fatal(err)
			}
			seeds = append(seeds, fuzzSeed{target, fmt.Sprintf("n%d", n), enc, uint16(n)})
		}
	}
	gz, _ := newDeflateCodec("gzip", map[string]any{"level": 5}, false)
	zl, _ := newDeflateCodec("zlib", map[string]any{"level": 1}, true)
	lz, _ := newLZ4Codec(nil)
	add("FuzzGzipDecode", gz)
	add("FuzzZlibDecode", zl)
	add("FuzzLZ4Decode", lz)
	for _, n := range []int{0, 2, 16, 64} {
		src := bytes.Repeat([]byte{1, 2}, n/2)
		seeds = append(seeds, fuzzSeed{"FuzzBytesDecode", fmt.Sprintf("n%d", n), src, uint16(n)})
	}
	sc := fuzzShardCodec(t)
	for i, fill := range []bool{false, true} {
		shard := make([]byte, sc.spec.byteSize())
		if !fill {
			for k := range shard {
				shard[k] = byte(k)
			}
		}
		enc, err := sc.encode(nil, shard)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, fuzzSeed{"FuzzShardIndexDecode", fmt.Sprintf("shard%d", i), enc, 0})
	}
	return seeds
}

func seedFile(s fuzzSeed) (path string, contents []byte) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "go test fuzz v1\n[]byte(%q)\n", s.data)
	if s.target != "FuzzShardIndexDecode" {
		fmt.Fprintf(&b, "uint16(%d)\n", s.size)
	}
	return filepath.Join("testdata/fuzz", s.target, "seed_"+s.name), b.Bytes()
}

func TestFuzzSeeds(t *testing.T) {
	for _, s := range codecSeeds(t) {
		path, want := seedFile(s)
		if *updateCodecSeeds {
			if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o666); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
			t.Errorf("fuzz seed %s is missing or stale; run go test ./zarr -run TestFuzzSeeds -args -update-codec-seeds", path)
		}
	}
}

// fuzzB2B fuzzes the decoder of a bytes→bytes codec.
func fuzzB2B(f *testing.F, target string, c bytesToBytesCodec) {
	for _, s := range codecSeeds(f) {
		if s.target == target {
			f.Add(s.data, s.size)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, size uint16) {
		dst := make([]byte, size)
		n, err := c.decode(dst, data)
		if err == nil && (n < 0 || n > len(dst)) {
			t.Fatalf("decode returned %d bytes into a %d-byte buffer", n, len(dst))
		}
	})
}

func FuzzGzipDecode(f *testing.F) {
	c, _ := newDeflateCodec("gzip", nil, false)
	fuzzB2B(f, "FuzzGzipDecode", c)
}

func FuzzZlibDecode(f *testing.F) {
	c, _ := newDeflateCodec("zlib", nil, true)
	fuzzB2B(f, "FuzzZlibDecode", c)
}

func FuzzLZ4Decode(f *testing.F) {
	c, _ := newLZ4Codec(nil)
	fuzzB2B(f, "FuzzLZ4Decode", c)
}

// FuzzBytesDecode: the "bytes" codec, big-endian, and a transpose.
func FuzzBytesDecode(f *testing.F) {
	for _, s := range codecSeeds(f) {
		if s.target == "FuzzBytesDecode" {
			f.Add(s.data, s.size)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, size uint16) {
		n := int(size%64) * 2
		spec := chunkSpec{shape: []int{2, n / 4}, dataType: Int16}
		p, err := newPipeline([]Codec{TransposeCodec([]int{1, 0}), {Name: "bytes", Configuration: map[string]any{"endian": "big"}}}, spec)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, spec.byteSize())
		if err := p.decode(dst, data); err == nil && len(data) != len(dst) {
			t.Fatalf("decoded %d bytes into %d without error", len(data), len(dst))
		}
	})
}

func fuzzShardCodec(t testing.TB) *shardingCodec {
	c, err := newShardingCodec(ShardingCodec([]int{2, 2}, []Codec{BytesCodec(), ZstdCodec(1, false)}, "end").Configuration,
		chunkSpec{shape: []int{4, 6}, dataType: Uint16})
	if err != nil {
		t.Fatal(err)
	}
	return c.(*shardingCodec)
}

// FuzzShardIndexDecode: a shard's index and inner chunks, decoded whole
// and one inner chunk at a time.
func FuzzShardIndexDecode(f *testing.F) {
	sc := fuzzShardCodec(f)
	for _, s := range codecSeeds(f) {
		if s.target == "FuzzShardIndexDecode" {
			f.Add(s.data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dst := make([]byte, sc.spec.byteSize())
		_ = sc.decode(dst, data)
		stored, err := sc.indexOf(data)
		if err != nil {
			return
		}
		entries, err := sc.decodeIndex(stored)
		if err != nil {
			return
		}
		inner := make([]byte, sc.innerBytes)
		for i := range sc.nInner {
			off, n, ok, err := sc.entry(entries, i, int64(len(data)))
			if err != nil || !ok {
				continue
			}
			_ = sc.inner.decode(inner, data[off:off+n])
		}
	})
}

func FuzzParseArrayMetadataV2(f *testing.F) {
	f.Add([]byte(`{"zarr_format":2,"shape":[3],"chunks":[2],"dtype":"<f8","fill_value":"NaN","order":"C","filters":null,"compressor":null}`))
	f.Fuzz(func(t *testing.T, zarray []byte) {
		m, err := ParseArrayMetadataV2(zarray, []byte(`{"a": [1, 2.5, null]}`))
		if err != nil {
			return
		}
		docs, err := m.Documents()
		if err != nil {
			t.Fatalf("Documents of parsed metadata: %v", err)
		}
		again, err := ParseArrayMetadataV2(docs[zarrayKey], docs[zattrsKey])
		if err != nil {
			t.Fatalf("reparse: %v\n%s", err, docs[zarrayKey])
		}
		if again.DataType != m.DataType || len(again.Shape) != len(m.Shape) {
			t.Fatalf("round trip changed the metadata")
		}
	})
}
