package blosc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
)

// ErrCorrupt is wrapped by every error about a buffer that is not valid
// Blosc, or that decodes to more than the caller allows.
var ErrCorrupt = errors.New("blosc: corrupt data")

// Shuffle is the filter applied to each block before compression.
type Shuffle int

// The shuffle filters, numbered as in c-blosc and numcodecs.
const (
	NoShuffle   Shuffle = 0
	ByteShuffle Shuffle = 1
	BitShuffle  Shuffle = 2
)

// String returns the Zarr v3 name of the shuffle: "noshuffle", "shuffle"
// or "bitshuffle".
func (s Shuffle) String() string {
	switch s {
	case NoShuffle:
		return "noshuffle"
	case ByteShuffle:
		return "shuffle"
	case BitShuffle:
		return "bitshuffle"
	}
	return fmt.Sprintf("Shuffle(%d)", int(s))
}

// Compressors lists the compressor names Compress accepts.
var Compressors = []string{"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"}

// Options says how Compress compresses.
type Options struct {
	// Compressor is one of Compressors.
	Compressor string
	// Level is the compression level, 0 (no compression: the buffer is
	// stored raw) to 9.
	Level int
	// Shuffle is applied to each block before compression.
	Shuffle Shuffle
	// TypeSize is the element size the shuffles work on, 1 to 255.
	TypeSize int
	// BlockSize is the size of a block in bytes; 0 chooses it from the
	// level, as c-blosc does. Other values are clamped to at least 128
	// and then treated as c-blosc treats them (enlarged when blocks are
	// split, cut to the data size, rounded down to a multiple of
	// TypeSize).
	BlockSize int
}

const (
	// HeaderSize is the size of the Blosc header.
	HeaderSize = 16
	// MaxBufferSize is the largest buffer Blosc 1 can hold.
	MaxBufferSize = math.MaxInt32 - HeaderSize

	formatVersion   = 2
	codecVersion    = 1
	minBufferSize   = 128 // smaller buffers are stored raw
	maxSplits       = 16  // larger type sizes are never split
	l1              = 32 << 10
	maxBlockSizeCap = math.MaxInt32

	flagShuffle    = 0x1
	flagMemcpyed   = 0x2
	flagBitShuffle = 0x4
	flagNoSplit    = 0x10
)

// compressor formats, bits 5-7 of the flags.
const (
	formatBloscLZ = 0
	formatLZ4     = 1
	formatSnappy  = 2
	formatZlib    = 3
	formatZstd    = 4
)

var formatNames = [...]string{"blosclz", "lz4", "snappy", "zlib", "zstd"}

// CompressBound returns the largest size Compress can produce for n bytes.
func CompressBound(n int) int { return n + HeaderSize }

// Header is the decoded header of a Blosc buffer.
type Header struct {
	Version   uint8 // format version, 2 for c-blosc 1.x
	VersionLZ uint8 // compressor format version
	Flags     uint8
	TypeSize  int
	NBytes    int // decoded size
	BlockSize int
	CBytes    int // size of the whole Blosc buffer, header included
}

// ReadHeader decodes and checks the header at the start of src; src must
// hold the whole buffer (CBytes bytes).
func ReadHeader(src []byte) (Header, error) {
	if len(src) < HeaderSize {
		return Header{}, fmt.Errorf("%w: %d bytes, shorter than the %d-byte header", ErrCorrupt, len(src), HeaderSize)
	}
	h := Header{
		Version:   src[0],
		VersionLZ: src[1],
		Flags:     src[2],
		TypeSize:  int(src[3]),
		NBytes:    int(binary.LittleEndian.Uint32(src[4:])),
		BlockSize: int(binary.LittleEndian.Uint32(src[8:])),
		CBytes:    int(binary.LittleEndian.Uint32(src[12:])),
	}
	switch {
	case h.Version == 0 || h.Version > formatVersion:
		return h, fmt.Errorf("%w: format version %d (Blosc 1 writes 1 or 2)", ErrCorrupt, h.Version)
	case h.CBytes != len(src):
		return h, fmt.Errorf("%w: header says %d bytes, buffer has %d", ErrCorrupt, h.CBytes, len(src))
	case h.NBytes > MaxBufferSize:
		return h, fmt.Errorf("%w: decoded size %d too large", ErrCorrupt, h.NBytes)
	case h.TypeSize == 0:
		return h, fmt.Errorf("%w: type size 0", ErrCorrupt)
	}
	if h.Flags&flagMemcpyed != 0 {
		if h.CBytes != h.NBytes+HeaderSize {
			return h, fmt.Errorf("%w: memcpyed buffer of %d bytes holds %d, want %d", ErrCorrupt, h.CBytes-HeaderSize, h.CBytes-HeaderSize, h.NBytes)
		}
		return h, nil
	}
	if h.NBytes > 0 && h.BlockSize <= 0 {
		return h, fmt.Errorf("%w: block size %d", ErrCorrupt, h.BlockSize)
	}
	if h.Flags>>5 > formatZstd {
		return h, fmt.Errorf("%w: unknown compressor format %d", ErrCorrupt, h.Flags>>5)
	}
	return h, nil
}

