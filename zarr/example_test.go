package zarr_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"

	"github.com/cubego/cubego/zarr"
)

func Example() {
	ctx := context.Background()
	store := zarr.NewMemoryStore()

	// A 4×6 float64 array in 2×3 chunks, compressed with zstd, NaN where
	// nothing was written.
	a, err := zarr.CreateArray(ctx, store, "temperature", zarr.ArrayMetadata{
		Shape:      []int{4, 6},
		ChunkShape: []int{2, 3},
		DataType:   zarr.Float64,
		FillValue:  binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.NaN())),
		Codecs:     []zarr.Codec{zarr.BytesCodec(), zarr.ZstdCodec(0, false)},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("grid:", a.GridShape(), "chunk bytes:", a.ChunkBytes())

	// Write chunk (1, 0): rows 2-3, columns 0-2, in C order.
	chunk := make([]byte, a.ChunkBytes())
	for i := range 6 {
		binary.LittleEndian.PutUint64(chunk[8*i:], math.Float64bits(float64(i)/2))
	}
	if err := a.WriteChunk(ctx, []int{1, 0}, chunk); err != nil {
		panic(err)
	}
	fmt.Println("stored under:", a.ChunkKey([]int{1, 0}))

	// Read it back, and a chunk that was never written.
	for _, coords := range [][]int{{1, 0}, {0, 1}} {
		dst := make([]byte, a.ChunkBytes())
		if err := a.ReadChunk(ctx, coords, dst); err != nil {
			panic(err)
		}
		values := make([]float64, 6)
		for i := range values {
			values[i] = math.Float64frombits(binary.LittleEndian.Uint64(dst[8*i:]))
		}
		fmt.Println(coords, values)
	}
	// Output:
	// grid: [2 2] chunk bytes: 48
	// stored under: temperature/c/1/0
	// [1 0] [0 0.5 1 1.5 2 2.5]
	// [0 1] [NaN NaN NaN NaN NaN NaN]
}

// A sharded array: each chunk (shard) holds 2×2 inner chunks that can be
// read on their own.
func Example_sharding() {
	ctx := context.Background()
	store := zarr.NewMemoryStore()
	a, err := zarr.CreateArray(ctx, store, "x", zarr.ArrayMetadata{
		Shape:      []int{4, 4},
		ChunkShape: []int{4, 4}, // one shard
		DataType:   zarr.Int8,
		Codecs: []zarr.Codec{zarr.ShardingCodec([]int{2, 2},
			[]zarr.Codec{zarr.BytesCodec(), zarr.BloscCodec("lz4", 5, "shuffle", 0, 0)}, "end")},
	})
	if err != nil {
		panic(err)
	}
	shard := make([]byte, a.ChunkBytes())
	for i := range shard {
		shard[i] = byte(i)
	}
	if err := a.WriteChunk(ctx, []int{0, 0}, shard); err != nil { // the whole shard
		panic(err)
	}
	fmt.Println("shards:", a.GridShape(), "inner chunks:", a.InnerGridShape(), "of", a.InnerChunkShape())
	inner := make([]byte, a.InnerChunkBytes())
	if err := a.ReadInnerChunk(ctx, []int{1, 0}, inner); err != nil { // rows 2-3, columns 0-1
		panic(err)
	}
	fmt.Println(inner)
	// The same chunk through the view whose chunks are the inner chunks.
	view, err := a.ByInnerChunks()
	if err != nil {
		panic(err)
	}
	if err := view.ReadChunk(ctx, []int{1, 1}, inner); err != nil { // rows 2-3, columns 2-3
		panic(err)
	}
	fmt.Println("view grid:", view.GridShape(), inner)
	// Output:
	// shards: [1 1] inner chunks: [2 2] of [2 2]
	// [8 9 12 13]
	// view grid: [2 2] [10 11 14 15]
}

