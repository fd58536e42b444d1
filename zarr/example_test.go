package zarr_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

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
	// Output:
	// shards: [1 1] inner chunks: [2 2] of [2 2]
	// [8 9 12 13]
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
