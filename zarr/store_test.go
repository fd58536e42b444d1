package zarr_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cubego/cubego/zarr"
	"github.com/cubego/cubego/zarr/storetest"
)

func TestMemoryStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) zarr.Store { return zarr.NewMemoryStore() })
}

func TestFileStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) zarr.Store {
		dir := filepath.Join(t.TempDir(), "store.zarr")
		s, err := zarr.OpenStore(context.Background(), "file://"+dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { checkNoSideFiles(t, dir) })
		return s
	})
}

func TestFileStorePlainPath(t *testing.T) {
	storetest.Run(t, func(t *testing.T) zarr.Store {
		s, err := zarr.OpenStore(context.Background(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

var memStoreCount atomic.Int64

func TestMemURLStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) zarr.Store {
		name := "storetest-" + string(rune('a'+memStoreCount.Add(1)%26)) + t.Name()
		s, err := zarr.OpenStore(context.Background(), "mem://"+strings.ReplaceAll(name, "/", "-"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestMemURLStorePrefixed(t *testing.T) {
	storetest.Run(t, func(t *testing.T) zarr.Store {
		name := strings.ReplaceAll(t.Name(), "/", "-")
		s, err := zarr.OpenStore(context.Background(), "mem://"+name+"/some/prefix")
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// checkNoSideFiles fails if a file store left fileblob's ".attrs" side
// files or temporary files behind.
func checkNoSideFiles(t *testing.T, dir string) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".attrs") || strings.HasSuffix(path, ".tmp")) {
			t.Errorf("file store left %s behind", path)
		}
		return nil
	})
}

func TestOpenStoreMemShared(t *testing.T) {
	ctx := context.Background()
	a, err := zarr.OpenStore(ctx, "mem://shared-test")
	if err != nil {
		t.Fatal(err)
	}
	b, err := zarr.OpenStore(ctx, "mem://shared-test")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Set(ctx, "sub/k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if v, err := b.Get(ctx, "sub/k"); err != nil || string(v) != "v" {
		t.Errorf("same mem:// name: Get = %q, %v; want the value set through the other store", v, err)
	}
	sub, err := zarr.OpenStore(ctx, "mem://shared-test/sub")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := sub.Get(ctx, "k"); err != nil || string(v) != "v" {
		t.Errorf("prefixed mem:// store: Get = %q, %v", v, err)
	}
	// Closing one handle leaves the shared store usable through others.
	if err := zarr.Close(a); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Get(ctx, "sub/k"); err == nil {
		t.Errorf("Get on a closed store succeeded")
	}
	if _, err := b.Get(ctx, "sub/k"); err != nil {
		t.Errorf("Get through another handle after Close: %v", err)
	}
	other, err := zarr.OpenStore(ctx, "mem://shared-test-other")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Get(ctx, "sub/k"); !errors.Is(err, zarr.ErrNotFound) {
		t.Errorf("a different mem:// name shares data: %v", err)
	}
	anon1, _ := zarr.OpenStore(ctx, "mem://")
	anon2, _ := zarr.OpenStore(ctx, "mem://")
	_ = anon1.Set(ctx, "k", []byte("1"))
	if _, err := anon2.Get(ctx, "k"); !errors.Is(err, zarr.ErrNotFound) {
		t.Errorf("two mem:// stores without a name share data: %v", err)
	}
}

func TestOpenStoreURLs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t.Chdir(dir)
	for _, u := range []string{"rel.zarr", "./rel2.zarr", "file://" + dir + "/abs.zarr", "file://localhost" + dir + "/host.zarr", "file://./dotrel.zarr", dir + "/plain.zarr"} {
		s, err := zarr.OpenStore(ctx, u)
		if err != nil {
			t.Errorf("OpenStore(%q): %v", u, err)
			continue
		}
		if err := s.Set(ctx, "zarr.json", []byte("{}")); err != nil {
			t.Errorf("OpenStore(%q).Set: %v", u, err)
		}
		zarr.Close(s)
	}
	for _, f := range []string{"rel.zarr", "rel2.zarr", "abs.zarr", "host.zarr", "dotrel.zarr", "plain.zarr"} {
		if _, err := os.Stat(filepath.Join(dir, f, "zarr.json")); err != nil {
			t.Errorf("store file not where expected: %v", err)
		}
	}
	for _, tc := range []struct {
		url  string
		want error
	}{
		{"", zarr.ErrInvalid},
		{"ftp://host/x", zarr.ErrNotImplemented},
		{"s3:///x", zarr.ErrInvalid},
		{"s3://bucket/x/../y", zarr.ErrInvalid},
		{"file://remotehost/x", zarr.ErrInvalid},
		{"file:///x?metadata=skip", zarr.ErrInvalid},
		{"mem://x/../y", zarr.ErrInvalid},
		{"file://" + dir + "/rel.zarr/zarr.json", zarr.ErrInvalid}, // a file, not a directory
	} {
		if _, err := zarr.OpenStore(ctx, tc.url); !errors.Is(err, tc.want) {
			t.Errorf("OpenStore(%q): error %v, want %v", tc.url, err, tc.want)
		}
	}
	// Schemes behind build tags name the tag when it is missing.
	for scheme, tag := range map[string]string{"gs": "gcs", "azblob": "azure"} {
		if slices.Contains(zarr.KnownSchemes(), scheme) {
			continue
		}
		_, err := zarr.OpenStore(ctx, scheme+"://bucket/x")
		if !errors.Is(err, zarr.ErrNotImplemented) || !strings.Contains(err.Error(), "-tags "+tag) {
			t.Errorf("OpenStore(%s://...) without the %s tag: %v", scheme, tag, err)
		}
	}
}

// TestFileStoreLazyDir: opening a file store does not create its
// directory; reading from it finds nothing; the first Set creates it.
func TestFileStoreLazyDir(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "a", "b.zarr")
	s, err := zarr.OpenStore(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer zarr.Close(s)
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("OpenStore created the directory: %v", err)
	}
	if _, err := s.Get(ctx, "zarr.json"); !errors.Is(err, zarr.ErrNotFound) {
		t.Errorf("Get from a store without a directory: %v, want ErrNotFound", err)
	}
	if _, err := zarr.OpenArray(ctx, s, ""); !errors.Is(err, zarr.ErrNotFound) {
		t.Errorf("OpenArray in a missing directory: %v, want ErrNotFound", err)
	}
	if keys, err := s.(zarr.Lister).List(ctx, ""); err != nil || len(keys) != 0 {
		t.Errorf("List of a store without a directory = %q, %v", keys, err)
	}
	if err := s.Delete(ctx, "x"); err != nil {
		t.Errorf("Delete in a store without a directory: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("reading created the directory: %v", err)
	}
	if err := s.Set(ctx, "x/c/0", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "x", "c", "0")); err != nil || string(b) != "v" {
		t.Errorf("file after Set = %q, %v", b, err)
	}
	checkNoSideFiles(t, dir)
}

// TestFileStoreIgnoresTempFiles: the in-flight temporary files of writes
// are not listed as keys.
func TestFileStoreIgnoresTempFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := zarr.OpenStore(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer zarr.Close(s)
	if err := s.Set(ctx, "c/0", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "c", ".cubego-123456.tmp"), []byte("partial"), 0o666); err != nil {
		t.Fatal(err)
	}
	keys, err := s.(zarr.Lister).List(ctx, "")
	if err != nil || len(keys) != 1 || keys[0] != "c/0" {
		t.Errorf("List = %q, %v; want [c/0]", keys, err)
	}
}

func TestValidateKey(t *testing.T) {
	for _, k := range storetest.InvalidKeys {
		if err := zarr.ValidateKey(k); !errors.Is(err, zarr.ErrInvalid) {
			t.Errorf("ValidateKey(%q) = %v, want ErrInvalid", k, err)
		}
	}
	for _, k := range []string{"a", "zarr.json", "x/c/0/1", "x/c.0.1", ".zattrs", "a/.b", "..a", "a.."} {
		if err := zarr.ValidateKey(k); err != nil {
			t.Errorf("ValidateKey(%q) = %v, want nil", k, err)
		}
	}
}
