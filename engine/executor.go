package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// Options configure an execution. The zero value runs on a goroutine pool
// with one worker per core, no retries and no backups.
type Options struct {
	// Executor is "threads" (default: a goroutine pool) or "single-threaded".
	Executor string
	// MaxWorkers bounds the tasks running at once, over all ops (default:
	// number of cores).
	MaxWorkers int
	// Retries is how many times a failed task is retried (negative: the
	// default, DefaultRetries).
	Retries int
	// ProcessBudget bounds the projected memory of all running tasks
	// together (default: allowed_mem × MaxWorkers).
	ProcessBudget int64
	// BatchSize bounds the tasks of an op submitted ahead of their results:
	// created and waiting for admission or running (default: MaxWorkers).
	BatchSize int
	// ComputeArraysInParallel runs the ops of one topological generation
	// (see plan.Plan.Stages) at the same time, under the same admission.
	ComputeArraysInParallel bool
	// UseBackups launches a backup copy of straggling tasks (see
	// backupThreshold); the first copy to succeed wins.
	UseBackups bool
	// Resume keeps intermediates where a later computation finds them: in
	// "cubego-resume" under the work dir, named by their arrays' plan.Key,
	// so the same arrays computed again (also in another process, after
	// unpickling) skip every op whose output is already complete. A failed
	// computation leaves them for the next try; a successful one removes
	// the ones it used.
	Resume bool
	// IntermediateMem, when positive, keeps intermediates in memory while
	// their stored bytes together fit it (they are freed as soon as no op
	// still to run reads them); the others go to the work dir. This memory
	// is on top of the tasks' process budget.
	IntermediateMem int64
	// Runner, when set, runs the tasks elsewhere (see Runner), in batches
	// of TasksPerBatch tasks (0: automatic), at most MaxWorkers batches at
	// once. Stored intermediates then live in IntermediateDir(work dir)
	// under their plan.Key, where the Runner's workers find them, and are
	// never kept in memory.
	Runner        Runner
	TasksPerBatch int
}

// DefaultIntermediateMem is the in-memory budget for intermediates that
// the C ABI (and so Python's compute) uses when intermediate_mem is not
// given: small computations - the interactive reads of a few elements -
// then never write or delete files, while any computation's intermediates
// beyond it go to the work dir as before. Like any IntermediateMem it is
// on top of the tasks' process budget; it is small beside the spec's
// reserved memory (100 MB by default). Options' zero value keeps it off.
const DefaultIntermediateMem = 32 << 20

// DefaultRetries is the number of extra attempts of a failed task.
const DefaultRetries = 2

func (o Options) withDefaults(spec *plan.Spec) (Options, error) {
	switch {
	case o.Runner != nil:
		if o.Executor == "" {
			o.Executor = "runner"
		}
		o.IntermediateMem = 0
		if o.TasksPerBatch < 0 {
			return o, plan.Errorf(plan.ErrValue, "tasks_per_batch must be positive, got %d", o.TasksPerBatch)
		}
	case o.Executor == "" || o.Executor == "threads":
		o.Executor = "threads"
	case o.Executor == "single-threaded":
		o.MaxWorkers = 1
		o.UseBackups = false
		o.ComputeArraysInParallel = false
	default:
		return o, plan.Errorf(plan.ErrValue, "unknown executor %q: use \"threads\" or \"single-threaded\"", o.Executor)
	}
	if o.MaxWorkers < 0 {
		return o, plan.Errorf(plan.ErrValue, "max_workers must be positive, got %d", o.MaxWorkers)
	}
	if o.BatchSize < 0 {
		return o, plan.Errorf(plan.ErrValue, "batch_size must be positive, got %d", o.BatchSize)
	}
	if o.MaxWorkers == 0 {
		o.MaxWorkers = runtime.NumCPU()
	}
	if o.BatchSize == 0 {
		o.BatchSize = o.MaxWorkers
	}
	if o.Retries < 0 {
		o.Retries = DefaultRetries
	}
	if o.ProcessBudget <= 0 {
		o.ProcessBudget = spec.AllowedMem * int64(o.MaxWorkers)
	}
	return o, nil
}

// OpStats summarise one op of a computation.
type OpStats struct {
	Name          string `json:"name"`
	Func          string `json:"func"`
	NumTasks      int64  `json:"num_tasks"`
	ProjectedMem  int64  `json:"projected_mem"`
	PeakAllocated int64  `json:"peak_allocated"`
	Backups       int64  `json:"backups"`
	// Skipped is set when a resumed computation found the op's output
	// complete, or not needed by any op still to run, and ran none of its
	// tasks; SkippedTasks counts the tasks a resumed computation did not
	// run again because their output chunks were already stored.
	Skipped      bool  `json:"skipped,omitempty"`
	SkippedTasks int64 `json:"skipped_tasks,omitempty"`
}

