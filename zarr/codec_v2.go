package zarr

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/pierrec/lz4/v4"
)

// Zarr v2 codecs, named by their numcodecs ids. Compressors: "blosc",
// "zlib", "gzip", "zstd" and "lz4" (numcodecs' LZ4: a 4-byte
// little-endian decoded size, then an LZ4 block). Filters: "delta" and
// "astype". Other numcodecs codecs give errors wrapping ErrNotImplemented
// that name them.

// newV2Compressor builds a v2 compressor for elements of itemSize bytes
// (what numcodecs' Blosc uses as its type size).
func newV2Compressor(c Codec, itemSize int) (bytesToBytesCodec, error) {
	switch c.Name {
	case "blosc":
		return newBloscCodecOf(c.Configuration, chunkSpec{dataType: dataTypeOfSize(itemSize)}, true)
	case "zlib":
		return newDeflateCodec("zlib", c.Configuration, true)
	case "gzip":
		return newDeflateCodec("gzip", c.Configuration, false)
	case "zstd":
		cd, err := newZstdCodec(c.Configuration, chunkSpec{})
		if err != nil {
			return nil, err
		}
		return cd.(bytesToBytesCodec), nil
	case "lz4":
		return newLZ4Codec(c.Configuration)
	case "":
		return nil, invalidf("compressor without an id")
	}
	return nil, fmt.Errorf("%w: Zarr v2 compressor %q", ErrNotImplemented, c.Name)
}

// newV2Filter builds a v2 filter for elements of numpy type in; out is the
// type of its output elements.
func newV2Filter(c Codec, in string) (bytesToBytesCodec, string, error) {
	switch c.Name {
	case "delta":
		f, err := newDeltaFilter(c.Configuration, in)
		if err != nil {
			return nil, "", err
		}
		return f, f.astype.typestr, nil
	case "astype":
		f, err := newAsTypeFilter(c.Configuration, in)
		if err != nil {
			return nil, "", err
		}
		return f, f.to.typestr, nil
	case "":
		return nil, "", invalidf("filter without an id")
	}
	return nil, "", fmt.Errorf("%w: Zarr v2 filter %q", ErrNotImplemented, c.Name)
}

func dataTypeOfSize(n int) DataType {
	switch n {
	case 1:
		return Uint8
	case 2:
		return Uint16
	case 4:
		return Uint32
	case 8:
		return Uint64
	}
	return Complex128
}

// lz4Codec is numcodecs' LZ4.
type lz4Codec struct{ acceleration int }

func newLZ4Codec(config map[string]any) (*lz4Codec, error) {
	if err := checkConfigKeys("lz4", config, "acceleration"); err != nil {
		return nil, err
	}
	acc, ok, err := configInt("lz4", config, "acceleration")
	if err != nil {
		return nil, err
	}
	if !ok {
		acc = 1
	}
	return &lz4Codec{acceleration: acc}, nil
}

func (c *lz4Codec) metadata() Codec {
	return Codec{Name: "lz4", Configuration: map[string]any{"acceleration": c.acceleration}}
}

func (c *lz4Codec) encodedSizeBound(n int) int { return 4 + lz4.CompressBlockBound(n) }

func (c *lz4Codec) encode(dst, src []byte) ([]byte, error) {
	if len(src) > math.MaxInt32 {
		return nil, fmt.Errorf("lz4: %d bytes exceed the 2 GiB limit", len(src))
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(src)))
	bound := lz4.CompressBlockBound(len(src))
	if cap(dst)-len(dst) < bound {
		grown := make([]byte, len(dst), len(dst)+bound)
		copy(grown, dst)
		dst = grown
	}
	comp := lz4.CompressorCCompat{Acceleration: c.acceleration}
	n, err := comp.CompressBlock(src, dst[len(dst):len(dst)+bound])
	if err != nil {
		return nil, fmt.Errorf("lz4: %w", err)
	}
	if n == 0 && len(src) > 0 {
		return nil, fmt.Errorf("lz4: block did not fit its bound")
	}
	return dst[:len(dst)+n], nil
}

func (c *lz4Codec) decode(dst, src []byte) (int, error) {
	if len(src) < 4 {
		return 0, fmt.Errorf("lz4: %d bytes, shorter than the size header", len(src))
	}
	size := int64(binary.LittleEndian.Uint32(src))
	if size > int64(len(dst)) {
		return 0, fmt.Errorf("lz4: decoded size %d exceeds %d bytes", size, len(dst))
	}
	if len(src) == 4 {
		return 0, fmt.Errorf("lz4: no block after the size header")
	}
	n, err := lz4.UncompressBlock(src[4:], dst[:size])
	if err != nil {
		return 0, fmt.Errorf("lz4: %w", err)
	}
	if int64(n) != size {
		return 0, fmt.Errorf("lz4: decoded %d bytes, header says %d", n, size)
	}
	return n, nil
}

