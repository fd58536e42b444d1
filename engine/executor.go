package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
)

// Options configure an execution.
type Options struct {
	// Executor is "threads" (default: a goroutine pool) or "single-threaded".
	Executor string
	// MaxWorkers bounds the tasks running at once (default: number of cores).
	MaxWorkers int
	// Retries is how many times a failed task is retried (default 2).
	Retries int
	// ProcessBudget bounds the projected memory of all running tasks
	// together (default: allowed_mem × MaxWorkers).
	ProcessBudget int64
}

// DefaultRetries is the number of extra attempts of a failed task.
const DefaultRetries = 2

func (o Options) withDefaults(spec *plan.Spec) (Options, error) {
	switch o.Executor {
	case "", "threads":
		o.Executor = "threads"
	case "single-threaded":
		o.MaxWorkers = 1
	default:
		return o, plan.Errorf(plan.ErrValue, "unknown executor %q: use \"threads\" or \"single-threaded\"", o.Executor)
	}
	if o.MaxWorkers < 0 {
		return o, plan.Errorf(plan.ErrValue, "max_workers must be positive, got %d", o.MaxWorkers)
	}
	if o.MaxWorkers == 0 {
		o.MaxWorkers = runtime.NumCPU()
	}
	if o.Retries < 0 {
		o.Retries = DefaultRetries
	}
	if o.ProcessBudget <= 0 {
		o.ProcessBudget = spec.AllowedMem * int64(o.MaxWorkers)
	}
	return o, nil
}

// TaskEvent reports a finished task.
type TaskEvent struct {
	Op            string
	Block         []int
	Start, End    time.Time
	ProjectedMem  int64
	PeakAllocated int64 // bytes the task allocated from the engine at its peak
	Attempts      int
}

// OpStats summarises one op of a computation.
type OpStats struct {
	Name          string `json:"name"`
	Func          string `json:"func"`
	NumTasks      int64  `json:"num_tasks"`
	ProjectedMem  int64  `json:"projected_mem"`
	PeakAllocated int64  `json:"peak_allocated"`
}

// Stats summarise a computation.
type Stats struct {
	MaxProjectedMem int64     `json:"max_projected_mem"`
	AllowedMem      int64     `json:"allowed_mem"`
	ReservedMem     int64     `json:"reserved_mem"`
	NumOps          int       `json:"num_ops"`
	NumTasks        int64     `json:"num_tasks"`
	ProcessBudget   int64     `json:"process_budget"`
	MaxWorkers      int       `json:"max_workers"`
	PeakAllocated   int64     `json:"peak_allocated"`
	RSSStart        int64     `json:"rss_start"`
	PeakRSS         int64     `json:"peak_rss"`
	Seconds         float64   `json:"seconds"`
	Ops             []OpStats `json:"ops"`
}

// Result is a finished computation: its outputs can be read until Close.
type Result struct {
	job   *job
	Stats Stats
}

// job is one computation's state.
type job struct {
	plan    *plan.Plan
	opts    Options
	storage *storage
	alloc   *Allocator
	dir     string
}

var computeCounter atomic.Int64

// Allocator used by every computation of this process.
var processAllocator = NewAllocator()

// ProcessAllocator returns the allocator of this process's chunk buffers.
func ProcessAllocator() *Allocator { return processAllocator }

// Execute validates p and runs its ops in order, each op's tasks in
// parallel under the memory-aware admission of opts. onTask, if not nil,
// is called after every task (from worker goroutines).
func Execute(ctx context.Context, p *plan.Plan, opts Options, onTask func(TaskEvent)) (*Result, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	opts, err := opts.withDefaults(p.Spec)
	if err != nil {
		return nil, err
	}
	for _, o := range p.Ops {
		if o.ProjectedMem > opts.ProcessBudget {
			return nil, plan.Errorf(plan.ErrValue, "projected memory of %s (%s) exceeds the process budget (%s)",
				o.Op, plan.FormatBytes(o.ProjectedMem), plan.FormatBytes(opts.ProcessBudget))
		}
	}
	dir := joinURL(contextDir(p.Spec.WorkDir), fmt.Sprintf("compute-%03d", computeCounter.Add(1)))
	j := &job{plan: p, opts: opts, storage: newStorage(dir), alloc: processAllocator, dir: dir}
	res := &Result{job: j}
	st := &res.Stats
	*st = Stats{MaxProjectedMem: p.MaxProjectedMem(), AllowedMem: p.Spec.AllowedMem, ReservedMem: p.Spec.ReservedMem,
		NumOps: len(p.Ops), NumTasks: p.NumTasks(), ProcessBudget: opts.ProcessBudget, MaxWorkers: opts.MaxWorkers}
	resetPeakRSS()
	st.RSSStart = currentRSS()
	j.alloc.ResetPeak()
	j.alloc.SetPoolLimit(opts.ProcessBudget)
	defer j.alloc.SetPoolLimit(0)
	start := time.Now()
	for _, o := range p.Ops {
		peak, err := j.runOp(ctx, o, onTask)
		st.Ops = append(st.Ops, OpStats{Name: o.Op.Name, Func: o.Op.Func, NumTasks: o.NumTasks, ProjectedMem: o.ProjectedMem, PeakAllocated: peak})
		if err != nil {
			res.Close()
			return nil, err
		}
	}
	st.Seconds = time.Since(start).Seconds()
	st.PeakAllocated = j.alloc.Peak()
	st.PeakRSS = peakRSS()
	return res, nil
}

