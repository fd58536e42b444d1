package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// Computations of the same array at once share its keyed intermediates:
// none may delete one another still reads (they once read as zeros).
func TestConcurrentResumedComputationsShareIntermediates(t *testing.T) {
	spec := testSpec(t)
	build := func() *plan.Array {
		x := literal(t, spec, []int{8, 6}, []any{1, 6}, seq(48))
		a, _ := ops.Elemwise("negative", ops.Operand{Array: x})
		r, _ := ops.Rechunk(a, []any{8, 1})
		s, _ := ops.Reduce("sum", r, []int{0}, false, nil, 0)
		return s
	}
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			s := build()
			p, err := plan.Build([]*plan.Array{s})
			if err != nil {
				errs[i] = err
				return
			}
			res, err := Execute(context.Background(), p, Options{Resume: i%2 == 0, Runner: nil, MaxWorkers: 2}, nil)
			if err != nil {
				errs[i] = err
				return
			}
			defer res.Close()
			buf := make([]byte, s.NBytes())
			if errs[i] = res.Read(context.Background(), 0, buf); errs[i] != nil {
				return
			}
			got := toFloats(s.DType, buf)
			for j := range 6 {
				want := 0.0
				for r := range 8 {
					want -= float64(r*6 + j)
				}
				if got[j] != want {
					errs[i] = errors.New("wrong sum")
				}
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("computation %d: %v", i, err)
		}
	}
	// The last user deleted the shared intermediates: only the resumed
	// computations' output (kept for d = -c) is left.
	entries, _ := os.ReadDir(resumeDir(spec.WorkDir))
	if len(entries) > 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("left in the resume dir: %v", names)
	}
}

func TestLockSharedThenRemoveIfLast(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "k")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	a, err := lockShared(lockPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	b, err := lockShared(lockPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.removeIfLast(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("removed while another user held it: %v", err)
	}
	if err := b.removeIfLast(dir); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, lockPath(dir)} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left by the last user: %v", p, err)
		}
	}
	if lockPath("s3://bucket/work/k") != "" {
		t.Error("object-store intermediates have no lock file")
	}
}

// An intermediate chunk deleted while the computation runs is an error
// naming it, never the fill value.
func TestMissingIntermediateChunkIsAnError(t *testing.T) {
	spec := testSpec(t)
	x := literal(t, spec, []int{8, 6}, []any{1, 6}, seq(48))
	a, _ := ops.Elemwise("negative", ops.Operand{Array: x})
	r, _ := ops.Rechunk(a, []any{8, 1})
	s, _ := ops.Reduce("sum", r, []int{0}, false, nil, 0)
	p, _ := plan.Build([]*plan.Array{s})
	rechunkKey, _ := plan.Key(r)
	orig := openStore
	defer func() { openStore = orig }()
	openStore = func(ctx context.Context, url string) (zarr.Store, error) {
		st, err := orig(ctx, url)
		return &vanishingStore{Store: st, keys: []string{rechunkKey + "/c/0/3", r.Name + "/c/0/3"}}, err
	}
	for _, resume := range []bool{false, true} {
		_, err := Execute(context.Background(), p, Options{Resume: resume, Retries: 0}, nil)
		if !errors.Is(err, zarr.ErrMissingChunk) {
			t.Errorf("resume=%v: got %v, want an error wrapping ErrMissingChunk", resume, err)
		}
	}
}

// vanishingStore loses one chunk right after it is written.
type vanishingStore struct {
	zarr.Store
	keys []string // by suffix
}

func (v *vanishingStore) Set(ctx context.Context, key string, b []byte) error {
	if err := v.Store.Set(ctx, key, b); err != nil {
		return err
	}
	for _, k := range v.keys {
		if strings.HasSuffix(key, "/"+k) || key == k {
			return v.Store.Delete(ctx, key)
		}
	}
	return nil
}