// numType is a numeric numpy type as a v2 filter sees it.
type numType struct {
	typestr string
	dt      DataType
	big     bool
}

func parseNumType(codec, key string, v any) (numType, error) {
	s, ok := v.(string)
	if !ok {
		return numType{}, fmt.Errorf("%w: filter %q: %s must be a numpy dtype string, not %v", ErrInvalid, codec, key, v)
	}
	dt, endian, err := ParseTypestr(s)
	if err != nil {
		return numType{}, fmt.Errorf("%w (in filter %q, %s)", err, codec, key)
	}
	switch dt {
	case Bool, Complex64, Complex128:
		return numType{}, fmt.Errorf("%w: filter %q with %s %q", ErrNotImplemented, codec, key, s)
	}
	return numType{typestr: typestr(dt, endian), dt: dt, big: endian == "big"}, nil
}

func (t numType) size() int { return t.dt.Size() }

func (t numType) isFloat() bool { return t.dt == Float16 || t.dt == Float32 || t.dt == Float64 }

func (t numType) signed() bool { return t.dt >= Int8 && t.dt <= Int64 }

// bits returns the raw element i as an unsigned integer.
func (t numType) bits(b []byte, i int) uint64 {
	n := t.size()
	e := b[i*n : (i+1)*n]
	if !t.big {
		return getUint(e)
	}
	var u uint64
	for _, c := range e {
		u = u<<8 | uint64(c)
	}
	return u
}

func (t numType) putBits(b []byte, i int, u uint64) {
	n := t.size()
	e := b[i*n : (i+1)*n]
	if !t.big {
		putUint(e, u)
		return
	}
	for k := n - 1; k >= 0; k-- {
		e[k] = byte(u)
		u >>= 8
	}
}

// integer returns element i sign- or zero-extended to 64 bits.
func (t numType) integer(b []byte, i int) uint64 {
	u := t.bits(b, i)
	if t.signed() {
		shift := 64 - 8*t.size()
		return uint64(int64(u<<shift) >> shift)
	}
	return u
}

func (t numType) float(b []byte, i int) float64 {
	u := t.bits(b, i)
	switch t.dt {
	case Float16:
		return float16ToFloat64(uint16(u))
	case Float32:
		return float64(math.Float32frombits(uint32(u)))
	}
	return math.Float64frombits(u)
}

func (t numType) putFloat(b []byte, i int, f float64) {
	switch t.dt {
	case Float16:
		t.putBits(b, i, uint64(float64ToFloat16(f)))
	case Float32:
		t.putBits(b, i, uint64(math.Float32bits(float32(f))))
	default:
		t.putBits(b, i, math.Float64bits(f))
	}
}

// convert stores element i of from (in src) as element i of to (in dst),
// with numpy's casting: integers wrap, floats truncate towards zero when
// cast to integers, and round to nearest when narrowed.
func convert(to, from numType, dst, src []byte, i int) {
	switch {
	case !from.isFloat() && !to.isFloat():
		to.putBits(dst, i, from.integer(src, i))
	case from.isFloat() && to.isFloat():
		to.putFloat(dst, i, from.float(src, i))
	case from.isFloat():
		f := math.Trunc(from.float(src, i))
		var u uint64
		if to.signed() || f < 0 {
			u = uint64(int64(f))
		} else {
			u = uint64(f)
		}
		to.putBits(dst, i, u)
	default:
		v := from.integer(src, i)
		if from.signed() {
			to.putFloat(dst, i, float64(int64(v)))
		} else {
			to.putFloat(dst, i, float64(v))
		}
	}
}

// deltaFilter is numcodecs' Delta: each element stored as its difference
// from the previous one (the first as it is), cast to astype.
type deltaFilter struct {
	dtype, astype numType
}

func newDeltaFilter(config map[string]any, in string) (*deltaFilter, error) {
	if err := checkConfigKeys("delta", config, "dtype", "astype"); err != nil {
		return nil, err
	}
	dtype, err := parseNumType("delta", "dtype", config["dtype"])
	if err != nil {
		return nil, err
	}
	if dtype.size() != typestrSize(in) {
		return nil, fmt.Errorf("%w: filter \"delta\": dtype %s for %s elements", ErrInvalid, dtype.typestr, in)
	}
	astype := dtype
	if v, ok := config["astype"]; ok && v != nil {
		if astype, err = parseNumType("delta", "astype", v); err != nil {
			return nil, err
		}
	}
	if dtype.isFloat() != astype.isFloat() || (dtype.isFloat() && dtype.dt != astype.dt) {
		return nil, fmt.Errorf("%w: filter \"delta\" from %s to %s", ErrNotImplemented, dtype.typestr, astype.typestr)
	}
	return &deltaFilter{dtype: dtype, astype: astype}, nil
}