// Compressor returns the name of the compressor format ("lz4" stands for
// lz4 and lz4hc, which share one).
func (h Header) Compressor() string {
	f := int(h.Flags >> 5)
	if f < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("format %d", f)
}

// Shuffle returns the shuffle the buffer was written with.
func (h Header) Shuffle() Shuffle {
	switch {
	case h.Flags&flagShuffle != 0:
		return ByteShuffle
	case h.Flags&flagBitShuffle != 0:
		return BitShuffle
	}
	return NoShuffle
}

// Memcpyed reports whether the data is stored raw after the header.
func (h Header) Memcpyed() bool { return h.Flags&flagMemcpyed != 0 }

// Split reports whether full blocks are stored as TypeSize streams.
func (h Header) Split() bool { return h.Flags&flagNoSplit == 0 }

// nblocks returns the number of blocks and the size of the last one.
func (h Header) nblocks() (n, last int) {
	if h.NBytes == 0 {
		return 0, 0
	}
	n = h.NBytes / h.BlockSize
	last = h.BlockSize
	if r := h.NBytes % h.BlockSize; r != 0 {
		n++
		last = r
	}
	return n, last
}

// splitBlock reports whether c-blosc 1.21 splits blocks of blockSize
// bytes: every compressor but zstd splits when the type is at most 16
// bytes and a block holds at least 128 elements.
func splitBlock(compressor string, typeSize, blockSize int) bool {
	return compressor != "zstd" && typeSize <= maxSplits && blockSize/typeSize >= minBufferSize
}

// highRatio reports whether c-blosc treats a compressor as one that needs
// larger blocks.
func highRatio(compressor string) bool {
	return compressor == "lz4hc" || compressor == "zlib" || compressor == "zstd"
}

// computeBlockSize chooses the block size as c-blosc 1.21's
// compute_blocksize does.
func computeBlockSize(o Options, nbytes int) int {
	ts := o.TypeSize
	if nbytes < ts {
		return 1
	}
	bs := nbytes
	switch {
	case o.BlockSize != 0:
		bs = min(max(o.BlockSize, minBufferSize), maxBlockSizeCap)
	case nbytes >= l1:
		bs = l1
		if highRatio(o.Compressor) {
			bs *= 2
		}
		switch o.Level {
		case 0:
			bs /= 4
		case 1:
			bs /= 2
		case 2:
		case 3:
			bs *= 2
		case 4, 5:
			bs *= 4
		case 6, 7, 8:
			bs *= 8
		case 9:
			bs *= 8
			if highRatio(o.Compressor) {
				bs *= 2
			}
		}
	}
	if o.Level > 0 && splitBlock(o.Compressor, ts, bs) {
		bs = min(bs, 1<<18) * ts
		bs = min(max(bs, 1<<16), 1<<20)
	}
	bs = min(bs, nbytes)
	if bs > ts {
		bs = bs / ts * ts
	}
	return bs
}

