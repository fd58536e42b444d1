package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// loopback is a Runner whose "workers" are goroutines that get the plan
// only as JSON, as a remote worker does: it proves the batch protocol and
// that workers find every intermediate by its key.
type loopback struct {
	graph []byte
	mu    sync.Mutex
	plans map[string]*plan.Plan // one rebuilt plan per "worker"
	calls atomic.Int64
	tasks atomic.Int64
	// fail, if set, decides per call whether it dies before running.
	fail func(b Batch) error
}

func newLoopback(t *testing.T, outs ...*plan.Array) *loopback {
	t.Helper()
	g, err := plan.Marshal(outs)
	if err != nil {
		t.Fatal(err)
	}
	return &loopback{graph: g, plans: map[string]*plan.Plan{}}
}

func (l *loopback) workerPlan(worker string) (*plan.Plan, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p, ok := l.plans[worker]; ok {
		return p, nil
	}
	outs, err := plan.Unmarshal(l.graph)
	if err != nil {
		return nil, err
	}
	p, err := plan.Build(outs)
	if err != nil {
		return nil, err
	}
	p.Fuse()
	l.plans[worker] = p
	return p, nil
}

func (l *loopback) RunBatch(ctx context.Context, b Batch) ([]TaskStat, error) {
	n := l.calls.Add(1)
	if l.fail != nil {
		if err := l.fail(b); err != nil {
			return nil, err
		}
	}
	p, err := l.workerPlan([]string{"w0", "w1"}[n%2])
	if err != nil {
		return nil, err
	}
	l.tasks.Add(int64(len(b.Blocks)))
	return RunTasks(ctx, p, b)
}