// runOp runs every task of one op and returns the largest task peak.
func (j *job) runOp(ctx context.Context, o *plan.OpInfo, onTask func(TaskEvent)) (int64, error) {
	op := o.Op
	kernel, err := ops.NewTaskKernel(op)
	if err != nil {
		return 0, err
	}
	if _, err := j.storage.create(ctx, op.Output); err != nil {
		return 0, err
	}
	if op.Output.Size() == 0 {
		return 0, nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := semaphore.NewWeighted(j.opts.ProcessBudget)
	blocks := make(chan []int)
	var wg sync.WaitGroup
	var peak atomic.Int64
	for range j.opts.MaxWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for block := range blocks {
				if err := sem.Acquire(ctx, o.ProjectedMem); err != nil {
					return
				}
				ev, err := j.runTaskWithRetries(ctx, kernel, o, block)
				sem.Release(o.ProjectedMem)
				if err != nil {
					cancel(err)
					return
				}
				for {
					p := peak.Load()
					if ev.PeakAllocated <= p || peak.CompareAndSwap(p, ev.PeakAllocated) {
						break
					}
				}
				if onTask != nil {
					onTask(ev)
				}
			}
		}()
	}
	nb := op.Output.NumBlocks()
	block := make([]int, len(nb))
feed:
	for {
		select {
		case blocks <- append([]int(nil), block...):
		case <-ctx.Done():
			break feed
		}
		d := len(nb) - 1
		for ; d >= 0; d-- {
			block[d]++
			if block[d] < nb[d] {
				break
			}
			block[d] = 0
		}
		if d < 0 {
			break
		}
	}
	close(blocks)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return peak.Load(), err
	}
	return peak.Load(), nil
}

// runTaskWithRetries runs a task, retrying failures (not cancellation).
func (j *job) runTaskWithRetries(ctx context.Context, k *ops.TaskKernel, o *plan.OpInfo, block []int) (TaskEvent, error) {
	ev := TaskEvent{Op: o.Op.Name, Block: block, ProjectedMem: o.ProjectedMem, Start: time.Now()}
	var err error
	for attempt := 0; attempt <= j.opts.Retries; attempt++ {
		ev.Attempts = attempt + 1
		ev.PeakAllocated, err = j.runTask(ctx, k, o.Op, block)
		if err == nil || ctx.Err() != nil {
			break
		}
	}
	ev.End = time.Now()
	if err != nil {
		if ctx.Err() != nil && context.Cause(ctx) != nil {
			return ev, context.Cause(ctx)
		}
		return ev, &TaskError{Op: o.Op.String(), Block: block, Attempts: ev.Attempts, Err: err}
	}
	return ev, nil
}

// TaskError is a task that failed after all its attempts.
type TaskError struct {
	Op       string
	Block    []int
	Attempts int
	Err      error
}

func (e *TaskError) Error() string {
	return fmt.Sprintf("%s failed on block %v after %d attempts: %v", e.Op, e.Block, e.Attempts, e.Err)
}

func (e *TaskError) Unwrap() error { return e.Err }

// errPanic marks an error recovered from a panic inside a task.
var errPanic = errors.New("engine: internal error")

