package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

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
// Read-ahead into buffers applies to stores the page cache does not back:
// intermediates on mem:// here, as on object stores.
func TestReadAheadFailure(t *testing.T) {
	for _, retries := range []int{1, 0} {
		spec := testSpec(t)
		spec.WorkDir = "mem://" + t.Name()
		orig := openStore
		defer func() { openStore = orig }()
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

// prefetchLog is a local store that records the keys prefetched, and
// whose reads of a key, like a slow disk's, wait (up to a few seconds) for
// the key's prefetch when it starts with prefix; late lists the keys read
// before it.
type prefetchLog struct {
	zarr.Store
	prefix     string
	mu         sync.Mutex
	keys       map[string]int
	prefetched *sync.Cond
	late       []string
}

func newPrefetchLog() *prefetchLog {
	p := &prefetchLog{keys: map[string]int{}}
	p.prefetched = sync.NewCond(&p.mu)
	return p
}

func (p *prefetchLog) GetInto(ctx context.Context, key string, dst []byte) (int, error) {
	deadline := time.Now().Add(5 * time.Second)
	p.mu.Lock()
	for strings.HasPrefix(key, p.prefix) && p.keys[key] == 0 && time.Now().Before(deadline) {
		t := time.AfterFunc(50*time.Millisecond, p.prefetched.Broadcast)
		p.prefetched.Wait()
		t.Stop()
	}
	if strings.HasPrefix(key, p.prefix) && p.keys[key] == 0 {
		p.late = append(p.late, key)
	}
	p.mu.Unlock()
	return p.Store.(zarr.ReaderInto).GetInto(ctx, key, dst)
}

func (p *prefetchLog) Prefetch(ctx context.Context, key string) error {
	p.mu.Lock()
	p.keys[key]++
	p.prefetched.Broadcast()
	p.mu.Unlock()
	return p.Store.(zarr.Prefetcher).Prefetch(ctx, key)
}

// A reduction streaming a local intermediate prefetches every chunk it
// reads into the page cache, holds no read-ahead buffers (each task within
// its projection, which counts none), and computes what it computes
// without prefetching.
func TestPrefetchLocalInputs(t *testing.T) {
	run := func(prefetch bool) (map[string]int, string, []float64) {
		spec := testSpec(t)
		log := newPrefetchLog()
		orig := openStore
		defer func() { openStore = orig }()
		openStore = func(ctx context.Context, url string) (zarr.Store, error) {
			s, err := orig(ctx, url)
			if err != nil || !prefetch {
				return s, err
			}
			if _, ok := s.(zarr.Prefetcher); !ok {
				t.Errorf("the local store %s cannot prefetch", url)
				return s, nil
			}
			log.Store = s
			return log, nil
		}
		x := literal(t, spec, []int{24, 6}, []any{2, 3}, seq(144))
		y, err := ops.Elemwise("negative", ops.Operand{Array: x})
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
		if len(p.Ops) != 2 || last.Inputs[0].Array != y {
			t.Fatalf("want negative stored, then the sum reading it; got %d ops", len(p.Ops))
		}
		if last.ReadsAhead() || last.PrefetchDepth() == 0 {
			t.Fatalf("the sum of a local input should prefetch (%d), not read ahead (%d)", last.PrefetchDepth(), last.ReadAheadDepth())
		}
		if d := (&job{opts: Options{MaxWorkers: 2}}).taskPrefetchDepth(last); d != 0 {
			t.Fatalf("the sum prefetches its own steps ahead, not the next tasks' (depth %d)", d)
		}
		log.prefix = y.Name + "/c/"
		var events []Event
		var mu sync.Mutex
		res, err := Execute(context.Background(), p, Options{MaxWorkers: 2}, func(ev Event) {
			mu.Lock()
			events = append(events, ev)
			mu.Unlock()
		})
		if err != nil {
			t.Fatal(err)
		}
		defer res.Close()
		for _, ev := range events {
			if ev.Type == TaskEnd && ev.PeakAllocated > ev.ProjectedMem {
				t.Errorf("task %v of %s allocated %d > projected %d", ev.Block, ev.Op, ev.PeakAllocated, ev.ProjectedMem)
			}
		}
		buf := make([]byte, s.NBytes())
		if err := res.Read(context.Background(), 0, buf); err != nil {
			t.Fatal(err)
		}
		if len(log.late) > 0 {
			t.Errorf("chunks read before their prefetch: %v", log.late)
		}
		return log.keys, y.Name, toFloats(s.DType, buf)
	}
	keys, y, got := run(true)
	_, _, plain := run(false)
	for i, v := range got {
		want := 0.0
		for r := range 24 {
			want -= float64(r*6 + i)
		}
		if v != want || plain[i] != want {
			t.Fatalf("element %d = %v with prefetch, %v without, want %v", i, v, plain[i], want)
		}
	}
	// The sum reads y's 12×2 chunks; each is prefetched (once per task
	// that reads it), and nothing else is.
	for r := range 12 {
		for c := range 2 {
			if k := fmt.Sprintf("%s/c/%d/%d", y, r, c); keys[k] != 1 {
				t.Errorf("chunk %s prefetched %d times, want 1", k, keys[k])
			}
		}
	}
	if len(keys) != 24 {
		t.Errorf("%d keys prefetched, want y's 24 chunks: %v", len(keys), keys)
	}
}
