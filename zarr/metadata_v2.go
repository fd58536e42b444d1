package zarr

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// Zarr v2 metadata: the .zarray document of an array, its .zattrs, and
// the numpy typestr data types ("<f8", ">i2", "|b1", ...).

const (
	zarrayKey    = ".zarray"
	zattrsKey    = ".zattrs"
	zgroupKey    = ".zgroup"
	zmetadataKey = ".zmetadata"
)

// typestrKinds maps a numpy kind and size to a data type.
var typestrKinds = map[string]DataType{
	"b1": Bool, "i1": Int8, "i2": Int16, "i4": Int32, "i8": Int64,
	"u1": Uint8, "u2": Uint16, "u4": Uint32, "u8": Uint64,
	"f2": Float16, "f4": Float32, "f8": Float64, "c8": Complex64, "c16": Complex128,
}

// ParseTypestr returns the data type and byte order ("little", "big", or
// "" for 1-byte types) of a numpy typestr such as "<f8", ">i2" or "|b1".
// Other numpy types (strings, datetimes, structured types) give errors
// wrapping ErrNotImplemented that name them.
func ParseTypestr(s string) (DataType, string, error) {
	if len(s) < 3 {
		return Invalid, "", fmt.Errorf("%w: dtype %q", ErrInvalid, s)
	}
	dt, ok := typestrKinds[s[1:]]
	if !ok {
		return Invalid, "", fmt.Errorf("%w: dtype %q", ErrNotImplemented, s)
	}
	switch s[0] {
	case '<':
		if dt.Size() == 1 {
			return dt, "", nil
		}
		return dt, "little", nil
	case '>':
		if dt.Size() == 1 {
			return dt, "", nil
		}
		return dt, "big", nil
	case '|':
		if dt.Size() != 1 {
			return Invalid, "", fmt.Errorf("%w: dtype %q: %d-byte type without a byte order", ErrInvalid, s, dt.Size())
		}
		return dt, "", nil
	}
	return Invalid, "", fmt.Errorf("%w: dtype %q: byte order %q", ErrInvalid, s, s[:1])
}

// typestr returns the numpy typestr of dt with the given byte order.
func typestr(dt DataType, endian string) string {
	var kind string
	for k, v := range typestrKinds {
		if v == dt {
			kind = k
		}
	}
	switch {
	case dt.Size() == 1:
		return "|" + kind
	case endian == "big":
		return ">" + kind
	}
	return "<" + kind
}

// ParseArrayMetadataV2 decodes and validates the .zarray document of a
// Zarr v2 array and its .zattrs (nil when there is none). Errors are as
// for ParseArrayMetadata; unknown compressors and filters give errors
// wrapping ErrNotImplemented that name them. Fields the v2 spec does not
// define are ignored, as zarr-python does.
func ParseArrayMetadataV2(zarray, zattrs []byte) (ArrayMetadata, error) {
	m := ArrayMetadata{ZarrFormat: 2}
	var doc map[string]json.RawMessage
	if err := decodeJSON(zarray, &doc); err != nil {
		return m, err
	}
	if doc == nil {
		return m, invalidf("not a JSON object")
	}
	var format json.Number
	if err := field(doc, "zarr_format", &format, true); err != nil {
		return m, err
	}
	if format != "2" {
		return m, fmt.Errorf("%w: .zarray with zarr_format %s", ErrInvalid, format)
	}
	var shape, chunks []json.Number
	if err := field(doc, "shape", &shape, true); err != nil {
		return m, err
	}
	if err := field(doc, "chunks", &chunks, true); err != nil {
		return m, err
	}
	var err error
	if m.Shape, err = parseDims("shape", shape); err != nil {
		return m, err
	}
	if m.ChunkShape, err = parseDims("chunks", chunks); err != nil {
		return m, err
	}
	var dtype any
	if err := field(doc, "dtype", &dtype, true); err != nil {
		return m, err
	}
	ts, ok := dtype.(string)
	if !ok {
		return m, fmt.Errorf("%w: structured dtype %s", ErrNotImplemented, doc["dtype"])
	}
	if m.DataType, m.Endian, err = ParseTypestr(ts); err != nil {
		return m, err
	}
	if err := field(doc, "order", &m.Order, false); err != nil {
		return m, err
	}
	var compressor map[string]any
	if err := field(doc, "compressor", &compressor, false); err != nil {
		return m, err
	}
	if compressor != nil {
		c, err := numcodecsConfig(compressor)
		if err != nil {
			return m, fmt.Errorf("%w (in compressor)", err)
		}
		m.Compressor = &c
	}
	var filters []map[string]any
	if err := field(doc, "filters", &filters, false); err != nil {
		return m, err
	}
	for i, f := range filters {
		c, err := numcodecsConfig(f)
		if err != nil {
			return m, fmt.Errorf("%w (in filters[%d])", err, i)
		}
		m.Filters = append(m.Filters, c)
	}
	var sep string
	if err := field(doc, "dimension_separator", &sep, false); err != nil {
		return m, err
	}
	m.ChunkKeyEncoding = ChunkKeyEncoding{Name: "v2", Separator: sep}
	if raw, ok := doc["fill_value"]; ok {
		var fill any
		if err := decodeJSON(raw, &fill); err != nil {
			return m, fmt.Errorf("%w (in fill_value)", err)
		}
		if m.FillValue, err = parseFillValueV2(m.DataType, m.Endian, fill); err != nil {
			return m, err
		}
	}
	if zattrs != nil {
		if err := decodeJSON(zattrs, &m.Attributes); err != nil {
			return m, fmt.Errorf("%w (in %s)", err, zattrsKey)
		}
	}
	if m.Attributes == nil {
		m.Attributes = map[string]any{}
	}
	return m.canonicalV2()
}

