package engine

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// opRun schedules the tasks of one op. A coordinator (run) submits up to
// BatchSize tasks ahead to the job's work queue, from which the job's
// MaxWorkers workers take them in order; a worker waits for the task's
// projected memory from the job's admission, runs the task with retries
// and reports back. With UseBackups the coordinator also watches running
// tasks and submits one backup copy of a straggler; the first copy to
// succeed wins and the other is cancelled.
//
// Only the coordinator touches the op's scheduling state; workers talk to
// it through msgs.
type opRun struct {
	j      *job
	o      *plan.OpInfo
	kernel *ops.TaskKernel
	msgs   chan copyMsg

	running  int // copy goroutines alive
	started  int // tasks whose first copy has started
	finished []time.Duration
	active   map[*task]struct{} // started and not yet done
	peak     int64
	backups  int64
	skipped  bool // resumed: the output was complete, no task ran
	reverse  bool // tasks run from the last block to the first
	// written holds, in a resumed computation, the keys of the output
	// chunks already in the store: their tasks are not run again.
	writtenKeys  map[string]bool
	outZ         *zarr.Array
	skippedTasks int64

	// The backup threshold, recomputed (a sort of the finished durations)
	// only when the finished tasks grew by 1% since it was last computed.
	limit         time.Duration
	limitOK       bool
	limitFinished int
}

// task is one unit of scheduling and its copies: one output block in
// process, or a batch of blocks handed to a Runner as one call.
type task struct {
	blocks   [][]int
	seq      int64 // the index of its first block in the op's block order
	created  time.Time
	started  time.Time // when its first copy started (zero before)
	cancels  []context.CancelFunc
	live     int // copies not yet finished
	done     bool
	backedUp bool
}

// copyMsg is a copy's report: that it started (admitted), or how it ended.
type copyMsg struct {
	t     *task
	copy  int
	start bool
	at    time.Time
	evs   []Event // one task end per block
	err   error
}

func (r *opRun) run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	opts := r.j.opts
	r.msgs = make(chan copyMsg, 2*opts.BatchSize)
	r.active = map[*task]struct{}{}
	nb := r.o.Op.TaskGrid()
	next := make([]int, len(nb))
	step := advance
	if r.reverse {
		for d := range next {
			next[d] = nb[d] - 1
		}
		step = retreat
	}
	if order := r.j.lastPassOrder(ctx, r.o, r.reverse); order != nil {
		copy(next, unravel(int64(order[0]), nb))
		step = orderStep(order)
	}
	more := true
	perTask := r.j.blocksPerTask(r.o)
	pf := r.j.newTaskPrefetcher(ctx, r.o.Op, next, step, r.written)
	defer pf.close()
	var seq int64 // blocks of the op's order gathered so far
	// nextTask gathers the next task's blocks, leaving out those a resumed
	// computation finds already written.
	nextTask := func() *task {
		t := &task{created: time.Now(), seq: -1}
		for more && len(t.blocks) < perTask {
			if !r.written(next) {
				if t.seq < 0 {
					t.seq = seq
				}
				t.blocks = append(t.blocks, append([]int(nil), next...))
			} else {
				r.skippedTasks++
			}
			seq++
			more = step(next, nb)
		}
		return t
	}
	inflight := 0
	var tick <-chan time.Time
	if opts.UseBackups {
		t := time.NewTicker(backupPollInterval)
		defer t.Stop()
		tick = t.C
	}
	done := ctx.Done()
	var failure error
	for {
		for more && inflight < opts.BatchSize && failure == nil && ctx.Err() == nil {
			if t := nextTask(); len(t.blocks) > 0 {
				r.launch(ctx, t, 0)
				inflight++
			}
		}
		if r.running == 0 && (!more || failure != nil || ctx.Err() != nil) {
			break
		}
		select {
		case m := <-r.msgs:
			if m.start {
				if m.t.started.IsZero() {
					m.t.started = m.at
					r.started++
					r.active[m.t] = struct{}{}
					pf.started(m.t.seq)
				}
				continue
			}
			r.running--
			m.t.live--
			switch {
			case m.t.done:
				// A losing copy, cancelled or not: the task has its result.
			case m.err == nil:
				m.t.done = true
				inflight--
				delete(r.active, m.t)
				for _, c := range m.t.cancels {
					c()
				}
				if opts.UseBackups && len(m.evs) > 0 {
					r.finished = append(r.finished, m.evs[len(m.evs)-1].FunctionEnd.Sub(m.evs[0].FunctionStart))
				}
				now := time.Now()
				for _, ev := range m.evs {
					r.peak = max(r.peak, ev.PeakAllocated)
					ev.TaskCreate = m.t.created
					ev.TaskResult = now
					r.j.emit(ev)
				}
			case m.t.live > 0:
				// Another copy may still succeed.
			case failure == nil:
				failure = m.err
				cancel(failure)
			}
		case <-tick:
			r.launchBackups(ctx)
		case <-done:
			done = nil // copies see the cancellation; keep collecting them
		}
	}
	if failure != nil {
		return failure
	}
	return context.Cause(ctx)
}

// launch submits copy number n of t to the workers.
func (r *opRun) launch(ctx context.Context, t *task, n int) {
	cctx, cancel := context.WithCancel(ctx)
	t.cancels = append(t.cancels, cancel)
	t.live++
	r.running++
	r.j.work.push(&copyReq{r: r, ctx: cctx, cancel: cancel, t: t, n: n})
}

