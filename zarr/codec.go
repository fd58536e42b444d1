package zarr

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
)

// Codec is one entry of the "codecs" list of zarr.json: a name and its
// configuration.
type Codec struct {
	Name          string
	Configuration map[string]any
}

// BytesCodec returns the "bytes" codec writing little-endian elements,
// the array→bytes codec of every array this package creates by default.
func BytesCodec() Codec {
	return Codec{Name: "bytes", Configuration: map[string]any{"endian": "little"}}
}

// MarshalJSON encodes the codec as a zarr.json entry: {"name": ...,
// "configuration": {...}}, the configuration left out when empty.
func (c Codec) MarshalJSON() ([]byte, error) {
	return json.Marshal(namedJSON(c))
}

// UnmarshalJSON decodes a zarr.json codec entry: a name, or a {"name",
// "configuration"} object. Numbers in the configuration are json.Number.
func (c *Codec) UnmarshalJSON(b []byte) error {
	v, err := parseCodecJSON(b)
	if err != nil {
		return err
	}
	*c = v
	return nil
}

// ZstdCodec returns the "zstd" bytes→bytes codec with a zstd compression
// level (as the zstd command line: 0 means the default, 3; negative levels
// are faster) and whether frames carry a content checksum.
func ZstdCodec(level int, checksum bool) Codec {
	return Codec{Name: "zstd", Configuration: map[string]any{"level": level, "checksum": checksum}}
}

// Codecs come in the three kinds of the Zarr v3 spec. A chain is zero or
// more array→array codecs, exactly one array→bytes codec, then zero or
// more bytes→bytes codecs. Encoding runs the chain forward, decoding runs
// it backward. Every codec value is built for the chunks of one array (a
// chunkSpec), is immutable and is safe for concurrent use.

// codec is what every codec has: its zarr.json form.
type codec interface {
	// metadata returns the codec's canonical zarr.json entry.
	metadata() Codec
}

// chunkSpec describes a decoded chunk as a codec sees it: the chunk shape
// and data type, laid out in C order with little-endian elements.
type chunkSpec struct {
	shape     []int
	dataType  DataType
	fillValue []byte
}

// byteSize returns the size in bytes of a decoded chunk.
func (s chunkSpec) byteSize() int {
	n := s.dataType.Size()
	for _, d := range s.shape {
		n *= d
	}
	return n
}

// fill returns the spec's fill element, zeros when none is set.
func (s chunkSpec) fill() []byte {
	if s.fillValue == nil {
		return make([]byte, s.dataType.Size())
	}
	return s.fillValue
}

// arrayToArrayCodec rearranges a decoded chunk ("transpose", and Zarr
// v2's "F" order). It keeps the size of the chunk.
type arrayToArrayCodec interface {
	codec
	// outSpec returns the spec of the chunks this codec produces.
	outSpec() chunkSpec
	// encode and decode transform exactly one chunk; dst and src do not
	// overlap.
	encode(dst, src []byte) error
	decode(dst, src []byte) error
}

// arrayToBytesCodec serialises a decoded chunk to bytes ("bytes",
// "sharding_indexed").
type arrayToBytesCodec interface {
	codec
	// encodedSize returns an upper bound of the size of the encoding of
	// a chunk of decoded bytes as this package writes it.
	encodedSize(decoded int) int
	// passThrough reports whether encoding leaves the bytes unchanged,
	// so the pipeline may skip the copy.
	passThrough() bool
	// encode appends the encoding of the decoded chunk src to dst.
	encode(dst, src []byte) ([]byte, error)
	// decode fills dst (exactly one decoded chunk) from src.
	decode(dst, src []byte) error
}

// bytesToBytesCodec transforms bytes ("zstd", "gzip", "blosc", "crc32c",
// and Zarr v2's compressors and filters).
type bytesToBytesCodec interface {
	codec
	// encodedSizeBound returns an upper bound of the size of the encoding
	// of decoded bytes as this codec writes them.
	encodedSizeBound(decoded int) int
	// encode appends the encoding of src to dst.
	encode(dst, src []byte) ([]byte, error)
	// decode writes the decoding of src into dst and returns its length.
	// It refuses (with an error) output that would not fit in len(dst),
	// so hostile input cannot make it allocate more.
	decode(dst, src []byte) (int, error)
}

