package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// Runner runs batches of tasks somewhere else: in other processes or on
// other machines (Dask, Lithops, Ray, ... from Python). The engine still
// schedules everything — stage order, batching, how many batches run at
// once (Options.MaxWorkers), retries, backup copies of stragglers, resume
// and the events callbacks see — and hands a Runner only "run these tasks
// of this op and say how each went".
//
// A Runner's worker rebuilds the plan from the same array graph and runs
// the batch with RunTasks against the directory the Batch names, where the
// coordinator keeps every stored intermediate under its plan.Key. RunBatch
// is called from several goroutines at once; it must return when ctx is
// cancelled. An error fails the whole batch, which the engine retries
// (Options.Retries) unless it is a *BatchError with Permanent set.
type Runner interface {
	RunBatch(ctx context.Context, b Batch) ([]TaskStat, error)
}

// Batch is one call of a Runner: tasks of one op, one per output block.
type Batch struct {
	// ID identifies the call among the computation's calls.
	ID int64 `json:"id"`
	// Op is the op's name in the plan (plan.Op.Name).
	Op string `json:"op"`
	// Blocks are the output block coordinates, one task each.
	Blocks [][]int `json:"blocks"`
	// Dir is the directory (local path or URL) of the intermediates.
	Dir string `json:"dir"`
	// Attempt counts the tries of this batch, from 1; Backup is set for a
	// backup copy of a straggling batch.
	Attempt int  `json:"attempt"`
	Backup  bool `json:"backup"`
}

// TaskStat is how one task of a batch went, measured where it ran (the
// fields of Cubed's TaskEndEvent). Times are Unix seconds.
type TaskStat struct {
	Block                []int   `json:"block"`
	FunctionStart        float64 `json:"function_start_tstamp"`
	FunctionEnd          float64 `json:"function_end_tstamp"`
	PeakAllocated        int64   `json:"peak_allocated"`
	PeakMeasuredMemStart int64   `json:"peak_measured_mem_start"`
	PeakMeasuredMemEnd   int64   `json:"peak_measured_mem_end"`
}

// BatchError is a failed batch as a Runner reports it. Permanent errors
// (a user's Python function raised) are not retried: they would fail again.
type BatchError struct {
	Message   string
	Permanent bool
}

func (e *BatchError) Error() string { return e.Message }

// MaxTasksPerBatch bounds the automatic number of tasks per Runner call.
const MaxTasksPerBatch = 256

// blocksPerTask is how many output blocks one scheduled task covers: one in
// process; with a Runner, Options.TasksPerBatch, or enough to give each
// worker about four calls per op (calls cost far more than tasks on
// engines such as Lithops), at most MaxTasksPerBatch.
func (j *job) blocksPerTask(o *plan.OpInfo) int {
	if j.opts.Runner == nil {
		return 1
	}
	if j.opts.TasksPerBatch > 0 {
		return j.opts.TasksPerBatch
	}
	per := (o.NumTasks + int64(4*j.opts.MaxWorkers) - 1) / int64(4*j.opts.MaxWorkers)
	return int(min(max(per, 1), MaxTasksPerBatch))
}

// loadWritten lists, for a resumed computation, the output chunks an
// earlier run already wrote, so that their tasks are not run again. Ops
// whose tasks write several blocks (TaskBlocks, Mirror) are resumed per op
// only.
func (r *opRun) loadWritten(ctx context.Context) error {
	op := r.o.Op
	if !r.j.storage.resume || op.TaskBlocks != nil || op.Mirror {
		return nil
	}
	z, err := r.j.storage.array(ctx, op.Output)
	if err != nil {
		return err
	}
	l, ok := z.Store().(zarr.Lister)
	if !ok {
		return nil
	}
	keys, err := l.List(ctx, strings.TrimSuffix(z.Path(), "/"))
	if err != nil {
		return fmt.Errorf("engine: listing the chunks %s already holds: %w", op.Output.Name, err)
	}
	r.outZ = z
	r.writtenKeys = make(map[string]bool, len(keys))
	for _, k := range keys {
		r.writtenKeys[k] = true
	}
	return nil
}

// written reports whether a resumed computation finds block's chunk stored.
func (r *opRun) written(block []int) bool {
	if r.writtenKeys == nil {
		return false
	}
	return r.writtenKeys[r.outZ.ChunkKey(r.j.storage.chunkCoords(r.o.Op.Output, block))]
}