// launchBackups starts a backup copy of each running task that has taken
// longer than the op's backup threshold.
func (r *opRun) launchBackups(ctx context.Context) {
	if n := len(r.finished); !r.limitOK || (n-r.limitFinished)*100 >= n {
		r.limit, r.limitOK = backupThreshold(r.started, r.finished)
		r.limitFinished = n
	}
	if !r.limitOK {
		return
	}
	now := time.Now()
	for t := range r.active {
		if !t.backedUp && now.Sub(t.started) > r.limit {
			t.backedUp = true
			r.backups++
			r.launch(ctx, t, 1)
		}
	}
}

// copyReq is a copy of a task waiting for a worker.
type copyReq struct {
	r      *opRun
	ctx    context.Context
	cancel context.CancelFunc
	t      *task
	n      int
}

// run runs one copy of a task on a worker: admission, the task with its
// retries, and a report to the op's coordinator (always exactly one end
// message).
func (c *copyReq) run() {
	r, t := c.r, c.t
	j, o := r.j, r.o
	m := copyMsg{t: t, copy: c.n}
	defer func() {
		if p := recover(); p != nil {
			m.err = fmt.Errorf("%w: panic: %v\n%s", errPanic, p, debug.Stack())
		}
		c.cancel()
		r.msgs <- m
	}()
	if m.err = c.ctx.Err(); m.err != nil {
		return
	}
	if j.opts.Runner != nil {
		m.evs, m.err = c.runRemote()
		return
	}
	if m.err = j.mem.Acquire(c.ctx, o.ProjectedMem); m.err != nil {
		return
	}
	defer j.mem.Release(o.ProjectedMem)
	j.idle.Add(-1)
	defer j.idle.Add(1)
	start := time.Now()
	r.msgs <- copyMsg{t: t, copy: c.n, start: true, at: start}
	// The peak since the computation started is monotone, so the latest
	// sample by any task is a lower bound of the peak now: the task's
	// growth (end − start) is never understated.
	rssStart := j.rss.Load()
	block := t.blocks[0]
	attempts, peak, err := j.runTaskWithRetries(c.ctx, r.kernel, o.Op, block)
	rssEnd := peakRSS()
	j.rss.Store(max(j.rss.Load(), rssEnd))
	m.err = err
	m.evs = []Event{{Type: TaskEnd, ComputeID: j.id, Op: o.Op.Name, Func: o.Op.Func, NumTasks: 1, Block: block,
		FunctionStart: start, FunctionEnd: time.Now(), ProjectedMem: o.ProjectedMem, PeakAllocated: peak,
		PeakMeasuredMemStart: rssStart, PeakMeasuredMemEnd: max(rssEnd, rssStart), Attempts: attempts, Backup: c.n > 0}}
}

// workQueue is the FIFO of task copies waiting for a worker. Pushing never
// blocks, so an op's coordinator never waits on it; its length is bounded
// by the ops' batch sizes and backups.
type workQueue struct {
	mu     sync.Mutex
	ready  sync.Cond
	items  []*copyReq
	closed bool
}

func newWorkQueue() *workQueue {
	q := &workQueue{}
	q.ready.L = &q.mu
	return q
}

func (q *workQueue) push(c *copyReq) {
	q.mu.Lock()
	q.items = append(q.items, c)
	q.mu.Unlock()
	q.ready.Signal()
}

// pop returns the next copy, waiting for one; ok is false once the queue is
// closed and empty.
func (q *workQueue) pop() (c *copyReq, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 && !q.closed {
		q.ready.Wait()
	}
	if len(q.items) == 0 {
		return nil, false
	}
	c = q.items[0]
	q.items[0] = nil
	q.items = q.items[1:]
	return c, true
}

func (q *workQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.ready.Broadcast()
}

// idleWorkers lends the cores of idle workers to running tasks (see
// ops.Helpers): it counts the workers not running a task, less the
// helpers lent. A task that starts while its worker's core is lent runs
// beside the helper until the helper's piece is done.
type idleWorkers struct{ n *atomic.Int64 }

func (w idleWorkers) Borrow(want int) int {
	for {
		free := w.n.Load()
		if free <= 0 || want <= 0 {
			return 0
		}
		got := min(int64(want), free)
		if w.n.CompareAndSwap(free, free-got) {
			return int(got)
		}
	}
}

func (w idleWorkers) Return(n int) { w.n.Add(int64(n)) }

// startWorkers starts n workers on the job's queue; the returned function
// closes the queue and waits for them to exit.
func (j *job) startWorkers(n int) (stop func()) {
	j.work = newWorkQueue()
	j.idle.Store(int64(n))
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c, ok := j.work.pop()
				if !ok {
					return
				}
				c.run()
			}
		}()
	}
	return func() {
		j.work.close()
		wg.Wait()
	}
}

// retreat moves block coordinates to the previous block in C order and
// reports whether there is one.
func retreat(block, nb []int) bool {
	for d := len(nb) - 1; d >= 0; d-- {
		block[d]--
		if block[d] >= 0 {
			return true
		}
		block[d] = nb[d] - 1
	}
	return false
}

// advance moves block coordinates to the next block in C order and reports
// whether there is one.
func advance(block, nb []int) bool {
	for d := len(nb) - 1; d >= 0; d-- {
		block[d]++
		if block[d] < nb[d] {
			return true
		}
		block[d] = 0
	}
	return false
}
