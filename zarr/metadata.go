package zarr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
)

// ChunkKeyEncoding says how chunk coordinates become store keys. The
// zero value is the Zarr v3 default: {Name: "default", Separator: "/"},
// giving keys like "c/1/0".
type ChunkKeyEncoding struct {
	// Name is "default" (keys "c/1/0"; "c" for a 0-d array) or "v2"
	// (keys "1.0"; "0" for a 0-d array). "" means "default".
	Name string
	// Separator is "/" or "."; "" means the encoding's own default: "/"
	// for "default", "." for "v2".
	Separator string
}

// resolved returns the encoding with defaults filled in.
func (e ChunkKeyEncoding) resolved() ChunkKeyEncoding {
	if e.Name == "" {
		e.Name = "default"
	}
	if e.Separator == "" {
		e.Separator = "/"
		if e.Name == "v2" {
			e.Separator = "."
		}
	}
	return e
}

func (e ChunkKeyEncoding) validate() error {
	r := e.resolved()
	if r.Name != "default" && r.Name != "v2" {
		return fmt.Errorf("%w: chunk key encoding %q", ErrNotImplemented, r.Name)
	}
	if r.Separator != "/" && r.Separator != "." {
		return fmt.Errorf("%w: chunk key separator %q (want \"/\" or \".\")", ErrInvalid, r.Separator)
	}
	return nil
}

// ArrayMetadata describes a Zarr array: the contents of its zarr.json
// (Zarr v3), or of its .zarray and .zattrs (Zarr v2).
//
// Both formats share the fields up to DimensionNames. A v3 array's codec
// chain is Codecs. A v2 array (ZarrFormat 2) has no Codecs: its chunks are
// encoded as Order, Endian, Filters and Compressor say, its chunk keys use
// the "v2" encoding (ChunkKeyEncoding.Separator is its
// dimension_separator) and it has no DimensionNames.
type ArrayMetadata struct {
	// ZarrFormat is 3 or 2; 0 means 3.
	ZarrFormat int

	// Shape is the array's shape; empty for a 0-d array.
	Shape []int
	// ChunkShape is the shape of every chunk of the regular chunk grid,
	// one entry ≥ 1 per dimension. Chunks at the upper edges are stored
	// whole; their part outside the array is padding.
	ChunkShape []int
	DataType   DataType
	// FillValue is exactly one element, little-endian; nil means all-zero
	// bytes. Missing chunks read as this value.
	FillValue []byte
	// Codecs is the codec chain; nil means [BytesCodec()].
	Codecs []Codec
	// ChunkKeyEncoding is the chunk key encoding; the zero value is the
	// v3 default, keys like "c/1/0".
	ChunkKeyEncoding ChunkKeyEncoding
	// Attributes are the user attributes. Numbers read from zarr.json are
	// json.Number, so integers of any size survive a round trip.
	Attributes map[string]any
	// DimensionNames optionally names the dimensions; "" stands for an
	// unnamed dimension (null in zarr.json).
	DimensionNames []string

	// Order is the element order of a v2 array's stored chunks: "C" (or
	// "") or "F".
	Order string
	// Endian is the byte order of a v2 array's stored elements: "little"
	// (or "") or "big" (the "<" or ">" of the numpy dtype).
	Endian string
	// Filters are a v2 array's numcodecs filters, applied in order when
	// writing: "delta" ({"dtype", "astype"}) and "astype" ({"encode_dtype",
	// "decode_dtype"}). Name is the numcodecs id.
	Filters []Codec
	// Compressor is a v2 array's numcodecs compressor, nil for none:
	// "blosc", "zlib", "gzip", "zstd" or "lz4", with numcodecs'
	// configuration. Name is the numcodecs id.
	Compressor *Codec
}

// format returns the Zarr format, 2 or 3.
func (m ArrayMetadata) format() int {
	if m.ZarrFormat == 0 {
		return 3
	}
	return m.ZarrFormat
}