// runTask computes and writes one output block. It returns the peak bytes
// the task allocated. A panic inside becomes an error.
func (j *job) runTask(ctx context.Context, k *ops.TaskKernel, op *plan.Op, block []int) (peak int64, err error) {
	ta := &taskAllocator{parent: j.alloc}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: panic: %v\n%s", errPanic, r, debug.Stack())
		}
		ta.freeAll()
		peak = ta.peak
	}()
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	out := op.Output
	z, err := j.storage.array(ctx, out)
	if err != nil {
		return 0, err
	}
	outShape := out.BlockShape(block)
	outBytes := int(plan.Prod(outShape)) * out.DType.Size()
	buf := ta.Allocate(max(outBytes, z.ChunkBytes()))
	outBlock := ops.Block{DType: out.DType, Shape: outShape, Data: buf[:outBytes]}
	iter := op.IterShape(block)
	step := make([]int, len(iter))
	steps := int(plan.Prod(iter))
	if k.CopyOnly() {
		// Read the input region straight into the output buffer.
		r := op.InputRegion(0, block, nil)
		if err := j.readRegion(ctx, ta, op.Inputs[0].Array, r, buf); err != nil {
			return 0, err
		}
	} else {
		ins := make([]ops.Block, len(op.Inputs))
		piecewise := op.Kernel.Core == "piecewise"
		for s := range steps {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			for i, in := range op.Inputs {
				r := op.InputRegion(i, block, step)
				var origin []int
				if piecewise {
					var ok bool
					if r, origin, ok = r.Clip(in.Array.Shape); !ok {
						ins[i] = ops.Block{DType: in.Array.DType, Origin: origin}
						continue
					}
				}
				n := int(r.Size()) * in.Array.DType.Size()
				size := n
				if !in.Array.Virtual() && op.InputAligned(i) {
					size = max(n, j.chunkBytes(ctx, in.Array))
				}
				b := ta.Allocate(size)
				if err := j.readRegion(ctx, ta, in.Array, r, b); err != nil {
					return 0, err
				}
				ins[i] = ops.Block{DType: in.Array.DType, Shape: r.Count, Data: b[:n], Origin: origin}
			}
			if err := k.At(block, step).Step(ta, outBlock, ins, s == 0); err != nil {
				return 0, err
			}
			for i := range ins {
				if ins[i].Data != nil {
					ta.Free(ins[i].Data[:cap(ins[i].Data)])
				}
			}
			for d := len(step) - 1; d >= 0; d-- {
				step[d]++
				if step[d] < iter[d] {
					break
				}
				step[d] = 0
			}
		}
		if err := k.Finish(ta, outBlock); err != nil {
			return 0, err
		}
	}
	// Pad an edge block to the stored chunk shape in place (backwards, since
	// every destination index is at least its source index).
	chunk := z.Metadata().ChunkShape
	full := buf[:z.ChunkBytes()]
	if outBytes != len(full) {
		padInPlace(out.DType.Size(), outShape, chunk, full)
	}
	if err := z.WriteChunk(ctx, j.storage.chunkCoords(out, block), full); err != nil {
		return 0, err
	}
	return 0, nil
}

func (j *job) chunkBytes(ctx context.Context, a *plan.Array) int {
	z, err := j.storage.array(ctx, a)
	if err != nil {
		return 0
	}
	return z.ChunkBytes()
}

// padInPlace moves a C-order block of shape into the layout of the larger
// chunk shape within the same buffer, zeroing the padding.
func padInPlace(elem int, shape, chunk []int, buf []byte) {
	n := len(shape)
	if n == 0 {
		return
	}
	total := int(plan.Prod(shape))
	src := ops.CStrides(shape)
	dst := ops.CStrides(chunk)
	row := shape[n-1] * elem
	// Walk rows from last to first.
	idx := make([]int, n)
	for r := total/max(shape[n-1], 1) - 1; r >= 0; r-- {
		rem := r
		for d := n - 2; d >= 0; d-- {
			idx[d] = rem % shape[d]
			rem /= shape[d]
		}
		so, do := 0, 0
		for d := 0; d < n-1; d++ {
			so += idx[d] * src[d]
			do += idx[d] * dst[d]
		}
		copy(buf[do*elem:do*elem+row], buf[so*elem:so*elem+row])
	}
	zeroOutside(elem, shape, chunk, buf)
}

// zeroOutside zeroes the elements of a chunk-shaped buffer outside the
// block of the given shape at its origin.
func zeroOutside(elem int, shape, chunk []int, buf []byte) {
	n := len(chunk)
	strides := ops.CStrides(chunk)
	var walk func(d, off int, inside bool)
	walk = func(d, off int, inside bool) {
		if d == n-1 {
			start := 0
			if inside {
				start = shape[d]
			}
			clear(buf[(off+start)*elem : (off+chunk[d])*elem])
			return
		}
		for i := range chunk[d] {
			in := inside && i < shape[d]
			if !in {
				clear(buf[(off+i*strides[d])*elem : (off+(i+1)*strides[d])*elem])
				continue
			}
			walk(d+1, off+i*strides[d], true)
		}
	}
	walk(0, 0, true)
}
