// Package blosc reads and writes the Blosc version 1 container format, as
// c-blosc 1.x (and so numcodecs and zarr-python) writes it, in pure Go.
//
// A Blosc buffer is a 16-byte header, then either the raw data (the
// "memcpyed" flag) or a table of block offsets followed by the blocks. The
// data is cut into blocks of BlockSize bytes (the last one may be shorter);
// each block is shuffled, then compressed either whole or, when "split",
// as TypeSize streams of BlockSize/TypeSize bytes. Every stream is preceded
// by its compressed size; a stream whose compressed size equals its
// decoded size is stored raw.
//
//	header   version (2), compressor format version (1), flags, typesize,
//	         nbytes (uint32 LE), blocksize (uint32 LE), cbytes (uint32 LE)
//	flags    bit 0 byte shuffle, bit 1 memcpyed, bit 2 bit shuffle,
//	         bit 4 "do not split", bits 5-7 compressor format
//	         (0 blosclz, 1 lz4 and lz4hc, 2 snappy, 3 zlib, 4 zstd)
//
// Compress writes what c-blosc 1.21 writes for the same options: the same
// automatic block size, the same decision to split (every compressor but
// zstd, when TypeSize ≤ 16 and a block holds at least 128 elements), raw
// streams where compression does not pay, and a memcpyed buffer when the
// whole does not fit in the input size plus the header. The compressed
// streams themselves come from Go implementations (pierrec/lz4 for lz4
// and lz4hc, klauspost/compress for zstd, zlib and snappy), so the bytes
// differ from c-blosc's, but any Blosc 1 reader decodes them.
//
// Decompress reads every compressor, blosclz included, and both shuffles.
// It checks the header against the input before decoding anything: the
// decoded size must fit the caller's buffer (so a small hostile buffer
// cannot expand into a large allocation), every block offset and stream
// size must lie inside the input, and every stream must decode to exactly
// its size. Errors wrap ErrCorrupt and start with "blosc:".
//
// The encoder of the blosclz compressor is a simple greedy LZ77 writer of
// the blosclz stream format: it compresses less than c-blosc's, and its
// output is valid blosclz.
package blosc