// runRemote runs one copy of a batch through the job's Runner, with the
// job's retries, and turns its stats into task-end events.
func (c *copyReq) runRemote() ([]Event, error) {
	r, t := c.r, c.t
	j, o := r.j, r.o
	r.msgs <- copyMsg{t: t, copy: c.n, start: true, at: time.Now()}
	b := Batch{ID: j.batchIDs.Add(1), Op: o.Op.Name, Blocks: t.blocks, Dir: j.dir, Backup: c.n > 0}
	var stats []TaskStat
	var err error
	for attempt := 0; attempt <= j.opts.Retries; attempt++ {
		b.Attempt = attempt + 1
		stats, err = j.opts.Runner.RunBatch(c.ctx, b)
		var be *BatchError
		if err == nil || c.ctx.Err() != nil || (errors.As(err, &be) && be.Permanent) {
			break
		}
	}
	if err != nil {
		if c.ctx.Err() != nil && context.Cause(c.ctx) != nil {
			return nil, context.Cause(c.ctx)
		}
		return nil, &TaskError{Op: o.Op.String(), Array: o.Op.Output.Name, Block: t.blocks[0], Attempts: b.Attempt, Err: err}
	}
	if len(stats) != len(t.blocks) {
		return nil, fmt.Errorf("engine: a runner returned %d task stats for a batch of %d tasks of %s", len(stats), len(t.blocks), o.Op)
	}
	evs := make([]Event, len(stats))
	for i, s := range stats {
		evs[i] = Event{Type: TaskEnd, ComputeID: j.id, Op: o.Op.Name, Func: o.Op.Func, NumTasks: 1, Block: t.blocks[i],
			FunctionStart: unixTime(s.FunctionStart), FunctionEnd: unixTime(s.FunctionEnd),
			ProjectedMem: o.ProjectedMem, PeakAllocated: s.PeakAllocated,
			PeakMeasuredMemStart: s.PeakMeasuredMemStart, PeakMeasuredMemEnd: s.PeakMeasuredMemEnd,
			Attempts: b.Attempt, Backup: c.n > 0}
	}
	return evs, nil
}

func unixTime(s float64) time.Time {
	sec := int64(s)
	return time.Unix(sec, int64((s-float64(sec))*1e9))
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// RunTasks runs a batch of tasks of one op of p in this process, one task
// after another, as a Runner's worker does: it opens the op's inputs and
// output in b.Dir (created by the coordinator, stored intermediates named
// by plan.Key), runs each task once (the coordinator retries) and reports
// each task's stats. p must be the plan the coordinator runs, rebuilt from
// the same array graph with the same fusion options.
func RunTasks(ctx context.Context, p *plan.Plan, b Batch) (stats []TaskStat, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: panic: %v\n%s", errPanic, r, debug.Stack())
		}
	}()
	var info *plan.OpInfo
	for _, o := range p.Ops {
		if o.Op.Name == b.Op {
			info = o
			break
		}
	}
	if info == nil {
		return nil, plan.Errorf(plan.ErrValue, "the plan has no op %q (the worker's plan differs from the coordinator's)", b.Op)
	}
	op := info.Op
	grid := op.TaskGrid()
	for _, block := range b.Blocks {
		if len(block) != len(grid) {
			return nil, plan.Errorf(plan.ErrValue, "block %v of %s has %d coordinates, not %d", block, op, len(block), len(grid))
		}
		for d, c := range block {
			if c < 0 || c >= grid[d] {
				return nil, plan.Errorf(plan.ErrIndex, "block %v is outside the %v tasks of %s", block, grid, op)
			}
		}
	}
	if b.Dir == "" {
		return nil, plan.Errorf(plan.ErrValue, "a batch of %s names no intermediate directory", op)
	}
	storage := newStorage(b.Dir)
	storage.keyed = true
	defer storage.close()
	// A worker runs its tasks one after another within allowed_mem (which
	// the executor checked the worker has): keep freed chunk buffers for the
	// next task, as in process, instead of a fresh mmap and its page faults
	// for every buffer (4x slower on 150 MB chunks).
	processAllocator.RaisePoolLimit(p.Spec.AllowedMem)
	j := &job{plan: p, storage: storage, alloc: processAllocator, dir: b.Dir}
	j.planDirectReads(ctx)
	for _, in := range op.InputArrays() {
		if in.Op != nil {
			if err := storage.attach(ctx, in); err != nil {
				return nil, err
			}
		}
	}
	if err := storage.attach(ctx, op.Output); err != nil {
		return nil, err
	}
	kernel, err := ops.NewTaskKernel(op)
	if err != nil {
		return nil, err
	}
	stats = make([]TaskStat, 0, len(b.Blocks))
	// The batch's tasks share the files they keep open, as an op's do.
	ctx, closeFiles := zarr.WithOpenFiles(ctx)
	defer closeFiles()
	for _, block := range b.Blocks {
		rssStart := peakRSS()
		start := time.Now()
		peak, err := j.runTask(ctx, kernel, op, block)
		if err != nil {
			return nil, &TaskError{Op: op.String(), Array: op.Output.Name, Block: block, Attempts: 1, Err: err}
		}
		end := time.Now()
		stats = append(stats, TaskStat{Block: block, FunctionStart: unixSeconds(start), FunctionEnd: unixSeconds(end),
			PeakAllocated: peak, PeakMeasuredMemStart: rssStart, PeakMeasuredMemEnd: max(peakRSS(), rssStart)})
	}
	return stats, nil
}

