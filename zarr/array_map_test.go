//go:build linux

package zarr_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/cubego/cubego/zarr"
)

// MapChunk maps exactly the chunks stored raw in the host's byte order on
// a file store, with the bytes ReadChunk gives, and declines the others.
func TestMapChunk(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 8))
	for name, chain := range codecChains {
		for _, dt := range allDataTypes {
			s, err := zarr.OpenStore(ctx, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			a, err := zarr.CreateArray(ctx, s, "a", zarr.ArrayMetadata{Shape: []int{5, 6}, ChunkShape: []int{4, 3}, DataType: dt, Codecs: chain})
			if err != nil {
				t.Fatal(err)
			}
			want := randomChunk(rng, dt, a.ChunkBytes())
			if err := a.WriteChunk(ctx, []int{1, 1}, want); err != nil {
				t.Fatal(err)
			}
			raw := name == "default" || name == "little" || (name == "big" && dt.Size() == 1)
			b, unmap, ok := a.MapChunk(ctx, []int{1, 1})
			if ok != raw {
				t.Fatalf("%s %s: MapChunk ok = %v, want %v", name, dt, ok, raw)
			}
			if !ok {
				continue
			}
			if !bytes.Equal(b, want) {
				t.Errorf("%s %s: mapped bytes differ from the written chunk", name, dt)
			}
			unmap()
			// A missing chunk (the fill value) and coords outside the
			// grid are read, not mapped.
			if _, _, ok := a.MapChunk(ctx, []int{0, 0}); ok {
				t.Errorf("%s %s: a missing chunk was mapped", name, dt)
			}
			if _, _, ok := a.MapChunk(ctx, []int{2, 0}); ok {
				t.Errorf("%s %s: a chunk outside the grid was mapped", name, dt)
			}
		}
	}
}

// A chunk file of the wrong size is not mapped (ReadChunk reports it), nor
// is a chunk of an in-memory store.
func TestMapChunkDeclines(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := zarr.OpenStore(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	meta := zarr.ArrayMetadata{Shape: []int{8}, ChunkShape: []int{4}, DataType: zarr.Float64}
	a, err := zarr.CreateArray(ctx, s, "a", meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.WriteChunk(ctx, []int{0}, bytes.Repeat([]byte{1}, 32)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "a", "c", "0")
	if err := os.Truncate(p, 16); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := a.MapChunk(ctx, []int{0}); ok {
		t.Error("a short chunk file was mapped")
	}
	if err := a.ReadChunk(ctx, []int{0}, make([]byte, 32)); err == nil || !strings.Contains(err.Error(), "16 bytes") {
		t.Errorf("reading the short chunk gave %v", err)
	}
	m, err := zarr.OpenStore(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	b, err := zarr.CreateArray(ctx, m, "a", meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteChunk(ctx, []int{0}, bytes.Repeat([]byte{1}, 32)); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := b.MapChunk(ctx, []int{0}); ok {
		t.Error("a chunk of an in-memory store was mapped")
	}
}

// faultOn runs f with SetPanicOnFault and returns what it panicked with.
func faultOn(f func()) (r any) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() { r = recover() }()
	f()
	return nil
}

// A mapped chunk cannot be written (the write faults and the file is
// unchanged), and one whose file is truncated while mapped faults on
// access instead of crashing the process, on a goroutine with
// SetPanicOnFault; a chunk rewritten through the store keeps the old
// bytes mapped (the store renames a new file over the key).
func TestMappedChunkFaults(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := zarr.OpenStore(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1 << 16
	a, err := zarr.CreateArray(ctx, s, "a", zarr.ArrayMetadata{Shape: []int{2 * n}, ChunkShape: []int{n}, DataType: zarr.Uint8})
	if err != nil {
		t.Fatal(err)
	}
	old := bytes.Repeat([]byte{7}, n)
	if err := a.WriteChunk(ctx, []int{0}, old); err != nil {
		t.Fatal(err)
	}
	b, unmap, ok := a.MapChunk(ctx, []int{0})
	if !ok {
		t.Fatal("not mapped")
	}
	if r := faultOn(func() { b[10] = 1 }); r == nil {
		t.Error("writing a mapped chunk did not fault")
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a", "c", "0")); !bytes.Equal(got, old) {
		t.Error("the chunk file changed")
	}
	if err := a.WriteChunk(ctx, []int{0}, bytes.Repeat([]byte{9}, n)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, old) {
		t.Error("a chunk rewritten through the store changed the mapped bytes")
	}
	unmap()

	b, unmap, ok = a.MapChunk(ctx, []int{0})
	if !ok {
		t.Fatal("not mapped")
	}
	defer unmap()
	if err := os.Truncate(filepath.Join(dir, "a", "c", "0"), 0); err != nil {
		t.Fatal(err)
	}
	var sum byte
	if r := faultOn(func() {
		for _, v := range b {
			sum += v
		}
	}); r == nil {
		t.Errorf("reading a truncated mapped chunk did not fault (sum %d)", sum)
	}
}
