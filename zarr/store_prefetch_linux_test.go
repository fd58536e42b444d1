package zarr

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// resident returns how many of the file's pages are in the page cache.
func resident(t *testing.T, path string) (in, pages int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, _ := f.Stat()
	if in, pages, err = residentPages(f, info.Size()); err != nil {
		t.Fatal(err)
	}
	return in, pages
}

// Prefetch reads a whole file into the page cache, beyond the kernel's
// readahead limit per call, and skips what holds no value.
func TestFileStorePrefetchFillsThePageCache(t *testing.T) {
	dir := t.TempDir()
	s, err := newFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Larger than the window of any device (at most 1 GiB of KiB values
	// are read; common limits are 128 KiB to 8 MiB).
	value := make([]byte, 24<<20)
	for i := range value {
		value[i] = byte(i * 7)
	}
	if err := s.Set(ctx, "x/c/0", value); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "x", "c", "0")
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	window := prefetchWindow(f)
	f.Close()
	if in, _ := resident(t, p); in > 0 {
		t.Skipf("%d pages stay in memory after POSIX_FADV_DONTNEED (tmpfs?): nothing to prefetch", in)
	}
	if window >= len(value) {
		t.Skipf("the device reads %d bytes per call, the whole value", window)
	}
	if err := s.Prefetch(ctx, "x/c/0"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	in, pages := resident(t, p)
	for in < pages && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		in, pages = resident(t, p)
	}
	if in < pages {
		t.Fatalf("%d of %d pages in the page cache after Prefetch (window %d bytes)", in, pages, window)
	}
	got, err := s.Get(ctx, "x/c/0")
	if err != nil || string(got) != string(value) {
		t.Fatalf("the value read after Prefetch differs (%v)", err)
	}
	// A missing key and a directory are skipped, not errors.
	for _, key := range []string{"x/c/1", "x/c"} {
		if err := s.Prefetch(ctx, key); err != nil {
			t.Errorf("Prefetch(%q) = %v, want nil", key, err)
		}
	}
}

// PrefetchChunkBox of a raw chunk brings in the band of bytes the box
// spans, not the chunk: a task that reads a band of rows from each of many
// chunks must not pull whole chunks from the disk.
func TestPrefetchChunkBoxReadsTheBand(t *testing.T) {
	dir := t.TempDir()
	s, err := newFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := CreateArray(ctx, s, "x", ArrayMetadata{Shape: []int{3072, 1024}, ChunkShape: []int{3072, 1024}, DataType: Float64, Codecs: []Codec{BytesCodec()}})
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, a.ChunkBytes()) // 24 MiB
	for i := range chunk {
		chunk[i] = byte(i*7 + 1)
	}
	if err := a.WriteChunk(ctx, []int{0, 0}, chunk); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "x", "c", "0", "0")
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	_ = f.Sync()
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	window := prefetchWindow(f)
	f.Close()
	if in, _ := resident(t, p); in > 0 {
		t.Skipf("%d pages stay in memory after POSIX_FADV_DONTNEED (tmpfs?)", in)
	}
	// Rows [1024, 1280): 2 MiB from byte 8 MiB.
	if !a.PrefetchChunkBox(ctx, []int{0, 0}, []int{1024, 0}, []int{256, 1024}) {
		t.Fatal("the store was not asked")
	}
	ps := os.Getpagesize()
	band := (2 << 20) / ps
	deadline := time.Now().Add(10 * time.Second)
	in, pages := resident(t, p)
	for in < band && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		in, pages = resident(t, p)
	}
	if in < band {
		t.Fatalf("%d pages cached after prefetching a band of %d", in, band)
	}
	if most := band + 2*window/ps; in > most {
		t.Fatalf("%d of %d pages cached after prefetching a band of %d (window %d bytes): more than the band", in, pages, band, window)
	}
}

