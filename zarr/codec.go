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

// ZstdCodec returns the "zstd" bytes→bytes codec with a zstd compression
// level (as the zstd command line: 0 means the default, 3; negative levels
// are faster) and whether frames carry a content checksum.
func ZstdCodec(level int, checksum bool) Codec {
	return Codec{Name: "zstd", Configuration: map[string]any{"level": level, "checksum": checksum}}
}

// Codecs come in the three kinds of the Zarr v3 spec. A chain is zero or
// more array→array codecs, exactly one array→bytes codec, then zero or
// more bytes→bytes codecs. Encoding runs the chain forward, decoding runs
// it backward. Every codec value is immutable and safe for concurrent use.

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

// arrayToArrayCodec rearranges a decoded chunk (for example "transpose").
// None is implemented yet; the pipeline refuses them by name.
type arrayToArrayCodec interface {
	codec
	// resolve returns the spec of the chunk this codec produces from one
	// of spec.
	resolve(spec chunkSpec) (chunkSpec, error)
	encode(dst, src []byte, spec chunkSpec) error
	decode(dst, src []byte, spec chunkSpec) error
}

// arrayToBytesCodec serialises a decoded chunk to bytes ("bytes",
// later "sharding_indexed").
type arrayToBytesCodec interface {
	codec
	// encodedSize returns the size of the encoding of a chunk of
	// decoded bytes, or -1 when it is not known in advance.
	encodedSize(decoded int) int
	// passThrough reports whether encoding leaves the bytes unchanged,
	// so the pipeline may skip the copy.
	passThrough() bool
	// encode appends the encoding of the decoded chunk src to dst.
	encode(dst, src []byte) ([]byte, error)
	// decode fills dst (exactly one decoded chunk) from src.
	decode(dst, src []byte) error
}

// bytesToBytesCodec transforms bytes ("zstd", later "gzip", "blosc",
// "crc32c").
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

// codecFactory builds a codec from its configuration (numbers arrive as
// json.Number, int or float64) for an array whose decoded chunks spec
// describes; a factory validates the configuration against it (for
// example "bytes" needs an endian for multi-byte data types).
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
	a2b arrayToBytesCodec
	b2b []bytesToBytesCodec
	// sizes[i] bounds the input of b2b[i] when encoding (so the output of
	// its decoding); sizes[0] is the output of a2b and sizes[len(b2b)]
	// bounds what is stored.
	sizes []int
	// passThrough: the stored bytes are the decoded chunk itself.
	passThrough bool
	codecs      []Codec
}

// newPipeline resolves codecs for chunks described by spec. An empty
// list means [BytesCodec()].
func newPipeline(codecs []Codec, spec chunkSpec) (*pipeline, error) {
	if len(codecs) == 0 {
		codecs = []Codec{BytesCodec()}
	}
	p := &pipeline{}
	for i, c := range codecs {
		f, ok := codecRegistry[c.Name]
		if !ok {
			if c.Name == "" {
				return nil, fmt.Errorf("%w: codecs[%d] has no name", ErrInvalid, i)
			}
			return nil, fmt.Errorf("%w: codec %q", ErrNotImplemented, c.Name)
		}
		cd, err := f(c.Configuration, spec)
		if err != nil {
			return nil, err
		}
		switch cd := cd.(type) {
		case arrayToArrayCodec:
			if p.a2b != nil {
				return nil, fmt.Errorf("%w: array→array codec %q after the array→bytes codec", ErrInvalid, c.Name)
			}
			return nil, fmt.Errorf("%w: codec %q", ErrNotImplemented, c.Name)
		case arrayToBytesCodec:
			if p.a2b != nil {
				return nil, fmt.Errorf("%w: codecs has two array→bytes codecs (%q and %q)", ErrInvalid, p.a2b.metadata().Name, c.Name)
			}
			p.a2b = cd
		case bytesToBytesCodec:
			if p.a2b == nil {
				return nil, fmt.Errorf("%w: bytes→bytes codec %q before the array→bytes codec", ErrInvalid, c.Name)
			}
			p.b2b = append(p.b2b, cd)
		default:
			return nil, fmt.Errorf("%w: codec %q has no kind", ErrInvalid, c.Name)
		}
		p.codecs = append(p.codecs, cd.metadata())
	}
	if p.a2b == nil {
		return nil, fmt.Errorf("%w: codecs has no array→bytes codec (such as \"bytes\")", ErrInvalid)
	}
	n := p.a2b.encodedSize(spec.byteSize())
	if n < 0 {
		return nil, fmt.Errorf("%w: codec %q without a known encoded size", ErrNotImplemented, p.a2b.metadata().Name)
	}
	p.sizes = append(p.sizes, n)
	for _, c := range p.b2b {
		n = c.encodedSizeBound(n)
		p.sizes = append(p.sizes, n)
	}
	p.passThrough = p.a2b.passThrough() && len(p.b2b) == 0
	return p, nil
}

// storedSizeBound bounds the size of an encoded chunk as this package
// writes it (other writers may exceed it, for example with several zstd
// frames).
func (p *pipeline) storedSizeBound() int { return p.sizes[len(p.sizes)-1] }

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
	if !p.a2b.passThrough() {
		b := scratch(p.sizes[0])
		data, err = p.a2b.encode(b, src)
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
	for i := len(p.b2b) - 1; i >= 0; i-- {
		var out []byte
		if i == 0 && p.a2b.passThrough() {
			out = dst // the last stage decodes straight into dst
		} else {
			b := getBuffer(p.sizes[i])
			bufs = append(bufs, b)
			out = (*b)[:p.sizes[i]]
		}
		n, err := p.b2b[i].decode(out, data)
		if err != nil {
			return err
		}
		data = out[:n]
	}
	if p.a2b.passThrough() {
		if len(data) != len(dst) {
			return fmt.Errorf("decoded %d bytes, want %d", len(data), len(dst))
		}
		if len(dst) > 0 && &data[0] != &dst[0] {
			copy(dst, data)
		}
		return nil
	}
	return p.a2b.decode(dst, data)
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
	}
	return v
}