// Stats summarise a computation.
type Stats struct {
	ComputeID       string    `json:"compute_id"`
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
	Backups         int64     `json:"backups"`
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
	id      string
	// mem admits tasks by projected memory; work feeds the MaxWorkers
	// workers. Both are shared by every op of the computation.
	mem  *semaphore.Weighted
	work *workQueue
	// rss is the latest sample of the process's peak RSS.
	rss  atomic.Int64
	emit func(Event)
	// idle counts the workers not running a task, less the helpers lent
	// to running tasks (idleWorkers).
	idle atomic.Int64
	// batchIDs numbers the calls of a Runner.
	batchIDs atomic.Int64
	// unneeded are, in a resumed computation, the ops whose output no op
	// still to run needs (see markUnneeded).
	unneeded map[*plan.OpInfo]bool
	// reverse are the ops that run their tasks in reverse block order
	// (see scanDirections).
	reverse map[*plan.OpInfo]bool
	// direct are the stored arrays read with direct I/O (directReads).
	direct map[*plan.Array]bool
	// lastPass are, per op, the inputs it reads in the last pass over a
	// stored array read several times (lastPassReads): a step finding
	// their chunks out of the page cache reads them directly.
	lastPass map[*plan.Op]map[int]bool
	// firstPass are, per op, the inputs it reads in the first of two
	// passes over a stored array with a last pass, and the part of the
	// array's chunks that pass reads directly when they are out of the
	// page cache (firstPassReads).
	firstPass map[*plan.Op]map[int]span
	// fill times the first passes' reads (fillMeter), per array.
	fill map[*plan.Array]*fillMeter
	// directOut are the stored arrays written with direct I/O
	// (directWrites).
	directOut map[*plan.Array]bool
}

var computeCounter atomic.Int64

// Allocator used by every computation of this process.
var processAllocator = NewAllocator()

// ProcessAllocator returns the allocator of this process's chunk buffers.
func ProcessAllocator() *Allocator { return processAllocator }

// newComputeID names a computation as Cubed does, by its start time.
func newComputeID(t time.Time) string {
	return "compute-" + t.Format("20060102T150405.000000")
}

// Execute validates p and runs its ops in order (by generation, several at
// once, with ComputeArraysInParallel), each op's tasks in parallel under
// the memory-aware admission of opts. onEvent, if not nil, receives the
// computation's events; it is called from several goroutines at once and
// must not block for long.
func Execute(ctx context.Context, p *plan.Plan, opts Options, onEvent func(Event)) (*Result, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	opts, err := opts.withDefaults(p.Spec)
	if err != nil {
		return nil, err
	}
	for _, o := range p.Ops {
		if opts.Runner == nil && o.ProjectedMem > opts.ProcessBudget {
			return nil, plan.Errorf(plan.ErrValue, "projected memory of %s (%s) exceeds the process budget (%s)",
				o.Op, plan.FormatBytes(o.ProjectedMem), plan.FormatBytes(opts.ProcessBudget))
		}
	}
	if onEvent == nil {
		onEvent = func(Event) {}
	}
	start := time.Now()
	dir := joinURL(contextDir(p.Spec.WorkDir), fmt.Sprintf("compute-%03d", computeCounter.Add(1)))
	storage := newStorage(dir)
	storage.memBudget = opts.IntermediateMem
	if opts.Resume || opts.Runner != nil {
		dir = resumeDir(p.Spec.WorkDir)
		storage = newStorage(dir)
		storage.keyed, storage.resume = true, opts.Resume
	}
	j := &job{plan: p, opts: opts, storage: storage, alloc: processAllocator, dir: dir,
		id: newComputeID(start), mem: semaphore.NewWeighted(opts.ProcessBudget), emit: onEvent}
	res := &Result{job: j}
	st := &res.Stats
	*st = Stats{ComputeID: j.id, MaxProjectedMem: p.MaxProjectedMem(), AllowedMem: p.Spec.AllowedMem,
		ReservedMem: p.Spec.ReservedMem, NumOps: len(p.Ops), NumTasks: p.NumTasks(),
		ProcessBudget: opts.ProcessBudget, MaxWorkers: opts.MaxWorkers, Ops: make([]OpStats, len(p.Ops))}
	stats := p.Stats()
	j.emit(Event{Type: ComputeStart, ComputeID: j.id, Time: start, Plan: &stats,
		MaxWorkers: opts.MaxWorkers, ProcessBudget: opts.ProcessBudget})
	resetPeakRSS()
	st.RSSStart = currentRSS()
	j.rss.Store(peakRSS())
	j.alloc.ResetPeak()
	j.alloc.SetPoolLimit(opts.ProcessBudget)
	defer j.alloc.SetPoolLimit(0)
	stopWorkers := j.startWorkers(opts.MaxWorkers)
	defer stopWorkers()
	index := map[*plan.OpInfo]int{}
	for i, o := range p.Ops {
		index[o] = i
	}
	if opts.Resume {
		if err := j.markUnneeded(ctx); err != nil {
			storage.close()
			_ = storage.releaseUsed(func(string) bool { return true })
			return nil, err
		}
	}
	release := j.intermediateReleaser()
	run := func(ctx context.Context, o *plan.OpInfo) error {
		r, err := j.runOp(ctx, o)
		st.Ops[index[o]] = OpStats{Name: o.Op.Name, Func: o.Op.Func, NumTasks: o.NumTasks,
			ProjectedMem: o.ProjectedMem, PeakAllocated: r.peak, Backups: r.backups, Skipped: r.skipped,
			SkippedTasks: r.skippedTasks}
		if err == nil {
			release(o)
		}
		return err
	}
	groups := p.Stages()
	if !opts.ComputeArraysInParallel {
		groups = readSharingGroups(p, opts.MaxWorkers)
	}
	j.reverse = scanDirections(groups, j.cachedAtEnd(ctx, p))
	j.planDirectReads(ctx)
	for _, group := range groups {
		if err = runStage(ctx, group, run); err != nil {
			break
		}
	}
	if err != nil {
		if opts.Resume {
			j.storage.close() // keep the intermediates for the next try
			_ = j.storage.releaseUsed(func(string) bool { return true })
		} else {
			res.Close()
		}
		return nil, err
	}
	for _, o := range st.Ops {
		st.Backups += o.Backups
	}
	st.Seconds = time.Since(start).Seconds()
	st.PeakAllocated = j.alloc.Peak()
	st.PeakRSS = peakRSS()
	j.emit(Event{Type: ComputeEnd, ComputeID: j.id, Time: time.Now()})
	return res, nil
}

