//go:build cgo && !purezstd

package zarr

import (
	"bytes"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestLibzstdInterop checks that the libzstd build reads klauspost's frames
// and writes frames klauspost reads, at levels libzstd has and klauspost
// maps (negative, default, high), and refuses a frame larger than the
// chunk with the size error.
func TestLibzstdInterop(t *testing.T) {
	src := testChunk(200_000, 7)
	kenc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	kdec, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	for _, level := range []int{-5, 0, 3, 19} {
		c := newTestCodec(t, ZstdCodec(level, false), Uint8).(bytesToBytesCodec)
		prefix := []byte("keep")
		enc, err := c.encode(bytes.Clone(prefix), src)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(enc, prefix) {
			t.Fatalf("level %d: encode did not append to dst", level)
		}
		got, err := kdec.DecodeAll(enc[len(prefix):], nil)
		if err != nil || !bytes.Equal(got, src) {
			t.Fatalf("level %d: klauspost cannot read libzstd's frame: %v", level, err)
		}
		dst := make([]byte, len(src))
		n, err := c.decode(dst, kenc.EncodeAll(src, nil))
		if err != nil || n != len(src) || !bytes.Equal(dst, src) {
			t.Fatalf("level %d: libzstd cannot read klauspost's frame: %d, %v", level, n, err)
		}
		_, err = c.decode(make([]byte, 1000), enc[len(prefix):])
		if err == nil || !strings.Contains(err.Error(), "exceeds 1000 bytes") {
			t.Fatalf("level %d: a frame too large for the chunk gave %v", level, err)
		}
	}
}
