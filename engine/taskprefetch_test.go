package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// aheadLog records the keys prefetched from the stores of aheadStore, and
// makes reads of keys starting with prefix wait, like a slow disk's, up to
// wait for the key's prefetch (unless exempt), then take read more (a
// read's own time, in which the tasks after it do not start); late lists
// the keys read without a prefetch.
type aheadLog struct {
	prefix     string
	exempt     map[string]bool
	wait, read time.Duration
	mu         sync.Mutex
	keys       map[string]int
	prefetched *sync.Cond
	late       []string
}

func newAheadLog(prefix string, wait, read time.Duration, exempt ...string) *aheadLog {
	l := &aheadLog{prefix: prefix, wait: wait, read: read, exempt: map[string]bool{}, keys: map[string]int{}}
	for _, k := range exempt {
		l.exempt[k] = true
	}
	l.prefetched = sync.NewCond(&l.mu)
	return l
}

func (l *aheadLog) awaitPrefetch(key string) {
	if !strings.HasPrefix(key, l.prefix) {
		return
	}
	defer time.Sleep(l.read)
	deadline := time.Now().Add(l.wait)
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.keys[key] == 0 && !l.exempt[key] && time.Now().Before(deadline) {
		t := time.AfterFunc(20*time.Millisecond, l.prefetched.Broadcast)
		l.prefetched.Wait()
		t.Stop()
	}
	if l.keys[key] == 0 && !l.exempt[key] {
		l.late = append(l.late, key)
	}
}

// aheadStore is a local store whose prefetches and reads go through an
// aheadLog.
type aheadStore struct {
	zarr.Store
	log *aheadLog
}

func (s *aheadStore) Get(ctx context.Context, key string) ([]byte, error) {
	s.log.awaitPrefetch(key)
	return s.Store.Get(ctx, key)
}

func (s *aheadStore) GetInto(ctx context.Context, key string, dst []byte) (int, error) {
	s.log.awaitPrefetch(key)
	return s.Store.(zarr.ReaderInto).GetInto(ctx, key, dst)
}

func (s *aheadStore) Prefetch(ctx context.Context, key string) error {
	s.log.mu.Lock()
	s.log.keys[key]++
	s.log.prefetched.Broadcast()
	s.log.mu.Unlock()
	return s.Store.(zarr.Prefetcher).Prefetch(ctx, key)
}

// A copy of a local stored array (one chunk read and one written per task,
// no steps to prefetch within a task) prefetches the chunks of the tasks
// next to start while the running ones read and write: every chunk but
// those of the first tasks, which start at once, is prefetched before the
// task that reads it starts reading, once, and the copy is exact.
func TestPrefetchNextTasks(t *testing.T) {
	ctx := context.Background()
	spec := testSpec(t)
	dir := t.TempDir()
	values := seq(16 * 6)
	x := storedArray(t, spec, dir, "x", []int{16, 6}, []any{2, 3}, values)
	// The first two tasks (two workers) start before anything prefetches.
	log := newAheadLog("x/c/", 2*time.Second, 10*time.Millisecond, "x/c/0/0", "x/c/0/1")
	orig := openStore
	defer func() { openStore = orig }()
	openStore = func(ctx context.Context, url string) (zarr.Store, error) {
		s, err := orig(ctx, url)
		if err != nil {
			return s, err
		}
		if _, ok := s.(zarr.Prefetcher); !ok {
			t.Errorf("the local store %s cannot prefetch", url)
			return s, nil
		}
		return &aheadStore{Store: s, log: log}, nil
	}
	out, err := ops.ToZarr(x, plan.ZarrRef{Store: t.TempDir(), Path: "y"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{out})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Ops) != 1 || !p.Ops[0].Op.CopiesInput() || p.Ops[0].Op.PrefetchDepth() != 0 {
		t.Fatalf("want one copy op whose tasks take one step; got %d ops", len(p.Ops))
	}
	// One task ahead per worker; none through a Runner (its workers'
	// page caches are not this process's).
	if d := (&job{opts: Options{MaxWorkers: 2}}).taskPrefetchDepth(p.Ops[0].Op); d != 2 {
		t.Errorf("prefetch depth %d with 2 workers, want 2", d)
	}
	if d := (&job{opts: Options{MaxWorkers: 2, Runner: &loopback{}}}).taskPrefetchDepth(p.Ops[0].Op); d != 0 {
		t.Errorf("prefetch depth %d through a Runner, want 0", d)
	}
	res, err := Execute(ctx, p, Options{MaxWorkers: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Close()
	openStore = orig
	if len(log.late) > 0 {
		t.Errorf("chunks read before their prefetch: %v", log.late)
	}
	for r := range 8 {
		for c := range 2 {
			k := fmt.Sprintf("x/c/%d/%d", r, c)
			if n := log.keys[k]; n > 1 || (n == 0 && !log.exempt[k]) {
				t.Errorf("chunk %s prefetched %d times", k, n)
			}
		}
	}
	back, err := ops.FromZarr(ctx, out.Target.Store, "y", nil, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range compute(t, Options{}, back)[0] {
		if g != values[i] {
			t.Fatalf("element %d = %v, want %v", i, g, values[i])
		}
	}
}