// readSharingGroups returns the plan's ops in the order they run without
// ComputeArraysInParallel: one by one in plan order, except that ops
// ready at the same point that read a common stored array run together
// (with more than one worker), their tasks sharing the workers. Each
// stored chunk they share is then read by their tasks at about the same
// time, from the disk once and from the page cache after: W2's
// mean(u*u), mean(v*v) and mean(u*v) read u and v once from a cold disk
// rather than twice. Admission is unchanged (every task holds its
// projection), so memory stays within the budget.
func readSharingGroups(p *plan.Plan, workers int) [][]*plan.OpInfo {
	var groups [][]*plan.OpInfo
	if workers < 2 {
		for _, o := range p.Ops {
			groups = append(groups, []*plan.OpInfo{o})
		}
		return groups
	}
	produced := map[*plan.Array]bool{} // outputs of ops run or grouped to run
	pending := map[*plan.Array]bool{}  // outputs of ops not yet grouped
	for _, o := range p.Ops {
		pending[o.Op.Output] = true
	}
	ready := func(o *plan.OpInfo) bool {
		for _, a := range o.Op.InputArrays() {
			if pending[a] && !produced[a] {
				return false
			}
		}
		return true
	}
	// The ops reading each stored array, in plan order: a group grows
	// along the arrays its members read.
	readers := map[*plan.Array][]*plan.OpInfo{}
	for _, o := range p.Ops {
		for _, a := range o.Op.InputArrays() {
			if !a.Virtual() {
				readers[a] = append(readers[a], o)
			}
		}
	}
	grouped := map[*plan.OpInfo]bool{}
	for _, o := range p.Ops {
		if grouped[o] {
			continue
		}
		grouped[o] = true
		group := []*plan.OpInfo{o}
		for k := 0; k < len(group); k++ {
			for _, a := range group[k].Op.InputArrays() {
				for _, q := range readers[a] {
					if !grouped[q] && ready(q) {
						grouped[q] = true
						group = append(group, q)
					}
				}
			}
		}
		for _, g := range group {
			produced[g.Op.Output] = true
		}
		groups = append(groups, group)
	}
	return groups
}

// scanDirections returns the ops, of groups run in order, that run their
// tasks in reverse block order: those of groups whose largest stored input
// was streamed (read, or written by its producer) an odd number of times by
// the groups before. The page cache holds the end of what was streamed
// last, so the next pass over the same array starts there: the second
// pass of `sum(x - mean(x, axis=0))` over an x larger than memory reads
// from the page cache the part of x that the first pass left there,
// instead of evicting it just before needing it. Results do not depend on
// the order in which tasks run.
//
// The arrays of atEnd count as streamed once before the computation: the
// page cache holds their end, not their start (another process, or an
// earlier computation, read or wrote them last in that order), so the
// first pass over them starts at the end too.
func scanDirections(groups [][]*plan.OpInfo, atEnd map[*plan.Array]bool) map[*plan.OpInfo]bool {
	reverse := map[*plan.OpInfo]bool{}
	streamed := map[*plan.Array]int{}
	for a := range atEnd {
		streamed[a] = 1
	}
	for _, group := range groups {
		// The ops of a group run together because they read common
		// arrays: they take one direction, that of the largest stored
		// array any of them reads, so they read each shared chunk at about
		// the same time.
		var largest *plan.Array
		for _, o := range group {
			for _, a := range o.Op.InputArrays() {
				if !a.Virtual() && (largest == nil || a.NBytes() > largest.NBytes()) {
					largest = a
				}
			}
		}
		if largest != nil && streamed[largest]%2 == 1 {
			for _, o := range group {
				reverse[o] = true
			}
		}
		for _, o := range group {
			for _, a := range o.Op.InputArrays() {
				streamed[a]++
			}
			streamed[o.Op.Output]++
		}
	}
	return reverse
}

