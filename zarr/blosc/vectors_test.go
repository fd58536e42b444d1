package blosc

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

// vector is a Blosc buffer written by numcodecs (testdata/generate.py).
type vector struct {
	Cname     string `json:"cname"`
	Clevel    int    `json:"clevel"`
	Shuffle   int    `json:"shuffle"`
	TypeSize  int    `json:"typesize"`
	BlockSize int    `json:"blocksize"`
	NBytes    int    `json:"nbytes"`
	SHA256    string `json:"sha256"`
	Blosc     string `json:"blosc"`
}

func (v vector) String() string {
	return fmt.Sprintf("%s/clevel%d/shuffle%d/ts%d/bs%d/n%d", v.Cname, v.Clevel, v.Shuffle, v.TypeSize, v.BlockSize, v.NBytes)
}

func loadVectors(t testing.TB) []vector {
	t.Helper()
	b, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Vectors []vector }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Vectors) == 0 {
		t.Fatal("no vectors")
	}
	return f.Vectors
}

func (v vector) data(t testing.TB) []byte {
	b, err := base64.StdEncoding.DecodeString(v.Blosc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDecodeNumcodecs decodes every buffer numcodecs wrote and checks the
// header decoding and the result's hash.
func TestDecodeNumcodecs(t *testing.T) {
	for _, v := range loadVectors(t) {
		src := v.data(t)
		h, err := ReadHeader(src)
		if err != nil {
			t.Errorf("%v: ReadHeader: %v", v, err)
			continue
		}
		want := v.Cname
		if want == "lz4hc" {
			want = "lz4"
		}
		if h.NBytes != v.NBytes || h.TypeSize != v.TypeSize || (!h.Memcpyed() && h.Compressor() != want) {
			t.Errorf("%v: header %+v", v, h)
		}
		if !h.Memcpyed() && h.Shuffle() != Shuffle(v.Shuffle) {
			t.Errorf("%v: shuffle %v", v, h.Shuffle())
		}
		dst := make([]byte, v.NBytes)
		n, err := Decompress(dst, src)
		if err != nil || n != v.NBytes {
			t.Errorf("%v (flags %#x, blocksize %d): Decompress = %d, %v", v, h.Flags, h.BlockSize, n, err)
			continue
		}
		sum := sha256.Sum256(dst)
		if hex.EncodeToString(sum[:]) != v.SHA256 {
			t.Errorf("%v (flags %#x, blocksize %d): decoded data differs", v, h.Flags, h.BlockSize)
		}
		// Our writer makes the same choices of block size, split and
		// shuffle for the same data.
		ours, err := Compress(nil, dst, Options{Compressor: v.Cname, Level: v.Clevel, Shuffle: Shuffle(v.Shuffle), TypeSize: v.TypeSize, BlockSize: v.BlockSize})
		if err != nil {
			t.Fatal(err)
		}
		oh, _ := ReadHeader(ours)
		if oh.BlockSize != h.BlockSize || oh.Split() != h.Split() || oh.Shuffle() != h.Shuffle() {
			t.Errorf("%v: our header %+v, numcodecs' %+v", v, oh, h)
		}
	}
}