// canonicalV2 validates m and returns it in canonical form.
func (m ArrayMetadata) canonicalV2() (ArrayMetadata, error) {
	p, err := m.resolve()
	if err != nil {
		return m, err
	}
	m.ChunkKeyEncoding = m.chunkKeyEncoding()
	m.FillValue = slices.Clone(m.fillValue())
	if m.Order == "" {
		m.Order = "C"
	}
	if m.DataType.Size() > 1 && m.Endian == "" {
		m.Endian = "little"
	}
	m.Filters = p.v2Filters
	m.Compressor = p.v2Compressor
	return m, nil
}

// numcodecsConfig turns a numcodecs config {"id": ..., ...} into a Codec.
func numcodecsConfig(conf map[string]any) (Codec, error) {
	id, ok := conf["id"].(string)
	if !ok || id == "" {
		return Codec{}, invalidf("numcodecs config without an id")
	}
	rest := maps.Clone(conf)
	delete(rest, "id")
	return Codec{Name: id, Configuration: rest}, nil
}

// parseFillValueV2 decodes a v2 fill_value: null (zero), a number, "NaN",
// "Infinity", "-Infinity", [re, im] for complex types, true/false, or the
// element's bytes in base64 (in the stored byte order).
func parseFillValueV2(dt DataType, endian string, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		switch {
		case x == "NaN" || x == "Infinity" || x == "-Infinity":
		case strings.HasPrefix(x, "0x"):
		default:
			b, err := base64.StdEncoding.DecodeString(x)
			if err != nil || len(b) != dt.Size() {
				return nil, fillErr(dt, v, "want a number, \"NaN\", \"Infinity\", \"-Infinity\" or the element in base64")
			}
			if endian == "big" {
				unit := dt.Size()
				if dt == Complex64 || dt == Complex128 {
					unit /= 2
				}
				swapBytes(b, b, unit)
			}
			return b, nil
		}
	case json.Number:
		if dt == Bool {
			switch x {
			case "0":
				return []byte{0}, nil
			case "1":
				return []byte{1}, nil
			}
		}
	}
	return parseFillValue(dt, v)
}

// encodeFillValueV2 returns the v2 JSON form of a fill element. NaNs are
// all written "NaN" (v2 has no bit patterns).
func encodeFillValueV2(dt DataType, b []byte) ([]byte, error) {
	enc, err := encodeFillValue(dt, b)
	if err != nil {
		return nil, err
	}
	if !bytes.Contains(enc, []byte(`"0x`)) {
		return enc, nil
	}
	// Replace hex NaN patterns by "NaN".
	fix := func(part []byte) []byte {
		if math.IsNaN(floatOf(part)) {
			return []byte(`"NaN"`)
		}
		return appendFloatFill(nil, part)
	}
	if dt == Complex64 || dt == Complex128 {
		half := len(b) / 2
		out := append([]byte("["), fix(b[:half])...)
		out = append(out, ", "...)
		out = append(out, fix(b[half:])...)
		return append(out, ']'), nil
	}
	return fix(b), nil
}

// floatOf returns the value of a little-endian float of 2, 4 or 8 bytes.
func floatOf(b []byte) float64 {
	u := getUint(b)
	switch len(b) {
	case 2:
		return float16ToFloat64(uint16(u))
	case 4:
		return float64(math.Float32frombits(uint32(u)))
	}
	return math.Float64frombits(u)
}

