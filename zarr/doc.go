// Package zarr reads and writes Zarr v3 and v2 arrays chunk by chunk: the
// storage layer of cubego. Every intermediate and output array of a
// computation is a Zarr array, and the engine moves whole chunks between
// stores and kernels through this package. docs/zarr.md has the status
// table of formats and codecs.
//
// # Arrays
//
// CreateArray writes an array's metadata (zarr.json, or .zarray and
// .zattrs when ArrayMetadata.ZarrFormat is 2) and OpenArray reads one,
// trying v3 first as zarr-python does; both return an *Array, safe for
// concurrent use. Chunks are addressed by their coordinates in the regular
// chunk grid (GridShape). A chunk in memory is always ChunkBytes bytes:
// the full chunk shape, elements little-endian in C order, whatever the
// stored byte order or element order. Edge chunks are stored whole, their
// part outside the array being padding, as the Zarr spec says.
//
// ReadChunk decodes a chunk into a buffer the caller provides. A chunk
// whose key is missing reads as the fill value: writers (zarr-python
// included) leave out chunks that hold only the fill value. WriteChunk
// does the same unless SetWriteEmptyChunks(true) is called: a chunk whose
// elements all equal the fill value, bit for bit, is not stored and an
// existing key is deleted. Stored bytes that do not decode to exactly one
// chunk are an error wrapping ErrCorrupt that names the chunk key and the
// codec; the decoders never produce more than one chunk's bytes, so a
// small hostile value cannot expand into a large allocation.
//
// Sharded arrays ("sharding_indexed"): ReadChunk and WriteChunk address
// the array's chunks, which are whole shards; WriteChunk writes a shard
// whole. ReadInnerChunk reads one inner chunk (InnerChunkShape,
// InnerGridShape, InnerChunkBytes) with ranged reads of the shard's index
// and of the chunk (RangeGetter, SuffixGetter); ByInnerChunks returns a
// read-only view whose chunks are the inner chunks. For other arrays an
// inner chunk is a chunk.
//
// Memory: ReadChunk decodes into the caller's buffer. When the codec chain
// is plain little-endian "bytes" and the store implements ReaderInto, the
// stored bytes are read straight into it; otherwise the encoded bytes pass
// through one pooled scratch buffer per codec stage (sync.Pool, size
// classes a quarter of a power of two apart). WriteChunk likewise encodes
// into pooled scratch buffers.
//
// # Formats, data types and codecs
//
//   - Zarr v3 array metadata (zarr.json): all of zarr_format, node_type,
//     shape, data_type, chunk_grid "regular", chunk_key_encoding "default"
//     and "v2" with "/" or "." separators, fill_value, codecs, attributes,
//     dimension_names, and storage_transformers when empty. Extension
//     fields marked "must_understand": false are tolerated.
//   - Zarr v2 array metadata (.zarray, .zattrs): numpy typestr data types
//     of either byte order, order "C" and "F", dimension_separator "." and
//     "/", fill_value in every form zarr-python writes. In ArrayMetadata a
//     v2 array has Order, Endian, Filters and Compressor instead of Codecs.
//   - Data types bool, int8–int64, uint8–uint64, float16, float32, float64,
//     complex64 and complex128. Others (string, datetime, ...) give
//     ErrNotImplemented naming the type.
//   - Fill values in every encoding of the spec: numbers (integers over the
//     full int64 and uint64 ranges, decoded exactly), "NaN", "Infinity",
//     "-Infinity", hex bit patterns ("0x7fc00000"), complex [re, im] pairs,
//     booleans. They are written so that they read back bit for bit: NaN
//     with numpy's default payload as "NaN", any other NaN as hex (v2: all
//     NaNs as "NaN").
//   - v3 codecs: "bytes" (little or big endian), "transpose",
//     "sharding_indexed" (index at the start or end, nested), "gzip",
//     "zstd", "blosc" (package zarr/blosc, pure Go) and "crc32c"; the
//     constructors BytesCodec, TransposeCodec, ShardingCodec, GzipCodec,
//     ZstdCodec, BloscCodec and Crc32cCodec build their entries. v2
//     compressors (numcodecs ids) "blosc", "zlib", "gzip", "zstd", "lz4";
//     filters "delta" and "astype". Other codecs give ErrNotImplemented
//     naming them. Codecs are three small interfaces (array→array,
//     array→bytes, bytes→bytes) in a registry with one file per codec;
//     each passes the conformance suite of package codectest.
//
// Metadata is checked when it is created or parsed: malformed metadata
// gives errors wrapping ErrInvalid, never a panic. ParseArrayMetadata and
// ParseArrayMetadataV2 parse documents; ArrayMetadata.Documents (and
// MarshalJSON) write them. Numbers in Attributes read from JSON are
// json.Number values.
//
// # Groups
//
// CreateGroup and OpenGroup write and read groups of either format.
// Group.Members lists the arrays and groups in a group, from its
// consolidated metadata when it has some (zarr-python's
// consolidated_metadata, or v2's .zmetadata), else by listing the store;
// Group.OpenArray opens a member from the consolidated metadata without
// reading the store. Writing consolidated metadata is not supported.
//
// # Stores
//
// A Store is Get, Set and Delete on "/"-separated keys; ReaderInto,
// Lister, DirLister, RangeGetter and SuffixGetter are optional
// capabilities found by type assertion. A missing key is an error wrapping
// ErrNotFound. Keys are validated (ValidateKey): no empty, "." or ".."
// segments, no leading "/", no backslash. Set is atomic per key: a
// concurrent reader sees the old value or the new one, never part of one;
// since tasks are idempotent, two writers of the same chunk write the same
// bytes and either may win. The conformance suite in package storetest
// checks all of this.
//
// OpenStore opens a store by URL (object stores on gocloud.dev/blob), and
// OpenStoreWithOptions with fsspec-style storage options:
//
//   - "file:///abs/dir", or a plain path such as "out.zarr": a local
//     directory, created by the first write (opening a store does not
//     create it, and reading from a missing directory finds nothing). This
//     store uses the operating system directly rather than a blob bucket
//     (several times faster on local disk): each value is written to a
//     temporary file beside its key (".cubego-*.tmp") and renamed into
//     place, which is atomic within one file system; no side files appear
//     beside the keys. Temporary files of writes in flight are not listed;
//     a crashed process may leave some behind.
//   - "mem://name": an in-memory bucket shared by every store opened with
//     the same name in the process (it lives as long as the process);
//     "mem://" alone is a fresh private store; "mem://name/prefix" is
//     rooted at a prefix.
//   - "s3://bucket/prefix": S3 or an S3-compatible server, the client built
//     from the options (endpoint_url, region, key/secret/token, anon,
//     use_path_style), requests checksummed only when required.
//   - "gs://bucket/prefix" and "azblob://container/prefix" with the gcs
//     and azure build tags; the default build does not link them.
//
// On a local store only a regular file holds a value: a directory, named
// pipe, socket or device at a key is an error naming the key (wrapping
// ErrIO), and files are opened non-blocking, so no read can hang on a
// FIFO. Every request of an object store has a timeout on progress and is
// retried after transient failures with exponential backoff and jitter
// (storage options "timeout", "connect_timeout", "retries"; see
// OpenStoreWithOptions); cancelling the context stops it at once.
// Storage failures wrap ErrIO, or its kinds ErrTimeout, ErrUnavailable
// and ErrPermission.
//
// NewMemoryStore returns a plain in-memory store, the fastest for tests.
// Close releases a store's bucket.
package zarr