// clone returns a deep copy of m.
func (m ArrayMetadata) clone() ArrayMetadata {
	m.Shape = slices.Clone(m.Shape)
	m.ChunkShape = slices.Clone(m.ChunkShape)
	m.FillValue = slices.Clone(m.FillValue)
	m.Codecs = cloneCodecs(m.Codecs)
	m.Attributes = cloneJSONMap(m.Attributes)
	m.DimensionNames = slices.Clone(m.DimensionNames)
	m.Filters = cloneCodecs(m.Filters)
	if m.Compressor != nil {
		c := cloneCodecs([]Codec{*m.Compressor})[0]
		m.Compressor = &c
	}
	return m
}

// fillValue returns the fill element, zero bytes when FillValue is nil.
func (m ArrayMetadata) fillValue() []byte {
	if m.FillValue == nil {
		return make([]byte, m.DataType.Size())
	}
	return m.FillValue
}

// chunkSpec returns the description of one decoded chunk.
func (m ArrayMetadata) chunkSpec() chunkSpec {
	return chunkSpec{shape: m.ChunkShape, dataType: m.DataType, fillValue: m.fillValue()}
}

// maxChunkBytes bounds the decoded size of one chunk, so that sizes and
// offsets computed from it never overflow.
const maxChunkBytes = math.MaxInt32 * 64

// Validate checks m for consistency (and that its codecs are supported);
// errors wrap ErrInvalid or ErrNotImplemented.
func (m ArrayMetadata) Validate() error {
	_, err := m.resolve()
	return err
}

// resolve validates m and builds its codec pipeline.
func (m ArrayMetadata) resolve() (*pipeline, error) {
	switch m.ZarrFormat {
	case 0, 3:
		if m.Order != "" || m.Endian != "" || m.Filters != nil || m.Compressor != nil {
			return nil, fmt.Errorf("%w: Order, Endian, Filters and Compressor are for Zarr v2 arrays (use Codecs)", ErrInvalid)
		}
	case 2:
		if m.Codecs != nil {
			return nil, fmt.Errorf("%w: a Zarr v2 array has no Codecs (use Order, Endian, Filters and Compressor)", ErrInvalid)
		}
		if m.DimensionNames != nil {
			return nil, fmt.Errorf("%w: a Zarr v2 array has no dimension names", ErrInvalid)
		}
		if m.ChunkKeyEncoding.Name != "" && m.ChunkKeyEncoding.Name != "v2" {
			return nil, fmt.Errorf("%w: a Zarr v2 array's chunk keys use the \"v2\" encoding, not %q", ErrInvalid, m.ChunkKeyEncoding.Name)
		}
	default:
		return nil, fmt.Errorf("%w: zarr_format %d", ErrNotImplemented, m.ZarrFormat)
	}
	if !m.DataType.Valid() {
		return nil, fmt.Errorf("%w: data type %s", ErrInvalid, m.DataType)
	}
	if len(m.ChunkShape) != len(m.Shape) {
		return nil, fmt.Errorf("%w: chunk shape %v does not match shape %v", ErrInvalid, m.ChunkShape, m.Shape)
	}
	size := m.DataType.Size()
	for i, d := range m.Shape {
		if d < 0 {
			return nil, fmt.Errorf("%w: shape %v has a negative dimension", ErrInvalid, m.Shape)
		}
		c := m.ChunkShape[i]
		if c < 1 {
			return nil, fmt.Errorf("%w: chunk shape %v has a dimension < 1", ErrInvalid, m.ChunkShape)
		}
		if c > maxChunkBytes/size {
			return nil, fmt.Errorf("%w: chunk shape %v: a chunk exceeds %d bytes", ErrInvalid, m.ChunkShape, maxChunkBytes)
		}
		size *= c
	}
	if !fitsInt64(m.Shape, m.DataType.Size()) {
		return nil, fmt.Errorf("%w: shape %v of %s: the array's size in bytes overflows int64", ErrInvalid, m.Shape, m.DataType)
	}
	if m.FillValue != nil && len(m.FillValue) != m.DataType.Size() {
		return nil, fmt.Errorf("%w: fill value has %d bytes, data type %s needs %d", ErrInvalid, len(m.FillValue), m.DataType, m.DataType.Size())
	}
	if m.DataType == Bool && m.FillValue != nil && m.FillValue[0] > 1 {
		return nil, fmt.Errorf("%w: bool fill value byte %d (want 0 or 1)", ErrInvalid, m.FillValue[0])
	}
	if err := m.ChunkKeyEncoding.validate(); err != nil {
		return nil, err
	}
	if m.DimensionNames != nil && len(m.DimensionNames) != len(m.Shape) {
		return nil, fmt.Errorf("%w: %d dimension names for %d dimensions", ErrInvalid, len(m.DimensionNames), len(m.Shape))
	}
	if m.format() == 2 {
		return m.v2Pipeline()
	}
	return newPipeline(m.Codecs, m.chunkSpec())
}