// A Zarr v2 array, as zarr-python 2 writes them by default.
func Example_v2() {
	ctx := context.Background()
	store := zarr.NewMemoryStore()
	meta := zarr.ArrayMetadata{
		ZarrFormat: 2,
		Shape:      []int{3},
		ChunkShape: []int{3},
		DataType:   zarr.Int16,
		Compressor: &zarr.Codec{Name: "blosc", Configuration: map[string]any{
			"cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}},
	}
	a, err := zarr.CreateArray(ctx, store, "y", meta)
	if err != nil {
		panic(err)
	}
	if err := a.WriteChunk(ctx, []int{0}, []byte{1, 0, 2, 0, 3, 0}); err != nil {
		panic(err)
	}
	fmt.Println(a.ChunkKey([]int{0}))
	zarray, _ := store.Get(ctx, "y/.zarray")
	m, _ := zarr.ParseArrayMetadataV2(zarray, nil)
	fmt.Println(m.ZarrFormat, m.DataType, m.Order, m.Endian, m.Compressor.Name)
	// Output:
	// y/0
	// 2 int16 C little blosc
}

// OpenStore opens a store by URL: a local directory (a path or file://),
// an in-memory store shared by name in the process (mem://), or an object
// store (s3://, and gs:// or azblob:// when built with the gcs or azure
// tag).
func ExampleOpenStore() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "cubego-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	for _, url := range []string{filepath.Join(dir, "a.zarr"), "file://" + filepath.Join(dir, "b.zarr"), "mem://scratch"} {
		store, err := zarr.OpenStore(ctx, url)
		if err != nil {
			log.Fatal(err)
		}
		a, err := zarr.CreateArray(ctx, store, "x", zarr.ArrayMetadata{
			Shape: []int{2}, ChunkShape: []int{2}, DataType: zarr.Int8, Codecs: []zarr.Codec{zarr.BytesCodec()}})
		if err != nil {
			log.Fatal(err)
		}
		if err := a.WriteChunk(ctx, []int{0}, []byte{1, 2}); err != nil {
			log.Fatal(err)
		}
		zarr.Close(store)
	}

	// Another store opened with the same mem:// name sees the same keys.
	store, err := zarr.OpenStore(ctx, "mem://scratch")
	if err != nil {
		log.Fatal(err)
	}
	defer zarr.Close(store)
	chunk, err := store.Get(ctx, "x/c/0")
	fmt.Println(chunk, err)
	// Output:
	// [1 2] <nil>
}

// OpenStoreWithOptions takes fsspec-style storage options, as Cubed and
// xarray do. Opening an S3 store sends no request; an unknown option is an
// error naming it.
func ExampleOpenStoreWithOptions() {
	ctx := context.Background()
	store, err := zarr.OpenStoreWithOptions(ctx, "s3://bucket/data.zarr", map[string]any{
		"endpoint_url": "http://127.0.0.1:9000", // an S3-compatible server (MinIO, moto, ...)
		"region":       "us-east-1",
		"key":          "access key id",
		"secret":       "secret access key",
	})
	if err != nil {
		log.Fatal(err)
	}
	zarr.Close(store)

	_, err = zarr.OpenStoreWithOptions(ctx, "s3://bucket/data.zarr", map[string]any{"endpoint": "http://127.0.0.1:9000"})
	fmt.Println(err)
	// Output:
	// zarr: invalid: storage options endpoint are not supported for s3:// stores
}

// OpenArray reads arrays that zarr-python wrote: this one is Zarr v2,
// int16 in 4×5 chunks, zstd-compressed (testdata/fixtures, written by
// zarr-python 3).
func ExampleOpenArray() {
	ctx := context.Background()
	store, err := zarr.OpenStore(ctx, "testdata/fixtures/v2_zstd_int16")
	if err != nil {
		log.Fatal(err)
	}
	defer zarr.Close(store)
	a, err := zarr.OpenArray(ctx, store, "") // the array is the store's root
	if err != nil {
		log.Fatal(err)
	}
	meta := a.Metadata()
	fmt.Println("format", meta.ZarrFormat, meta.DataType, meta.Shape, "chunks", meta.ChunkShape, meta.Compressor.Name)
	// Chunk (0, 0) holds rows 0-3 and columns 0-4; print its first row.
	chunk := make([]byte, a.ChunkBytes())
	if err := a.ReadChunk(ctx, []int{0, 0}, chunk); err != nil {
		log.Fatal(err)
	}
	row := make([]int16, 5)
	for j := range row {
		row[j] = int16(binary.LittleEndian.Uint16(chunk[2*j:]))
	}
	fmt.Println(row)
	// Output:
	// format 2 int16 [7 9] chunks [4 5] zstd
	// [-32768 -8395 21789 -3431 -21464]
}
