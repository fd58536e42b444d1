package engine

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// failingReads fails the first reads of chunk keys ending in suffix.
type failingReads struct {
	zarr.Store
	suffix   string
	mu       sync.Mutex
	failures int
}

func (f *failingReads) Get(ctx context.Context, key string) ([]byte, error) {
	f.mu.Lock()
	fail := f.failures > 0 && strings.HasSuffix(key, f.suffix)
	if fail {
		f.failures--
	}
	f.mu.Unlock()
	if fail {
		return nil, errors.New("injected read failure")
	}
	return f.Store.Get(ctx, key)
}

// A read that fails while a task reads ahead (the 4th of 8 stored blocks a
// reduction folds) fails the task like any read: retried, then reported,
// with every buffer freed.
func TestReadAheadFailure(t *testing.T) {
	for _, retries := range []int{1, 0} {
		spec := testSpec(t)
		orig := openStore
		openStore = func(ctx context.Context, url string) (zarr.Store, error) {
			s, err := orig(ctx, url)
			if err != nil {
				return nil, err
			}
			return &failingReads{Store: s, suffix: "c/3/0", failures: 1}, nil
		}
		x := literal(t, spec, []int{8, 4}, []any{2, 4}, seq(32))
		y, err := ops.Rechunk(x, []any{1, 4})
		if err != nil {
			t.Fatal(err)
		}
		s, err := ops.Reduce("sum", y, []int{0}, false, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.Build([]*plan.Array{s})
		if err != nil {
			t.Fatal(err)
		}
		last := p.Ops[len(p.Ops)-1].Op
		if !last.ReadsAhead() {
			t.Fatal("the reduction should read ahead")
		}
		before := processAllocator.cur.Load()
		res, err := Execute(context.Background(), p, Options{MaxWorkers: 2, Retries: retries}, nil)
		openStore = orig
		if retries == 0 {
			var te *TaskError
			if !errors.As(err, &te) || !strings.Contains(err.Error(), "injected read failure") {
				t.Fatalf("got %v, want the injected read failure as a task error", err)
			}
		} else {
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, s.NBytes())
			if err := res.Read(context.Background(), 0, buf); err != nil {
				t.Fatal(err)
			}
			res.Close()
			for i, v := range toFloats(s.DType, buf) {
				want := 0.0
				for r := range 8 {
					want += float64(r*4 + i)
				}
				if v != want {
					t.Fatalf("element %d = %v, want %v", i, v, want)
				}
			}
		}
		if after := processAllocator.cur.Load(); after != before {
			t.Fatalf("%d bytes of chunk buffers still held after the computation", after-before)
		}
	}
}