// residencySamples is how many chunks at each end of a stored array
// cachedAtEnd looks at.
const residencySamples = 4

// residencyMinBytes is the smallest stored array whose page-cache
// residency cachedAtEnd looks at: smaller ones are read whole from memory
// or from disk whatever the order.
var residencyMinBytes int64 = 256 << 20

// cachedAtEnd returns the stored arrays the plan reads but does not write
// (on local disk, at least residencyMinBytes, read by an op of more than
// one task) whose last chunks, in C order, are clearly more in the page
// cache than their first: on average a quarter of a chunk more over
// residencySamples chunks spread over the first and the last sixteenth of
// the chunk grid. It reads nothing (mincore).
func (j *job) cachedAtEnd(ctx context.Context, p *plan.Plan) map[*plan.Array]bool {
	produced := map[*plan.Array]bool{}
	for _, o := range p.Ops {
		produced[o.Op.Output] = true
	}
	atEnd := map[*plan.Array]bool{}
	seen := map[*plan.Array]bool{}
	for _, o := range p.Ops {
		if o.NumTasks < 2 {
			continue
		}
		for _, a := range o.Op.InputArrays() {
			if seen[a] || produced[a] || !a.PageCached() || a.NBytes() < residencyMinBytes {
				continue
			}
			seen[a] = true
			z, err := j.storage.array(ctx, a)
			if err != nil {
				continue
			}
			n := plan.Prod(z.GridShape())
			if n < 2 {
				continue
			}
			span := max(n/16, 1)
			head, ok1 := meanResident(ctx, z, 0, span, residencySamples)
			tail, ok2 := meanResident(ctx, z, n-span, span, residencySamples)
			if ok1 && ok2 && tail-head > 0.25 {
				atEnd[a] = true
			}
		}
	}
	return atEnd
}

// meanResident returns the mean share of samples chunks of z in the page
// cache (zarr.Array.ChunkResident, which reads nothing): the chunks at
// flat indices first + i*span/samples, C order; ok is false on a store
// that cannot tell.
func meanResident(ctx context.Context, z *zarr.Array, first, span int64, samples int) (float64, bool) {
	grid := z.GridShape()
	total := 0.0
	for i := range samples {
		f, ok := z.ChunkResident(ctx, unravel(first+int64(i)*span/int64(samples), grid))
		if !ok {
			return 0, false
		}
		total += f
	}
	return total / float64(samples), true
}

// unravel returns the coordinates of flat index i (C order) in grid.
func unravel(i int64, grid []int) []int {
	c := make([]int, len(grid))
	for d := len(grid) - 1; d >= 0; d-- {
		c[d] = int(i % int64(grid[d]))
		i /= int64(grid[d])
	}
	return c
}

// intermediateReleaser returns a function to call when an op has finished:
// it deletes each intermediate the op read once no op still to run reads
// it, so a computation holds on disk only the intermediates it still needs
// (resumable computations keep theirs for the next try).
func (j *job) intermediateReleaser() func(*plan.OpInfo) {
	if j.opts.Resume {
		return func(*plan.OpInfo) {}
	}
	outputs := map[*plan.Array]bool{}
	for _, a := range j.plan.Outputs {
		outputs[a] = true
	}
	readers := map[*plan.Array]int{}
	for _, o := range j.plan.Ops {
		for _, a := range o.Op.InputArrays() {
			readers[a]++
		}
	}
	var mu sync.Mutex
	return func(o *plan.OpInfo) {
		for _, a := range o.Op.InputArrays() {
			mu.Lock()
			readers[a]--
			last := readers[a] == 0
			mu.Unlock()
			if last && a.Op != nil && a.Target == nil && !outputs[a] {
				j.storage.remove(a)
			}
		}
	}
}

// runStage runs the ops of one generation at the same time and returns the
// first error, cancelling the others.
func runStage(ctx context.Context, stage []*plan.OpInfo, run func(context.Context, *plan.OpInfo) error) error {
	if len(stage) == 1 {
		return run(ctx, stage[0])
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for _, o := range stage {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := func() (err error) {
				defer func() {
					if r := recover(); r != nil {
						err = fmt.Errorf("%w: panic: %v\n%s", errPanic, r, debug.Stack())
					}
				}()
				return run(ctx, o)
			}()
			if err != nil {
				once.Do(func() { first = err })
				cancel(err)
			}
		}()
	}
	wg.Wait()
	return first
}

