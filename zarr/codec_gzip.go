package zarr

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
)

// The "gzip" codec (zarr-specs codecs/gzip) stores bytes as a gzip
// (RFC 1952) stream; numcodecs' "zlib" (Zarr v2) as a zlib (RFC 1950)
// stream. Both read concatenated gzip members and check the stream's
// checksum; decoding stops at the caller's buffer size, so a small hostile
// stream cannot expand into a large allocation.

func init() { registerCodec("gzip", newGzipCodec) }

// GzipCodec returns the "gzip" bytes→bytes codec with a level from 0 (no
// compression) to 9.
func GzipCodec(level int) Codec {
	return Codec{Name: "gzip", Configuration: map[string]any{"level": level}}
}

// deflateCodec is gzip or zlib.
type deflateCodec struct {
	name  string // "gzip" or "zlib"
	zlib  bool
	level int
}

func newGzipCodec(config map[string]any, _ chunkSpec) (codec, error) {
	return newDeflateCodec("gzip", config, false)
}

func newDeflateCodec(name string, config map[string]any, isZlib bool) (*deflateCodec, error) {
	if err := checkConfigKeys(name, config, "level"); err != nil {
		return nil, err
	}
	level, ok, err := configInt(name, config, "level")
	if err != nil {
		return nil, err
	}
	if !ok {
		level = 5
		if isZlib {
			level = 1
		}
	}
	if level < 0 || level > 9 {
		return nil, fmt.Errorf("%w: codec %q: level %d outside [0, 9]", ErrInvalid, name, level)
	}
	return &deflateCodec{name: name, zlib: isZlib, level: level}, nil
}

func (c *deflateCodec) metadata() Codec {
	return Codec{Name: c.name, Configuration: map[string]any{"level": c.level}}
}

// encodedSizeBound: deflate's stored blocks cost 5 bytes per block at
// worst, plus the gzip (18) or zlib (6) framing; the bound leaves room
// for other writers' smaller blocks.
func (c *deflateCodec) encodedSizeBound(n int) int {
	return n + n/16 + 64
}

type deflateWriter interface {
	io.WriteCloser
	Reset(io.Writer)
}

var deflateWriters [2][10]sync.Pool // [zlib][level]

func (c *deflateCodec) encode(dst, src []byte) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	k := 0
	if c.zlib {
		k = 1
	}
	pool := &deflateWriters[k][c.level]
	w, _ := pool.Get().(deflateWriter)
	if w == nil {
		var err error
		if c.zlib {
			w, err = zlib.NewWriterLevel(buf, c.level)
		} else {
			var g *gzip.Writer
			g, err = gzip.NewWriterLevel(buf, c.level)
			w = g
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
	} else {
		w.Reset(buf)
	}
	defer pool.Put(w)
	if _, err := w.Write(src); err != nil {
		return nil, fmt.Errorf("%s: %w", c.name, err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("%s: %w", c.name, err)
	}
	return buf.Bytes(), nil
}

var gzipReaders, zlibReaders sync.Pool

func (c *deflateCodec) decode(dst, src []byte) (int, error) {
	br := bytes.NewReader(src)
	var r io.Reader
	if c.zlib {
		zr, _ := zlibReaders.Get().(io.ReadCloser)
		if zr != nil {
			if err := zr.(zlib.Resetter).Reset(br, nil); err != nil {
				return 0, fmt.Errorf("zlib: %w", err)
			}
		} else {
			var err error
			if zr, err = zlib.NewReader(br); err != nil {
				return 0, fmt.Errorf("zlib: %w", err)
			}
		}
		defer zlibReaders.Put(zr)
		r = zr
	} else {
		gr, _ := gzipReaders.Get().(*gzip.Reader)
		if gr != nil {
			if err := gr.Reset(br); err != nil {
				return 0, fmt.Errorf("gzip: %w", err)
			}
		} else {
			var err error
			if gr, err = gzip.NewReader(br); err != nil {
				return 0, fmt.Errorf("gzip: %w", err)
			}
		}
		defer gzipReaders.Put(gr)
		r = gr
	}
	return readBounded(c.name, r, dst)
}

// readBounded reads r to its end into dst and returns the length read; a
// stream longer than dst is an error naming the codec.
func readBounded(name string, r io.Reader, dst []byte) (int, error) {
	n, err := io.ReadFull(r, dst)
	switch err {
	case nil:
		var extra [1]byte
		m, err := r.Read(extra[:])
		for m == 0 && err == nil {
			m, err = r.Read(extra[:])
		}
		if m > 0 {
			return 0, fmt.Errorf("%s: decoded data exceeds %d bytes", name, len(dst))
		}
		if err != io.EOF {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		return n, nil
	case io.EOF, io.ErrUnexpectedEOF:
		return n, nil
	default:
		return 0, fmt.Errorf("%s: %w", name, err)
	}
}
