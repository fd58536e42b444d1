package zarr_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/cubego/cubego/zarr"
)

func numcodec(id string, kv ...any) *zarr.Codec {
	c := zarr.Codec{Name: id, Configuration: map[string]any{}}
	for i := 0; i < len(kv); i += 2 {
		c.Configuration[kv[i].(string)] = kv[i+1]
	}
	return &c
}

// typestrOf returns the numpy typestr of dt in the given byte order.
func typestrOf(dt zarr.DataType, big bool) string {
	kinds := map[zarr.DataType]string{
		zarr.Bool: "b1", zarr.Int8: "i1", zarr.Int16: "i2", zarr.Int32: "i4", zarr.Int64: "i8",
		zarr.Uint8: "u1", zarr.Uint16: "u2", zarr.Uint32: "u4", zarr.Uint64: "u8",
		zarr.Float16: "f2", zarr.Float32: "f4", zarr.Float64: "f8", zarr.Complex64: "c8", zarr.Complex128: "c16",
	}
	switch {
	case dt.Size() == 1:
		return "|" + kinds[dt]
	case big:
		return ">" + kinds[dt]
	}
	return "<" + kinds[dt]
}

// wider returns the typestr of the next wider type of the same kind.
func wider(dt zarr.DataType) string {
	return map[zarr.DataType]string{
		zarr.Int8: "<i2", zarr.Int16: "<i4", zarr.Int32: "<i8", zarr.Int64: "<i8",
		zarr.Uint8: "<u2", zarr.Uint16: "<u4", zarr.Uint32: "<u8", zarr.Uint64: "<u8",
		zarr.Float16: "<f4", zarr.Float32: "<f8", zarr.Float64: "<f8",
	}[dt]
}

// v2Variants are the Zarr v2 encodings every data type is tested with;
// each sets the v2 fields of a metadata (nil: not for that data type).
var v2Variants = map[string]func(m *zarr.ArrayMetadata){
	"v2_raw": func(m *zarr.ArrayMetadata) {},
	"v2_blosc": func(m *zarr.ArrayMetadata) {
		m.Compressor = numcodec("blosc", "cname", "lz4", "clevel", 5, "shuffle", 1, "blocksize", 0)
	},
	"v2_blosc_auto": func(m *zarr.ArrayMetadata) {
		m.Compressor = numcodec("blosc", "cname", "zstd", "clevel", 3, "shuffle", -1, "blocksize", 0)
	},
	"v2_zlib": func(m *zarr.ArrayMetadata) { m.Compressor = numcodec("zlib", "level", 1) },
	"v2_gzip": func(m *zarr.ArrayMetadata) { m.Compressor = numcodec("gzip", "level", 5) },
	"v2_zstd": func(m *zarr.ArrayMetadata) { m.Compressor = numcodec("zstd", "level", 3, "checksum", false) },
	"v2_lz4":  func(m *zarr.ArrayMetadata) { m.Compressor = numcodec("lz4", "acceleration", 1) },
	"v2_big_F": func(m *zarr.ArrayMetadata) {
		m.Endian, m.Order, m.Compressor = "big", "F", numcodec("zlib", "level", 1)
	},
	"v2_slash": func(m *zarr.ArrayMetadata) { m.ChunkKeyEncoding.Separator = "/" },
	"v2_delta": func(m *zarr.ArrayMetadata) {
		if wider(m.DataType) == "" {
			return
		}
		ts := typestrOf(m.DataType, m.Endian == "big")
		m.Filters = []zarr.Codec{*numcodec("delta", "dtype", ts, "astype", ts)}
		m.Compressor = numcodec("zstd", "level", 1)
	},
	"v2_astype": func(m *zarr.ArrayMetadata) {
		if wider(m.DataType) == "" {
			return
		}
		m.Filters = []zarr.Codec{*numcodec("astype", "encode_dtype", wider(m.DataType), "decode_dtype", typestrOf(m.DataType, false))}
	},
}

// applies reports whether a variant changes anything for dt (filters are
// only for numeric types).
func v2Meta(name string, dt zarr.DataType, shape, chunks []int) (zarr.ArrayMetadata, bool) {
	m := zarr.ArrayMetadata{ZarrFormat: 2, Shape: shape, ChunkShape: chunks, DataType: dt}
	v2Variants[name](&m)
	if (name == "v2_delta" || name == "v2_astype") && m.Filters == nil {
		return m, false
	}
	return m, true
}

