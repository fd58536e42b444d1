package engine

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/cubego/cubego/plan"
)

// taskPrefetcher prefetches into the page cache the local stored inputs of
// the tasks of a single-step op that are next to start (cross-task
// prefetch). A single-step task (a copy, an element-wise map over whole
// chunks) reads its chunks, computes, then writes its output: without it
// the disk's read queue empties while the workers write, and each task
// starts with a cold read. With it, when a task starts, the chunks of the
// next tasks in the op's block order are already being read. It holds no
// memory of the process's (zarr.Prefetcher: page cache only), so the
// memory projection is unchanged.
//
// One goroutine walks the op's blocks in the coordinator's order, a block
// at a time up to the target the coordinator sets, and skips the blocks of
// tasks that have started by the time it gets to them. It stays depth
// blocks ahead of the last task started (taskPrefetchDepth).
type taskPrefetcher struct {
	j      *job
	op     *plan.Op
	depth  int64
	nb     []int
	first  []int
	step   func(block, nb []int) bool
	skip   func(block []int) bool // blocks whose tasks do not run
	target atomic.Int64           // the last block (its index in the op's order) to prefetch
	begun  atomic.Int64           // the blocks before this index have started
	wake   chan struct{}
	stop   chan struct{}
	wg     sync.WaitGroup
}

// taskPrefetchDepth returns how many tasks ahead of the last one started
// the inputs of op's tasks are prefetched: 0 unless its tasks take one
// step (ops whose tasks take several prefetch the steps ahead themselves,
// plan.Op.PrefetchDepth) and read an input stored on local disk, run in
// this process, and the op has more than one task; else one task per
// worker (each worker finds the chunks of the task it takes next in the
// page cache), fewer when their stored chunks are more than
// plan.PrefetchMaxBytes, at least one.
func (j *job) taskPrefetchDepth(op *plan.Op) int {
	if j.opts.Runner != nil || op.NumTasks() < 2 || op.PrefetchDepth() > 0 {
		return 0
	}
	if !op.CopiesInput() && plan.Prod(op.IterShape(make([]int, len(op.TaskGrid())))) != 1 {
		return 0
	}
	task := op.PrefetchStepBytes()
	if task == 0 {
		return 0
	}
	return max(1, min(j.opts.MaxWorkers, int(plan.PrefetchMaxBytes/task)))
}

// newTaskPrefetcher starts the prefetcher of an op whose blocks run from
// first, moved on by step over the task grid nb, leaving out the blocks
// skip reports (a resumed computation's written ones); nil when the op's
// tasks do not prefetch (taskPrefetchDepth). close stops it.
func (j *job) newTaskPrefetcher(ctx context.Context, op *plan.Op, first []int, step func(block, nb []int) bool, skip func(block []int) bool) *taskPrefetcher {
	depth := j.taskPrefetchDepth(op)
	if depth == 0 {
		return nil
	}
	p := &taskPrefetcher{j: j, op: op, depth: int64(depth), nb: op.TaskGrid(), first: append([]int(nil), first...), step: step, skip: skip,
		wake: make(chan struct{}, 1), stop: make(chan struct{})}
	p.target.Store(-1)
	p.wg.Add(1)
	go p.loop(ctx)
	return p
}

// started records that the task whose first block is the seq-th of the
// op's order has started, and moves the target to the depth blocks after
// it.
func (p *taskPrefetcher) started(seq int64) {
	if p == nil {
		return
	}
	if seq+1 > p.begun.Load() {
		p.begun.Store(seq + 1)
	}
	if t := seq + p.depth; t > p.target.Load() {
		p.target.Store(t)
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}

func (p *taskPrefetcher) close() {
	if p == nil {
		return
	}
	close(p.stop)
	p.wg.Wait()
}

func (p *taskPrefetcher) loop(ctx context.Context) {
	defer p.wg.Done()
	defer func() { _ = recover() }() // advice only: the reads report failures
	block := append([]int(nil), p.first...)
	more := true
	for i := int64(0); ; {
		for ; more && i <= p.target.Load(); i++ {
			select {
			case <-p.stop:
				return
			default:
			}
			if ctx.Err() != nil {
				return
			}
			if i >= p.begun.Load() && !p.skip(block) && !p.op.MirroredTask(block) {
				p.j.prefetchTask(ctx, p.op, block)
			}
			more = p.step(block, p.nb)
		}
		select {
		case <-p.wake:
		case <-p.stop:
			return
		}
	}
}

// prefetchTask prefetches into the page cache the local stored inputs of
// the one-step task of op that computes block.
func (j *job) prefetchTask(ctx context.Context, op *plan.Op, block []int) {
	if op.CopiesInput() {
		if op.Inputs[0].Array.PageCached() {
			j.prefetchRegion(ctx, op.Inputs[0].Array, op.InputRegion(0, block, nil))
		}
		return
	}
	step := make([]int, len(op.IterShape(block)))
	j.prefetchStep(ctx, op, func(i int) plan.Region { return op.InputRegion(i, block, step) }, op.Kernel.Core == "piecewise")
}
