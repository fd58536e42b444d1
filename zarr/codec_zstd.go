package zarr

import (
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// The "zstd" codec (zarr-specs codecs/zstd) compresses bytes as one
// Zstandard frame with its content size, optionally with a checksum.
//
// When cgo is on (and the purezstd tag is not set), libzstd does the work
// instead (zstd_libzstd.go). Encoders and the decoder are shared process-wide:
// EncodeAll and DecodeAll are safe for concurrent use. The decoder is
// limited to the capacity of the buffer it decodes into (one chunk), so a
// small hostile frame cannot expand into a large allocation.

func init() { registerCodec("zstd", newZstdCodec) }

// zstdMinLevel and zstdMaxLevel are the levels libzstd accepts.
const (
	zstdMinLevel = -131072
	zstdMaxLevel = 22
)

type zstdCodec struct {
	level    int
	checksum bool
	enc      *zstd.Encoder
	// encSmall writes single-segment frames, used for inputs of up to
	// zstdSmallInput bytes: klauspost omits the content size of smaller
	// frames otherwise, and readers such as older numcodecs need it.
	encSmall *zstd.Encoder
}

const zstdSmallInput = 1024 // zstd.MinWindowSize

func newZstdCodec(config map[string]any, _ chunkSpec) (codec, error) {
	if err := checkConfigKeys("zstd", config, "level", "checksum"); err != nil {
		return nil, err
	}
	level, _, err := configInt("zstd", config, "level")
	if err != nil {
		return nil, err
	}
	if level < zstdMinLevel || level > zstdMaxLevel {
		return nil, fmt.Errorf("%w: codec \"zstd\": level %d outside [%d, %d]", ErrInvalid, level, zstdMinLevel, zstdMaxLevel)
	}
	checksum, _, err := configBool("zstd", config, "checksum")
	if err != nil {
		return nil, err
	}
	enc, err := zstdEncoder(level, checksum, false)
	if err != nil {
		return nil, err
	}
	encSmall, err := zstdEncoder(level, checksum, true)
	if err != nil {
		return nil, err
	}
	return &zstdCodec{level: level, checksum: checksum, enc: enc, encSmall: encSmall}, nil
}

func (c *zstdCodec) metadata() Codec {
	return ZstdCodec(c.level, c.checksum)
}

// encodedSizeBound is libzstd's ZSTD_COMPRESSBOUND plus room for the
// frame header and checksum.
func (c *zstdCodec) encodedSizeBound(n int) int {
	b := n + n>>8 + 32
	if n < 128<<10 {
		b += (128<<10 - n) >> 11
	}
	return b
}

func (c *zstdCodec) encode(dst, src []byte) ([]byte, error) {
	if useLibzstd && !c.checksum {
		return libzstdCompress(dst, src, c.level)
	}
	if len(src) <= zstdSmallInput {
		return c.encSmall.EncodeAll(src, dst), nil
	}
	return c.enc.EncodeAll(src, dst), nil
}

func (c *zstdCodec) decode(dst, src []byte) (int, error) {
	if useLibzstd && len(dst) > 0 && len(src) > 0 {
		return libzstdDecompress(dst, src)
	}
	dec, err := zstdDecoder()
	if err != nil {
		return 0, err
	}
	out, err := dec.DecodeAll(src, dst[:0:len(dst)])
	if err != nil {
		if err == zstd.ErrDecoderSizeExceeded {
			return 0, fmt.Errorf("zstd: decoded data exceeds %d bytes", len(dst))
		}
		return 0, fmt.Errorf("zstd: %w", err)
	}
	if len(out) > len(dst) {
		return 0, fmt.Errorf("zstd: decoded data exceeds %d bytes", len(dst))
	}
	if len(out) > 0 && &out[0] != &dst[0] {
		copy(dst, out)
	}
	return len(out), nil
}

// zstdEncoderLevel maps a zstd level to the closest klauspost encoder;
// level 0 means libzstd's default level, 3.
func zstdEncoderLevel(level int) zstd.EncoderLevel {
	if level == 0 {
		level = 3
	}
	return zstd.EncoderLevelFromZstd(level)
}

type zstdEncoderKey struct {
	level    zstd.EncoderLevel
	checksum bool
	single   bool
}

var (
	zstdEncodersMu sync.Mutex
	zstdEncoders   = map[zstdEncoderKey]*zstd.Encoder{}

	zstdDecoderOnce = sync.OnceValues(func() (*zstd.Decoder, error) {
		return zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(0), // GOMAXPROCS concurrent DecodeAll calls
			zstd.WithDecodeAllCapLimit(true))
	})
)

func zstdDecoder() (*zstd.Decoder, error) {
	d, err := zstdDecoderOnce()
	if err != nil {
		return nil, fmt.Errorf("zstd: new decoder: %w", err)
	}
	return d, nil
}

// zstdEncoder returns the shared encoder for a level, checksum and
// single-segment setting (klauspost has four encoder levels, so there are
// at most sixteen).
func zstdEncoder(level int, checksum, single bool) (*zstd.Encoder, error) {
	key := zstdEncoderKey{zstdEncoderLevel(level), checksum, single}
	zstdEncodersMu.Lock()
	defer zstdEncodersMu.Unlock()
	if e := zstdEncoders[key]; e != nil {
		return e, nil
	}
	opts := []zstd.EOption{
		zstd.WithEncoderLevel(key.level),
		zstd.WithEncoderCRC(checksum),
		zstd.WithZeroFrames(true),
	}
	if single {
		opts = append(opts, zstd.WithSingleSegment(true))
	}
	e, err := zstd.NewWriter(nil, opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: codec \"zstd\": %v", ErrInvalid, err)
	}
	zstdEncoders[key] = e
	return e, nil
}
