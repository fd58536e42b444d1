package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// flakyOpener opens stores whose first `failures` chunk writes fail.
func flakyOpener(orig func(context.Context, string) (zarr.Store, error), failures int) func(context.Context, string) (zarr.Store, error) {
	return func(ctx context.Context, url string) (zarr.Store, error) {
		s, err := orig(ctx, url)
		if err != nil {
			return nil, err
		}
		return &flakyStore{Store: s, failures: failures}, nil
	}
}

// slowStore delays chunk writes by delay(key, call), where call counts the
// writes of that key so far; a delay ends early when the write's context is
// cancelled, and the write then fails.
type slowStore struct {
	zarr.Store
	delay func(key string, call int) time.Duration
	mu    sync.Mutex
	calls map[string]int
}

func (s *slowStore) Set(ctx context.Context, key string, v []byte) error {
	if !strings.HasSuffix(key, "zarr.json") {
		s.mu.Lock()
		call := s.calls[key]
		s.calls[key]++
		s.mu.Unlock()
		select {
		case <-time.After(s.delay(key, call)):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.Store.Set(ctx, key, v)
}

// useSlowStores makes the engine open slow stores until the test ends.
func useSlowStores(t *testing.T, delay func(key string, call int) time.Duration) {
	orig := openStore
	t.Cleanup(func() { openStore = orig })
	openStore = func(ctx context.Context, url string) (zarr.Store, error) {
		s, err := zarr.OpenStore(ctx, url)
		if err != nil {
			return nil, err
		}
		return &slowStore{Store: s, delay: delay, calls: map[string]int{}}, nil
	}
}

// maxOverlap returns the most task intervals open at once.
func maxOverlap(evs []Event) int {
	most := 0
	for _, a := range evs {
		open := 0
		for _, b := range evs {
			if !b.FunctionStart.After(a.FunctionStart) && b.FunctionEnd.After(a.FunctionStart) {
				open++
			}
		}
		most = max(most, open)
	}
	return most
}

func runLogged(t *testing.T, opts Options, outs ...*plan.Array) (*Result, *eventLog) {
	t.Helper()
	p, err := plan.Build(outs)
	if err != nil {
		t.Fatal(err)
	}
	var log eventLog
	res, err := Execute(context.Background(), p, opts, log.add)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Close() })
	return res, &log
}

func TestBatchSizeBoundsTasksInFlight(t *testing.T) {
	useSlowStores(t, func(string, int) time.Duration { return 5 * time.Millisecond })
	spec := testSpec(t)
	x := literal(t, spec, []int{8}, []any{1}, seq(8))
	for _, batch := range []int{1, 2} {
		y, _ := ops.Elemwise("negative", ops.Operand{Array: x})
		_, log := runLogged(t, Options{MaxWorkers: 4, BatchSize: batch}, y)
		tasks := log.tasks()
		if len(tasks) != 8 {
			t.Fatalf("%d task events", len(tasks))
		}
		if n := maxOverlap(tasks); n > batch {
			t.Errorf("batch %d: %d tasks ran at once", batch, n)
		}
		if batch == 1 {
			for i := 1; i < len(tasks); i++ {
				if tasks[i].TaskCreate.Before(tasks[i-1].TaskResult) {
					t.Errorf("task %d was created before the result of task %d", i, i-1)
				}
			}
		}
	}
}

func TestComputeArraysInParallel(t *testing.T) {
	useSlowStores(t, func(string, int) time.Duration { return 20 * time.Millisecond })
	spec := testSpec(t)
	x := literal(t, spec, []int{4}, []any{1}, seq(4))
	w := literal(t, spec, []int{4}, []any{1}, seq(4))
	for _, parallel := range []bool{false, true} {
		a, _ := ops.Elemwise("negative", ops.Operand{Array: x})
		b, _ := ops.Elemwise("positive", ops.Operand{Array: w})
		c, _ := ops.Elemwise("add", ops.Operand{Array: a}, ops.Operand{Array: b})
		p, _ := plan.Build([]*plan.Array{c}) // unfused: three ops in two stages
		var log eventLog
		res, err := Execute(context.Background(), p, Options{MaxWorkers: 8, ComputeArraysInParallel: parallel}, log.add)
		if err != nil {
			t.Fatal(err)
		}
		res.Close()
		var ta, tb []Event
		for _, ev := range log.tasks() {
			switch ev.Op {
			case a.Op.Name:
				ta = append(ta, ev)
			case b.Op.Name:
				tb = append(tb, ev)
			}
		}
		overlap := maxOverlap(append(ta, tb...))
		if parallel && overlap <= 4 {
			t.Errorf("in parallel, at most %d tasks of the two independent ops overlapped", overlap)
		}
		if !parallel && overlap > 4 {
			t.Errorf("one op at a time, yet %d tasks overlapped", overlap)
		}
		// The consumer starts after both producers end, either way.
		var ends, cStart int
		for i, ev := range log.events {
			if ev.Type == OperationEnd && (ev.Op == a.Op.Name || ev.Op == b.Op.Name) {
				ends = max(ends, i)
			}
			if ev.Type == OperationStart && ev.Op == c.Op.Name {
				cStart = i
			}
		}
		if cStart < ends {
			t.Errorf("parallel %v: %s started before its inputs were complete", parallel, c.Op.Name)
		}
		got := compute(t, Options{ComputeArraysInParallel: parallel}, c)[0]
		for i, g := range got {
			if g != 0 {
				t.Fatalf("c[%d] = %v, want 0", i, g)
			}
		}
	}
}

