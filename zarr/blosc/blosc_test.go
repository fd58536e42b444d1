package blosc

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cubego/cubego/zarr/codectest"
)

// bloscCodec adapts Compress and Decompress to the codec suite.
type bloscCodec struct{ o Options }

func (c bloscCodec) Encode(src []byte) ([]byte, error) { return Compress(nil, src, c.o) }

func (c bloscCodec) Decode(dst, src []byte) error {
	n, err := Decompress(dst, src)
	if err != nil {
		return err
	}
	if n != len(dst) {
		return fmt.Errorf("blosc: decoded %d bytes, want %d", n, len(dst))
	}
	return nil
}

func TestConformance(t *testing.T) {
	for _, cname := range Compressors {
		for _, sh := range []Shuffle{NoShuffle, ByteShuffle, BitShuffle} {
			for _, ts := range []int{1, 4, 8} {
				t.Run(fmt.Sprintf("%s/%v/%d", cname, sh, ts), func(t *testing.T) {
					codectest.Run(t, codectest.Config{
						Name:  "blosc",
						Unit:  ts,
						Sizes: []int{0, 1, 15, 16, 200, 5000},
						New: func(int) (codectest.Codec, error) {
							return bloscCodec{Options{Compressor: cname, Level: 5, Shuffle: sh, TypeSize: ts}}, nil
						},
					})
				})
			}
		}
	}
}

func TestRoundTripOptions(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, cname := range Compressors {
		for _, level := range []int{0, 1, 9} {
			for _, bs := range []int{0, 100, 1000, 4096} {
				for _, ts := range []int{1, 2, 3, 8, 16, 17} {
					for _, n := range []int{0, 1, 127, 128, 3001, 70_000} {
						if n == 70_000 && (bs != 0 || ts%2 == 1) {
							continue // enough large cases for the default blocks
						}
						src := make([]byte, n)
						for i := range src {
							src[i] = byte(rng.IntN(4) + i/ts%3)
						}
						o := Options{Compressor: cname, Level: level, Shuffle: Shuffle(rng.IntN(3)), TypeSize: ts, BlockSize: bs}
						enc, err := Compress(nil, src, o)
						if err != nil {
							t.Fatalf("%+v: %v", o, err)
						}
						if len(enc) > CompressBound(n) {
							t.Errorf("%+v n=%d: %d bytes, above the bound %d", o, n, len(enc), CompressBound(n))
						}
						dst := make([]byte, n)
						if m, err := Decompress(dst, enc); err != nil || m != n || !bytes.Equal(dst, src) {
							t.Fatalf("%+v n=%d: Decompress = %d, %v", o, n, m, err)
						}
					}
				}
			}
		}
	}
}

func TestCompressAppends(t *testing.T) {
	src := bytes.Repeat([]byte("abcdefgh"), 100)
	enc, err := Compress([]byte("prefix"), src, Options{Compressor: "lz4", Level: 5, Shuffle: ByteShuffle, TypeSize: 8})
	if err != nil || string(enc[:6]) != "prefix" {
		t.Fatalf("Compress = %q, %v", enc[:6], err)
	}
	dst := make([]byte, len(src))
	if _, err := Decompress(dst, enc[6:]); err != nil || !bytes.Equal(dst, src) {
		t.Fatalf("Decompress: %v", err)
	}
}

func TestOptionsInvalid(t *testing.T) {
	for _, o := range []Options{
		{Compressor: "lzma", Level: 5, TypeSize: 1},
		{Compressor: "lz4", Level: 10, TypeSize: 1},
		{Compressor: "lz4", Level: -1, TypeSize: 1},
		{Compressor: "lz4", Level: 5, TypeSize: 0},
		{Compressor: "lz4", Level: 5, TypeSize: 256},
		{Compressor: "lz4", Level: 5, TypeSize: 1, Shuffle: 3},
		{Compressor: "lz4", Level: 5, TypeSize: 1, BlockSize: -1},
	} {
		if _, err := Compress(nil, []byte("x"), o); err == nil {
			t.Errorf("Compress with %+v succeeded", o)
		}
	}
}

