package zarr

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func TestZstdCodecConfig(t *testing.T) {
	for _, tc := range []struct {
		config map[string]any
		ok     bool
	}{
		{map[string]any{"level": 0, "checksum": false}, true},
		{map[string]any{"level": 22, "checksum": true}, true},
		{map[string]any{"level": -5, "checksum": false}, true},
		{map[string]any{"level": 3.0, "checksum": false}, true},
		{map[string]any{}, true},
		{nil, true},
		{map[string]any{"level": 23}, false},
		{map[string]any{"level": -131073}, false},
		{map[string]any{"level": 1.5}, false},
		{map[string]any{"level": "1"}, false},
		{map[string]any{"checksum": 1}, false},
		{map[string]any{"level": 1, "window": 10}, false},
	} {
		_, err := newZstdCodec(tc.config, chunkSpec{shape: []int{2}, dataType: Int8})
		if tc.ok && err != nil {
			t.Errorf("zstd %v: %v", tc.config, err)
		}
		if !tc.ok && !errors.Is(err, ErrInvalid) {
			t.Errorf("zstd %v: error %v, want ErrInvalid", tc.config, err)
		}
	}
}

func testChunk(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.IntN(8)) // compressible
	}
	return b
}

func TestZstdCodecRoundTrip(t *testing.T) {
	for _, level := range []int{-7, 0, 1, 3, 5, 9, 19} {
		for _, checksum := range []bool{false, true} {
			c := newTestCodec(t, ZstdCodec(level, checksum), Uint8).(bytesToBytesCodec)
			for _, n := range []int{1, 100, 1 << 17, 300_000} {
				src := testChunk(n, uint64(n))
				enc, err := c.encode(nil, src)
				if err != nil {
					t.Fatal(err)
				}
				if len(enc) > c.encodedSizeBound(n) {
					t.Errorf("level %d: %d bytes encode to %d, above the bound %d", level, n, len(enc), c.encodedSizeBound(n))
				}
				h := zstd.Header{}
				if err := h.Decode(enc); err != nil || !h.HasFCS || h.FrameContentSize != uint64(n) || h.HasCheckSum != checksum {
					t.Errorf("level %d checksum %v: frame header %+v, %v", level, checksum, h, err)
				}
				dst := make([]byte, n)
				m, err := c.decode(dst, enc)
				if err != nil || m != n || !bytes.Equal(dst, src) {
					t.Errorf("level %d: decode = %d, %v", level, m, err)
				}
				if got := c.metadata(); got.Configuration["level"] != level || got.Configuration["checksum"] != checksum {
					t.Errorf("metadata() = %v", got)
				}
			}
		}
	}
	// Incompressible data stays within the bound too.
	c := newTestCodec(t, ZstdCodec(0, true), Uint8).(bytesToBytesCodec)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 10, 1000, 200_000} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		enc, _ := c.encode(nil, src)
		if len(enc) > c.encodedSizeBound(n) {
			t.Errorf("random %d bytes encode to %d, above the bound %d", n, len(enc), c.encodedSizeBound(n))
		}
	}
}

func TestZstdCodecCorrupt(t *testing.T) {
	c := newTestCodec(t, ZstdCodec(3, true), Uint8).(bytesToBytesCodec)
	src := testChunk(5000, 1)
	enc, _ := c.encode(nil, src)
	dst := make([]byte, len(src))

	flipped := bytes.Clone(enc)
	flipped[len(flipped)-6] ^= 0x55 // inside the data or the checksum
	truncated := enc[:len(enc)/2]
	for name, in := range map[string][]byte{
		"garbage":   []byte("this is not zstd at all"),
		"truncated": truncated,
		"flipped":   flipped,
		"empty":     {},
	} {
		n, err := c.decode(dst, in)
		if err == nil && n == len(dst) && name != "empty" {
			t.Errorf("%s: decode succeeded", name)
		}
	}
	// A frame that decodes to more than the chunk is refused, whether it
	// declares its size or not (a streaming frame).
	big := make([]byte, 1<<20)
	bomb, _ := c.encode(nil, big)
	if _, err := c.decode(make([]byte, 1000), bomb); err == nil {
		t.Errorf("decoding 1 MiB into 1000 bytes succeeded")
	}
	var stream bytes.Buffer
	w, _ := zstd.NewWriter(&stream, zstd.WithEncoderConcurrency(1))
	_, _ = w.Write(big)
	_ = w.Close()
	if _, err := c.decode(make([]byte, 1000), stream.Bytes()); err == nil {
		t.Errorf("decoding a 1 MiB streaming frame into 1000 bytes succeeded")
	}
	// A streaming frame of the right size decodes.
	stream.Reset()
	w.Reset(&stream)
	_, _ = w.Write(src)
	_ = w.Close()
	if n, err := c.decode(dst, stream.Bytes()); err != nil || n != len(src) || !bytes.Equal(dst, src) {
		t.Errorf("streaming frame: decode = %d, %v", n, err)
	}
	// Two concatenated frames are one value.
	two := append(bytes.Clone(enc), enc...)
	dst2 := make([]byte, 2*len(src))
	if n, err := c.decode(dst2, two); err != nil || n != len(dst2) {
		t.Errorf("two frames: decode = %d, %v", n, err)
	}
}

func TestZstdCodecConcurrent(t *testing.T) {
	c := newTestCodec(t, ZstdCodec(1, false), Uint8).(bytesToBytesCodec)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			src := testChunk(10000+g, uint64(g))
			for range 20 {
				enc, _ := c.encode(nil, src)
				dst := make([]byte, len(src))
				if n, err := c.decode(dst, enc); err != nil || n != len(src) || !bytes.Equal(dst, src) {
					t.Errorf("goroutine %d: decode = %d, %v", g, n, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// FuzzZstdDecode: arbitrary input never panics and never yields more than
// the chunk size.
func FuzzZstdDecode(f *testing.F) {
	c, err := newZstdCodec(map[string]any{"level": 3, "checksum": true}, chunkSpec{})
	if err != nil {
		f.Fatal(err)
	}
	z := c.(bytesToBytesCodec)
	for _, n := range []int{0, 1, 64, 4096} {
		enc, _ := z.encode(nil, testChunk(n, 9))
		f.Add(enc, uint16(n))
	}
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd}, uint16(10))
	f.Fuzz(func(t *testing.T, data []byte, size uint16) {
		dst := make([]byte, size)
		n, err := z.decode(dst, data)
		if err == nil && (n < 0 || n > len(dst)) {
			t.Fatalf("decode returned %d bytes into a %d-byte buffer", n, len(dst))
		}
	})
}