// exactSizeCodec is implemented by bytes→bytes codecs whose output size
// follows from the input size alone (crc32c), as a sharding index needs.
type exactSizeCodec interface {
	exactEncodedSize(decoded int) int
}

// codecFactory builds a codec from its configuration (numbers arrive as
// json.Number, int or float64) for chunks that spec describes: for
// bytes→bytes codecs, the input of the array→bytes codec. A factory
// validates the configuration against it (for example "bytes" needs an
// endian for multi-byte data types).
type codecFactory func(config map[string]any, spec chunkSpec) (codec, error)

var codecRegistry = map[string]codecFactory{}

// registerCodec makes a codec known by its zarr.json name. Codec files
// call it from init.
func registerCodec(name string, f codecFactory) {
	if _, dup := codecRegistry[name]; dup {
		panic("zarr: codec registered twice: " + name)
	}
	codecRegistry[name] = f
}

// pipeline is a resolved codec chain for one array.
type pipeline struct {
	a2a []arrayToArrayCodec
	a2b arrayToBytesCodec
	b2b []bytesToBytesCodec
	// spec is the decoded chunk; a2bSpec the input of a2b.
	spec, a2bSpec chunkSpec
	// sizes[i] bounds the input of b2b[i] when encoding (so the output of
	// its decoding); sizes[0] is the output of a2b and sizes[len(b2b)]
	// bounds what is stored.
	sizes []int
	// passThrough: the stored bytes are the decoded chunk itself.
	passThrough bool
	codecs      []Codec
	// v2Filters and v2Compressor: a v2 array's codecs in canonical form.
	v2Filters    []Codec
	v2Compressor *Codec
}

// newPipeline resolves codecs for chunks described by spec. An empty
// list means [BytesCodec()].
func newPipeline(codecs []Codec, spec chunkSpec) (*pipeline, error) {
	if len(codecs) == 0 {
		codecs = []Codec{BytesCodec()}
	}
	var built []codec
	cur := spec
	seenA2B := false
	for i, c := range codecs {
		f, ok := codecRegistry[c.Name]
		if !ok {
			if c.Name == "" {
				return nil, fmt.Errorf("%w: codecs[%d] has no name", ErrInvalid, i)
			}
			return nil, fmt.Errorf("%w: codec %q", ErrNotImplemented, c.Name)
		}
		cd, err := f(c.Configuration, cur)
		if err != nil {
			return nil, err
		}
		switch cd := cd.(type) {
		case arrayToArrayCodec:
			if seenA2B {
				return nil, fmt.Errorf("%w: array→array codec %q after the array→bytes codec", ErrInvalid, c.Name)
			}
			cur = cd.outSpec()
		case arrayToBytesCodec:
			seenA2B = true
		}
		built = append(built, cd)
	}
	return buildPipeline(built, spec)
}

// buildPipeline checks the order of built codecs and sizes the pipeline.
func buildPipeline(codecs []codec, spec chunkSpec) (*pipeline, error) {
	p := &pipeline{spec: spec, a2bSpec: spec}
	for _, cd := range codecs {
		name := cd.metadata().Name
		switch cd := cd.(type) {
		case arrayToArrayCodec:
			if p.a2b != nil {
				return nil, fmt.Errorf("%w: array→array codec %q after the array→bytes codec", ErrInvalid, name)
			}
			p.a2a = append(p.a2a, cd)
			p.a2bSpec = cd.outSpec()
		case arrayToBytesCodec:
			if p.a2b != nil {
				return nil, fmt.Errorf("%w: codecs has two array→bytes codecs (%q and %q)", ErrInvalid, p.a2b.metadata().Name, name)
			}
			p.a2b = cd
		case bytesToBytesCodec:
			if p.a2b == nil {
				return nil, fmt.Errorf("%w: bytes→bytes codec %q before the array→bytes codec", ErrInvalid, name)
			}
			p.b2b = append(p.b2b, cd)
		default:
			return nil, fmt.Errorf("%w: codec %q has no kind", ErrInvalid, name)
		}
		p.codecs = append(p.codecs, cd.metadata())
	}
	if p.a2b == nil {
		return nil, fmt.Errorf("%w: codecs has no array→bytes codec (such as \"bytes\")", ErrInvalid)
	}
	n := p.a2b.encodedSize(spec.byteSize())
	p.sizes = append(p.sizes, n)
	for _, c := range p.b2b {
		n = c.encodedSizeBound(n)
		p.sizes = append(p.sizes, n)
	}
	p.passThrough = len(p.a2a) == 0 && p.a2b.passThrough() && len(p.b2b) == 0
	return p, nil
}

