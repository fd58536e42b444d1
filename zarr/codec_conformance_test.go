package zarr

import (
	"fmt"
	"testing"

	"github.com/cubego/cubego/zarr/codectest"
)

// Every codec runs the conformance suite of package codectest on its own,
// built for chunks of the size the suite asks for.

// a2aCodec, a2bCodec and b2bCodec adapt the three kinds of codec.
type a2aCodec struct{ c arrayToArrayCodec }

func (c a2aCodec) Encode(src []byte) ([]byte, error) {
	dst := make([]byte, len(src))
	return dst, c.c.encode(dst, src)
}

func (c a2aCodec) Decode(dst, src []byte) error { return c.c.decode(dst, src) }

type a2bCodec struct{ c arrayToBytesCodec }

func (c a2bCodec) Encode(src []byte) ([]byte, error) { return c.c.encode(nil, src) }

func (c a2bCodec) Decode(dst, src []byte) error { return c.c.decode(dst, src) }

// b2bCodec adapts a bytes→bytes codec (any size in, exactly len(dst) out).
type b2bCodec struct {
	c    bytesToBytesCodec
	name string
}

func (c b2bCodec) Encode(src []byte) ([]byte, error) { return c.c.encode(nil, src) }

func (c b2bCodec) Decode(dst, src []byte) error {
	n, err := c.c.decode(dst, src)
	if err != nil {
		return err
	}
	if n != len(dst) {
		return fmt.Errorf("%s: decoded %d bytes, want %d", c.name, n, len(dst))
	}
	return nil
}

func conformancePipeline(codecs []Codec, dt DataType, shape func(n int) []int) func(size int) (codectest.Codec, error) {
	return func(size int) (codectest.Codec, error) {
		spec := chunkSpec{shape: shape(size / dt.Size()), dataType: dt}
		p, err := newPipeline(codecs, spec)
		if err != nil {
			return nil, err
		}
		// The codec under test: the first array→array codec, else the
		// first bytes→bytes codec, else the array→bytes codec.
		switch {
		case len(p.a2a) > 0:
			return a2aCodec{p.a2a[0]}, nil
		case len(p.b2b) > 0:
			return b2bCodec{p.b2b[0], p.b2b[0].metadata().Name}, nil
		}
		return a2bCodec{p.a2b}, nil
	}
}

func oneD(n int) []int { return []int{n} }

// twoD is a chunk of n elements as 2 rows when n is even.
func twoD(n int) []int {
	if n%2 == 0 && n > 0 {
		return []int{2, n / 2}
	}
	return []int{1, n}
}

func TestCodecConformance(t *testing.T) {
	big := Codec{Name: "bytes", Configuration: map[string]any{"endian": "big"}}
	for _, tc := range []struct {
		name, codec string
		codecs      []Codec
		dt          DataType
		shape       func(int) []int
		checksummed bool
	}{
		{"bytes", "bytes", []Codec{BytesCodec()}, Int32, oneD, false},
		{"bytes_big", "bytes", []Codec{big}, Float64, oneD, false},
		{"transpose", "transpose", []Codec{TransposeCodec([]int{1, 0}), BytesCodec()}, Int16, twoD, false},
		{"gzip", "gzip", []Codec{BytesCodec(), GzipCodec(5)}, Uint8, oneD, true},
		{"zstd", "zstd", []Codec{BytesCodec(), ZstdCodec(3, true)}, Uint8, oneD, true},
		{"crc32c", "crc32c", []Codec{BytesCodec(), Crc32cCodec()}, Uint8, oneD, true},
		{"blosc", "blosc", []Codec{BytesCodec(), BloscCodec("lz4", 5, "shuffle", 0, 0)}, Float32, oneD, false},
		{"blosc_zstd", "blosc", []Codec{BytesCodec(), BloscCodec("zstd", 5, "bitshuffle", 0, 0)}, Int64, oneD, false},
		{"sharding", "sharding_indexed", []Codec{ShardingCodec([]int{1}, []Codec{BytesCodec(), Crc32cCodec()}, "end")}, Uint16, oneD, false},
		{"sharding_start", "sharding_indexed", []Codec{ShardingCodec([]int{1}, []Codec{BytesCodec(), GzipCodec(1)}, "start")}, Uint8, oneD, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sizes := []int{0, 1, 7, 64, 1000, 4096}
			if tc.codec == "sharding_indexed" {
				sizes = []int{0, 1, 7, 64, 300} // one inner chunk per element
			}
			codectest.Run(t, codectest.Config{
				Name:        tc.codec,
				Unit:        tc.dt.Size(),
				Sizes:       sizes,
				Checksummed: tc.checksummed,
				New:         conformancePipeline(tc.codecs, tc.dt, tc.shape),
			})
		})
	}
	// Zarr v2 compressors and filters, on their own.
	for _, tc := range []struct {
		name        string
		new         func() (bytesToBytesCodec, error)
		unit        int
		checksummed bool
	}{
		{"zlib", func() (bytesToBytesCodec, error) { return newDeflateCodec("zlib", nil, true) }, 1, true},
		{"lz4", func() (bytesToBytesCodec, error) { return newLZ4Codec(nil) }, 1, false},
		{"delta", func() (bytesToBytesCodec, error) {
			return newDeltaFilter(map[string]any{"dtype": "<i4", "astype": "<i4"}, "<i4")
		}, 4, false},
		{"astype", func() (bytesToBytesCodec, error) {
			return newAsTypeFilter(map[string]any{"encode_dtype": ">i8", "decode_dtype": "<i4"}, "<i4")
		}, 4, false},
	} {
		t.Run("v2_"+tc.name, func(t *testing.T) {
			codectest.Run(t, codectest.Config{
				Name: tc.name, Unit: tc.unit, Checksummed: tc.checksummed,
				Sizes: []int{0, 1, 7, 64, 1000, 4096},
				New: func(int) (codectest.Codec, error) {
					c, err := tc.new()
					if err != nil {
						return nil, err
					}
					return b2bCodec{c, tc.name}, nil
				},
			})
		})
	}
}
