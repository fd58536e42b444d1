// Package storetest is a conformance suite for zarr.Store
// implementations: every store passes the same tests.
//
//	func TestMyStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) zarr.Store { return newMyStore(t) })
//	}
//
// newStore must return an empty store each time it is called. Optional
// capabilities (zarr.ReaderInto, zarr.Lister, zarr.DirLister,
// zarr.RangeGetter, zarr.SuffixGetter) are tested
// when the store implements them.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/cubego/cubego/zarr"
)

// Run runs the conformance suite as subtests of t.
func Run(t *testing.T, newStore func(t *testing.T) zarr.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s zarr.Store)
	}{
		{"GetMissing", testGetMissing},
		{"SetGet", testSetGet},
		{"Overwrite", testOverwrite},
		{"Delete", testDelete},
		{"Ownership", testOwnership},
		{"InvalidKeys", testInvalidKeys},
		{"List", testList},
		{"GetInto", testGetInto},
		{"GetRange", testGetRange},
		{"GetSuffix", testGetSuffix},
		{"ListDir", testListDir},
		{"ConcurrentSets", testConcurrentSets},
		{"ConcurrentKeys", testConcurrentKeys},
		{"Cancelled", testCancelled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			t.Cleanup(func() {
				if err := zarr.Close(s); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tc.fn(t, s)
		})
	}
}

func mustSet(t *testing.T, s zarr.Store, key string, value []byte) {
	t.Helper()
	if err := s.Set(context.Background(), key, value); err != nil {
		t.Fatalf("Set(%q): %v", key, err)
	}
}

func mustGet(t *testing.T, s zarr.Store, key string) []byte {
	t.Helper()
	v, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return v
}

// allBytes is a value holding every byte value, in a scrambled order.
func allBytes() []byte {
	v := make([]byte, 256)
	for i := range v {
		v[i] = byte(i*37 + 11)
	}
	return v
}

func testGetMissing(t *testing.T, s zarr.Store) {
	ctx := context.Background()
	for _, key := range []string{"missing", "a/b/missing", "zarr.json"} {
		_, err := s.Get(ctx, key)
		if !errors.Is(err, zarr.ErrNotFound) {
			t.Errorf("Get(%q) of a missing key: error %v, want one wrapping ErrNotFound", key, err)
		}
	}
}

func testSetGet(t *testing.T, s zarr.Store) {
	values := map[string][]byte{
		"zarr.json":        []byte(`{"zarr_format":3}`),
		"x/c/0/1":          allBytes(),
		"x/c/0/10":         bytes.Repeat([]byte{0xab}, 100_000),
		"deep/a/b/c/d/e/f": []byte("f"),
		"empty":            {},
		"x/c.0.1":          []byte("dot"),
		"x/0.1":            []byte("v2"),
	}
	for k, v := range values {
		mustSet(t, s, k, v)
	}
	for k, v := range values {
		if got := mustGet(t, s, k); !bytes.Equal(got, v) {
			t.Errorf("Get(%q) = %d bytes, want the %d bytes set", k, len(got), len(v))
		}
	}
}

func testOverwrite(t *testing.T, s zarr.Store) {
	mustSet(t, s, "k", []byte("a longer first value"))
	mustSet(t, s, "k", []byte("short"))
	if got := mustGet(t, s, "k"); string(got) != "short" {
		t.Errorf("after overwrite Get = %q, want %q", got, "short")
	}
	mustSet(t, s, "k", nil)
	if got := mustGet(t, s, "k"); len(got) != 0 {
		t.Errorf("after overwrite with nil Get = %q, want empty", got)
	}
}