// The .zarray document, in the order zarr-python writes its fields.
type zarrayJSON struct {
	Shape              []int           `json:"shape"`
	Chunks             []int           `json:"chunks"`
	FillValue          json.RawMessage `json:"fill_value"`
	Order              string          `json:"order"`
	Filters            []any           `json:"filters"`
	DimensionSeparator string          `json:"dimension_separator"`
	Compressor         any             `json:"compressor"`
	ZarrFormat         int             `json:"zarr_format"`
	Dtype              string          `json:"dtype"`
}

// numcodecsJSON is a Codec in numcodecs' form, {"id": ..., ...}.
func numcodecsJSON(c Codec) map[string]any {
	out := map[string]any{"id": c.Name}
	for k, v := range c.Configuration {
		out[k] = v
	}
	return out
}

func (m ArrayMetadata) marshalZarray() ([]byte, error) {
	m, err := m.canonicalV2()
	if err != nil {
		return nil, err
	}
	fill, err := encodeFillValueV2(m.DataType, m.fillValue())
	if err != nil {
		return nil, err
	}
	doc := zarrayJSON{
		ZarrFormat:         2,
		Shape:              nonNil(m.Shape),
		Chunks:             nonNil(m.ChunkShape),
		Dtype:              typestr(m.DataType, m.Endian),
		FillValue:          fill,
		Order:              m.Order,
		DimensionSeparator: m.ChunkKeyEncoding.Separator,
	}
	if m.Compressor != nil {
		doc.Compressor = numcodecsJSON(*m.Compressor)
	}
	for _, f := range m.Filters {
		doc.Filters = append(doc.Filters, numcodecsJSON(f))
	}
	return marshalIndent(doc)
}

func marshalIndent(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("%w: metadata: %v", ErrInvalid, err)
	}
	return buf.Bytes(), nil
}

// Documents returns the metadata documents of the array by name: for v3
// {"zarr.json": ...}, for v2 {".zarray": ..., ".zattrs": ...}.
func (m ArrayMetadata) Documents() (map[string][]byte, error) {
	doc, err := m.MarshalJSON()
	if err != nil {
		return nil, err
	}
	if m.format() == 3 {
		return map[string][]byte{metadataKey: doc}, nil
	}
	attrs := m.Attributes
	if attrs == nil {
		attrs = map[string]any{}
	}
	zattrs, err := marshalIndent(attrs)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{zarrayKey: doc, zattrsKey: zattrs}, nil
}

// v2Pipeline builds the codec chain of a v2 array: a transpose for "F"
// order, "bytes" with the dtype's byte order, the filters, the compressor.
func (m ArrayMetadata) v2Pipeline() (*pipeline, error) {
	spec := m.chunkSpec()
	var codecs []codec
	switch m.Order {
	case "", "C":
	case "F":
		if len(m.Shape) > 1 {
			t, err := newTranspose(reversedOrder(len(m.Shape)), spec)
			if err != nil {
				return nil, err
			}
			codecs = append(codecs, v2Order{t})
		}
	default:
		return nil, fmt.Errorf("%w: order %q (want \"C\" or \"F\")", ErrInvalid, m.Order)
	}
	endian := m.Endian
	switch endian {
	case "", "little", "big":
	default:
		return nil, fmt.Errorf("%w: endian %q (want \"little\" or \"big\")", ErrInvalid, endian)
	}
	if endian == "" {
		endian = "little"
	}
	bc, err := newBytesCodec(map[string]any{"endian": endian}, spec)
	if err != nil {
		return nil, err
	}
	codecs = append(codecs, bc)
	// Filters see the elements in the stored dtype; each may change it.
	elemType := typestr(m.DataType, endian)
	var filters []Codec
	for i, f := range m.Filters {
		fc, out, err := newV2Filter(f, elemType)
		if err != nil {
			return nil, fmt.Errorf("%w (in filters[%d])", err, i)
		}
		codecs = append(codecs, fc)
		filters = append(filters, fc.metadata())
		elemType = out
	}
	var compressor *Codec
	if m.Compressor != nil {
		itemSize := typestrSize(elemType)
		cc, err := newV2Compressor(*m.Compressor, itemSize)
		if err != nil {
			return nil, fmt.Errorf("%w (in compressor)", err)
		}
		codecs = append(codecs, cc)
		md := cc.metadata()
		compressor = &md
	}
	p, err := buildPipeline(codecs, spec)
	if err != nil {
		return nil, err
	}
	p.v2Filters = filters
	p.v2Compressor = compressor
	return p, nil
}

// typestrSize returns the element size of a valid typestr.
func typestrSize(ts string) int {
	dt, _, _ := ParseTypestr(ts)
	return dt.Size()
}

// v2Order is the transpose that stores a v2 array's chunks in "F" order;
// it has no zarr.json form.
type v2Order struct{ *transposeCodec }

func (v2Order) metadata() Codec {
	return Codec{Name: "order", Configuration: map[string]any{"order": "F"}}
}