func TestBackupOfAStraggler(t *testing.T) {
	const slowBlock = "/c/7"
	// Every chunk write takes 10 ms, except the first write of block 7,
	// which would take a minute.
	useSlowStores(t, func(key string, call int) time.Duration {
		if strings.HasSuffix(key, slowBlock) && call == 0 {
			return time.Minute
		}
		return 10 * time.Millisecond
	})
	spec := testSpec(t)
	x := literal(t, spec, []int{20}, []any{1}, seq(20))
	y, _ := ops.Elemwise("negative", ops.Operand{Array: x})
	start := time.Now()
	res, log := runLogged(t, Options{MaxWorkers: 4, UseBackups: true, Retries: 0}, y)
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("took %v: the straggler was not backed up", d)
	}
	// The straggler must be backed up; on a loaded machine an ordinary task
	// may pass the 3x-median threshold too, so more backups are allowed.
	if res.Stats.Backups < 1 {
		t.Errorf("%d backups, want at least 1", res.Stats.Backups)
	}
	tasks := log.tasks()
	if len(tasks) != 20 {
		t.Fatalf("%d task events, want 20 (one per task, whichever copy won)", len(tasks))
	}
	for _, ev := range tasks {
		if ev.Block[0] == 7 && !ev.Backup {
			t.Errorf("block 7 (the straggler) was not finished by its backup")
		}
	}
	buf := make([]byte, y.NBytes())
	if err := res.Read(context.Background(), 0, buf); err != nil {
		t.Fatal(err)
	}
	for i, g := range toFloats(y.DType, buf) {
		if g != -float64(i) {
			t.Fatalf("y[%d] = %v", i, g)
		}
	}
	// Without backups the straggler holds the computation up.
	useSlowStores(t, func(key string, call int) time.Duration {
		if strings.HasSuffix(key, slowBlock) && call == 0 {
			return 300 * time.Millisecond
		}
		return 0
	})
	z, _ := ops.Elemwise("negative", ops.Operand{Array: x})
	start = time.Now()
	res, _ = runLogged(t, Options{MaxWorkers: 4}, z)
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("took %v with a straggler of 300ms", d)
	}
	if res.Stats.Backups != 0 {
		t.Errorf("%d backups without use_backups", res.Stats.Backups)
	}
}

func TestBackupThreshold(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	if _, ok := backupThreshold(9, ms(1, 1, 1, 1, 1, 1, 1, 1)); ok {
		t.Error("a backup with fewer than 10 tasks started")
	}
	if _, ok := backupThreshold(10, ms(1, 1, 1, 1)); ok {
		t.Error("a backup with fewer than half the started tasks finished")
	}
	// 10 started, 5 finished: the 5th shortest duration, times 3.
	if d, ok := backupThreshold(10, ms(9, 2, 7, 4, 5)); !ok || d != 27*time.Millisecond {
		t.Errorf("threshold %v %v, want 27ms", d, ok)
	}
	if d, ok := backupThreshold(12, ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)); !ok || d != 18*time.Millisecond {
		t.Errorf("threshold %v %v, want 18ms", d, ok)
	}
}

// Two copies of a task may write the same chunk at once (a backup racing
// its original). The store must never expose a torn chunk: a reader sees
// one complete write or the other.
func TestConcurrentWritesOfAChunkAreAtomic(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := zarr.OpenStore(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer zarr.Close(st)
	meta := zarr.ArrayMetadata{Shape: []int{1 << 18}, ChunkShape: []int{1 << 18}, DataType: zarr.Float64,
		Codecs: []zarr.Codec{zarr.BytesCodec()}}
	z, err := zarr.CreateArray(ctx, st, "a", meta)
	if err != nil {
		t.Fatal(err)
	}
	z.SetWriteEmptyChunks(true)
	chunks := [2][]byte{make([]byte, z.ChunkBytes()), make([]byte, z.ChunkBytes())}
	for i := range chunks[1] {
		chunks[1][i] = 0xAB
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 16)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 30 {
				if err := z.WriteChunk(ctx, []int{0}, chunks[w%2]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var rg sync.WaitGroup
	rg.Add(1)
	go func() {
		defer rg.Done()
		buf := make([]byte, z.ChunkBytes())
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := z.ReadChunk(ctx, []int{0}, buf); err != nil {
				continue // not written yet
			}
			for _, b := range buf[1:] {
				if b != buf[0] {
					errs <- errors.New("a reader saw a torn chunk")
					return
				}
			}
		}
	}()
	wg.Wait()
	close(stop)
	rg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// No temporary files are left behind.
	_ = filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(path, ".tmp") {
			t.Errorf("left %s", path)
		}
		return nil
	})
}