func testDelete(t *testing.T, s zarr.Store) {
	ctx := context.Background()
	mustSet(t, s, "a/b", []byte("1"))
	mustSet(t, s, "a/c", []byte("2"))
	if err := s.Delete(ctx, "a/b"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := s.Get(ctx, "a/b"); !errors.Is(err, zarr.ErrNotFound) {
		t.Errorf("Get after Delete: error %v, want ErrNotFound", err)
	}
	if got := mustGet(t, s, "a/c"); string(got) != "2" {
		t.Errorf("Delete removed a sibling: Get(a/c) = %q", got)
	}
	for _, key := range []string{"a/b", "never/set", "a"} {
		if err := s.Delete(ctx, key); err != nil {
			t.Errorf("Delete(%q) of a missing key: %v, want nil", key, err)
		}
	}
	mustSet(t, s, "a/b", []byte("again"))
	if got := mustGet(t, s, "a/b"); string(got) != "again" {
		t.Errorf("Set after Delete: Get = %q", got)
	}
}

// testOwnership: Set does not retain its argument and Get returns a value
// the caller owns.
func testOwnership(t *testing.T, s zarr.Store) {
	v := []byte("original")
	mustSet(t, s, "k", v)
	copy(v, "XXXXXXXX")
	got := mustGet(t, s, "k")
	if string(got) != "original" {
		t.Fatalf("Set retained its argument: Get = %q", got)
	}
	copy(got, "YYYYYYYY")
	if got := mustGet(t, s, "k"); string(got) != "original" {
		t.Errorf("Get returned a shared value: Get = %q", got)
	}
}

// InvalidKeys are keys every store refuses with ErrInvalid.
var InvalidKeys = []string{
	"", "/abs", "a/../b", "..", "../x", "a/..", ".", "a/./b",
	"a\\b", "a//b", "a/", "nul\x00byte",
}

func testInvalidKeys(t *testing.T, s zarr.Store) {
	ctx := context.Background()
	for _, key := range InvalidKeys {
		if err := s.Set(ctx, key, []byte("x")); !errors.Is(err, zarr.ErrInvalid) {
			t.Errorf("Set(%q): error %v, want ErrInvalid", key, err)
		}
		if _, err := s.Get(ctx, key); !errors.Is(err, zarr.ErrInvalid) {
			t.Errorf("Get(%q): error %v, want ErrInvalid", key, err)
		}
		if err := s.Delete(ctx, key); !errors.Is(err, zarr.ErrInvalid) {
			t.Errorf("Delete(%q): error %v, want ErrInvalid", key, err)
		}
		if r, ok := s.(zarr.ReaderInto); ok {
			if _, err := r.GetInto(ctx, key, make([]byte, 8)); !errors.Is(err, zarr.ErrInvalid) {
				t.Errorf("GetInto(%q): error %v, want ErrInvalid", key, err)
			}
		}
	}
}

func testList(t *testing.T, s zarr.Store) {
	l, ok := s.(zarr.Lister)
	if !ok {
		t.Skip("store does not implement zarr.Lister")
	}
	ctx := context.Background()
	keys, err := l.List(ctx, "")
	if err != nil || len(keys) != 0 {
		t.Fatalf("List of an empty store = %q, %v; want none", keys, err)
	}
	all := []string{"a/zarr.json", "a/c/0/0", "a/c/0/1", "a/c/1/0", "ab", "b/zarr.json", "zarr.json"}
	for _, k := range all {
		mustSet(t, s, k, []byte(k))
	}
	if err := s.Delete(ctx, "a/c/0/1"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"", []string{"a/c/0/0", "a/c/1/0", "a/zarr.json", "ab", "b/zarr.json", "zarr.json"}},
		{"a/", []string{"a/c/0/0", "a/c/1/0", "a/zarr.json"}},
		{"a", []string{"a/c/0/0", "a/c/1/0", "a/zarr.json", "ab"}},
		{"a/c/", []string{"a/c/0/0", "a/c/1/0"}},
		{"b/", []string{"b/zarr.json"}},
		{"none/", nil},
	} {
		got, err := l.List(ctx, tc.prefix)
		if err != nil {
			t.Errorf("List(%q): %v", tc.prefix, err)
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("List(%q) = %q, want %q", tc.prefix, got, tc.want)
		}
	}
	if _, err := l.List(ctx, "../"); !errors.Is(err, zarr.ErrInvalid) {
		t.Errorf("List(\"../\"): error %v, want ErrInvalid", err)
	}
}