// runOp runs every task of one op (see opRun) between its start and end
// events.
func (j *job) runOp(ctx context.Context, o *plan.OpInfo) (*opRun, error) {
	op := o.Op
	r := &opRun{j: j, o: o, reverse: j.reverse[o]}
	kernel, err := ops.NewTaskKernel(op)
	if err != nil {
		return r, err
	}
	r.kernel = kernel
	if j.opts.MaxWorkers > 1 {
		r.kernel = kernel.WithHelpers(idleWorkers{&j.idle})
	}
	done, err := j.storage.create(ctx, op.Output)
	if err != nil {
		return r, err
	}
	done = done || j.unneeded[o]
	if !done {
		if err := r.loadWritten(ctx); err != nil {
			return r, err
		}
	}
	j.emit(Event{Type: OperationStart, ComputeID: j.id, Time: time.Now(), Op: op.Name, Func: op.Func, NumTasks: o.NumTasks})
	r.skipped = done
	if op.Output.Size() > 0 && !done {
		// The op's tasks share the files they keep open (zarr.WithOpenFiles):
		// a task folding bands of many chunks (W4's swap-axes sum: a band
		// of each of 128 chunks per task, the next band of each in the
		// next task) opens each file once per op, not once per task.
		ctx, closeFiles := zarr.WithOpenFiles(ctx)
		defer closeFiles()
		if err := r.run(ctx); err != nil {
			return r, err
		}
	}
	j.emit(Event{Type: OperationEnd, ComputeID: j.id, Time: time.Now(), Op: op.Name, Func: op.Func, NumTasks: o.NumTasks})
	return r, nil
}

// runTaskWithRetries runs a task, retrying failures (not cancellation). It
// returns the attempts made and the peak bytes the last attempt allocated.
func (j *job) runTaskWithRetries(ctx context.Context, k *ops.TaskKernel, op *plan.Op, block []int) (attempts int, peak int64, err error) {
	for attempt := 0; attempt <= j.opts.Retries; attempt++ {
		attempts = attempt + 1
		peak, err = j.runTask(ctx, k, op, block)
		// A Python function that raised would raise again.
		if err == nil || ctx.Err() != nil || errors.Is(err, ops.ErrPythonFunction) {
			break
		}
	}
	if err != nil {
		if ctx.Err() != nil && context.Cause(ctx) != nil {
			return attempts, peak, context.Cause(ctx)
		}
		return attempts, peak, &TaskError{Op: op.String(), Array: op.Output.Name, Block: block, Attempts: attempts, Err: err}
	}
	return attempts, peak, nil
}

// TaskError is a task that failed after all its attempts.
type TaskError struct {
	Op       string // e.g. "op-003 (add)"
	Array    string // the array whose block the task computes
	Block    []int
	Attempts int
	Err      error
}

func (e *TaskError) Error() string {
	coords := make([]string, len(e.Block))
	for i, b := range e.Block {
		coords[i] = strconv.Itoa(b)
	}
	return fmt.Sprintf("%s failed on block (%s) of %s after %d attempts: %v",
		e.Op, strings.Join(coords, ", "), e.Array, e.Attempts, e.Err)
}

func (e *TaskError) Unwrap() error { return e.Err }

// errPanic marks an error recovered from a panic inside a task.
var errPanic = errors.New("engine: internal error")