// ChunkResident reports the page-cache share of a chunk's file: all of it
// after a write, none after the pages are dropped, and nothing for a
// missing chunk.
func TestChunkResidentReportsThePageCache(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := newFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	a, err := CreateArray(ctx, s, "x", ArrayMetadata{Shape: []int{4, 512}, ChunkShape: []int{1, 512}, DataType: Float64})
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, a.ChunkBytes())
	for i := range chunk {
		chunk[i] = byte(i%250 + 1) // not the fill value: stored
	}
	if err := a.WriteChunk(ctx, []int{1, 0}, chunk); err != nil {
		t.Fatal(err)
	}
	if f, ok := a.ChunkResident(ctx, []int{1, 0}); !ok || f != 1 {
		t.Fatalf("written chunk: resident %v, %v; want 1, true", f, ok)
	}
	if _, ok := a.ChunkResident(ctx, []int{0, 0}); ok {
		t.Error("missing chunk reported resident")
	}
	if _, ok := a.ChunkResident(ctx, []int{9, 0}); ok {
		t.Error("chunk outside the grid reported resident")
	}
	p := filepath.Join(dir, "x", "c", "1", "0")
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	if in, _ := resident(t, p); in > 0 {
		t.Skipf("%d pages stay in memory after POSIX_FADV_DONTNEED (tmpfs?)", in)
	}
	if f, ok := a.ChunkResident(ctx, []int{1, 0}); !ok || f != 0 {
		t.Fatalf("dropped chunk: resident %v, %v; want 0, true", f, ok)
	}
}

// allCached tells a range whose pages are all in the page cache (which a
// prefetch skips) from one with pages out of it, and a prefetch of a range
// with pages out still reads them.
func TestAllCachedGatesPrefetch(t *testing.T) {
	dir := t.TempDir()
	s, err := newFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	value := make([]byte, 32<<20)
	for i := range value {
		value[i] = byte(i * 13)
	}
	if err := s.Set(ctx, "v", value); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "v")
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.ReadAt(value, 0); err != nil {
		t.Fatal(err)
	}
	var st unix.Cachestat_t
	if err := unix.Cachestat(uint(f.Fd()), &unix.CachestatRange{Off: 0, Len: 4096}, &st, 0); err != nil {
		t.Skipf("no cachestat(2) here (%v): prefetches are always advised", err)
	}
	n := int64(len(value))
	if !allCached(f, 0, n) || !allCached(f, 12345, 1<<20) {
		t.Fatal("a file just read is not reported in the page cache")
	}
	_ = f.Sync()
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	if in, _ := resident(t, p); in > 0 {
		t.Skipf("%d pages stay in memory after POSIX_FADV_DONTNEED (tmpfs?)", in)
	}
	// The first MiB read back; the end of the file is beyond any readahead.
	if _, err := f.ReadAt(value[:1<<20], 0); err != nil {
		t.Fatal(err)
	}
	if !allCached(f, 0, 1<<20) || !allCached(f, 100, 1000) {
		t.Fatal("the range read back is not reported cached")
	}
	if allCached(f, 0, n) || allCached(f, n-4096, 4096) || allCached(f, n-10, 10) {
		t.Fatal("a range with pages out of the page cache is reported cached")
	}
	if err := s.PrefetchRange(ctx, "v", n-(1<<20), 1<<20); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !allCached(f, n-(1<<20), 1<<20) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !allCached(f, n-(1<<20), 1<<20) {
		t.Fatal("the last MiB was not prefetched")
	}
}

// residentPages counts what mincore counts, with cachestat where the
// kernel has it: on a file partly in the page cache, both agree.
func TestResidentPagesCachestatMatchesMincore(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "v")
	if err := os.WriteFile(p, make([]byte, 8<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_ = f.Sync()
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	if _, err := f.ReadAt(make([]byte, 1<<20), 2<<20); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := cachedPages(f, 0, 8<<20); !ok {
		t.Skip("no cachestat(2) here: residentPages is mincore alone")
	}
	in, pages, err := residentPages(f, 8<<20)
	if err != nil {
		t.Fatal(err)
	}
	mIn, mpages, err := mincorePages(f, 8<<20)
	if err != nil {
		t.Fatal(err)
	}
	if in != mIn || pages != mpages || in == 0 || in == pages {
		t.Fatalf("cachestat: %d of %d pages cached; mincore: %d of %d", in, pages, mIn, mpages)
	}
}