func testGetInto(t *testing.T, s zarr.Store) {
	r, ok := s.(zarr.ReaderInto)
	if !ok {
		t.Skip("store does not implement zarr.ReaderInto")
	}
	ctx := context.Background()
	v := allBytes()
	mustSet(t, s, "k", v)

	dst := make([]byte, len(v))
	n, err := r.GetInto(ctx, "k", dst)
	if err != nil || n != len(v) || !bytes.Equal(dst, v) {
		t.Errorf("GetInto with an exact buffer = %d, %v", n, err)
	}
	big := bytes.Repeat([]byte{0xee}, len(v)+10)
	n, err = r.GetInto(ctx, "k", big)
	if err != nil || n != len(v) || !bytes.Equal(big[:n], v) {
		t.Errorf("GetInto with a larger buffer = %d, %v", n, err)
	}
	if _, err := r.GetInto(ctx, "k", make([]byte, len(v)-1)); !errors.Is(err, zarr.ErrCorrupt) {
		t.Errorf("GetInto with a short buffer: error %v, want ErrCorrupt", err)
	}
	if _, err := r.GetInto(ctx, "missing", dst); !errors.Is(err, zarr.ErrNotFound) {
		t.Errorf("GetInto of a missing key: error %v, want ErrNotFound", err)
	}
	mustSet(t, s, "empty", nil)
	if n, err := r.GetInto(ctx, "empty", nil); n != 0 || err != nil {
		t.Errorf("GetInto of an empty value into nil = %d, %v", n, err)
	}
}

func testGetRange(t *testing.T, s zarr.Store) {
	r, ok := s.(zarr.RangeGetter)
	if !ok {
		t.Skip("store does not implement zarr.RangeGetter")
	}
	ctx := context.Background()
	v := allBytes()
	mustSet(t, s, "k", v)
	for _, tc := range []struct{ off, n int64 }{
		{0, -1}, {0, 10}, {10, 20}, {250, -1}, {250, 100}, {256, -1}, {300, 5}, {0, 0},
	} {
		got, err := r.GetRange(ctx, "k", tc.off, tc.n)
		if err != nil {
			t.Errorf("GetRange(%d, %d): %v", tc.off, tc.n, err)
			continue
		}
		lo := min(tc.off, int64(len(v)))
		hi := int64(len(v))
		if tc.n >= 0 {
			hi = min(lo+tc.n, hi)
		}
		if !bytes.Equal(got, v[lo:hi]) {
			t.Errorf("GetRange(%d, %d) = %d bytes, want %d", tc.off, tc.n, len(got), hi-lo)
		}
	}
	if _, err := r.GetRange(ctx, "missing", 0, 1); !errors.Is(err, zarr.ErrNotFound) {
		t.Errorf("GetRange of a missing key: error %v, want ErrNotFound", err)
	}
	if _, err := r.GetRange(ctx, "k", -1, 1); !errors.Is(err, zarr.ErrInvalid) {
		t.Errorf("GetRange with a negative offset: error %v, want ErrInvalid", err)
	}
}

func testGetSuffix(t *testing.T, s zarr.Store) {
	r, ok := s.(zarr.SuffixGetter)
	if !ok {
		t.Skip("store does not implement zarr.SuffixGetter")
	}
	ctx := context.Background()
	v := allBytes()
	mustSet(t, s, "a/k", v)
	for _, n := range []int64{0, 1, 16, 256, 300} {
		got, err := r.GetSuffix(ctx, "a/k", n)
		if err != nil {
			t.Errorf("GetSuffix(%d): %v", n, err)
			continue
		}
		if want := v[max(int64(len(v))-n, 0):]; !bytes.Equal(got, want) {
			t.Errorf("GetSuffix(%d) = %d bytes, want %d", n, len(got), len(want))
		}
	}
	if _, err := r.GetSuffix(ctx, "missing", 4); !errors.Is(err, zarr.ErrNotFound) {
		t.Errorf("GetSuffix of a missing key: error %v, want ErrNotFound", err)
	}
	if _, err := r.GetSuffix(ctx, "a/k", -1); !errors.Is(err, zarr.ErrInvalid) {
		t.Errorf("GetSuffix with a negative length: error %v, want ErrInvalid", err)
	}
}

