//go:build linux

package zarr_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
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

// WriteChunkDirect writes raw chunks with O_DIRECT (pieces of 8 MiB
// written concurrently, and a tail that is not a multiple of the file
// system's block through the page cache) that ReadChunk then reads back
// bit for bit, replaces an existing chunk, deletes a chunk that equals the
// fill value as WriteChunk does, leaves no temporary file, and declines
// compressed chunks and buffers the file system cannot write from
// directly, writing nothing.
func TestWriteChunkDirect(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	dir := t.TempDir()
	s, err := zarr.OpenStore(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, s, "a", zarr.ArrayMetadata{Shape: []int{2 * 9000003}, ChunkShape: []int{9000003}, DataType: zarr.Uint8})
	if err != nil {
		t.Fatal(err)
	}
	if !a.CanWriteDirect() {
		t.Fatal("a raw chunk on a local store cannot be written directly")
	}
	mem, err := syscall.Mmap(-1, 0, a.ChunkBytes()+4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	src := mem[:a.ChunkBytes()]
	for round := range 2 { // a new chunk, then over it
		copy(src, randomChunk(rng, zarr.Uint8, a.ChunkBytes()))
		ok, err := a.WriteChunkDirect(ctx, []int{1}, src)
		if err != nil || !ok {
			t.Fatalf("round %d: WriteChunkDirect = %v, %v; want a direct write", round, ok, err)
		}
		got := make([]byte, a.ChunkBytes())
		if err := a.ReadChunk(ctx, []int{1}, got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, src) {
			t.Fatalf("round %d: the chunk read back differs from the one written directly", round)
		}
	}
	clear(src) // the fill value: the chunk's key is deleted
	if ok, err := a.WriteChunkDirect(ctx, []int{1}, src); !ok || err != nil {
		t.Fatalf("empty chunk: WriteChunkDirect = %v, %v", ok, err)
	}
	if _, err := s.Get(ctx, a.ChunkKey([]int{1})); !errors.Is(err, zarr.ErrNotFound) {
		t.Errorf("empty chunk: key still there (Get: %v)", err)
	}
	copy(src, randomChunk(rng, zarr.Uint8, a.ChunkBytes()))
	if ok, err := a.WriteChunkDirect(ctx, []int{0}, mem[1:1+a.ChunkBytes()]); ok || err != nil {
		t.Errorf("misaligned buffer: WriteChunkDirect = %v, %v; want it declined", ok, err)
	}
	if ok, err := a.WriteChunkDirect(ctx, []int{0}, mem[:a.ChunkBytes()-1]); ok || err == nil {
		t.Errorf("short buffer: WriteChunkDirect = %v, %v; want an error", ok, err)
	}
	if _, err := s.Get(ctx, a.ChunkKey([]int{0})); !errors.Is(err, zarr.ErrNotFound) {
		t.Errorf("a declined write left chunk 0 (Get: %v)", err)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "a", "c"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
	z, err := zarr.CreateArray(ctx, s, "z", zarr.ArrayMetadata{Shape: []int{100}, ChunkShape: []int{100}, DataType: zarr.Uint8, Codecs: codecChains["zstd"]})
	if err != nil {
		t.Fatal(err)
	}
	if z.CanWriteDirect() {
		t.Error("compressed chunks reported writable directly")
	}
	if ok, err := z.WriteChunkDirect(ctx, []int{0}, mem[:100]); ok || err != nil {
		t.Errorf("compressed chunk: WriteChunkDirect = %v, %v; want it declined", ok, err)
	}
}
