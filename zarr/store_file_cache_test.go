package zarr

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Under WithOpenFiles a key read in ranges is opened once and read from
// that file; a Set or Delete under the same context forgets it, and the
// cache keeps at most maxOpenFiles files, all closed by its close.
func TestOpenFilesCache(t *testing.T) {
	dir := t.TempDir()
	s, err := newFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	bg := context.Background()
	get := func(ctx context.Context, key string) string {
		t.Helper()
		b := make([]byte, 3)
		if err := s.GetRangesInto(ctx, key, []int64{0}, [][]byte{b}); err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if err := s.Set(bg, "k", []byte("one")); err != nil {
		t.Fatal(err)
	}
	ctx, closeFiles := WithOpenFiles(bg)
	if got := get(ctx, "k"); got != "one" {
		t.Fatalf("read %q", got)
	}
	// Replaced behind the context's back (as another process would): the
	// kept file is read. Without the context, the new one.
	tmp := filepath.Join(dir, "replacement")
	if err := os.WriteFile(tmp, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "k")); err != nil {
		t.Fatal(err)
	}
	if got := get(ctx, "k"); got != "one" {
		t.Fatalf("read %q under the context, want the kept file's %q", got, "one")
	}
	if got := get(bg, "k"); got != "two" {
		t.Fatalf("read %q without the context", got)
	}
	// Written under the context: forgotten, the new value read.
	if err := s.Set(ctx, "k", []byte("three")); err != nil {
		t.Fatal(err)
	}
	if got := get(ctx, "k"); got != "thr" {
		t.Fatalf("read %q after a Set under the context", got)
	}
	if err := s.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 3)
	if err := s.GetRangesInto(ctx, "k", []int64{0}, [][]byte{b}); err == nil {
		t.Fatal("a key deleted under the context is still read")
	}
	c := ctx.Value(openFilesKey{}).(*openFiles)
	var kept []*os.File
	for i := range maxOpenFiles + 5 {
		key := fmt.Sprintf("m/%d", i)
		if err := s.Set(bg, key, []byte("abc")); err != nil {
			t.Fatal(err)
		}
		if got := get(ctx, key); got != "abc" {
			t.Fatalf("read %q", got)
		}
		if i < 5 {
			kept = append(kept, c.files[filepath.Join(dir, "m", fmt.Sprint(i))].f)
		}
	}
	if len(c.files) != maxOpenFiles {
		t.Fatalf("%d files kept, want %d", len(c.files), maxOpenFiles)
	}
	// The least recently used were closed.
	for _, f := range kept {
		if _, err := f.Stat(); err == nil {
			t.Fatal("a file dropped from the cache is still open")
		}
	}
	last := c.files[filepath.Join(dir, "m", fmt.Sprint(maxOpenFiles+4))].f
	closeFiles()
	if _, err := last.Stat(); err == nil {
		t.Fatal("a kept file is still open after close")
	}
	// After close, reads under the context still work (each opens its file).
	if got := get(ctx, "m/7"); got != "abc" {
		t.Fatalf("read %q after close", got)
	}
}

// A file in use when it leaves the cache is closed by its last user.
func TestOpenFilesCacheClosesAfterLastUser(t *testing.T) {
	s, _ := storeHolding(t, "k")
	ctx, closeFiles := WithOpenFiles(context.Background())
	f, _, done, err := s.openShared(ctx, "get", "k")
	if err != nil {
		t.Fatal(err)
	}
	closeFiles()
	if _, err := f.Stat(); err != nil {
		t.Fatal("a file in use was closed by the cache's close")
	}
	done()
	if _, err := f.Stat(); err == nil {
		t.Fatal("a file left open after its last user")
	}
}

// A task reading bands of more chunks than the old bound of 128, one band
// of each in turn and then round again (W4's swap-axes sum: 129 chunks),
// opens each file once; and a cache stops keeping files at the
// process-wide budget, closing its least recently used one instead.
func TestOpenFilesCacheKeepsACycle(t *testing.T) {
	const n = 129
	keys := make([]string, n)
	for i := range n {
		keys[i] = fmt.Sprintf("c/%d", i)
	}
	s, dir := storeHolding(t, keys...)
	bg := context.Background()
	read := func(ctx context.Context, i int) *os.File {
		t.Helper()
		return openOnce(t, ctx, s, keys[i])
	}
	ctx, closeFiles := WithOpenFiles(bg)
	first := make([]*os.File, n)
	for i := range n {
		first[i] = read(ctx, i)
	}
	for i := range n {
		if read(ctx, i) != first[i] {
			t.Fatalf("chunk %d of a cycle of %d was opened again", i, n)
		}
	}
	closeFiles()

	budget := keptFilesBudget
	defer func() { keptFilesBudget = budget }()
	b := keptFiles.Load() + 8
	keptFilesBudget = func() int64 { return b }
	ctx, closeFiles = WithOpenFiles(bg)
	defer closeFiles()
	c := ctx.Value(openFilesKey{}).(*openFiles)
	for i := range 20 {
		read(ctx, i)
	}
	if len(c.files) != 8 || keptFiles.Load() != b {
		t.Fatalf("%d files kept, %d in the process, want 8 and %d", len(c.files), keptFiles.Load(), b)
	}
	if _, ok := c.files[filepath.Join(dir, "c", "19")]; !ok {
		t.Fatal("the file read last is not kept")
	}
	// A hit makes a file the most recently used: reading 12 (the least
	// recent of 12..19) again, then 20, closes 13, not 12.
	kept := read(ctx, 12)
	read(ctx, 20)
	if _, ok := c.files[filepath.Join(dir, "c", "13")]; ok {
		t.Fatal("file 13, the least recently used, is still kept")
	}
	if read(ctx, 12) != kept {
		t.Fatal("file 12, used just before, was closed")
	}
}

// WithOpenFiles under a context that has a cache already (a task under its
// operation's scope) uses that cache: files the inner scope opened stay
// open after its close, for the next task, until the outer close.
func TestOpenFilesNested(t *testing.T) {
	s, _ := storeHolding(t, "k")
	op, closeOp := WithOpenFiles(context.Background())
	task, closeTask := WithOpenFiles(op)
	f := openOnce(t, task, s, "k")
	closeTask()
	task2, closeTask2 := WithOpenFiles(op)
	if openOnce(t, task2, s, "k") != f {
		t.Fatal("a second task under the same op opened the file again")
	}
	closeTask2()
	closeOp()
	if _, err := f.Stat(); err == nil {
		t.Fatal("the file is still open after the op's close")
	}
}

// storeHolding returns a file store in a new directory (and the directory)
// holding "abc" at each key.
func storeHolding(t *testing.T, keys ...string) (*fileStore, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := newFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if err := s.Set(context.Background(), k, []byte("abc")); err != nil {
			t.Fatal(err)
		}
	}
	return s, dir
}

// openOnce opens key for a shared read under ctx, ends the read, and
// returns the file it was given.
func openOnce(t *testing.T, ctx context.Context, s *fileStore, key string) *os.File {
	t.Helper()
	f, _, done, err := s.openShared(ctx, "get", key)
	if err != nil {
		t.Fatal(err)
	}
	done()
	return f
}
