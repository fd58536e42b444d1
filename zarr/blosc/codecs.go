package blosc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// The compressors of the streams inside a Blosc buffer. An encoder
// compresses one stream into dst (whose capacity is all it may use) and
// returns 0 when the result would not fit; a decoder fills dst exactly.

type encoder struct {
	name  string
	level int
	lz4   *lz4.CompressorCCompat
	lz4hc *lz4.CompressorHC
	zlib  *zlib.Writer
	buf   *bytes.Buffer
}

var (
	lz4Pool   = sync.Pool{New: func() any { return new(lz4.CompressorCCompat) }}
	lz4hcPool = sync.Pool{New: func() any { return new(lz4.CompressorHC) }}
	zlibPools [10]sync.Pool
)

func newEncoder(name string, level int) *encoder {
	e := &encoder{name: name, level: level}
	switch name {
	case "lz4":
		e.lz4 = lz4Pool.Get().(*lz4.CompressorCCompat)
		// c-blosc's acceleration for lz4: faster at lower levels.
		e.lz4.Acceleration = 10 - level
	case "lz4hc":
		e.lz4hc = lz4hcPool.Get().(*lz4.CompressorHC)
		e.lz4hc.Level = lz4.CompressionLevel(1 << (8 + level))
	case "zlib":
		if w, ok := zlibPools[level].Get().(*zlib.Writer); ok {
			e.zlib = w
		}
		e.buf = new(bytes.Buffer)
	}
	return e
}

func (e *encoder) release() {
	switch {
	case e.lz4 != nil:
		lz4Pool.Put(e.lz4)
	case e.lz4hc != nil:
		lz4hcPool.Put(e.lz4hc)
	case e.zlib != nil:
		zlibPools[e.level].Put(e.zlib)
	}
}

// compress compresses src into dst[:0:cap(dst)]; n ≤ 0 means it did not
// fit (or failed), and the caller stores src raw.
func (e *encoder) compress(dst, src []byte) ([]byte, int) {
	limit := cap(dst)
	switch e.name {
	case "lz4":
		n, err := e.lz4.CompressBlock(src, dst[:limit])
		if err != nil {
			return dst, 0
		}
		return dst[:n], n
	case "lz4hc":
		n, err := e.lz4hc.CompressBlock(src, dst[:limit])
		if err != nil {
			return dst, 0
		}
		return dst[:n], n
	case "snappy":
		if snappy.MaxEncodedLen(len(src)) > limit {
			out := snappy.Encode(nil, src)
			if len(out) > limit {
				return dst, 0
			}
			return out, len(out)
		}
		out := snappy.Encode(dst[:limit], src)
		return out, len(out)
	case "zstd":
		enc, err := zstdEncoder(e.level)
		if err != nil {
			return dst, 0
		}
		out := enc.EncodeAll(src, dst[:0])
		if len(out) > limit {
			return dst, 0
		}
		return out, len(out)
	case "zlib":
		e.buf.Reset()
		if e.zlib == nil {
			w, err := zlib.NewWriterLevel(e.buf, e.level)
			if err != nil {
				return dst, 0
			}
			e.zlib = w
		} else {
			e.zlib.Reset(e.buf)
		}
		if _, err := e.zlib.Write(src); err != nil {
			return dst, 0
		}
		if err := e.zlib.Close(); err != nil || e.buf.Len() > limit {
			return dst, 0
		}
		return e.buf.Bytes(), e.buf.Len()
	default: // blosclz
		n := blosclzCompress(dst[:limit], src, e.level)
		return dst[:n], n
	}
}

type decodeFunc func(dst, src []byte) error

func decoder(name string) decodeFunc {
	switch name {
	case "lz4":
		return decodeLZ4
	case "snappy":
		return decodeSnappy
	case "zlib":
		return decodeZlib
	case "zstd":
		return decodeZstd
	}
	return decodeBloscLZ
}

func decodeLZ4(dst, src []byte) error {
	n, err := lz4.UncompressBlock(src, dst)
	if err != nil {
		return err
	}
	if n != len(dst) {
		return fmt.Errorf("decoded %d bytes, want %d", n, len(dst))
	}
	return nil
}

func decodeSnappy(dst, src []byte) error {
	n, err := snappy.DecodedLen(src)
	if err != nil {
		return err
	}
	if n != len(dst) {
		return fmt.Errorf("decoded size %d, want %d", n, len(dst))
	}
	out, err := snappy.Decode(dst, src)
	if err != nil {
		return err
	}
	if len(out) != len(dst) {
		return fmt.Errorf("decoded %d bytes, want %d", len(out), len(dst))
	}
	return nil
}

var zlibReaders sync.Pool

func decodeZlib(dst, src []byte) error {
	br := bytes.NewReader(src)
	var r io.ReadCloser
	if v, ok := zlibReaders.Get().(io.ReadCloser); ok {
		if err := v.(zlib.Resetter).Reset(br, nil); err != nil {
			return err
		}
		r = v
	} else {
		var err error
		if r, err = zlib.NewReader(br); err != nil {
			return err
		}
	}
	defer zlibReaders.Put(r)
	if _, err := io.ReadFull(r, dst); err != nil {
		return fmt.Errorf("decoded fewer than %d bytes: %v", len(dst), err)
	}
	var extra [1]byte
	if n, err := r.Read(extra[:]); n > 0 || err != io.EOF {
		if err == nil || err == io.EOF {
			return fmt.Errorf("decoded more than %d bytes", len(dst))
		}
		return err
	}
	return nil
}

var (
	zstdEncodersMu sync.Mutex
	zstdEncoders   = map[int]*zstd.Encoder{}
	zstdDecoder    = sync.OnceValues(func() (*zstd.Decoder, error) {
		return zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecodeAllCapLimit(true))
	})
)

// zstdEncoder returns the shared encoder for a Blosc level (1-9, used as
// a zstd level); frames carry their content size, as libzstd's do.
func zstdEncoder(level int) (*zstd.Encoder, error) {
	zstdEncodersMu.Lock()
	defer zstdEncodersMu.Unlock()
	if e := zstdEncoders[level]; e != nil {
		return e, nil
	}
	e, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)),
		zstd.WithEncoderCRC(false),
		zstd.WithSingleSegment(true),
		zstd.WithZeroFrames(true))
	if err != nil {
		return nil, err
	}
	zstdEncoders[level] = e
	return e, nil
}

func decodeZstd(dst, src []byte) error {
	d, err := zstdDecoder()
	if err != nil {
		return err
	}
	out, err := d.DecodeAll(src, dst[:0:len(dst)])
	if err != nil {
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
			return fmt.Errorf("decoded more than %d bytes", len(dst))
		}
		return err
	}
	if len(out) != len(dst) {
		return fmt.Errorf("decoded %d bytes, want %d", len(out), len(dst))
	}
	if len(out) > 0 && &out[0] != &dst[0] {
		copy(dst, out)
	}
	return nil
}
