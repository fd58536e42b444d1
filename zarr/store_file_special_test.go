package zarr_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cubego/cubego/zarr"
)

// withDeadline runs f and fails the test if it has not returned within d:
// a read that blocks must fail the test, not hang it.
func withDeadline(t *testing.T, d time.Duration, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
		return nil
	}
}

// TestFileStoreSpecialFileAtKey: a directory, a named pipe or a socket at a
// key holds no value. Every read of it is an error naming the key and
// saying what is there (never the fill value, never a read that blocks).
func TestFileStoreSpecialFileAtKey(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := zarr.OpenStore(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"dir", "fifo", "sock"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "dir", "c"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo", "c"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A socket's path is limited to ~100 bytes: listen from inside the directory.
	t.Chdir(filepath.Join(dir, "sock"))
	l, err := net.Listen("unix", "c")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	for _, tc := range []struct{ key, kind string }{
		{"dir/c", "directory"}, {"fifo/c", "named pipe"}, {"sock/c", "socket"},
	} {
		reads := map[string]func() error{
			"Get": func() error { _, err := s.Get(ctx, tc.key); return err },
			"GetInto": func() error {
				_, err := s.(zarr.ReaderInto).GetInto(ctx, tc.key, make([]byte, 8))
				return err
			},
			"GetRange": func() error {
				_, err := s.(zarr.RangeGetter).GetRange(ctx, tc.key, 0, 4)
				return err
			},
			"GetSuffix": func() error {
				_, err := s.(zarr.SuffixGetter).GetSuffix(ctx, tc.key, 4)
				return err
			},
		}
		for name, read := range reads {
			err := withDeadline(t, 5*time.Second, name+"("+tc.key+")", read)
			if !errors.Is(err, zarr.ErrIO) || errors.Is(err, zarr.ErrNotFound) ||
				!strings.Contains(err.Error(), `"`+tc.key+`"`) || !strings.Contains(err.Error(), tc.kind) {
				t.Errorf("%s(%q): error %v, want ErrIO naming the key and %q", name, tc.key, err, tc.kind)
			}
		}
	}
	// A path through a file is still a missing key.
	if err := s.Set(ctx, "file", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "file/c"); !errors.Is(err, zarr.ErrNotFound) {
		t.Errorf("Get through a file: %v, want ErrNotFound", err)
	}
}

// TestArrayChunkIsADirectoryOrFIFO: an array whose chunk key is a
// directory or a named pipe fails to read that chunk, naming it; it never
// reads the fill value.
func TestArrayChunkIsADirectoryOrFIFO(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []string{"directory", "named pipe"} {
		dir := t.TempDir()
		s, err := zarr.OpenStore(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		meta := zarr.ArrayMetadata{Shape: []int{4}, ChunkShape: []int{2}, DataType: zarr.Float64}
		a, err := zarr.CreateArray(ctx, s, "a", meta)
		if err != nil {
			t.Fatal(err)
		}
		key := a.ChunkKey([]int{1})
		p := filepath.Join(dir, filepath.FromSlash(key))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if kind == "directory" {
			err = os.Mkdir(p, 0o755)
		} else {
			err = syscall.Mkfifo(p, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
		err = withDeadline(t, 5*time.Second, "ReadChunk", func() error {
			return a.ReadChunk(ctx, []int{1}, make([]byte, 16))
		})
		if !errors.Is(err, zarr.ErrIO) || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), kind) {
			t.Errorf("%s at chunk %s: ReadChunk error %v, want ErrIO naming the key", kind, key, err)
		}
		// The chunk beside it is missing: the fill value.
		if err := a.ReadChunk(ctx, []int{0}, make([]byte, 16)); err != nil {
			t.Errorf("missing chunk 0: %v", err)
		}
	}
}