// IntermediateDir is the directory under a work dir (the system temp dir
// when empty) where computations that a Runner executes, and resumable
// ones, keep their stored intermediates, each named by its array's
// plan.Key: any worker and any later process finds them there.
func IntermediateDir(workDir string) string { return resumeDir(workDir) }

// markUnneeded finds, before a resumed computation runs anything, the ops
// it need not run although their output is incomplete: those whose output
// is neither requested nor a Zarr target, and whose every reader is
// complete or itself not needed. (Ops whose output is complete are skipped
// when they come to run.)
func (j *job) markUnneeded(ctx context.Context) error {
	p := j.plan
	final := map[*plan.Array]bool{}
	for _, a := range p.Outputs {
		final[a] = true
	}
	readers := map[*plan.Array][]*plan.OpInfo{}
	for _, o := range p.Ops {
		for _, a := range o.Op.InputArrays() {
			readers[a] = append(readers[a], o)
		}
	}
	needed := map[*plan.OpInfo]bool{}
	j.unneeded = map[*plan.OpInfo]bool{}
	for i := len(p.Ops) - 1; i >= 0; i-- {
		o := p.Ops[i]
		out := o.Op.Output
		if err := ctx.Err(); err != nil {
			return err
		}
		if out.Target != nil {
			needed[o] = true // a target's written chunks are skipped task by task
			continue
		}
		if j.storage.complete(ctx, out) {
			continue
		}
		if final[out] {
			needed[o] = true
			continue
		}
		for _, r := range readers[out] {
			needed[o] = needed[o] || needed[r]
		}
		j.unneeded[o] = !needed[o]
	}
	return nil
}

// StoredIntermediates returns the arrays of p, built but not yet fused,
// whose keyed intermediates an earlier computation left complete under
// IntermediateDir(p.Spec.WorkDir), with their keys. A resumed computation
// fuses with plan.FuseOptions.Stored set to them, so that it reads them
// instead of computing them again inside a fused op.
func StoredIntermediates(ctx context.Context, p *plan.Plan) (map[*plan.Array]bool, []string, error) {
	s := newStorage(resumeDir(p.Spec.WorkDir))
	s.keyed = true
	defer func() {
		s.close()
		// Only a probe: if another computation deletes one of these before
		// ours starts, ours finds it incomplete and computes it again.
		_ = s.releaseUsed(func(string) bool { return true })
	}()
	final := map[*plan.Array]bool{}
	for _, a := range p.Outputs {
		final[a] = true
	}
	stored := map[*plan.Array]bool{}
	var keys []string
	for _, o := range p.Ops {
		a := o.Op.Output
		if a.Target != nil || final[a] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if s.complete(ctx, a) {
			k, err := plan.Key(a)
			if err != nil {
				return nil, nil, err
			}
			stored[a] = true
			keys = append(keys, k)
		}
	}
	return stored, keys, nil
}
