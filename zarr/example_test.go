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
