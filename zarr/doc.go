// Package zarr reads and writes Zarr v3 arrays chunk by chunk: the storage
// layer of cubego. Every intermediate and output array of a computation is
// a Zarr array, and the engine moves whole chunks between stores and
// kernels through this package.
//
// # Arrays
//
// CreateArray writes an array's zarr.json and OpenArray reads one; both
// return an *Array, safe for concurrent use. Chunks are addressed by their
// coordinates in the regular chunk grid (GridShape). A chunk in memory is
// always ChunkBytes bytes: the full chunk shape, elements little-endian in
// C order, whatever the stored byte order. Edge chunks are stored whole,
// their part outside the array being padding, as the Zarr spec says.
//
// ReadChunk decodes a chunk into a buffer the caller provides. A chunk
// whose key is missing reads as the fill value: writers (zarr-python
// included) leave out chunks that hold only the fill value. WriteChunk
// does the same unless SetWriteEmptyChunks(true) is called: a chunk whose
// elements all equal the fill value, bit for bit, is not stored and an
// existing key is deleted. Stored bytes that do not decode to exactly one
// chunk are an error wrapping ErrCorrupt that names the chunk key; the
// decoders never produce more than one chunk's bytes, so a small hostile
// value cannot expand into a large allocation.
//
// Memory: ReadChunk decodes into the caller's buffer. When the codec chain
// is plain little-endian "bytes" and the store implements ReaderInto, the
// stored bytes are read straight into it; otherwise the encoded bytes pass
// through one pooled scratch buffer per codec stage (sync.Pool, size
// classes a quarter of a power of two apart). WriteChunk likewise encodes
// into pooled scratch buffers.
//
// # What is supported
//
//   - Zarr v3 array metadata (zarr.json): all of zarr_format, node_type,
//     shape, data_type, chunk_grid "regular", chunk_key_encoding "default"
//     and "v2" with "/" or "." separators, fill_value, codecs, attributes,
//     dimension_names, and storage_transformers when empty. Extension
//     fields marked "must_understand": false are tolerated.
//   - Data types bool, int8–int64, uint8–uint64, float16, float32, float64,
//     complex64 and complex128. Others (string, datetime, ...) give
//     ErrNotImplemented naming the type.
//   - Fill values in every encoding of the spec: numbers (integers over the
//     full int64 and uint64 ranges, decoded exactly), "NaN", "Infinity",
//     "-Infinity", hex bit patterns ("0x7fc00000"), complex [re, im] pairs,
//     booleans. They are written so that they read back bit for bit: NaN
//     with numpy's default payload as "NaN", any other NaN as hex.
//   - Codecs "bytes" (endian "little" or "big"; may be omitted for 1-byte
//     types) and "zstd" (level, checksum). Other codecs give
//     ErrNotImplemented naming them. Codecs are small interfaces
//     (array→array, array→bytes, bytes→bytes) in a registry with one file
//     per codec, so gzip, blosc, crc32c, transpose and sharding, and Zarr
//     v2 metadata, can be added without changing the Array API.
//
// Metadata is checked when it is created or parsed: malformed metadata
// gives errors wrapping ErrInvalid, never a panic. ParseArrayMetadata and
// ArrayMetadata.MarshalJSON convert between ArrayMetadata and zarr.json.
// Numbers in Attributes read from zarr.json are json.Number values.
//
// # Stores
//
// A Store is Get, Set and Delete on "/"-separated keys; ReaderInto,
// Lister and RangeGetter are optional capabilities found by type
// assertion. A missing key is an error wrapping ErrNotFound. Keys are
// validated (ValidateKey): no empty, "." or ".." segments, no leading "/",
// no backslash. Set is atomic per key: a concurrent reader sees the old
// value or the new one, never part of one; since tasks are idempotent,
// two writers of the same chunk write the same bytes and either may win.
// The conformance suite in package storetest checks all of this.
//
// OpenStore opens a store by URL, on gocloud.dev/blob:
//
//   - "file:///abs/dir", or a plain path such as "out.zarr": a local
//     directory, created by the first write (opening a store does not
//     create it, and reading from a missing directory finds nothing). The
//     fileblob bucket is opened with Metadata: MetadataDontWrite, so no
//     ".attrs" side files appear beside the keys, and with NoTempDir, so
//     each value is written to a temporary file beside its key and renamed
//     into place: atomic, as rename is within one file system. Temporary
//     files of writes in flight are not listed; a crashed process may leave
//     some behind ("<key>.<hex>.tmp").
//   - "mem://name": an in-memory bucket shared by every store opened with
//     the same name in the process (it lives as long as the process);
//     "mem://" alone is a fresh private store; "mem://name/prefix" is
//     rooted at a prefix.
//
// NewMemoryStore returns a plain in-memory store, the fastest for tests.
// Close releases a store's bucket.
package zarr