// runTask computes and writes one output block. It returns the peak bytes
// the task allocated. A panic inside becomes an error.
func (j *job) runTask(ctx context.Context, k *ops.TaskKernel, op *plan.Op, block []int) (peak int64, err error) {
	ta := &taskAllocator{parent: j.alloc}
	// Inputs may be mapped chunks (mapRegion): a fault on one (its file
	// truncated by another program) is a panic recovered below, so an
	// error of the task, not a crash of the process.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
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
	if op.MirroredTask(block) {
		return 0, nil // the task of the transposed block writes this one
	}
	// The chunk files the task reads in parts, and prefetches part by
	// part, stay open in the scope runOp (or RunTasks) opened for all the
	// op's tasks (zarr.WithOpenFiles), and are closed after the last one.
	out := op.Output
	z, err := j.storage.array(ctx, out)
	if err != nil {
		return 0, err
	}
	lo, hi := op.OutputRange(block)
	outShape := make([]int, len(lo))
	for d := range lo {
		outShape[d] = hi[d] - lo[d]
	}
	outBytes := int(plan.Prod(outShape)) * out.DType.Size()
	buf := ta.Allocate(max(outBytes, z.ChunkBytes()))
	outBlock := ops.Block{DType: out.DType, Shape: outShape, Data: buf[:outBytes]}
	if n := k.AccBytes(outShape); n > 0 {
		outBlock.Acc = ta.Allocate(n)
	}
	iter := op.IterShape(block)
	steps := int(plan.Prod(iter))
	if k.CopyOnly() {
		// Read the input region straight into the output buffer.
		r := op.InputRegion(0, block, nil)
		if err := j.readRegion(ctx, ta, op.Inputs[0].Array, r, buf); err != nil {
			return 0, err
		}
	} else {
		piecewise := op.Kernel.Core == "piecewise"
		// A one-step map task may read one input into the output buffer and
		// compute over it in place (ops.TaskKernel.InPlaceInput).
		inPlace, aliased := -1, false
		if steps == 1 {
			inPlace = k.InPlaceInput()
		}
		mapInputs := k.MapsInputs()
		// A reduce task whose step regions are large and gathered from
		// several chunks folds each step in parts (foldParts): the units
		// the loops below read and fold are then the parts, not the steps.
		// A step of an op reading the last pass over a stored array whose
		// chunks are out of the page cache reads them directly
		// (uncachedStep), whole.
		type unit struct {
			step   []int
			part   *plan.Region // input 0's region; nil: the step's
			direct *plan.Array  // read directly in this unit, if any
		}
		var units []unit
		folded, passes := k.FoldedDims(), j.passInputs(op)
		if folded != nil && !j.direct[op.Inputs[0].Array] || passes != nil {
			parted, direct := 0, 0
			for s := range steps {
				st := stepAtIn(iter, s)
				var d *plan.Array
				for _, i := range passes {
					if j.uncachedStep(ctx, op, i, op.InputRegion(i, block, st)) {
						d = op.Inputs[i].Array
						direct++
						break
					}
				}
				var parts []plan.Region
				if folded != nil && !j.direct[op.Inputs[0].Array] && d != op.Inputs[0].Array {
					parts = foldParts(op.Inputs[0].Array, op.InputRegion(0, block, st), folded)
				}
				if parts == nil {
					units = append(units, unit{step: st, direct: d})
				}
				for p := range parts {
					units = append(units, unit{st, &parts[p], d})
				}
				parted += len(parts)
			}
			if parted == 0 && direct == 0 {
				units = nil
			}
			if foldPartsHook != nil && folded != nil {
				foldPartsHook(op, parted)
			}
		}
		nUnits := steps
		if units != nil {
			nUnits = len(units)
		}
		unitAt := func(s int) unit {
			if units != nil {
				return units[s]
			}
			return unit{step: stepAtIn(iter, s)}
		}
		regionOf := func(i int, u unit) plan.Region {
			if u.part != nil && i == 0 {
				return *u.part
			}
			return op.InputRegion(i, block, u.step)
		}
		// readStep reads the inputs of one unit into ins.
		readStep := func(u unit, ins []ops.Block) error {
			ctx := withDirect(ctx, u.direct)
			for i, in := range op.Inputs {
				if err := ctx.Err(); err != nil {
					return err
				}
				r := regionOf(i, u)
				var origin []int
				if piecewise {
					var ok bool
					if r, origin, ok = r.Clip(in.Array.Shape); !ok {
						ins[i] = ops.Block{DType: in.Array.DType, Origin: origin}
						continue
					}
				}
				if v := k.ConstInput(i); v != nil {
					// A constant virtual input: the kernel reads its one
					// value through zero strides; nothing is filled.
					ins[i] = ops.Block{DType: in.Array.DType, Shape: r.Count, Data: v, Origin: origin, Const: true}
					continue
				}
				n := int(r.Size()) * in.Array.DType.Size()
				// A whole raw chunk of a local file is mapped, not copied
				// out of the page cache (mapRegion); never the input the
				// kernel computes in place, which it writes.
				if mapInputs && i != inPlace && (op.InputAligned(i) || u.part != nil) {
					if b, ok := j.mapRegion(ctx, ta, in.Array, r); ok {
						ins[i] = ops.Block{DType: in.Array.DType, Shape: r.Count, Data: b[:n], Origin: origin}
						continue
					}
				}
				size := n
				if !in.Array.Virtual() && (op.InputAligned(i) || u.part != nil && !in.Array.PartialReads) {
					size = max(n, j.chunkBytes(ctx, in.Array))
				}
				var b []byte
				if i == inPlace && n == outBytes && len(buf) >= size {
					b, aliased = buf, true
				} else {
					b = ta.Allocate(size)
				}
				ins[i] = ops.Block{DType: in.Array.DType, Shape: r.Count, Data: b[:n], Origin: origin}
				var meter *fillMeter // a first pass's reads are timed
				var t0 time.Time
				if _, first := j.firstPass[op][i]; first {
					meter, t0 = j.fill[in.Array], time.Now()
				}
				if err := j.readRegion(ctx, ta, in.Array, r, b); err != nil {
					return err
				}
				if meter != nil {
					meter.record(int64(n), time.Since(t0), j.readsDirect(ctx, in.Array))
				}
			}
			return nil
		}
		freeStep := func(ins []ops.Block) {
			for i := range ins {
				if i == inPlace && aliased {
					ins[i] = ops.Block{} // the output buffer
					continue
				}
				if ins[i].Data != nil && !ins[i].Const {
					ta.Free(ins[i].Data[:cap(ins[i].Data)])
				}
				ins[i] = ops.Block{}
			}
		}
		// With read-ahead (plan.Op.ReadAheadDepth: its buffers are in the
		// projection) the next steps' inputs are read, each on its own
		// goroutine, while this step computes, so the disk and the core
		// work at once. The read of step s+1+depth starts once step s is
		// freed and step s+1 read, so at most depth reads are in flight
		// beside the step computing.
		depth := 0
		if nUnits > 1 {
			depth = min(k.ReadAheadDepth(), nUnits-1)
		}
		type pending struct {
			ins  []ops.Block
			err  error
			done chan struct{}
		}
		slots := make([]*pending, depth+1)
		var wg sync.WaitGroup
		defer wg.Wait() // before the task's buffers are freed
		start := func(s int, async bool) {
			p := &pending{ins: make([]ops.Block, len(op.Inputs)), done: make(chan struct{})}
			slots[s%(depth+1)] = p
			if !async {
				p.err = readStep(unitAt(s), p.ins)
				close(p.done)
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer close(p.done)
				defer func() {
					if r := recover(); r != nil {
						p.err = fmt.Errorf("%w: panic: %v\n%s", errPanic, r, debug.Stack())
					}
				}()
				p.err = readStep(unitAt(s), p.ins)
			}()
		}
		// Local inputs are prefetched into the page cache instead
		// (plan.Op.PrefetchDepth: no process memory). A goroutine asks
		// the kernel, step after step in order, for the chunks of the steps
		// up to prefetch ahead of the last one read, so the disk's queue
		// holds several steps' reads while a step is read and computed;
		// steps already read by the time it gets to them are skipped.
		prefetch := 0
		if nUnits > 1 {
			// As many bytes ahead in parts as in steps.
			prefetch = min(k.PrefetchDepth()*max(1, nUnits/max(steps, 1)), nUnits-1)
		}
		var pfTarget, pfRead atomic.Int64 // the last step to prefetch; the last step read
		pfRead.Store(-1)
		wake, stop := make(chan struct{}, 1), make(chan struct{})
		prefetchTo := func(s int) {
			if prefetch > 0 {
				pfTarget.Store(int64(min(s, nUnits-1)))
				select {
				case wake <- struct{}{}:
				default:
				}
			}
		}
		if prefetch > 0 {
			defer close(stop) // before wg.Wait
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { _ = recover() }() // advice only: the reads report failures
				for next := int64(0); ; {
					for ; next <= pfTarget.Load(); next++ {
						select {
						case <-stop:
							return
						default:
						}
						if ctx.Err() == nil && next > pfRead.Load() {
							u := unitAt(int(next))
							j.prefetchStep(withDirect(ctx, u.direct), op, func(i int) plan.Region { return regionOf(i, u) }, piecewise)
						}
					}
					select {
					case <-wake:
					case <-stop:
						return
					}
				}
			}()
			prefetchTo(prefetch)
		}
		if nUnits > 0 {
			start(0, false)
		}
		for s := 1; s <= depth; s++ {
			start(s, true)
		}
		for s := range nUnits {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			p := slots[s%(depth+1)]
			<-p.done
			if p.err != nil {
				return 0, p.err
			}
			pfRead.Store(int64(s))
			prefetchTo(s + prefetch)
			err := k.At(block, unitAt(s).step).Step(ta, outBlock, p.ins, s == 0)
			freeStep(p.ins)
			if err != nil {
				return 0, err
			}
			if s+1 < nUnits {
				if depth == 0 {
					start(s+1, false)
				} else {
					<-slots[(s+1)%(depth+1)].done
					if s+1+depth < nUnits {
						start(s+1+depth, true)
					}
				}
			}
		}
		if err := k.Finish(ta, outBlock); err != nil {
			return 0, err
		}
	}
	if op.TaskBlocks != nil {
		return 0, j.writeBlocks(ctx, ta, z, op, block, outShape, buf[:outBytes])
	}
	if op.MirrorsTask(block) {
		if err := j.writeMirror(ctx, ta, z, op, block, outBlock); err != nil {
			return 0, err
		}
	} else if op.Mirror {
		mirrorUpper(outBlock)
	}
	// Pad an edge block to the stored chunk shape in place (backwards, since
	// every destination index is at least its source index).
	chunk := z.ChunkShape()
	full := buf[:z.ChunkBytes()]
	if outBytes != len(full) {
		padInPlace(out.DType.Size(), outShape, chunk, full)
	}
	if err := j.writeChunk(ctx, z, out, j.storage.chunkCoords(out, block), full); err != nil {
		return 0, err
	}
	return 0, nil
}