func TestDecompressRefusesLargeOutput(t *testing.T) {
	src := make([]byte, 1<<20)
	enc, _ := Compress(nil, src, Options{Compressor: "zstd", Level: 5, TypeSize: 1})
	if len(enc) > 1000 {
		t.Fatalf("1 MiB of zeros compressed to %d bytes", len(enc))
	}
	_, err := Decompress(make([]byte, 1000), enc)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("decoding 1 MiB into 1000 bytes: %v", err)
	}
	// A header that claims a huge size is refused before any allocation.
	bad := bytes.Clone(enc)
	bad[4], bad[5], bad[6], bad[7] = 0xff, 0xff, 0xff, 0x7f
	if _, err := Decompress(make([]byte, 1<<20), bad); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("huge nbytes: %v", err)
	}
}

func TestHeader(t *testing.T) {
	enc, _ := Compress(nil, bytes.Repeat([]byte{1, 2, 3, 4}, 1000), Options{Compressor: "zstd", Level: 3, Shuffle: BitShuffle, TypeSize: 4})
	h, err := ReadHeader(enc)
	if err != nil {
		t.Fatal(err)
	}
	if h.Compressor() != "zstd" || h.Shuffle() != BitShuffle || h.Split() || h.Memcpyed() || h.NBytes != 4000 || h.TypeSize != 4 || h.CBytes != len(enc) {
		t.Errorf("header %+v", h)
	}
	for _, bad := range [][]byte{nil, enc[:15], append(bytes.Clone(enc), 0)} {
		if _, err := ReadHeader(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("ReadHeader of %d bytes: %v", len(bad), err)
		}
	}
}

func TestShuffleInverse(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, ts := range []int{1, 2, 3, 4, 8, 16} {
		for _, n := range []int{0, 5, 64, 67, 128, 1000} {
			src := make([]byte, n*ts+ts/2)
			for i := range src {
				src[i] = byte(rng.Uint32())
			}
			a, b, tmp := make([]byte, len(src)), make([]byte, len(src)), make([]byte, len(src))
			shuffle(a, src, ts)
			// The byte planes, as the simple loop of shuffle's comment.
			want := bytes.Clone(src)
			for i := range n {
				for j := range ts {
					want[j*n+i] = src[i*ts+j]
				}
			}
			if !bytes.Equal(a, want) {
				t.Errorf("shuffle ts=%d n=%d differs from the simple loop", ts, n)
			}
			unshuffle(b, a, ts)
			if !bytes.Equal(b, src) {
				t.Errorf("unshuffle(shuffle) ts=%d n=%d differs", ts, n)
			}
			bitShuffle(a, src, ts, tmp)
			bitUnshuffle(b, a, ts, tmp)
			if !bytes.Equal(b, src) {
				t.Errorf("bitUnshuffle(bitShuffle) ts=%d n=%d differs", ts, n)
			}
			// The bit planes, as the simple loop of bitShuffle's comment.
			if n%8 == 0 && n > 0 {
				want := make([]byte, len(src))
				copy(want[n*ts:], src[n*ts:])
				for e := range n {
					for bit := range 8 * ts {
						v := src[e*ts+bit/8] >> (bit % 8) & 1
						want[(bit*n+e)/8] |= v << (e % 8)
					}
				}
				if !bytes.Equal(a, want) {
					t.Errorf("bitShuffle ts=%d n=%d differs from the simple loop", ts, n)
				}
			}
		}
	}
}

func TestBloscLZStreams(t *testing.T) {
	// Long matches, far matches and runs encode and decode.
	rng := rand.New(rand.NewPCG(8, 9))
	block := make([]byte, 3000)
	for i := range block {
		block[i] = byte(rng.Uint32())
	}
	var src []byte
	src = append(src, block...)
	src = append(src, make([]byte, 20000)...) // a run longer than 255+9
	src = append(src, block...)               // a far match
	src = append(src, block[:100]...)
	dst := make([]byte, len(src)+100)
	n := blosclzCompress(dst, src, 5)
	if n == 0 || n > len(src)/2 {
		t.Fatalf("blosclzCompress = %d of %d", n, len(src))
	}
	out := make([]byte, len(src))
	if err := decodeBloscLZ(out, dst[:n]); err != nil || !bytes.Equal(out, src) {
		t.Fatalf("decodeBloscLZ: %v", err)
	}
	if err := decodeBloscLZ(out[:len(out)-1], dst[:n]); err == nil {
		t.Errorf("decoding into a short buffer succeeded")
	}
	if blosclzCompress(dst[:10], src, 5) != 0 {
		t.Errorf("compressing into 10 bytes succeeded")
	}
}