func TestArrayV2ReadWrite(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	for storeName, s := range testStores(t) {
		for name := range v2Variants {
			for _, dt := range allDataTypes {
				meta, ok := v2Meta(name, dt, []int{5, 7}, []int{2, 3})
				if !ok {
					continue
				}
				meta.FillValue = bytes.Repeat([]byte{1}, dt.Size())
				meta.Attributes = map[string]any{"k": "v"}
				path := name + "/" + dt.String()
				a, err := zarr.CreateArray(ctx, s, path, meta)
				if err != nil {
					t.Fatalf("%s/%s: CreateArray: %v", storeName, path, err)
				}
				if a.Metadata().ZarrFormat != 2 {
					t.Fatalf("%s: ZarrFormat %d", path, a.Metadata().ZarrFormat)
				}
				written := map[[2]int][]byte{}
				for i := range 3 {
					for j := range 3 {
						if (i+j)%3 == 0 {
							continue
						}
						c := randomChunk(rng, dt, a.ChunkBytes())
						if strings.Contains(name, "astype") || strings.Contains(name, "delta") {
							c = smallValues(rng, dt, a.ChunkBytes())
						}
						written[[2]int{i, j}] = c
						if err := a.WriteChunk(ctx, []int{i, j}, c); err != nil {
							t.Fatalf("%s: WriteChunk: %v", path, err)
						}
					}
				}
				b, err := zarr.OpenArray(ctx, s, path)
				if err != nil {
					t.Fatalf("%s/%s: OpenArray: %v", storeName, path, err)
				}
				if !reflect.DeepEqual(b.Metadata(), a.Metadata()) {
					t.Errorf("%s: reopened metadata differs:\n%#v\n%#v", path, b.Metadata(), a.Metadata())
				}
				dst := make([]byte, b.ChunkBytes())
				for i := range 3 {
					for j := range 3 {
						want, ok := written[[2]int{i, j}]
						if !ok {
							want = bytes.Repeat([]byte{1}, b.ChunkBytes())
						}
						if err := b.ReadChunk(ctx, []int{i, j}, dst); err != nil {
							t.Fatalf("%s: ReadChunk: %v", path, err)
						}
						if !bytes.Equal(dst, want) {
							t.Fatalf("%s/%s: chunk (%d, %d) = %x, want %x", storeName, path, i, j, dst, want)
						}
					}
				}
			}
		}
	}
}

// smallValues fills a chunk with small non-negative values that every
// numeric type (float16 included) holds exactly.
func smallValues(rng *rand.Rand, dt zarr.DataType, n int) []byte {
	b := make([]byte, n)
	size := dt.Size()
	for i := 0; i < n; i += size {
		v := rng.IntN(100)
		switch dt {
		case zarr.Float16:
			copy(b[i:], le(f16(float64(v))))
		case zarr.Float32:
			copy(b[i:], le(float32(v)))
		case zarr.Float64:
			copy(b[i:], le(float64(v)))
		default:
			b[i] = byte(v)
		}
	}
	return b
}

// f16 returns the float16 bits of a small integer value.
func f16(v float64) uint16 {
	if v == 0 {
		return 0
	}
	e := 0
	for v >= 2 {
		v /= 2
		e++
	}
	return uint16((e+15)<<10) | uint16((v-1)*1024)
}