// storedSizeBound bounds the size of an encoded chunk as this package
// writes it (other writers may exceed it, for example with several zstd
// frames).
func (p *pipeline) storedSizeBound() int { return p.sizes[len(p.sizes)-1] }

// exactStoredSize returns the stored size of every chunk when it follows
// from the codecs alone (as for a sharding index), or -1.
func (p *pipeline) exactStoredSize() int {
	if _, ok := p.a2b.(*bytesCodec); !ok {
		return -1
	}
	n := p.sizes[0]
	for _, c := range p.b2b {
		e, ok := c.(exactSizeCodec)
		if !ok {
			return -1
		}
		n = e.exactEncodedSize(n)
	}
	return n
}

// encode encodes the decoded chunk src. The result is src itself or lies
// in a scratch buffer that release returns to the pool.
func (p *pipeline) encode(src []byte) (out []byte, release func(), err error) {
	if p.passThrough {
		return src, func() {}, nil
	}
	var bufs []*[]byte
	release = func() {
		for _, b := range bufs {
			putBuffer(b)
		}
	}
	scratch := func(n int) []byte {
		b := getBuffer(n)
		bufs = append(bufs, b)
		return (*b)[:0]
	}
	data := src
	for _, c := range p.a2a {
		b := scratch(len(data))[:len(data)]
		if err := c.encode(b, data); err != nil {
			release()
			return nil, nil, err
		}
		data = b
	}
	if !p.a2b.passThrough() {
		b := scratch(p.sizes[0])
		data, err = p.a2b.encode(b, data)
		if err != nil {
			release()
			return nil, nil, err
		}
		*bufs[len(bufs)-1] = data
	}
	for i, c := range p.b2b {
		b := scratch(p.sizes[i+1])
		data, err = c.encode(b, data)
		if err != nil {
			release()
			return nil, nil, err
		}
		*bufs[len(bufs)-1] = data // keep a grown buffer for the pool
	}
	return data, release, nil
}

// decode decodes the stored bytes src into dst, exactly one decoded chunk.
// Errors describe the corruption without the sentinel; the caller wraps.
func (p *pipeline) decode(dst, src []byte) error {
	data := src
	var bufs []*[]byte
	defer func() {
		for _, b := range bufs {
			putBuffer(b)
		}
	}()
	scratch := func(n int) []byte {
		b := getBuffer(n)
		bufs = append(bufs, b)
		return (*b)[:n]
	}
	// The array→bytes codec decodes into arrayOut: dst itself unless
	// array→array codecs follow.
	arrayOut := dst
	if len(p.a2a) > 0 {
		arrayOut = scratch(len(dst))
	}
	for i := len(p.b2b) - 1; i >= 0; i-- {
		var out []byte
		if i == 0 && p.a2b.passThrough() {
			out = arrayOut // the last stage decodes straight into place
		} else {
			out = scratch(p.sizes[i])
		}
		n, err := p.b2b[i].decode(out, data)
		if err != nil {
			return err
		}
		data = out[:n]
	}
	if p.a2b.passThrough() {
		if len(data) != len(arrayOut) {
			return fmt.Errorf("decoded %d bytes, want %d", len(data), len(arrayOut))
		}
		if len(arrayOut) > 0 && &data[0] != &arrayOut[0] {
			copy(arrayOut, data)
		}
	} else if err := p.a2b.decode(arrayOut, data); err != nil {
		return err
	}
	for i := len(p.a2a) - 1; i >= 0; i-- {
		out := dst
		if i > 0 {
			out = scratch(len(dst))
		}
		if err := p.a2a[i].decode(out, arrayOut); err != nil {
			return err
		}
		arrayOut = out
	}
	return nil
}

// Helpers for codec configurations. Numbers may arrive as json.Number
// (parsed zarr.json), int or float64 (built in Go).

// checkConfigKeys refuses configuration keys outside allowed.
func checkConfigKeys(codec string, config map[string]any, allowed ...string) error {
	var unknown []string
	for k := range config {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("%w: codec %q: unknown configuration %s", ErrInvalid, codec, strings.Join(unknown, ", "))
	}
	return nil
}