func (f *deltaFilter) metadata() Codec {
	return Codec{Name: "delta", Configuration: map[string]any{"dtype": f.dtype.typestr, "astype": f.astype.typestr}}
}

func (f *deltaFilter) encodedSizeBound(n int) int { return n / f.dtype.size() * f.astype.size() }

func (f *deltaFilter) encode(dst, src []byte) ([]byte, error) {
	if len(src)%f.dtype.size() != 0 {
		return nil, fmt.Errorf("delta: %d bytes of %s elements", len(src), f.dtype.typestr)
	}
	n := len(src) / f.dtype.size()
	start := len(dst)
	dst = append(dst, make([]byte, n*f.astype.size())...)
	out := dst[start:]
	if f.dtype.isFloat() {
		prev := 0.0
		for i := range n {
			v := f.dtype.float(src, i)
			d := v - prev
			if f.dtype.dt == Float32 {
				d = float64(float32(v) - float32(prev))
			}
			f.astype.putFloat(out, i, d)
			prev = v
		}
		return dst, nil
	}
	var prev uint64
	for i := range n {
		v := f.dtype.integer(src, i)
		f.astype.putBits(out, i, v-prev)
		prev = v
	}
	return dst, nil
}

func (f *deltaFilter) decode(dst, src []byte) (int, error) {
	if len(src)%f.astype.size() != 0 {
		return 0, fmt.Errorf("delta: %d bytes of %s elements", len(src), f.astype.typestr)
	}
	n := len(src) / f.astype.size()
	if n*f.dtype.size() > len(dst) {
		return 0, fmt.Errorf("delta: decoded data exceeds %d bytes", len(dst))
	}
	if f.dtype.isFloat() {
		acc := 0.0
		for i := range n {
			acc += f.astype.float(src, i)
			if f.dtype.dt == Float32 {
				acc = float64(float32(acc))
			} else if f.dtype.dt == Float16 {
				acc = float16ToFloat64(float64ToFloat16(acc))
			}
			f.dtype.putFloat(dst, i, acc)
		}
		return n * f.dtype.size(), nil
	}
	var acc uint64
	for i := range n {
		acc += f.astype.integer(src, i)
		f.dtype.putBits(dst, i, acc)
	}
	return n * f.dtype.size(), nil
}

// asTypeFilter is numcodecs' AsType: elements stored cast to
// encode_dtype, read back cast to decode_dtype.
type asTypeFilter struct {
	to, from numType // encode_dtype, decode_dtype
}

func newAsTypeFilter(config map[string]any, in string) (*asTypeFilter, error) {
	if err := checkConfigKeys("astype", config, "encode_dtype", "decode_dtype"); err != nil {
		return nil, err
	}
	enc, err := parseNumType("astype", "encode_dtype", config["encode_dtype"])
	if err != nil {
		return nil, err
	}
	dec, err := parseNumType("astype", "decode_dtype", config["decode_dtype"])
	if err != nil {
		return nil, err
	}
	if dec.size() != typestrSize(in) {
		return nil, fmt.Errorf("%w: filter \"astype\": decode_dtype %s for %s elements", ErrInvalid, dec.typestr, in)
	}
	return &asTypeFilter{to: enc, from: dec}, nil
}

func (f *asTypeFilter) metadata() Codec {
	return Codec{Name: "astype", Configuration: map[string]any{"encode_dtype": f.to.typestr, "decode_dtype": f.from.typestr}}
}

func (f *asTypeFilter) encodedSizeBound(n int) int { return n / f.from.size() * f.to.size() }

func (f *asTypeFilter) encode(dst, src []byte) ([]byte, error) {
	if len(src)%f.from.size() != 0 {
		return nil, fmt.Errorf("astype: %d bytes of %s elements", len(src), f.from.typestr)
	}
	n := len(src) / f.from.size()
	start := len(dst)
	dst = append(dst, make([]byte, n*f.to.size())...)
	for i := range n {
		convert(f.to, f.from, dst[start:], src, i)
	}
	return dst, nil
}

func (f *asTypeFilter) decode(dst, src []byte) (int, error) {
	if len(src)%f.to.size() != 0 {
		return 0, fmt.Errorf("astype: %d bytes of %s elements", len(src), f.to.typestr)
	}
	n := len(src) / f.to.size()
	if n*f.from.size() > len(dst) {
		return 0, fmt.Errorf("astype: decoded data exceeds %d bytes", len(dst))
	}
	for i := range n {
		convert(f.from, f.to, dst, src, i)
	}
	return n * f.from.size(), nil
}
