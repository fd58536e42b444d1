// Package codectest is a conformance suite for chunk codecs: every codec
// of package zarr (and the Blosc container of package zarr/blosc) passes
// the same tests.
//
//	func TestGzipConformance(t *testing.T) {
//		codectest.Run(t, codectest.Config{Name: "gzip", New: newGzipForSize})
//	}
//
// The suite sees a codec as bytes in, bytes out: Encode turns a decoded
// chunk into stored bytes, Decode turns them back into a buffer of exactly
// the decoded size. It checks that
//
//   - every test input survives a round trip, bit for bit;
//   - truncated stored bytes give an error that names the codec;
//   - corrupted stored bytes never panic: they give an error naming the
//     codec or, for codecs without a checksum, some output of the right
//     size (Checksummed codecs must detect every corruption that changes
//     the data);
//   - stored bytes that decode to more (or fewer) bytes than the buffer
//     are refused with an error naming the codec: no decompression bombs;
//   - random garbage never panics.
//
// It does not import package zarr, so zarr's own tests can use it.
package codectest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// Codec is a codec under test, built for one decoded size.
type Codec interface {
	// Encode returns the stored form of a decoded chunk.
	Encode(src []byte) ([]byte, error)
	// Decode decodes src into dst, which has exactly the decoded size.
	// Stored bytes that do not decode to exactly len(dst) bytes are an
	// error, and Decode never writes past dst.
	Decode(dst, src []byte) error
}

// Config describes the codec to test.
type Config struct {
	// Name must appear in every decoding error.
	Name string
	// New returns the codec for decoded chunks of size bytes; size is a
	// multiple of Unit. A codec whose configuration fixes the size (an
	// array codec built for a chunk shape) builds one for each size.
	New func(size int) (Codec, error)
	// Unit is the element size: every decoded size is a multiple of it
	// (0 means 1).
	Unit int
	// Sizes are the decoded sizes to test; nil means a default range
	// from 0 to 100 000 elements.
	Sizes []int
	// Checksummed codecs must detect any corrupted byte that changes the
	// decoded data (a change to a part the checksum does not cover, such
	// as a gzip header's timestamp, may decode to the original).
	Checksummed bool
}

// Run runs the suite as subtests of t.
func Run(t *testing.T, c Config) {
	t.Helper()
	if c.Unit == 0 {
		c.Unit = 1
	}
	sizes := c.Sizes
	if sizes == nil {
		sizes = []int{0, 1, 7, 64, 1000, 4096, 100_000}
	}
	c.Sizes = make([]int, len(sizes))
	for i, n := range sizes {
		c.Sizes[i] = n * c.Unit
	}
	t.Run("RoundTrip", func(t *testing.T) { testRoundTrip(t, c) })
	t.Run("Truncated", func(t *testing.T) { testTruncated(t, c) })
	t.Run("Corrupt", func(t *testing.T) { testCorrupt(t, c) })
	t.Run("WrongSize", func(t *testing.T) { testWrongSize(t, c) })
	t.Run("Garbage", func(t *testing.T) { testGarbage(t, c) })
}

// Inputs returns the decoded chunks the suite encodes for a size:
// zeros, a compressible pattern, random bytes and a mix.
func Inputs(size int, seed uint64) map[string][]byte {
	rng := rand.New(rand.NewPCG(seed, uint64(size)))
	zeros := make([]byte, size)
	pattern := make([]byte, size)
	for i := range pattern {
		pattern[i] = byte(i / 7 % 5)
	}
	random := make([]byte, size)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	mixed := bytes.Clone(pattern)
	copy(mixed[size/2:], random)
	return map[string][]byte{"zeros": zeros, "pattern": pattern, "random": random, "mixed": mixed}
}

func newCodec(t *testing.T, c Config, size int) Codec {
	t.Helper()
	cd, err := c.New(size)
	if err != nil {
		t.Fatalf("%s: New(%d): %v", c.Name, size, err)
	}
	return cd
}

func encode(t *testing.T, c Config, cd Codec, src []byte, what string) []byte {
	t.Helper()
	enc, err := cd.Encode(bytes.Clone(src))
	if err != nil {
		t.Fatalf("%s: Encode(%s, %d bytes): %v", c.Name, what, len(src), err)
	}
	return enc
}

// decode runs Decode and turns a panic into a test failure.
func decode(t *testing.T, c Config, cd Codec, dst, src []byte, what string) (err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: Decode(%s) panicked: %v", c.Name, what, r)
			err = fmt.Errorf("panic")
		}
	}()
	// A guard after dst catches writes past it.
	buf := make([]byte, len(dst)+16)
	for i := len(dst); i < len(buf); i++ {
		buf[i] = 0xa5
	}
	err = cd.Decode(buf[:len(dst):len(dst)], src)
	copy(dst, buf)
	for _, b := range buf[len(dst):] {
		if b != 0xa5 {
			t.Errorf("%s: Decode(%s) wrote past the %d-byte buffer", c.Name, what, len(dst))
			break
		}
	}
	return err
}