func (o Options) check(n int) error {
	if !slices.Contains(Compressors, o.Compressor) {
		return fmt.Errorf("blosc: unknown compressor %q (want one of %v)", o.Compressor, Compressors)
	}
	if o.Level < 0 || o.Level > 9 {
		return fmt.Errorf("blosc: compression level %d outside [0, 9]", o.Level)
	}
	if o.Shuffle < NoShuffle || o.Shuffle > BitShuffle {
		return fmt.Errorf("blosc: unknown shuffle %d", o.Shuffle)
	}
	if o.TypeSize < 1 || o.TypeSize > 255 {
		return fmt.Errorf("blosc: type size %d outside [1, 255]", o.TypeSize)
	}
	if o.BlockSize < 0 {
		return fmt.Errorf("blosc: negative block size %d", o.BlockSize)
	}
	if n > MaxBufferSize {
		return fmt.Errorf("blosc: %d bytes exceed the Blosc 1 limit of %d", n, MaxBufferSize)
	}
	return nil
}

func compressorFormat(name string) uint8 {
	switch name {
	case "lz4", "lz4hc":
		return formatLZ4
	case "snappy":
		return formatSnappy
	case "zlib":
		return formatZlib
	case "zstd":
		return formatZstd
	}
	return formatBloscLZ
}

var scratchPool sync.Pool

func getScratch(n int) *[]byte {
	if b, ok := scratchPool.Get().(*[]byte); ok && cap(*b) >= n {
		*b = (*b)[:n]
		return b
	}
	b := make([]byte, n)
	return &b
}

func putScratch(b *[]byte) { scratchPool.Put(b) }

// Compress appends the Blosc encoding of src to dst. The result is at most
// CompressBound(len(src)) bytes longer than dst.
func Compress(dst, src []byte, o Options) ([]byte, error) {
	if err := o.check(len(src)); err != nil {
		return nil, err
	}
	nbytes := len(src)
	bs := computeBlockSize(o, nbytes)
	flags := compressorFormat(o.Compressor) << 5
	switch o.Shuffle {
	case ByteShuffle:
		flags |= flagShuffle
	case BitShuffle:
		flags |= flagBitShuffle
	}
	split := splitBlock(o.Compressor, o.TypeSize, bs)
	if !split {
		flags |= flagNoSplit
	}
	start := len(dst)
	dst = slices.Grow(dst, CompressBound(nbytes))
	dst = dst[:start+HeaderSize]
	hdr := dst[start:]
	hdr[0] = formatVersion
	hdr[1] = codecVersion
	hdr[3] = byte(o.TypeSize)
	binary.LittleEndian.PutUint32(hdr[4:], uint32(nbytes))
	binary.LittleEndian.PutUint32(hdr[8:], uint32(bs))

	memcpy := o.Level == 0 || nbytes < minBufferSize
	if !memcpy {
		var ok bool
		dst, ok = compressBlocks(dst, src, o, bs, split, start+HeaderSize+nbytes)
		if !ok {
			memcpy = true
			dst = dst[:start+HeaderSize]
		}
	}
	if memcpy {
		flags |= flagMemcpyed
		dst = append(dst, src...)
	}
	hdr = dst[start:]
	hdr[2] = flags
	binary.LittleEndian.PutUint32(hdr[12:], uint32(len(dst)-start))
	return dst, nil
}

// compressBlocks appends the block offsets and blocks; ok is false when
// the result would exceed limit (the whole is then better stored raw).
func compressBlocks(dst, src []byte, o Options, bs int, split bool, limit int) ([]byte, bool) {
	h := Header{NBytes: len(src), BlockSize: bs}
	nblocks, lastSize := h.nblocks()
	base := len(dst) - HeaderSize
	offsets := len(dst)
	if offsets+4*nblocks > limit {
		return dst, false
	}
	dst = dst[:offsets+4*nblocks]
	tmp := getScratch(2 * bs)
	defer putScratch(tmp)
	shuffled, work := (*tmp)[:bs], (*tmp)[bs:2*bs]
	enc := newEncoder(o.Compressor, o.Level)
	defer enc.release()
	for b := range nblocks {
		size := bs
		if b == nblocks-1 {
			size = lastSize
		}
		block := src[b*bs : b*bs+size]
		binary.LittleEndian.PutUint32(dst[offsets+4*b:], uint32(len(dst)-base))
		data := block
		switch o.Shuffle {
		case ByteShuffle:
			shuffle(shuffled[:size], block, o.TypeSize)
			data = shuffled[:size]
		case BitShuffle:
			bitShuffle(shuffled[:size], block, o.TypeSize, work[:size])
			data = shuffled[:size]
		}
		nsplits := 1
		if split && size == bs {
			nsplits = o.TypeSize
		}
		sub := size / nsplits
		for s := range nsplits {
			part := data[s*sub : (s+1)*sub]
			at := len(dst)
			maxOut := min(sub, limit-(at+4))
			if maxOut <= 0 {
				return dst, false
			}
			dst = dst[:at+4]
			out, n := enc.compress(dst[at+4:at+4:at+4+maxOut], part)
			if n <= 0 || n >= sub {
				// Not compressible: store the stream raw, if it fits.
				if at+4+sub > limit {
					return dst, false
				}
				dst = append(dst, part...)
				n = sub
			} else {
				dst = dst[:at+4+n]
				if &out[0] != &dst[at+4] {
					copy(dst[at+4:], out[:n])
				}
			}
			binary.LittleEndian.PutUint32(dst[at:], uint32(n))
		}
	}
	return dst, true
}