// writeMirror writes the transpose of a mirrored op's computed block (its
// last two dimensions swapped) to the chunk of the transposed block.
func (j *job) writeMirror(ctx context.Context, ta *taskAllocator, z *zarr.Array, op *plan.Op, block []int, b ops.Block) error {
	n := len(block)
	elem := b.DType.Size()
	shape := slices.Clone(b.Shape)
	shape[n-2], shape[n-1] = shape[n-1], shape[n-2]
	src := ops.CStrides(b.Shape)
	src[n-2], src[n-1] = src[n-1], src[n-2]
	buf := ta.Allocate(z.ChunkBytes())
	defer ta.Free(buf)
	size := int(plan.Prod(shape)) * elem
	ops.StridedCopy(elem, shape, buf, 0, ops.CStrides(shape), b.Data, 0, src)
	if size != len(buf) {
		padInPlace(elem, shape, z.ChunkShape(), buf)
	}
	mirror := slices.Clone(block)
	mirror[n-2], mirror[n-1] = block[n-1], block[n-2]
	return j.writeChunk(ctx, z, op.Output, j.storage.chunkCoords(op.Output, mirror), buf)
}

// mirrorUpper copies the upper triangle of a diagonal block of a mirrored
// op onto its lower one (each matrix of the last two dimensions), so the
// whole output is exactly symmetric, as the blocks off the diagonal are;
// a general matrix product may round a[i, j] and a[j, i] differently.
func mirrorUpper(b ops.Block) {
	n := len(b.Shape)
	elem := b.DType.Size()
	m := b.Shape[n-1]
	if b.Shape[n-2] != m {
		return
	}
	for off := 0; off < len(b.Data); off += m * m * elem {
		c := b.Data[off : off+m*m*elem]
		for i := 1; i < m; i++ {
			for k := range i {
				copy(c[(i*m+k)*elem:(i*m+k+1)*elem], c[(k*m+i)*elem:(k*m+i+1)*elem])
			}
		}
	}
}