func TestArrayV2Errors(t *testing.T) {
	ctx := context.Background()
	s := zarr.NewMemoryStore()
	base := zarr.ArrayMetadata{ZarrFormat: 2, Shape: []int{4}, ChunkShape: []int{2}, DataType: zarr.Int32}
	for name, tc := range map[string]struct {
		f    func(m *zarr.ArrayMetadata)
		want error
		word string
	}{
		"bz2":          {func(m *zarr.ArrayMetadata) { m.Compressor = numcodec("bz2", "level", 1) }, zarr.ErrNotImplemented, "bz2"},
		"fixedscale":   {func(m *zarr.ArrayMetadata) { m.Filters = []zarr.Codec{*numcodec("fixedscaleoffset")} }, zarr.ErrNotImplemented, "fixedscaleoffset"},
		"codecs":       {func(m *zarr.ArrayMetadata) { m.Codecs = []zarr.Codec{zarr.BytesCodec()} }, zarr.ErrInvalid, "Codecs"},
		"order":        {func(m *zarr.ArrayMetadata) { m.Order = "K" }, zarr.ErrInvalid, "order"},
		"dimnames":     {func(m *zarr.ArrayMetadata) { m.DimensionNames = []string{"x"} }, zarr.ErrInvalid, "dimension"},
		"v3 with v2":   {func(m *zarr.ArrayMetadata) { m.ZarrFormat = 0; m.Order = "F" }, zarr.ErrInvalid, "v2"},
		"delta bool":   {func(m *zarr.ArrayMetadata) { m.Filters = []zarr.Codec{*numcodec("delta", "dtype", "|b1")} }, zarr.ErrNotImplemented, "delta"},
		"blosc cname":  {func(m *zarr.ArrayMetadata) { m.Compressor = numcodec("blosc", "cname", "lzma") }, zarr.ErrInvalid, "lzma"},
		"zarr_format4": {func(m *zarr.ArrayMetadata) { m.ZarrFormat = 4 }, zarr.ErrNotImplemented, "zarr_format"},
	} {
		m := base
		tc.f(&m)
		_, err := zarr.CreateArray(ctx, s, "x", m)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.word) {
			t.Errorf("%s: error %v, want %v naming %q", name, err, tc.want, tc.word)
		}
	}
}

func TestParseArrayMetadataV2(t *testing.T) {
	doc := `{"zarr_format": 2, "shape": [10, 3], "chunks": [4, 3], "dtype": ">f8", "fill_value": "NaN",
		"order": "F", "filters": [{"id": "delta", "dtype": ">f8"}], "compressor": {"id": "blosc", "cname": "lz4",
		"clevel": 5, "shuffle": 1, "blocksize": 0}, "dimension_separator": "/", "extra": 1}`
	m, err := zarr.ParseArrayMetadataV2([]byte(doc), []byte(`{"a": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.ZarrFormat != 2 || m.DataType != zarr.Float64 || m.Endian != "big" || m.Order != "F" ||
		m.ChunkKeyEncoding != (zarr.ChunkKeyEncoding{Name: "v2", Separator: "/"}) || m.Compressor.Name != "blosc" ||
		len(m.Filters) != 1 || m.Filters[0].Configuration["astype"] != ">f8" || m.Attributes["a"] == nil {
		t.Errorf("parsed %#v", m)
	}
	if !bytes.Equal(m.FillValue, le(uint64(0x7ff8000000000000))) {
		t.Errorf("fill %x", m.FillValue)
	}
	// Round trip through our writer.
	docs, err := m.Documents()
	if err != nil {
		t.Fatal(err)
	}
	again, err := zarr.ParseArrayMetadataV2(docs[".zarray"], docs[".zattrs"])
	if err != nil || !reflect.DeepEqual(again, m) {
		t.Errorf("round trip:\n%#v\n%#v, %v", again, m, err)
	}
	for _, tc := range []struct{ fill, want string }{
		{`null`, "0000"}, {`5`, "0500"}, {`"AAE="`, "0001"},
	} {
		d := `{"zarr_format": 2, "shape": [1], "chunks": [1], "dtype": "<i2", "fill_value": ` + tc.fill + `, "order": "C", "filters": null, "compressor": null}`
		m, err := zarr.ParseArrayMetadataV2([]byte(d), nil)
		if err != nil {
			t.Errorf("fill %s: %v", tc.fill, err)
			continue
		}
		if hexs(m.FillValue) != tc.want {
			t.Errorf("fill %s = %x, want %s", tc.fill, m.FillValue, tc.want)
		}
	}
	for _, bad := range []string{
		`{"zarr_format": 2, "shape": [1], "chunks": [1], "dtype": "<U4"}`,
		`{"zarr_format": 2, "shape": [1], "chunks": [1], "dtype": [["a", "<i4"]]}`,
		`{"zarr_format": 2, "shape": [1], "chunks": [1], "dtype": "<M8[ns]"}`,
	} {
		if _, err := zarr.ParseArrayMetadataV2([]byte(bad), nil); !errors.Is(err, zarr.ErrNotImplemented) {
			t.Errorf("%s: %v, want ErrNotImplemented", bad, err)
		}
	}
}

func hexs(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}
