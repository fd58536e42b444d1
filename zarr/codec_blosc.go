package zarr

import (
	"fmt"
	"slices"

	"github.com/cubego/cubego/zarr/blosc"
)

// The "blosc" codec (zarr-specs codecs/blosc, and numcodecs' Blosc for
// Zarr v2) stores bytes in a Blosc 1 container; see package zarr/blosc.
// Decoding checks the container's decoded size against the chunk's before
// decoding anything.

func init() { registerCodec("blosc", newBloscCodec) }

// BloscCodec returns the "blosc" bytes→bytes codec: cname is "lz4",
// "lz4hc", "blosclz", "zstd", "zlib" or "snappy", clevel 0-9, shuffle
// "noshuffle", "shuffle" or "bitshuffle"; typesize 0 means the size of the
// array's elements, blocksize 0 an automatic block size.
func BloscCodec(cname string, clevel int, shuffle string, typesize, blocksize int) Codec {
	c := Codec{Name: "blosc", Configuration: map[string]any{
		"cname": cname, "clevel": clevel, "shuffle": shuffle, "blocksize": blocksize,
	}}
	if typesize > 0 {
		c.Configuration["typesize"] = typesize
	}
	return c
}

type bloscCodec struct {
	opts blosc.Options
	// v2 is set for numcodecs' form (Zarr v2): shuffle as a number, with
	// -1 meaning bit shuffle for 1-byte elements and byte shuffle otherwise.
	v2         bool
	v2Shuffle  int
	v2TypeSize bool // numcodecs' config named a typesize
}

var bloscShuffles = map[string]blosc.Shuffle{
	"noshuffle": blosc.NoShuffle, "shuffle": blosc.ByteShuffle, "bitshuffle": blosc.BitShuffle,
}

func newBloscCodec(config map[string]any, spec chunkSpec) (codec, error) {
	return newBloscCodecOf(config, spec, false)
}

func newBloscCodecOf(config map[string]any, spec chunkSpec, v2 bool) (*bloscCodec, error) {
	if err := checkConfigKeys("blosc", config, "cname", "clevel", "shuffle", "typesize", "blocksize"); err != nil {
		return nil, err
	}
	c := &bloscCodec{v2: v2}
	cname, ok, err := configString("blosc", config, "cname")
	if err != nil {
		return nil, err
	}
	if !ok {
		cname = "lz4"
	}
	if !slices.Contains(blosc.Compressors, cname) {
		return nil, fmt.Errorf("%w: codec \"blosc\": compressor %q (want one of %v)", ErrInvalid, cname, blosc.Compressors)
	}
	clevel, ok, err := configInt("blosc", config, "clevel")
	if err != nil {
		return nil, err
	}
	if !ok {
		clevel = 5
	}
	if clevel < 0 || clevel > 9 {
		return nil, fmt.Errorf("%w: codec \"blosc\": clevel %d outside [0, 9]", ErrInvalid, clevel)
	}
	typesize, hasTypesize, err := configInt("blosc", config, "typesize")
	if err != nil {
		return nil, err
	}
	if !hasTypesize || typesize == 0 {
		typesize = max(spec.dataType.Size(), 1)
	}
	c.v2TypeSize = hasTypesize
	if typesize < 1 || typesize > 255 {
		return nil, fmt.Errorf("%w: codec \"blosc\": typesize %d outside [1, 255]", ErrInvalid, typesize)
	}
	blocksize, _, err := configInt("blosc", config, "blocksize")
	if err != nil {
		return nil, err
	}
	if blocksize < 0 {
		return nil, fmt.Errorf("%w: codec \"blosc\": negative blocksize %d", ErrInvalid, blocksize)
	}
	var shuffle blosc.Shuffle
	if v2 {
		n, ok, err := configInt("blosc", config, "shuffle")
		if err != nil {
			return nil, err
		}
		if !ok {
			n = 1
		}
		c.v2Shuffle = n
		switch n {
		case -1:
			shuffle = blosc.ByteShuffle
			if typesize == 1 {
				shuffle = blosc.BitShuffle
			}
		case 0, 1, 2:
			shuffle = blosc.Shuffle(n)
		default:
			return nil, fmt.Errorf("%w: codec \"blosc\": shuffle %d (want -1, 0, 1 or 2)", ErrInvalid, n)
		}
	} else {
		s, ok, err := configString("blosc", config, "shuffle")
		if err != nil {
			return nil, err
		}
		if !ok {
			s = "noshuffle"
		}
		var known bool
		if shuffle, known = bloscShuffles[s]; !known {
			return nil, fmt.Errorf("%w: codec \"blosc\": shuffle %q (want noshuffle, shuffle or bitshuffle)", ErrInvalid, s)
		}
	}
	c.opts = blosc.Options{Compressor: cname, Level: clevel, Shuffle: shuffle, TypeSize: typesize, BlockSize: blocksize}
	return c, nil
}

func (c *bloscCodec) metadata() Codec {
	conf := map[string]any{
		"cname": c.opts.Compressor, "clevel": c.opts.Level, "blocksize": c.opts.BlockSize,
	}
	if c.v2 {
		conf["shuffle"] = c.v2Shuffle
		if c.v2TypeSize {
			conf["typesize"] = c.opts.TypeSize
		}
	} else {
		conf["shuffle"] = c.opts.Shuffle.String()
		conf["typesize"] = c.opts.TypeSize
	}
	return Codec{Name: "blosc", Configuration: conf}
}

func (c *bloscCodec) encodedSizeBound(n int) int { return blosc.CompressBound(n) }

func (c *bloscCodec) encode(dst, src []byte) ([]byte, error) {
	out, err := blosc.Compress(dst, src, c.opts)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *bloscCodec) decode(dst, src []byte) (int, error) {
	return blosc.Decompress(dst, src)
}