// prefetchStep prefetches into the page cache the chunks of the inputs of
// one step (or part of a step, see foldParts) of a task that are stored on
// local disk (plan.Array.PageCached); region gives input i's region.
func (j *job) prefetchStep(ctx context.Context, op *plan.Op, region func(i int) plan.Region, piecewise bool) {
	for i, in := range op.Inputs {
		if !in.Array.PageCached() {
			continue
		}
		r := region(i)
		if piecewise {
			var ok bool
			if r, _, ok = r.Clip(in.Array.Shape); !ok {
				continue
			}
		}
		j.prefetchRegion(ctx, in.Array, r)
	}
}

// writeBlocks writes each output block of a task computed as one region
// (shape, C order in data) to its chunk, through one chunk-sized buffer.
func (j *job) writeBlocks(ctx context.Context, ta *taskAllocator, z *zarr.Array, op *plan.Op, task, shape []int, data []byte) error {
	out := op.Output
	elem := out.DType.Size()
	chunk := z.ChunkShape()
	chunkStrides := ops.CStrides(chunk)
	srcStrides := ops.CStrides(shape)
	buf := ta.Allocate(z.ChunkBytes())
	defer ta.Free(buf)
	b0, b1 := op.TaskBlockRange(task)
	block := append([]int(nil), b0...)
	offs := make([][]int, len(b0)) // element offset of each block within the task
	for d := range b0 {
		off := out.ChunkOffsets(d)
		for b := b0[d]; b < b1[d]; b++ {
			offs[d] = append(offs[d], off[b]-off[b0[d]])
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		bs := out.BlockShape(block)
		src := 0
		for d := range block {
			src += offs[d][block[d]-b0[d]] * srcStrides[d]
		}
		if !slices.Equal(bs, chunk) {
			clear(buf)
		}
		ops.StridedCopy(elem, bs, buf, 0, chunkStrides, data, src, srcStrides)
		if err := j.writeChunk(ctx, z, out, j.storage.chunkCoords(out, block), buf); err != nil {
			return err
		}
		d := len(block) - 1
		for ; d >= 0; d-- {
			block[d]++
			if block[d] < b1[d] {
				break
			}
			block[d] = b0[d]
		}
		if d < 0 {
			return nil
		}
	}
}

func (j *job) chunkBytes(ctx context.Context, a *plan.Array) int {
	z, err := j.storage.array(ctx, a)
	if err != nil {
		return 0
	}
	return z.ChunkBytes()
}

// stepAtIn returns step s of a task's iteration of shape iter, in C order.
func stepAtIn(iter []int, s int) []int {
	st := make([]int, len(iter))
	for d := len(iter) - 1; d >= 0; d-- {
		st[d] = s % iter[d]
		s /= iter[d]
	}
	return st
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
