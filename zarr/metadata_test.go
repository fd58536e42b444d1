package zarr_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/cubego/cubego/zarr"
)

// baseDoc returns a valid zarr.json as a map, to modify per test.
func baseDoc() map[string]any {
	return map[string]any{
		"zarr_format": 3,
		"node_type":   "array",
		"shape":       []any{10, 7},
		"data_type":   "float64",
		"chunk_grid": map[string]any{
			"name": "regular", "configuration": map[string]any{"chunk_shape": []any{4, 7}},
		},
		"chunk_key_encoding": map[string]any{
			"name": "default", "configuration": map[string]any{"separator": "/"},
		},
		"fill_value": 0,
		"codecs": []any{
			map[string]any{"name": "bytes", "configuration": map[string]any{"endian": "little"}},
		},
		"attributes": map[string]any{},
	}
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func le(v any) []byte {
	var b bytes.Buffer
	_ = binary.Write(&b, binary.LittleEndian, v)
	return b.Bytes()
}

func TestParseArrayMetadata(t *testing.T) {
	d := baseDoc()
	d["dimension_names"] = []any{"y", nil}
	d["attributes"] = map[string]any{"n": json.RawMessage("18446744073709551615")}
	d["codecs"] = []any{"bytes", map[string]any{"name": "zstd", "configuration": map[string]any{"level": 3, "checksum": true}}}
	d["data_type"] = "uint8"
	d["fill_value"] = 255
	d["ext"] = map[string]any{"must_understand": false, "anything": 1}
	m, err := zarr.ParseArrayMetadata(marshal(t, d))
	if err != nil {
		t.Fatal(err)
	}
	want := zarr.ArrayMetadata{
		ZarrFormat:       3,
		Shape:            []int{10, 7},
		ChunkShape:       []int{4, 7},
		DataType:         zarr.Uint8,
		FillValue:        []byte{255},
		Codecs:           []zarr.Codec{{Name: "bytes"}, zarr.ZstdCodec(3, true)},
		ChunkKeyEncoding: zarr.ChunkKeyEncoding{Name: "default", Separator: "/"},
		Attributes:       map[string]any{"n": json.Number("18446744073709551615")},
		DimensionNames:   []string{"y", ""},
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("ParseArrayMetadata =\n%#v\nwant\n%#v", m, want)
	}
	// And back: the document names the same things.
	out, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"dimension_names": [`, `null`, `18446744073709551615`, `"fill_value": 255`, `"zarr_format": 3`, `"storage_transformers": []`} {
		if !bytes.Contains(out, []byte(s)) {
			t.Errorf("MarshalJSON output lacks %s:\n%s", s, out)
		}
	}
	m2, err := zarr.ParseArrayMetadata(out)
	if err != nil || !reflect.DeepEqual(m2, want) {
		t.Errorf("round trip = %#v, %v", m2, err)
	}
}

func TestFillValues(t *testing.T) {
	for _, tc := range []struct {
		dt   zarr.DataType
		json string // as in zarr.json
		want []byte // the element, little-endian
		out  string // as MarshalJSON writes it back ("" = json)
	}{
		{zarr.Bool, `true`, []byte{1}, ""},
		{zarr.Bool, `false`, []byte{0}, ""},
		{zarr.Int8, `-128`, []byte{0x80}, ""},
		{zarr.Int16, `-2`, le(int16(-2)), ""},
		{zarr.Int32, `2147483647`, le(int32(math.MaxInt32)), ""},
		{zarr.Int64, `-9223372036854775808`, le(int64(math.MinInt64)), ""},
		{zarr.Int64, `9223372036854775807`, le(int64(math.MaxInt64)), ""},
		{zarr.Int64, `1.0`, le(int64(1)), `1`},
		{zarr.Int64, `1e3`, le(int64(1000)), `1000`},
		{zarr.Uint8, `255`, []byte{255}, ""},
		{zarr.Uint64, `18446744073709551615`, le(uint64(math.MaxUint64)), ""},
		{zarr.Uint64, `9007199254740993`, le(uint64(1<<53 + 1)), ""},
		{zarr.Float64, `0.1`, le(0.1), ""},
		{zarr.Float64, `0`, le(0.0), `0.0`},
		{zarr.Float64, `-0.0`, le(math.Copysign(0, -1)), ""},
		{zarr.Float64, `1e300`, le(1e300), `1e+300`},
		{zarr.Float64, `1e999`, le(math.Inf(1)), `"Infinity"`},
		{zarr.Float64, `"NaN"`, le(uint64(0x7ff8000000000000)), ""},
		{zarr.Float64, `"Infinity"`, le(math.Inf(1)), ""},
		{zarr.Float64, `"-Infinity"`, le(math.Inf(-1)), ""},
		{zarr.Float64, `"0x7ff8000000000001"`, le(uint64(0x7ff8000000000001)), ""},
		{zarr.Float64, `"0x3ff0000000000000"`, le(1.0), `1.0`},
		{zarr.Float32, `0.1`, le(float32(0.1)), ""},
		{zarr.Float32, `"NaN"`, le(uint32(0x7fc00000)), ""},
		{zarr.Float32, `"0x7fc00000"`, le(uint32(0x7fc00000)), `"NaN"`},
		{zarr.Float32, `"0xffc00001"`, le(uint32(0xffc00001)), ""},
		{zarr.Float32, `3.4028234663852886e38`, le(float32(math.MaxFloat32)), `3.4028235e+38`},
		{zarr.Float16, `0.1`, le(uint16(0x2e66)), ""},
		{zarr.Float16, `65504`, le(uint16(0x7bff)), `65504.0`},
		{zarr.Float16, `65520`, le(uint16(0x7c00)), `"Infinity"`},
		{zarr.Float16, `"NaN"`, le(uint16(0x7e00)), ""},
		{zarr.Float16, `"0x7c01"`, le(uint16(0x7c01)), ""},
		{zarr.Float16, `6e-8`, le(uint16(0x0001)), `6e-08`},
		{zarr.Complex64, `[1.5, -2]`, le([2]float32{1.5, -2}), `[1.5, -2.0]`},
		{zarr.Complex64, `["NaN", "-Infinity"]`, le([2]uint32{0x7fc00000, 0xff800000}), ""},
		{zarr.Complex128, `[0.1, "0x7ff8000000000001"]`, le([2]uint64{math.Float64bits(0.1), 0x7ff8000000000001}), ""},
		{zarr.Complex128, `["Infinity", 0]`, le([2]float64{math.Inf(1), 0}), `["Infinity", 0.0]`},
	} {
		d := baseDoc()
		d["data_type"] = tc.dt.String()
		d["fill_value"] = json.RawMessage(tc.json)
		if tc.dt.Size() == 1 {
			d["codecs"] = []any{"bytes"}
		}
		m, err := zarr.ParseArrayMetadata(marshal(t, d))
		if err != nil {
			t.Errorf("%s %s: %v", tc.dt, tc.json, err)
			continue
		}
		if !bytes.Equal(m.FillValue, tc.want) {
			t.Errorf("%s %s: fill value %x, want %x", tc.dt, tc.json, m.FillValue, tc.want)
		}
		out, err := m.MarshalJSON()
		if err != nil {
			t.Errorf("%s %s: MarshalJSON: %v", tc.dt, tc.json, err)
			continue
		}
		var doc struct {
			FillValue json.RawMessage `json:"fill_value"`
		}
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatal(err)
		}
		want := tc.out
		if want == "" {
			want = tc.json
		}
		var got, wantc bytes.Buffer
		_ = json.Compact(&got, doc.FillValue)
		_ = json.Compact(&wantc, []byte(want))
		if got.String() != wantc.String() {
			t.Errorf("%s %s: written back as %s, want %s", tc.dt, tc.json, got.String(), want)
		}
		m2, err := zarr.ParseArrayMetadata(out)
		if err != nil || !bytes.Equal(m2.FillValue, m.FillValue) {
			t.Errorf("%s %s: reparsed fill %x, %v", tc.dt, tc.json, m2.FillValue, err)
		}
	}
}

func TestFillValuesInvalid(t *testing.T) {
	for _, tc := range []struct {
		dt   zarr.DataType
		json string
	}{
		{zarr.Bool, `1`}, {zarr.Bool, `"true"`}, {zarr.Bool, `null`},
		{zarr.Int8, `128`}, {zarr.Int8, `-129`}, {zarr.Int8, `1.5`}, {zarr.Int8, `"1"`}, {zarr.Int8, `"NaN"`},
		{zarr.Uint8, `-1`}, {zarr.Uint64, `18446744073709551616`}, {zarr.Int64, `9223372036854775808`},
		{zarr.Int64, `1e999999999`}, {zarr.Uint64, `[1]`},
		{zarr.Float32, `"nan"`}, {zarr.Float32, `"0x7fc0000"`}, {zarr.Float32, `"0x7fc000000"`},
		{zarr.Float32, `"0xzzzzzzzz"`}, {zarr.Float32, `true`}, {zarr.Float64, `[1, 2]`}, {zarr.Float64, `null`},
		{zarr.Complex64, `1`}, {zarr.Complex64, `[1]`}, {zarr.Complex64, `[1, 2, 3]`}, {zarr.Complex64, `[1, "x"]`},
		{zarr.Complex128, `["0x7ff80000", 0]`},
	} {
		d := baseDoc()
		d["data_type"] = tc.dt.String()
		d["fill_value"] = json.RawMessage(tc.json)
		if tc.dt.Size() == 1 {
			d["codecs"] = []any{"bytes"}
		}
		if _, err := zarr.ParseArrayMetadata(marshal(t, d)); !errors.Is(err, zarr.ErrInvalid) {
			t.Errorf("%s fill %s: error %v, want ErrInvalid", tc.dt, tc.json, err)
		}
	}
}

func TestParseArrayMetadataErrors(t *testing.T) {
	type edit func(d map[string]any)
	set := func(k string, v any) edit { return func(d map[string]any) { d[k] = v } }
	del := func(k string) edit { return func(d map[string]any) { delete(d, k) } }
	invalid := map[string]edit{
		"no shape":            del("shape"),
		"negative shape":      set("shape", []any{-1, 7}),
		"fractional shape":    set("shape", []any{1.5, 7}),
		"string shape":        set("shape", "10"),
		"shape rank":          set("shape", []any{10}),
		"node type":           set("node_type", "group"),
		"no node type":        del("node_type"),
		"no zarr_format":      del("zarr_format"),
		"no data type":        del("data_type"),
		"data type number":    set("data_type", 3),
		"no fill":             del("fill_value"),
		"no chunk grid":       del("chunk_grid"),
		"zero chunk":          set("chunk_grid", map[string]any{"name": "regular", "configuration": map[string]any{"chunk_shape": []any{0, 7}}}),
		"no chunk shape":      set("chunk_grid", map[string]any{"name": "regular", "configuration": map[string]any{}}),
		"huge chunk":          set("chunk_grid", map[string]any{"name": "regular", "configuration": map[string]any{"chunk_shape": []any{1 << 40, 1 << 40}}}),
		"separator":           set("chunk_key_encoding", map[string]any{"name": "default", "configuration": map[string]any{"separator": "-"}}),
		"empty separator":     set("chunk_key_encoding", map[string]any{"name": "default", "configuration": map[string]any{"separator": ""}}),
		"no codecs":           del("codecs"),
		"empty codecs":        set("codecs", []any{}),
		"codec no name":       set("codecs", []any{map[string]any{"configuration": map[string]any{}}}),
		"codec number":        set("codecs", []any{1}),
		"two array→bytes":     set("codecs", []any{"bytes", "bytes"}),
		"zstd first":          set("codecs", []any{map[string]any{"name": "zstd", "configuration": map[string]any{"level": 0, "checksum": false}}, "bytes"}),
		"only zstd":           set("codecs", []any{map[string]any{"name": "zstd", "configuration": map[string]any{"level": 0, "checksum": false}}}),
		"bytes no endian":     set("codecs", []any{"bytes"}),
		"bytes bad endian":    set("codecs", []any{map[string]any{"name": "bytes", "configuration": map[string]any{"endian": "middle"}}}),
		"bytes extra config":  set("codecs", []any{map[string]any{"name": "bytes", "configuration": map[string]any{"endian": "little", "x": 1}}}),
		"zstd level string":   set("codecs", []any{"bytes", map[string]any{"name": "zstd", "configuration": map[string]any{"level": "3", "checksum": false}}}),
		"zstd level range":    set("codecs", []any{BytesLittle, map[string]any{"name": "zstd", "configuration": map[string]any{"level": 23, "checksum": false}}}),
		"zstd checksum":       set("codecs", []any{BytesLittle, map[string]any{"name": "zstd", "configuration": map[string]any{"level": 1, "checksum": "yes"}}}),
		"dimension names len": set("dimension_names", []any{"a"}),
		"dimension names num": set("dimension_names", []any{1, 2}),
		"attributes list":     set("attributes", []any{}),
		"configuration list":  set("chunk_grid", map[string]any{"name": "regular", "configuration": []any{}}),
	}
	unsupported := map[string]edit{
		"zarr_format 2":         set("zarr_format", 2),
		"string dtype":          set("data_type", "string"),
		"extension dtype":       set("data_type", map[string]any{"name": "numpy.datetime64", "configuration": map[string]any{"unit": "s"}}),
		"rectilinear grid":      set("chunk_grid", map[string]any{"name": "rectilinear", "configuration": map[string]any{}}),
		"key encoding":          set("chunk_key_encoding", map[string]any{"name": "fancy"}),
		"unknown codec":         set("codecs", []any{BytesLittle, map[string]any{"name": "lzma"}}),
		"storage transformers":  set("storage_transformers", []any{map[string]any{"name": "x"}}),
		"must understand field": set("ext", map[string]any{"name": "x"}),
		"must understand true":  set("ext", map[string]any{"must_understand": true}),
		"unknown scalar field":  set("ext", 1),
		"numcodecs.fletcher32":  set("codecs", []any{BytesLittle, map[string]any{"name": "numcodecs.fletcher32"}}),
	}
	for name, e := range invalid {
		d := baseDoc()
		e(d)
		if _, err := zarr.ParseArrayMetadata(marshal(t, d)); !errors.Is(err, zarr.ErrInvalid) {
			t.Errorf("%s: error %v, want ErrInvalid", name, err)
		}
	}
	for name, e := range unsupported {
		d := baseDoc()
		e(d)
		_, err := zarr.ParseArrayMetadata(marshal(t, d))
		if !errors.Is(err, zarr.ErrNotImplemented) {
			t.Errorf("%s: error %v, want ErrNotImplemented", name, err)
		}
	}
	// The unsupported thing is named.
	d := baseDoc()
	d["data_type"] = "string"
	if _, err := zarr.ParseArrayMetadata(marshal(t, d)); err == nil || !strings.Contains(err.Error(), `"string"`) {
		t.Errorf("string data type: error %v does not name it", err)
	}
	d = baseDoc()
	d["codecs"] = []any{BytesLittle, map[string]any{"name": "lzma"}}
	if _, err := zarr.ParseArrayMetadata(marshal(t, d)); err == nil || !strings.Contains(err.Error(), `"lzma"`) {
		t.Errorf("unknown codec: error %v does not name it", err)
	}
	for _, doc := range []string{``, `null`, `[]`, `{`, `{"zarr_format": 3} {}`, `"array"`, `{"zarr_format": "3"}`, "\xff"} {
		if _, err := zarr.ParseArrayMetadata([]byte(doc)); err == nil {
			t.Errorf("ParseArrayMetadata(%q) succeeded", doc)
		}
	}
}

var BytesLittle = map[string]any{"name": "bytes", "configuration": map[string]any{"endian": "little"}}

func TestParseArrayMetadataTolerated(t *testing.T) {
	for name, e := range map[string]func(d map[string]any){
		"extension field":        func(d map[string]any) { d["ext"] = map[string]any{"must_understand": false, "x": []any{1}} },
		"null attributes":        func(d map[string]any) { d["attributes"] = nil },
		"no attributes":          func(d map[string]any) { delete(d, "attributes") },
		"null dimension names":   func(d map[string]any) { d["dimension_names"] = nil },
		"empty transformers":     func(d map[string]any) { d["storage_transformers"] = []any{} },
		"dtype object":           func(d map[string]any) { d["data_type"] = map[string]any{"name": "float64"} },
		"v2 key encoding":        func(d map[string]any) { d["chunk_key_encoding"] = map[string]any{"name": "v2"} },
		"key encoding no config": func(d map[string]any) { d["chunk_key_encoding"] = map[string]any{"name": "default"} },
		"zstd defaults":          func(d map[string]any) { d["codecs"] = []any{BytesLittle, "zstd"} },
	} {
		d := baseDoc()
		e(d)
		if _, err := zarr.ParseArrayMetadata(marshal(t, d)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestMetadataValidate(t *testing.T) {
	good := zarr.ArrayMetadata{Shape: []int{4}, ChunkShape: []int{2}, DataType: zarr.Int32}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]zarr.ArrayMetadata{
		"no data type": {Shape: []int{4}, ChunkShape: []int{2}},
		"rank":         {Shape: []int{4}, ChunkShape: []int{2, 2}, DataType: zarr.Int32},
		"fill size":    {Shape: []int{4}, ChunkShape: []int{2}, DataType: zarr.Int32, FillValue: []byte{1}},
		"bool fill":    {Shape: []int{4}, ChunkShape: []int{2}, DataType: zarr.Bool, FillValue: []byte{2}},
		"dim names":    {Shape: []int{4}, ChunkShape: []int{2}, DataType: zarr.Int32, DimensionNames: []string{"a", "b"}},
		"key encoding": {Shape: []int{4}, ChunkShape: []int{2}, DataType: zarr.Int32, ChunkKeyEncoding: zarr.ChunkKeyEncoding{Separator: ":"}},
		"codec config": {Shape: []int{4}, ChunkShape: []int{2}, DataType: zarr.Int32, Codecs: []zarr.Codec{{Name: "bytes", Configuration: map[string]any{"endian": 1}}}},
		"attributes":   {Shape: []int{4}, ChunkShape: []int{2}, DataType: zarr.Int32, Attributes: map[string]any{"nan": math.NaN()}},
	} {
		_, err := m.MarshalJSON()
		if !errors.Is(err, zarr.ErrInvalid) && !errors.Is(err, zarr.ErrNotImplemented) {
			t.Errorf("%s: MarshalJSON error %v, want ErrInvalid", name, err)
		}
	}
}

// FuzzParseArrayMetadata: any input parses or fails cleanly, and what
// parses survives MarshalJSON and a second parse unchanged.
func FuzzParseArrayMetadata(f *testing.F) {
	seed, _ := json.Marshal(baseDoc())
	f.Add(seed)
	f.Add([]byte(`{"zarr_format":3,"node_type":"array","shape":[],"data_type":"complex64","chunk_grid":{"name":"regular","configuration":{"chunk_shape":[]}},"chunk_key_encoding":{"name":"v2"},"fill_value":["NaN","0x7f800001"],"codecs":["bytes"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := zarr.ParseArrayMetadata(data)
		if err != nil {
			if !errors.Is(err, zarr.ErrInvalid) && !errors.Is(err, zarr.ErrNotImplemented) {
				t.Fatalf("error %v wraps neither ErrInvalid nor ErrNotImplemented", err)
			}
			return
		}
		out, err := m.MarshalJSON()
		if err != nil {
			t.Fatalf("parsed metadata does not marshal: %v", err)
		}
		m2, err := zarr.ParseArrayMetadata(out)
		if err != nil {
			t.Fatalf("marshalled metadata does not parse: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("round trip changed the metadata:\n%#v\n%#v", m, m2)
		}
	})
}