// runnerPlan is a plan with a stored intermediate (a rechunk), a tree
// reduction and a Zarr target.
func runnerPlan(t *testing.T, spec *plan.Spec, target string) (sum, stored *plan.Array) {
	t.Helper()
	x := literal(t, spec, []int{12, 10}, []any{3, 4}, seq(120))
	a, _ := ops.Elemwise("negative", ops.Operand{Array: x})
	r, err := ops.Rechunk(a, []any{12, 2})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ops.Reduce("sum", r, []int{0}, false, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	z, err := ops.ToZarr(r, plan.ZarrRef{Store: target, Path: "r"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, z
}

func runWith(t *testing.T, r Runner, opts Options, outs ...*plan.Array) (*Result, []Event, error) {
	t.Helper()
	p, err := plan.Build(outs)
	if err != nil {
		t.Fatal(err)
	}
	p.Fuse()
	opts.Runner = r
	var mu sync.Mutex
	var evs []Event
	res, err := Execute(context.Background(), p, opts, func(e Event) {
		mu.Lock()
		evs = append(evs, e)
		mu.Unlock()
	})
	return res, evs, err
}

func readFloats(t *testing.T, res *Result, i int) []float64 {
	t.Helper()
	a := res.Outputs()[i]
	buf := make([]byte, a.NBytes())
	if err := res.Read(context.Background(), i, buf); err != nil {
		t.Fatal(err)
	}
	return toFloats(a.DType, buf)
}

func TestRunnerMatchesInProcess(t *testing.T) {
	spec := testSpec(t)
	want := func() []float64 {
		s, _ := runnerPlan(t, spec, t.TempDir())
		return compute(t, Options{}, s)[0]
	}()
	s, z := runnerPlan(t, spec, t.TempDir())
	lb := newLoopback(t, s, z)
	res, evs, err := runWith(t, lb, Options{MaxWorkers: 2, TasksPerBatch: 3}, s, z)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	if got := readFloats(t, res, 0); !slices.Equal(got, want) {
		t.Fatalf("runner result %v, in process %v", got, want)
	}
	if got := readFloats(t, res, 1); got[5] != -5 || got[119] != -119 {
		t.Fatalf("the Zarr target holds %v", got)
	}
	var ends int64
	for _, e := range evs {
		if e.Type == TaskEnd {
			ends += e.NumTasks
			if e.FunctionStart.IsZero() || e.FunctionEnd.Before(e.FunctionStart) || e.Block == nil {
				t.Fatalf("task end without the worker's timings: %+v", e)
			}
		}
	}
	if ends != res.Stats.NumTasks || lb.tasks.Load() != res.Stats.NumTasks {
		t.Fatalf("%d task ends and %d tasks run for a plan of %d tasks", ends, lb.tasks.Load(), res.Stats.NumTasks)
	}
	t.Logf("%d tasks in %d calls", lb.tasks.Load(), lb.calls.Load())
	if lb.calls.Load() >= lb.tasks.Load() {
		t.Fatalf("%d calls for %d tasks: tasks were not batched", lb.calls.Load(), lb.tasks.Load())
	}
}

func TestRunnerRetriesALostBatch(t *testing.T) {
	spec := testSpec(t)
	s, z := runnerPlan(t, spec, t.TempDir())
	lb := newLoopback(t, s, z)
	var lost atomic.Int64
	lb.fail = func(b Batch) error {
		// The first call of every op dies twice, as a killed worker would.
		if b.Blocks[0][0] == 0 && slices.Equal(b.Blocks[0], make([]int, len(b.Blocks[0]))) && b.Attempt < 3 {
			lost.Add(1)
			return errors.New("worker died")
		}
		return nil
	}
	res, _, err := runWith(t, lb, Options{MaxWorkers: 2, Retries: 2, TasksPerBatch: 2}, s, z)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	t.Logf("%d calls lost, %d tasks run for %d", lost.Load(), lb.tasks.Load(), res.Stats.NumTasks)
	if lost.Load() == 0 {
		t.Fatal("no call was lost")
	}
	if lb.tasks.Load() != res.Stats.NumTasks {
		t.Fatalf("%d tasks ran for a plan of %d: lost batches re-ran more than themselves", lb.tasks.Load(), res.Stats.NumTasks)
	}
	// A permanent error (a Python function raised) is not retried.
	s2, z2 := runnerPlan(t, spec, t.TempDir())
	lb2 := newLoopback(t, s2, z2)
	lb2.fail = func(Batch) error { return &BatchError{Message: "ValueError: bad", Permanent: true} }
	if _, _, err := runWith(t, lb2, Options{MaxWorkers: 1, Retries: 2}, s2, z2); err == nil || lb2.calls.Load() != 1 {
		t.Fatalf("permanent error: %v after %d calls, want a failure after 1", err, lb2.calls.Load())
	}
}

func TestRunnerResumesTaskByTask(t *testing.T) {
	spec := testSpec(t)
	target := t.TempDir()
	s, z := runnerPlan(t, spec, target)
	lb := newLoopback(t, s, z)
	// The first run dies (the coordinator gives up) after some batches.
	lb.fail = func(b Batch) error {
		if lb.calls.Load() > 4 {
			return &BatchError{Message: "the cluster went away", Permanent: true}
		}
		return nil
	}
	if _, _, err := runWith(t, lb, Options{MaxWorkers: 1, Retries: 0, TasksPerBatch: 2, Resume: true}, s, z); err == nil {
		t.Fatal("the first run did not fail")
	}
	firstTasks := lb.tasks.Load()
	if firstTasks == 0 {
		t.Fatal("the first run ran nothing")
	}
	// Built again (as after unpickling elsewhere) and resumed: only the
	// tasks whose chunks are missing run.
	s2, z2 := runnerPlan(t, spec, target)
	lb2 := newLoopback(t, s2, z2)
	res, _, err := runWith(t, lb2, Options{MaxWorkers: 2, TasksPerBatch: 2, Resume: true}, s2, z2)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	var skipped int64
	for _, o := range res.Stats.Ops {
		skipped += o.SkippedTasks
		if o.Skipped {
			skipped += o.NumTasks
		}
	}
	t.Logf("first run: %d tasks; resumed run: %d tasks run, %d skipped of %d", firstTasks, lb2.tasks.Load(), skipped, res.Stats.NumTasks)
	if skipped == 0 || lb2.tasks.Load()+skipped != res.Stats.NumTasks {
		t.Fatalf("resumed run ran %d tasks and skipped %d of %d", lb2.tasks.Load(), skipped, res.Stats.NumTasks)
	}
	want := compute(t, Options{}, func() *plan.Array { a, _ := runnerPlan(t, spec, t.TempDir()); return a }())[0]
	if got := readFloats(t, res, 0); !slices.Equal(got, want) {
		t.Fatalf("resumed result %v, want %v", got, want)
	}
}

func TestRunTasksRefusesBadBatches(t *testing.T) {
	spec := testSpec(t)
	s, z := runnerPlan(t, spec, t.TempDir())
	p, _ := plan.Build([]*plan.Array{s, z})
	p.Fuse()
	op := p.Ops[len(p.Ops)-1].Op.Name
	for _, b := range []Batch{
		{Op: "op-999", Blocks: [][]int{{0}}, Dir: t.TempDir()},
		{Op: op, Blocks: [][]int{{0, 0, 0}}, Dir: t.TempDir()},
		{Op: op, Blocks: [][]int{{99}}, Dir: t.TempDir()},
		{Op: op, Blocks: [][]int{{0}}},
	} {
		if _, err := RunTasks(context.Background(), p, b); err == nil {
			t.Errorf("batch %+v was accepted", b)
		}
	}
	// An intermediate the coordinator never created is an error, not fill values.
	var reader string
	for _, o := range p.Ops {
		for _, in := range o.Op.InputArrays() {
			if in.Op != nil && in.Target == nil {
				reader = o.Op.Name
			}
		}
	}
	dir := t.TempDir()
	_, err := RunTasks(context.Background(), p, Batch{Op: reader, Blocks: [][]int{make([]int, len(opByName(p, reader).Op.TaskGrid()))}, Dir: dir})
	if err == nil || !errors.Is(err, zarr.ErrNotFound) {
		t.Errorf("a missing intermediate gave %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir)); len(entries) != 0 {
		t.Errorf("a worker created %d entries in the intermediates' directory", len(entries))
	}
}

func opByName(p *plan.Plan, name string) *plan.OpInfo {
	for _, o := range p.Ops {
		if o.Op.Name == name {
			return o
		}
	}
	return nil
}
