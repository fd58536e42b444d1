// Package engine executes finalised plans in process: each op's tasks run on
// a pool of MaxWorkers workers, admitted by a weighted semaphore on their
// projected memory so that the tasks running at once never project more
// than the process budget (allowed_mem × max_workers unless given). Failed
// tasks are retried; a panic inside a task becomes an error naming the op
// and block.
//
// # Scheduling
//
// Ops run one at a time in plan order, or with ComputeArraysInParallel one
// topological generation at a time (plan.Plan.Stages), the ops of a
// generation together. Per op a coordinator (opRun) submits up to BatchSize
// tasks ahead to the job's FIFO work queue and collects their results; with
// UseBackups it gives a straggler one backup copy (Cubed's policy, see
// backupThreshold) and takes whichever copy succeeds first. Tasks write
// whole chunks and stores replace chunks atomically, so duplicate and
// retried tasks are safe.
//
// # Events
//
// Execute reports the computation through a callback of [Event]s with
// Cubed's names: compute start (with the plan's [plan.Stats]), operation
// start, task end (timestamps, projected memory, the task's peak allocation
// and the process's peak RSS before and after it, attempts, whether a
// backup won), operation end, compute end. [EventBuffer] holds them for a
// poller with a bound on task events (the C ABI's cg_job_events).
//
// # Data flow
//
// A task reads the regions of its inputs (generating virtual arrays on the
// fly, assembling stored ones from the Zarr chunks they overlap, one chunk
// at a time), runs the op's kernel from package ops, and writes one whole
// output chunk. Chunk buffers come from [Allocator], which uses C memory so
// that freed buffers leave the process at once, and which records each
// task's peak allocation for comparison with its projection.
//
// Intermediates are Zarr v3 arrays in a per-computation directory below a
// per-process directory under the spec's work dir (the system temporary
// directory by default). [Result.Close] removes a computation's directory;
// [Cleanup] removes the process's at exit.
//
// # Use from Go
//
//	x, _ := ops.Random([]int{1000, 1000}, ops.Float64, 42, 250, spec)
//	m, _ := ops.Reduce("mean", x, []int{0}, false, nil, 0)
//	p, _ := plan.Build([]*plan.Array{m})
//	res, err := engine.Execute(ctx, p, engine.Options{}, nil)
//	means, err := engine.ReadAs[float64](ctx, res, 0)
//	err = res.Close()
//
// [ReadAs] reads an output whole as Go values, [ReadBlocks] one block at a
// time (for outputs larger than memory), [Result.Read] as bytes. The
// package's examples run these steps end to end; docs/go.md is the guide.
package engine