func testListDir(t *testing.T, s zarr.Store) {
	l, ok := s.(zarr.DirLister)
	if !ok {
		t.Skip("store does not implement zarr.DirLister")
	}
	ctx := context.Background()
	for _, k := range []string{"zarr.json", "x/zarr.json", "x/c/0/0", "x/c/1/0", "x.y", "y/z/zarr.json", "x/d"} {
		mustSet(t, s, k, []byte(k))
	}
	for _, tc := range []struct {
		prefix     string
		keys, dirs []string
	}{
		{"", []string{"x.y", "zarr.json"}, []string{"x/", "y/"}},
		{"x/", []string{"x/d", "x/zarr.json"}, []string{"x/c/"}},
		{"x/c/", nil, []string{"x/c/0/", "x/c/1/"}},
		{"y/", nil, []string{"y/z/"}},
		{"none/", nil, nil},
	} {
		keys, dirs, err := l.ListDir(ctx, tc.prefix)
		if err != nil {
			t.Errorf("ListDir(%q): %v", tc.prefix, err)
			continue
		}
		if !slices.Equal(keys, tc.keys) || !slices.Equal(dirs, tc.dirs) {
			t.Errorf("ListDir(%q) = %q, %q; want %q, %q", tc.prefix, keys, dirs, tc.keys, tc.dirs)
		}
	}
}

// testConcurrentSets: writers replace one key with whole values while
// readers check they never see a torn or mixed value.
func testConcurrentSets(t *testing.T, s zarr.Store) {
	const (
		writers = 8
		rounds  = 10
		size    = 64 << 10
	)
	ctx := context.Background()
	mustSet(t, s, "k", bytes.Repeat([]byte{0}, size))
	var wg sync.WaitGroup
	errc := make(chan error, 2*writers)
	for w := range writers {
		wg.Go(func() {
			v := bytes.Repeat([]byte{byte(w + 1)}, size)
			for range rounds {
				if err := s.Set(ctx, "k", v); err != nil {
					errc <- err
					return
				}
			}
		})
		wg.Go(func() {
			for range rounds {
				v, err := s.Get(ctx, "k")
				if err != nil {
					errc <- fmt.Errorf("concurrent Get: %w", err)
					return
				}
				if len(v) != size || !bytes.Equal(v, bytes.Repeat(v[:1], size)) {
					errc <- fmt.Errorf("concurrent Get saw a torn value (%d bytes)", len(v))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
}

// testConcurrentKeys: many goroutines write and read distinct keys.
func testConcurrentKeys(t *testing.T, s zarr.Store) {
	const n = 64
	ctx := context.Background()
	var wg sync.WaitGroup
	errc := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			key := fmt.Sprintf("x/c/%d/%d", i%4, i)
			v := []byte(key)
			if err := s.Set(ctx, key, v); err != nil {
				errc <- err
				return
			}
			got, err := s.Get(ctx, key)
			if err != nil || !bytes.Equal(got, v) {
				errc <- fmt.Errorf("Get(%q) = %q, %v", key, got, err)
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if l, ok := s.(zarr.Lister); ok {
		keys, err := l.List(ctx, "x/")
		if err != nil || len(keys) != n {
			t.Errorf("List after concurrent sets: %d keys, %v; want %d", len(keys), err, n)
		}
	}
}

// testCancelled: a cancelled context fails a Set and leaves the old value.
func testCancelled(t *testing.T, s zarr.Store) {
	mustSet(t, s, "k", []byte("old"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Set(ctx, "k", []byte("new")); err == nil {
		t.Errorf("Set with a cancelled context succeeded")
	}
	if got := mustGet(t, s, "k"); string(got) != "old" {
		t.Errorf("after a cancelled Set, Get = %q, want %q", got, "old")
	}
}