// Decompress decodes the Blosc buffer src into dst and returns the decoded
// size. A buffer that decodes to more than len(dst) bytes is refused
// before anything is decoded.
func Decompress(dst, src []byte) (int, error) {
	h, err := ReadHeader(src)
	if err != nil {
		return 0, err
	}
	if h.NBytes > len(dst) {
		return 0, fmt.Errorf("%w: decoded size %d exceeds the %d-byte buffer", ErrCorrupt, h.NBytes, len(dst))
	}
	dst = dst[:h.NBytes]
	if h.Memcpyed() {
		copy(dst, src[HeaderSize:])
		return h.NBytes, nil
	}
	if h.Flags&flagShuffle != 0 && h.Flags&flagBitShuffle != 0 {
		return 0, fmt.Errorf("%w: both shuffles set", ErrCorrupt)
	}
	nblocks, lastSize := h.nblocks()
	if HeaderSize+4*nblocks > len(src) {
		return 0, fmt.Errorf("%w: %d block offsets do not fit in %d bytes", ErrCorrupt, nblocks, len(src))
	}
	dec := decoder(h.Compressor())
	shuffled := h.Shuffle() != NoShuffle
	// Blocks are never larger than the data (c-blosc clamps them), but a
	// header may say otherwise: scratch space is bounded by the data.
	half := min(h.BlockSize, h.NBytes)
	var tmp []byte
	if shuffled {
		t := getScratch(2 * half)
		defer putScratch(t)
		tmp = *t
	}
	for b := range nblocks {
		size := h.BlockSize
		if b == nblocks-1 {
			size = lastSize
		}
		start := int(binary.LittleEndian.Uint32(src[HeaderSize+4*b:]))
		if start < HeaderSize+4*nblocks || start > len(src) {
			return 0, fmt.Errorf("%w: block %d starts at %d, outside the buffer", ErrCorrupt, b, start)
		}
		out := dst[b*h.BlockSize : b*h.BlockSize+size]
		target := out
		if shuffled {
			target = tmp[:size]
		}
		nsplits := 1
		if h.Split() && size == h.BlockSize && h.TypeSize <= maxSplits && size%h.TypeSize == 0 {
			nsplits = h.TypeSize
		}
		sub := size / nsplits
		in := src[start:]
		for s := range nsplits {
			if len(in) < 4 {
				return 0, fmt.Errorf("%w: block %d stream %d: truncated size", ErrCorrupt, b, s)
			}
			c := int(int32(binary.LittleEndian.Uint32(in)))
			in = in[4:]
			if c < 0 || c > len(in) {
				return 0, fmt.Errorf("%w: block %d stream %d: compressed size %d outside the buffer", ErrCorrupt, b, s, c)
			}
			part := target[s*sub : (s+1)*sub]
			if c == sub {
				copy(part, in[:c])
			} else if err := dec(part, in[:c]); err != nil {
				return 0, fmt.Errorf("%w: block %d stream %d: %s: %v", ErrCorrupt, b, s, h.Compressor(), err)
			}
			in = in[c:]
		}
		switch h.Shuffle() {
		case ByteShuffle:
			unshuffle(out, target, h.TypeSize)
		case BitShuffle:
			bitUnshuffle(out, target, h.TypeSize, tmp[half:half+size])
		}
	}
	return h.NBytes, nil
}