// configInt returns config[key] as an int; ok is false when it is absent.
func configInt(codec string, config map[string]any, key string) (v int, ok bool, err error) {
	raw, ok := config[key]
	if !ok {
		return 0, false, nil
	}
	bad := fmt.Errorf("%w: codec %q: %s must be an integer, not %v", ErrInvalid, codec, key, raw)
	switch x := raw.(type) {
	case int:
		return x, true, nil
	case int64:
		if x < math.MinInt || x > math.MaxInt {
			return 0, true, bad
		}
		return int(x), true, nil
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			return 0, true, bad
		}
		return int(x), true, nil
	case json.Number:
		i, err := parseIntFill(x, 64)
		if err != nil {
			return 0, true, bad
		}
		return int(i), true, nil
	}
	return 0, true, bad
}

// configBool returns config[key] as a bool; ok is false when it is absent.
func configBool(codec string, config map[string]any, key string) (v, ok bool, err error) {
	raw, ok := config[key]
	if !ok {
		return false, false, nil
	}
	b, isBool := raw.(bool)
	if !isBool {
		return false, true, fmt.Errorf("%w: codec %q: %s must be true or false, not %v", ErrInvalid, codec, key, raw)
	}
	return b, true, nil
}

// configString returns config[key] as a string; ok is false when it is
// absent or null.
func configString(codec string, config map[string]any, key string) (v string, ok bool, err error) {
	raw, ok := config[key]
	if !ok || raw == nil {
		return "", false, nil
	}
	s, isString := raw.(string)
	if !isString {
		return "", true, fmt.Errorf("%w: codec %q: %s must be a string, not %v", ErrInvalid, codec, key, raw)
	}
	return s, true, nil
}

// configCodecs returns config[key] as a codec list: []Codec as built in
// Go, or a JSON array of codec entries as parsed; ok is false when it is
// absent or null.
func configCodecs(codec string, config map[string]any, key string) (v []Codec, ok bool, err error) {
	raw, ok := config[key]
	if !ok || raw == nil {
		return nil, false, nil
	}
	switch x := raw.(type) {
	case []Codec:
		return cloneCodecs(x), true, nil
	case []any:
		out := make([]Codec, len(x))
		for i, e := range x {
			b, err := json.Marshal(e)
			if err != nil {
				return nil, true, fmt.Errorf("%w: codec %q: %s[%d]: %v", ErrInvalid, codec, key, i, err)
			}
			if out[i], err = parseCodecJSON(b); err != nil {
				return nil, true, fmt.Errorf("%w (in codec %q, %s[%d])", err, codec, key, i)
			}
		}
		return out, true, nil
	}
	return nil, true, fmt.Errorf("%w: codec %q: %s must be a list of codecs, not %T", ErrInvalid, codec, key, raw)
}

// configInts returns config[key] as a list of integers; ok is false when
// it is absent or null.
func configInts(codec string, config map[string]any, key string) (v []int, ok bool, err error) {
	raw, ok := config[key]
	if !ok || raw == nil {
		return nil, false, nil
	}
	var items []any
	switch x := raw.(type) {
	case []int:
		return slices.Clone(x), true, nil
	case []any:
		items = x
	default:
		return nil, true, fmt.Errorf("%w: codec %q: %s must be a list of integers, not %v", ErrInvalid, codec, key, raw)
	}
	out := make([]int, len(items))
	for i, e := range items {
		n, _, err := configInt(codec, map[string]any{key: e}, key)
		if err != nil {
			return nil, true, err
		}
		out[i] = n
	}
	return out, true, nil
}

// cloneCodecs deep-copies a codec list.
func cloneCodecs(cs []Codec) []Codec {
	if cs == nil {
		return nil
	}
	out := make([]Codec, len(cs))
	for i, c := range cs {
		out[i] = Codec{Name: c.Name, Configuration: cloneJSONMap(c.Configuration)}
	}
	return out
}

// cloneJSONMap deep-copies a JSON object made of maps, slices and scalars.
func cloneJSONMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := maps.Clone(m)
	for k, v := range out {
		out[k] = cloneJSONValue(v)
	}
	return out
}

func cloneJSONValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return cloneJSONMap(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneJSONValue(e)
		}
		return out
	case []int:
		return slices.Clone(x)
	case []Codec:
		return cloneCodecs(x)
	}
	return v
}
