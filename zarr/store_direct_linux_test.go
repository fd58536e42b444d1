//go:build linux

package zarr_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/cubego/cubego/zarr"
)

// ReadChunkDirect reads raw chunks with O_DIRECT, whatever their size
// (pieces of 8 MiB read concurrently, and a tail that is not a multiple of
// the file system's block), with the bytes ReadChunk gives; it declines
// compressed chunks, missing chunks, buffers of another size and buffers
// the file system cannot read into directly.
func TestReadChunkDirect(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	s, err := zarr.OpenStore(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// 9,000,003 bytes: one full 8 MiB piece, then a piece ending on a
	// 512-byte boundary, then a 3-byte tail.
	a, err := zarr.CreateArray(ctx, s, "a", zarr.ArrayMetadata{Shape: []int{2 * 9000003}, ChunkShape: []int{9000003}, DataType: zarr.Uint8})
	if err != nil {
		t.Fatal(err)
	}
	want := randomChunk(rng, zarr.Uint8, a.ChunkBytes())
	if err := a.WriteChunk(ctx, []int{1}, want); err != nil {
		t.Fatal(err)
	}
	// A page-aligned buffer, as the engine's allocator gives.
	mem, err := syscall.Mmap(-1, 0, a.ChunkBytes()+4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	got := mem[:a.ChunkBytes()]
	ok, err := a.ReadChunkDirect(ctx, []int{1}, got)
	if err != nil || !ok {
		t.Fatalf("ReadChunkDirect = %v, %v; want a direct read", ok, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("direct read differs from the written chunk")
	}
	for name, dst := range map[string][]byte{
		"misaligned buffer": mem[1 : 1+a.ChunkBytes()],
		"short buffer":      mem[:a.ChunkBytes()-1],
	} {
		if ok, err := a.ReadChunkDirect(ctx, []int{1}, dst); ok || err != nil {
			t.Errorf("%s: ReadChunkDirect = %v, %v; want it declined", name, ok, err)
		}
	}
	if ok, err := a.ReadChunkDirect(ctx, []int{0}, got); ok || err != nil {
		t.Errorf("missing chunk: ReadChunkDirect = %v, %v; want it declined", ok, err)
	}
	z, err := zarr.CreateArray(ctx, s, "z", zarr.ArrayMetadata{Shape: []int{100}, ChunkShape: []int{100}, DataType: zarr.Uint8, Codecs: codecChains["zstd"]})
	if err != nil {
		t.Fatal(err)
	}
	if err := z.WriteChunk(ctx, []int{0}, make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	if ok, err := z.ReadChunkDirect(ctx, []int{0}, mem[:100]); ok || err != nil {
		t.Errorf("compressed chunk: ReadChunkDirect = %v, %v; want it declined", ok, err)
	}
}