func checkNamed(t *testing.T, c Config, err error, what string) {
	t.Helper()
	if err != nil && !strings.Contains(err.Error(), c.Name) {
		t.Errorf("%s: error for %s does not name the codec: %v", c.Name, what, err)
	}
}

func testRoundTrip(t *testing.T, c Config) {
	for _, size := range c.Sizes {
		cd := newCodec(t, c, size)
		for name, src := range Inputs(size, 1) {
			what := fmt.Sprintf("%s/%d", name, size)
			enc := encode(t, c, cd, src, what)
			dst := make([]byte, size)
			if err := decode(t, c, cd, dst, enc, what); err != nil {
				t.Errorf("%s: round trip of %s: %v", c.Name, what, err)
				continue
			}
			if !bytes.Equal(dst, src) {
				t.Errorf("%s: round trip of %s changed the data", c.Name, what)
			}
			// Encoding is deterministic and does not keep src.
			if again := encode(t, c, cd, src, what); !bytes.Equal(again, enc) {
				t.Errorf("%s: encoding %s twice gave different bytes", c.Name, what)
			}
		}
	}
}

// truncations returns a few lengths shorter than n.
func truncations(n int) []int {
	var out []int
	for _, k := range []int{0, 1, n / 2, n - 4, n - 1} {
		if k >= 0 && k < n && (len(out) == 0 || out[len(out)-1] != k) {
			out = append(out, k)
		}
	}
	return out
}

func testTruncated(t *testing.T, c Config) {
	for _, size := range c.Sizes {
		cd := newCodec(t, c, size)
		for name, src := range Inputs(size, 2) {
			enc := encode(t, c, cd, src, name)
			for _, k := range truncations(len(enc)) {
				what := fmt.Sprintf("%s/%d truncated to %d of %d bytes", name, size, k, len(enc))
				dst := make([]byte, size)
				err := decode(t, c, cd, dst, bytes.Clone(enc[:k]), what)
				checkNamed(t, c, err, what)
				// Only an empty chunk may decode from no bytes at all.
				if err == nil && (k != 0 || size != 0) {
					t.Errorf("%s: %s decoded without error", c.Name, what)
				}
			}
		}
	}
}

func testCorrupt(t *testing.T, c Config) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, size := range c.Sizes {
		cd := newCodec(t, c, size)
		for name, src := range Inputs(size, 3) {
			enc := encode(t, c, cd, src, name)
			if len(enc) == 0 {
				continue
			}
			for range 16 {
				bad := bytes.Clone(enc)
				i := rng.IntN(len(bad))
				bad[i] ^= byte(1 + rng.IntN(255))
				what := fmt.Sprintf("%s/%d with byte %d of %d changed", name, size, i, len(enc))
				dst := make([]byte, size)
				err := decode(t, c, cd, dst, bad, what)
				checkNamed(t, c, err, what)
				if err == nil && c.Checksummed && !bytes.Equal(dst, src) {
					t.Errorf("%s: %s decoded to other data without error", c.Name, what)
				}
			}
		}
	}
}

func testWrongSize(t *testing.T, c Config) {
	for _, size := range c.Sizes {
		if size == 0 {
			continue
		}
		big := newCodec(t, c, 2*size)
		for name, src := range Inputs(2*size, 5) {
			enc := encode(t, c, big, src, name)
			for _, n := range []int{size, 2*size - c.Unit} {
				small := newCodec(t, c, n)
				what := fmt.Sprintf("%d bytes of %s decoded into %d", 2*size, name, n)
				err := decode(t, c, small, make([]byte, n), enc, what)
				if err == nil {
					t.Errorf("%s: %s: no error (a decompression bomb would pass)", c.Name, what)
				}
				checkNamed(t, c, err, what)
			}
			// Too short an output is refused as well.
			larger := newCodec(t, c, 2*size+c.Unit)
			what := fmt.Sprintf("%d bytes of %s decoded into %d", 2*size, name, 2*size+c.Unit)
			err := decode(t, c, larger, make([]byte, 2*size+c.Unit), enc, what)
			if err == nil {
				t.Errorf("%s: %s: no error", c.Name, what)
			}
			checkNamed(t, c, err, what)
		}
	}
}

func testGarbage(t *testing.T, c Config) {
	rng := rand.New(rand.NewPCG(6, 7))
	for _, size := range c.Sizes {
		cd := newCodec(t, c, size)
		for _, n := range []int{1, 4, 16, 17, 100, 4096} {
			bad := make([]byte, n)
			for i := range bad {
				bad[i] = byte(rng.Uint32())
			}
			what := fmt.Sprintf("%d random bytes into %d", n, size)
			err := decode(t, c, cd, make([]byte, size), bad, what)
			checkNamed(t, c, err, what)
		}
	}
}