// TestNumcodecsReadsOurs compresses with every option numcodecs has and
// decodes with numcodecs. It runs when CUBEGO_ZARR_PYTHON names a python
// with numcodecs installed.
func TestNumcodecsReadsOurs(t *testing.T) {
	python := os.Getenv("CUBEGO_ZARR_PYTHON")
	if python == "" {
		t.Skip("CUBEGO_ZARR_PYTHON is not set")
	}
	type item struct {
		Name   string `json:"name"`
		SHA256 string `json:"sha256"`
		Blosc  string `json:"blosc"`
	}
	var items []item
	rng := rand.New(rand.NewPCG(10, 11))
	for _, cname := range []string{"blosclz", "lz4", "lz4hc", "zlib", "zstd"} {
		for _, sh := range []Shuffle{NoShuffle, ByteShuffle, BitShuffle} {
			for _, ts := range []int{1, 2, 4, 8, 16} {
				for _, n := range []int{100, 1001, 4096, 50_000, 300_000} {
					for _, bs := range []int{0, 1024} {
						src := make([]byte, n)
						for i := range src {
							src[i] = byte(rng.IntN(3) + i/ts/50)
						}
						enc, err := Compress(nil, src, Options{Compressor: cname, Level: 5, Shuffle: sh, TypeSize: ts, BlockSize: bs})
						if err != nil {
							t.Fatal(err)
						}
						sum := sha256.Sum256(src)
						items = append(items, item{
							Name:   fmt.Sprintf("%s/%v/ts%d/n%d/bs%d", cname, sh, ts, n, bs),
							SHA256: hex.EncodeToString(sum[:]),
							Blosc:  base64.StdEncoding.EncodeToString(enc),
						})
					}
				}
			}
		}
	}
	dir := t.TempDir()
	b, _ := json.Marshal(items)
	if err := os.WriteFile(filepath.Join(dir, "items.json"), b, 0o666); err != nil {
		t.Fatal(err)
	}
	script := `
import base64, hashlib, json, sys
from numcodecs import Blosc
items = json.load(open(sys.argv[1]))
bad = 0
for it in items:
    out = Blosc().decode(base64.b64decode(it["blosc"]))
    if hashlib.sha256(bytes(out)).hexdigest() != it["sha256"]:
        print("MISMATCH", it["name"]); bad += 1
print("decoded", len(items), "buffers,", bad, "mismatches")
sys.exit(1 if bad else 0)
`
	out, err := exec.Command(python, "-c", script, filepath.Join(dir, "items.json")).CombinedOutput()
	t.Logf("numcodecs: %s", out)
	if err != nil {
		t.Fatalf("numcodecs could not read our buffers: %v", err)
	}
}

// FuzzDecompress: arbitrary input never panics and never yields more than
// the buffer.
func FuzzDecompress(f *testing.F) {
	for _, v := range loadVectors(f)[:40] {
		f.Add(v.data(f), uint32(v.NBytes))
	}
	f.Fuzz(func(t *testing.T, src []byte, size uint32) {
		dst := make([]byte, size%(1<<20))
		n, err := Decompress(dst, src)
		if err == nil && (n < 0 || n > len(dst)) {
			t.Fatalf("Decompress returned %d bytes into a %d-byte buffer", n, len(dst))
		}
	})
}

var updateSeeds = flag.Bool("update-seeds", false, "rewrite the FuzzDecompress seed corpus")

// TestFuzzSeeds checks the committed FuzzDecompress seeds (a few
// numcodecs buffers); -update-seeds rewrites them.
func TestFuzzSeeds(t *testing.T) {
	vs := loadVectors(t)
	for _, i := range []int{0, 13, 40, 77, 150} {
		v := vs[i]
		path := filepath.Join("testdata/fuzz/FuzzDecompress", fmt.Sprintf("numcodecs_%d", i))
		want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\nuint32(%d)\n", v.data(t), v.NBytes)
		if *updateSeeds {
			if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(want), 0o666); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if got, err := os.ReadFile(path); err != nil || string(got) != want {
			t.Errorf("fuzz seed %s is missing or stale; run go test ./zarr/blosc -run TestFuzzSeeds -args -update-seeds", path)
		}
	}
}

func BenchmarkShuffle(b *testing.B) {
	for _, ts := range []int{2, 4, 8} {
		src := make([]byte, 1<<20)
		for i := range src {
			src[i] = byte(i * 7)
		}
		dst := make([]byte, len(src))
		b.Run(fmt.Sprintf("shuffle/%d", ts), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				shuffle(dst, src, ts)
			}
		})
		b.Run(fmt.Sprintf("unshuffle/%d", ts), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				unshuffle(src, dst, ts)
			}
		})
	}
}
