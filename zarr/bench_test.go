package zarr_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/cubego/cubego/zarr"
)

// Benchmarks of reading a whole chunked array and copying it to another
// array, on a local file store, for the codec chains the issue compares
// with zarr-python (benchmarks/ runs both on a 2-4 GB array; here the
// array is 64 MiB of float64 in 2 MiB chunks, 512 KiB inner chunks when
// sharded). MB/s is decoded bytes.
// Chunks are read (and written) by GOMAXPROCS goroutines, as the engine
// does.
//
//	go test ./zarr -run XXX -bench 'ReadAll|Copy' -benchtime 3x

var benchChains = []struct {
	name   string
	codecs []zarr.Codec
}{
	{"uncompressed", []zarr.Codec{zarr.BytesCodec()}},
	{"zstd", []zarr.Codec{zarr.BytesCodec(), zarr.ZstdCodec(0, false)}},
	{"blosc-lz4-shuffle", []zarr.Codec{zarr.BytesCodec(), zarr.BloscCodec("lz4", 5, "shuffle", 0, 0)}},
	{"sharded", []zarr.Codec{zarr.ShardingCodec([]int{128, 128}, []zarr.Codec{zarr.BytesCodec(), zarr.ZstdCodec(0, false)}, "end")}},
}

const (
	benchSide  = 2048
	benchRows  = 4096 // 4096×2048 float64: 64 MiB
	benchChunk = 512  // 512² float64: 2 MiB chunks
)

// benchArray writes a benchRows×benchSide float64 array of smooth values
// (compressible, like real data) and returns it.
func benchArray(b *testing.B, dir, name string, codecs []zarr.Codec) *zarr.Array {
	b.Helper()
	ctx := context.Background()
	s, err := zarr.OpenStore(ctx, filepath.Join(dir, name+".zarr"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { zarr.Close(s) })
	a, err := zarr.CreateArray(ctx, s, "", zarr.ArrayMetadata{
		Shape: []int{benchRows, benchSide}, ChunkShape: []int{benchChunk, benchChunk}, DataType: zarr.Float64, Codecs: codecs,
	})
	if err != nil {
		b.Fatal(err)
	}
	chunk := make([]byte, a.ChunkBytes())
	forEachChunk(a.GridShape(), func(coords []int) {
		for i := 0; i < len(chunk); i += 8 {
			v := math.Sin(float64(i/8+coords[0]*7+coords[1]*13) / 300)
			bits := math.Float64bits(math.Round(v*1e4) / 1e4)
			for k := range 8 {
				chunk[i+k] = byte(bits >> (8 * k))
			}
		}
		if err := a.WriteChunk(ctx, coords, chunk); err != nil {
			b.Fatal(err)
		}
	})
	return a
}

// parallelChunks calls f for every chunk from GOMAXPROCS goroutines, each
// with its own buffer.
func parallelChunks(b *testing.B, a *zarr.Array, f func(coords []int, buf []byte) error) {
	var all [][]int
	forEachChunk(a.GridShape(), func(c []int) { all = append(all, c) })
	work := make(chan []int)
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			buf := make([]byte, a.ChunkBytes())
			for c := range work {
				if err := f(c, buf); err != nil {
					once.Do(func() { firstErr = err })
				}
			}
		})
	}
	for _, c := range all {
		work <- c
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
}

func BenchmarkReadAll(b *testing.B) {
	ctx := context.Background()
	for _, bc := range benchChains {
		b.Run(bc.name, func(b *testing.B) {
			a := benchArray(b, b.TempDir(), bc.name, bc.codecs)
			b.SetBytes(int64(benchRows * benchSide * 8))
			b.ResetTimer()
			for range b.N {
				parallelChunks(b, a, func(c []int, buf []byte) error { return a.ReadChunk(ctx, c, buf) })
			}
		})
	}
}

func BenchmarkCopy(b *testing.B) {
	ctx := context.Background()
	for _, bc := range benchChains {
		b.Run(bc.name, func(b *testing.B) {
			dir := b.TempDir()
			src := benchArray(b, dir, "src", bc.codecs)
			b.SetBytes(int64(benchRows * benchSide * 8))
			b.ResetTimer()
			for i := range b.N {
				s, err := zarr.OpenStore(ctx, filepath.Join(dir, fmt.Sprintf("dst%d.zarr", i)))
				if err != nil {
					b.Fatal(err)
				}
				dst, err := zarr.CreateArray(ctx, s, "", src.Metadata())
				if err != nil {
					b.Fatal(err)
				}
				parallelChunks(b, src, func(c []int, buf []byte) error {
					if err := src.ReadChunk(ctx, c, buf); err != nil {
						return err
					}
					return dst.WriteChunk(ctx, c, buf)
				})
				zarr.Close(s)
			}
		})
	}
}