// chunkKeyEncoding returns the resolved chunk key encoding.
func (m ArrayMetadata) chunkKeyEncoding() ChunkKeyEncoding {
	e := m.ChunkKeyEncoding
	if m.format() == 2 {
		e.Name = "v2"
	}
	return e.resolved()
}

// The zarr.json document, in the order zarr-python writes its fields.
type arrayJSON struct {
	Shape               []int           `json:"shape"`
	DataType            string          `json:"data_type"`
	ChunkGrid           namedJSON       `json:"chunk_grid"`
	ChunkKeyEncoding    namedJSON       `json:"chunk_key_encoding"`
	FillValue           json.RawMessage `json:"fill_value"`
	Codecs              []namedJSON     `json:"codecs"`
	Attributes          map[string]any  `json:"attributes"`
	DimensionNames      []*string       `json:"dimension_names,omitempty"`
	ZarrFormat          int             `json:"zarr_format"`
	NodeType            string          `json:"node_type"`
	StorageTransformers []any           `json:"storage_transformers"`
}

type namedJSON struct {
	Name          string         `json:"name"`
	Configuration map[string]any `json:"configuration,omitempty"`
}

// MarshalJSON encodes m as a zarr.json document, or for a v2 array as its
// .zarray document (the attributes go to .zattrs; see Documents). It
// validates m first.
func (m ArrayMetadata) MarshalJSON() ([]byte, error) {
	if m.format() == 2 {
		return m.marshalZarray()
	}
	p, err := m.resolve()
	if err != nil {
		return nil, err
	}
	fill, err := encodeFillValue(m.DataType, m.fillValue())
	if err != nil {
		return nil, err
	}
	kenc := m.chunkKeyEncoding()
	doc := arrayJSON{
		ZarrFormat: 3,
		NodeType:   "array",
		Shape:      nonNil(m.Shape),
		DataType:   m.DataType.String(),
		ChunkGrid: namedJSON{Name: "regular", Configuration: map[string]any{
			"chunk_shape": nonNil(m.ChunkShape),
		}},
		ChunkKeyEncoding: namedJSON{Name: kenc.Name, Configuration: map[string]any{
			"separator": kenc.Separator,
		}},
		FillValue:           fill,
		Attributes:          m.Attributes,
		StorageTransformers: []any{},
	}
	if doc.Attributes == nil {
		doc.Attributes = map[string]any{}
	}
	for _, c := range p.codecs {
		doc.Codecs = append(doc.Codecs, namedJSON(c))
	}
	if m.DimensionNames != nil {
		doc.DimensionNames = make([]*string, len(m.DimensionNames))
		for i := range m.DimensionNames {
			if m.DimensionNames[i] != "" {
				doc.DimensionNames[i] = &m.DimensionNames[i]
			}
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("%w: array metadata: %v", ErrInvalid, err)
	}
	return buf.Bytes(), nil
}

func nonNil(s []int) []int {
	if s == nil {
		return []int{}
	}
	return s
}

// UnmarshalJSON decodes a zarr.json document; see ParseArrayMetadata.
func (m *ArrayMetadata) UnmarshalJSON(data []byte) error {
	v, err := ParseArrayMetadata(data)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// ParseArrayMetadata decodes and validates the zarr.json document of a
// Zarr v3 array. Malformed documents give errors wrapping ErrInvalid;
// valid Zarr this package does not support (a data type, codec, chunk
// grid or extension) gives errors wrapping ErrNotImplemented that name
// it. Codecs are returned in canonical form.
func ParseArrayMetadata(data []byte) (ArrayMetadata, error) {
	var m ArrayMetadata
	var doc map[string]json.RawMessage
	if err := decodeJSON(data, &doc); err != nil {
		return m, err
	}
	if doc == nil {
		return m, invalidf("not a JSON object")
	}
	var format json.Number
	if err := field(doc, "zarr_format", &format, true); err != nil {
		return m, err
	}
	if format != "3" {
		return m, fmt.Errorf("%w: zarr.json with zarr_format %s (Zarr v2 arrays are .zarray documents: ParseArrayMetadataV2)", ErrNotImplemented, format)
	}
	var nodeType string
	if err := field(doc, "node_type", &nodeType, true); err != nil {
		return m, err
	}
	if nodeType != "array" {
		return m, invalidf("node_type is %q, not \"array\"", nodeType)
	}

	var shape []json.Number
	if err := field(doc, "shape", &shape, true); err != nil {
		return m, err
	}
	var err error
	if m.Shape, err = parseDims("shape", shape); err != nil {
		return m, err
	}

	if m.DataType, err = parseDataTypeField(doc["data_type"]); err != nil {
		return m, err
	}

	var grid named
	if err := field(doc, "chunk_grid", &grid, true); err != nil {
		return m, err
	}
	if grid.Name != "regular" {
		return m, fmt.Errorf("%w: chunk grid %q", ErrNotImplemented, grid.Name)
	}
	var gridConf struct {
		ChunkShape []json.Number `json:"chunk_shape"`
	}
	if err := decodeJSON(grid.Configuration, &gridConf); err != nil {
		return m, fmt.Errorf("%w (in chunk_grid)", err)
	}
	if gridConf.ChunkShape == nil {
		return m, invalidf("chunk_grid has no chunk_shape")
	}
	if m.ChunkShape, err = parseDims("chunk_shape", gridConf.ChunkShape); err != nil {
		return m, err
	}

	var kenc named
	if err := field(doc, "chunk_key_encoding", &kenc, true); err != nil {
		return m, err
	}
	var kencConf struct {
		Separator *string `json:"separator"`
	}
	if len(kenc.Configuration) > 0 {
		if err := decodeJSON(kenc.Configuration, &kencConf); err != nil {
			return m, fmt.Errorf("%w (in chunk_key_encoding)", err)
		}
	}
	m.ChunkKeyEncoding.Name = kenc.Name
	if kencConf.Separator != nil {
		if *kencConf.Separator == "" {
			return m, invalidf("empty chunk key separator")
		}
		m.ChunkKeyEncoding.Separator = *kencConf.Separator
	}
	if kenc.Name == "" {
		return m, invalidf("chunk_key_encoding has no name")
	}

	rawFill, ok := doc["fill_value"]
	if !ok {
		return m, invalidf("no fill_value")
	}
	var fill any
	if err := decodeJSON(rawFill, &fill); err != nil {
		return m, fmt.Errorf("%w (in fill_value)", err)
	}
	if m.FillValue, err = parseFillValue(m.DataType, fill); err != nil {
		return m, err
	}

	var codecs []json.RawMessage
	if err := field(doc, "codecs", &codecs, true); err != nil {
		return m, err
	}
	if len(codecs) == 0 {
		return m, invalidf("codecs is empty")
	}
	for i, raw := range codecs {
		c, err := parseCodecJSON(raw)
		if err != nil {
			return m, fmt.Errorf("%w (in codecs[%d])", err, i)
		}
		m.Codecs = append(m.Codecs, c)
	}

	if err := field(doc, "attributes", &m.Attributes, false); err != nil {
		return m, err
	}

	var dimNames []*string
	if err := field(doc, "dimension_names", &dimNames, false); err != nil {
		return m, err
	}
	if dimNames != nil {
		m.DimensionNames = make([]string, len(dimNames))
		for i, n := range dimNames {
			if n != nil {
				m.DimensionNames[i] = *n
			}
		}
	}

	var transformers []json.RawMessage
	if err := field(doc, "storage_transformers", &transformers, false); err != nil {
		return m, err
	}
	if len(transformers) > 0 {
		return m, fmt.Errorf("%w: storage transformers", ErrNotImplemented)
	}

	for _, k := range slices.Sorted(maps.Keys(doc)) {
		if knownArrayFields[k] {
			continue
		}
		var ext struct {
			MustUnderstand *bool `json:"must_understand"`
		}
		if decodeJSON(doc[k], &ext) != nil || ext.MustUnderstand == nil || *ext.MustUnderstand {
			return m, fmt.Errorf("%w: metadata field %q", ErrNotImplemented, k)
		}
	}

	p, err := m.resolve()
	if err != nil {
		return m, err
	}
	// Canonical form, so that parse(marshal(m)) == m.
	m.Codecs = p.codecs
	m.ChunkKeyEncoding = m.ChunkKeyEncoding.resolved()
	m.ZarrFormat = 3
	if m.Attributes == nil {
		m.Attributes = map[string]any{}
	}
	return m, nil
}

var knownArrayFields = map[string]bool{
	"zarr_format": true, "node_type": true, "shape": true, "data_type": true,
	"chunk_grid": true, "chunk_key_encoding": true, "fill_value": true,
	"codecs": true, "attributes": true, "dimension_names": true,
	"storage_transformers": true,
}

// named is a {"name": ..., "configuration": {...}} object.
type named struct {
	Name          string          `json:"name"`
	Configuration json.RawMessage `json:"configuration"`
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: array metadata: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// decodeJSON decodes exactly one JSON value from data into v, numbers as
// json.Number.
func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return invalidf("%v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return invalidf("data after the JSON value")
	}
	return nil
}

// field decodes doc[key] into v; a missing (or, unless required, null)
// field leaves v alone.
func field(doc map[string]json.RawMessage, key string, v any, required bool) error {
	raw, ok := doc[key]
	if !ok || (!required && string(raw) == "null") {
		if required {
			return invalidf("no %s", key)
		}
		return nil
	}
	if err := decodeJSON(raw, v); err != nil {
		return fmt.Errorf("%w (in %s)", err, key)
	}
	return nil
}

func parseDims(name string, dims []json.Number) ([]int, error) {
	out := make([]int, len(dims))
	for i, d := range dims {
		v, err := parseIntFill(d, 64)
		if err != nil || v < 0 || v > math.MaxInt {
			return nil, invalidf("%s[%d] = %s is not a size", name, i, d)
		}
		out[i] = int(v)
	}
	return out, nil
}

// parseDataTypeField decodes data_type: a name, or a {"name": ...} object
// as extension data types are written.
func parseDataTypeField(raw json.RawMessage) (DataType, error) {
	if raw == nil {
		return Invalid, invalidf("no data_type")
	}
	var name string
	if err := decodeJSON(raw, &name); err != nil {
		var obj named
		if err := decodeJSON(raw, &obj); err != nil || obj.Name == "" {
			return Invalid, invalidf("data_type must be a name or a {\"name\": ...} object")
		}
		name = obj.Name
		if c := bytes.TrimSpace(obj.Configuration); len(c) > 0 && string(c) != "null" && string(c) != "{}" {
			return Invalid, fmt.Errorf("%w: data type %q with a configuration", ErrNotImplemented, name)
		}
	}
	return ParseDataType(name)
}

// parseCodecJSON decodes one codecs entry: a name or a {"name",
// "configuration"} object.
func parseCodecJSON(raw json.RawMessage) (Codec, error) {
	var name string
	if err := decodeJSON(raw, &name); err == nil {
		if name == "" {
			return Codec{}, invalidf("codec without a name")
		}
		return Codec{Name: name}, nil
	}
	var obj struct {
		Name          string         `json:"name"`
		Configuration map[string]any `json:"configuration"`
	}
	if err := decodeJSON(raw, &obj); err != nil {
		return Codec{}, err
	}
	if obj.Name == "" {
		return Codec{}, invalidf("codec without a name")
	}
	return Codec{Name: obj.Name, Configuration: obj.Configuration}, nil
}

// fitsInt64 reports whether an array of shape with items of itemSize
// bytes has a size in bytes that int64 can count (any zero dimension
// makes it 0).
func fitsInt64(shape []int, itemSize int) bool {
	if slices.Contains(shape, 0) {
		return true
	}
	n := int64(itemSize)
	for _, d := range shape {
		if n > math.MaxInt64/int64(d) {
			return false
		}
		n *= int64(d)
	}
	return true
}
