package engine_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/cubego/cubego/engine"
	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// Build arrays, compute the mean over axis 0 of x*2 + 1 and read the result
// as Go values.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "cubego-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// Intermediates go under WorkDir; each task may use 100 MB.
	spec := &plan.Spec{WorkDir: dir, AllowedMem: 100_000_000, ReservedMem: 10_000_000}

	// x[i, j] = 4i + j, a 6×4 array in blocks of 3×2.
	data := make([]float64, 24)
	for i := range data {
		data[i] = float64(i)
	}
	x, err := ops.FromSlice([]int{6, 4}, data, []int{3, 2}, spec)
	if err != nil {
		log.Fatal(err)
	}
	two := &plan.Scalar{Kind: 'f', F: 2}
	one := &plan.Scalar{Kind: 'i', I: 1}
	y, err := ops.Elemwise("multiply", ops.Operand{Array: x}, ops.Operand{Scalar: two})
	if err != nil {
		log.Fatal(err)
	}
	y, err = ops.Elemwise("add", ops.Operand{Array: y}, ops.Operand{Scalar: one})
	if err != nil {
		log.Fatal(err)
	}
	m, err := ops.Reduce("mean", y, []int{0}, false, nil, 0)
	if err != nil {
		log.Fatal(err)
	}

	// Nothing has run yet: build the plan, fuse it, execute it.
	p, err := plan.Build([]*plan.Array{m})
	if err != nil {
		log.Fatal(err)
	}
	p.Fuse()
	res, err := engine.Execute(ctx, p, engine.Options{}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Close()
	means, err := engine.ReadAs[float64](ctx, res, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(means)
	// Output:
	// [21 23 25 27]
}

// Options bound the workers, retry failed tasks and run backup copies of
// stragglers; Result.Stats reports what ran.
func ExampleExecute() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "cubego-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	spec := &plan.Spec{WorkDir: dir, AllowedMem: 100_000_000, ReservedMem: 10_000_000}

	x, err := ops.Random([]int{1000, 1000}, ops.Float64, 42, []int{250, 250}, spec)
	if err != nil {
		log.Fatal(err)
	}
	s, err := ops.Reduce("sum", x, []int{1}, false, nil, 0)
	if err != nil {
		log.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{s})
	if err != nil {
		log.Fatal(err)
	}
	opts := engine.Options{
		MaxWorkers:    2,           // tasks running at once (default: one per core)
		Retries:       1,           // extra attempts of a failed task (negative: DefaultRetries)
		UseBackups:    true,        // a backup copy of straggling tasks
		ProcessBudget: 200_000_000, // projected memory of all running tasks together
	}
	res, err := engine.Execute(ctx, p, opts, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Close()
	st := res.Stats
	fmt.Println("ops:", st.NumOps, "tasks:", st.NumTasks, "workers:", st.MaxWorkers)
	fmt.Println("peak allocated within the projection:", st.PeakAllocated <= st.MaxProjectedMem*int64(st.MaxWorkers))
	sums, err := engine.ReadAs[float64](ctx, res, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("row sums:", len(sums))
	// Output:
	// ops: 1 tasks: 4 workers: 2
	// peak allocated within the projection: true
	// row sums: 1000
}

// ReadAs returns a whole output as a slice of its Go element type; another
// type is an error that names the right one.
func ExampleReadAs() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "cubego-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	spec := &plan.Spec{WorkDir: dir, AllowedMem: 100_000_000}

	x, err := ops.FromSlice([]int{5}, []int32{3, 1, 4, 1, 5}, 2, spec)
	if err != nil {
		log.Fatal(err)
	}
	big, err := ops.Elemwise("greater", ops.Operand{Array: x}, ops.Operand{Scalar: &plan.Scalar{Kind: 'i', I: 2}})
	if err != nil {
		log.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{big})
	if err != nil {
		log.Fatal(err)
	}
	res, err := engine.Execute(ctx, p, engine.Options{}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Close()

	flags, err := engine.ReadAs[bool](ctx, res, 0)
	fmt.Println(flags, err)
	_, err = engine.ReadAs[int32](ctx, res, 0)
	fmt.Println(errors.Is(err, plan.ErrType))
	// Output:
	// [true false true false true] <nil>
	// true
}

// ReadBlocks visits an output one block at a time, so a loop over an
// output larger than memory holds one block.
func ExampleReadBlocks() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "cubego-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	spec := &plan.Spec{WorkDir: dir, AllowedMem: 100_000_000}

	// 0, 1, ..., 11 as a 3×4 array in 2×3 blocks, squared.
	x, err := ops.Arange(0, 12, 1, ops.Int64, nil, spec)
	if err != nil {
		log.Fatal(err)
	}
	x, err = ops.Reshape(x, []int{3, 4})
	if err != nil {
		log.Fatal(err)
	}
	x, err = ops.Rechunk(x, []int{2, 3})
	if err != nil {
		log.Fatal(err)
	}
	sq, err := ops.Elemwise("square", ops.Operand{Array: x})
	if err != nil {
		log.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{sq})
	if err != nil {
		log.Fatal(err)
	}
	res, err := engine.Execute(ctx, p, engine.Options{}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Close()

	for b, err := range engine.ReadBlocks[int64](ctx, res, 0) {
		if err != nil {
			log.Fatal(err)
		}
		// b.Data is reused by the next block: copy it to keep it.
		fmt.Println("block", b.Coords, "at", b.Start, "shape", b.Shape, b.Data)
	}
	// Output:
	// block [0 0] at [0 0] shape [2 3] [0 1 4 16 25 36]
	// block [0 1] at [0 3] shape [2 1] [9 49]
	// block [1 0] at [2 0] shape [1 3] [64 81 100]
	// block [1 1] at [2 3] shape [1 1] [121]
}

// ToZarr makes an array that, when computed, is written to a Zarr array
// that stays after the computation, readable by zarr-python (here Zarr
// v2, zstd-compressed).
func ExampleExecute_zarrTarget() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "cubego-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	spec := &plan.Spec{WorkDir: dir, AllowedMem: 100_000_000}

	x, err := ops.Full([]int{4, 6}, ops.Float32, plan.Scalar{Kind: 'f', F: 0.5}, []int{2, 3}, spec)
	if err != nil {
		log.Fatal(err)
	}
	target := plan.ZarrRef{
		Store:       filepath.Join(dir, "out.zarr"), // a path or a URL: s3://bucket/prefix, ...
		Path:        "half",
		ZarrFormat:  2,
		Compressors: []zarr.Codec{zarr.ZstdCodec(3, false)},
	}
	stored, err := ops.ToZarr(x, target, nil)
	if err != nil {
		log.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{stored})
	if err != nil {
		log.Fatal(err)
	}
	res, err := engine.Execute(ctx, p, engine.Options{}, nil)
	if err != nil {
		log.Fatal(err)
	}
	res.Close() // removes intermediates; the target stays

	store, err := zarr.OpenStore(ctx, target.Store)
	if err != nil {
		log.Fatal(err)
	}
	defer zarr.Close(store)
	z, err := zarr.OpenArray(ctx, store, "half")
	if err != nil {
		log.Fatal(err)
	}
	meta := z.Metadata()
	fmt.Println("format", meta.ZarrFormat, meta.DataType, meta.Shape, "chunks", meta.ChunkShape, meta.Compressor.Name)
	// Output:
	// format 2 float32 [4 6] chunks [2 3] zstd
}

// The onEvent callback sees the computation's start and end, each op's
// start and end, and every task's end with its projected and measured
// memory. It is called from several goroutines at once.
func ExampleExecute_events() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "cubego-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	spec := &plan.Spec{WorkDir: dir, AllowedMem: 100_000_000}

	// Two ops: x*x in 4×4 blocks (16 tasks), then its sum over axis 0 (4
	// tasks, each folding a column of blocks).
	x, err := ops.Random([]int{400, 400}, ops.Float64, 1, []int{100, 100}, spec)
	if err != nil {
		log.Fatal(err)
	}
	sq, err := ops.Elemwise("multiply", ops.Operand{Array: x}, ops.Operand{Array: x})
	if err != nil {
		log.Fatal(err)
	}
	s, err := ops.Reduce("sum", sq, []int{0}, false, nil, 0)
	if err != nil {
		log.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{s})
	if err != nil {
		log.Fatal(err)
	}

	var mu sync.Mutex
	counts := map[engine.EventType]int{}
	overProjection := 0
	onEvent := func(ev engine.Event) {
		mu.Lock()
		defer mu.Unlock()
		counts[ev.Type]++
		if ev.Type == engine.TaskEnd && ev.PeakAllocated > ev.ProjectedMem {
			overProjection++
		}
	}
	res, err := engine.Execute(ctx, p, engine.Options{}, onEvent)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Close()
	for _, t := range []engine.EventType{engine.ComputeStart, engine.OperationStart, engine.TaskEnd,
		engine.OperationEnd, engine.ComputeEnd} {
		fmt.Println(t, counts[t])
	}
	fmt.Println("tasks over their projection:", overProjection)
	// Output:
	// compute_start 1
	// operation_start 2
	// task_end 20
	// operation_end 2
	// compute_end 1
	// tasks over their projection: 0
}

// Execute refuses, before any task runs, a plan whose tasks would need
// more than allowed_mem, with a *plan.MemoryExceededError.
func ExampleExecute_memoryExceeded() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "cubego-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	spec := &plan.Spec{WorkDir: dir, AllowedMem: 10_000_000} // 10 MB per task

	// Blocks of 1000×1000 float64 are 8 MB: a task holds its input block
	// (8 MB) and its output block with the encoded copy written to disk
	// (2 × 8 MB).
	x, err := ops.Random([]int{2000, 2000}, ops.Float64, 7, []int{1000, 1000}, spec)
	if err != nil {
		log.Fatal(err)
	}
	y, err := ops.Elemwise("exp", ops.Operand{Array: x})
	if err != nil {
		log.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{y})
	if err != nil {
		log.Fatal(err)
	}
	_, err = engine.Execute(ctx, p, engine.Options{}, nil)
	var mem *plan.MemoryExceededError
	if errors.As(err, &mem) {
		fmt.Println("projected", plan.FormatBytes(mem.Projected), "allowed", plan.FormatBytes(mem.Allowed))
		fmt.Println(mem.Hint)
	}
	// Output:
	// projected 24.0 MB allowed 10.0 MB
	// use smaller chunks (its largest chunk is 8.0 MB) or increase allowed_mem
}

// With Resume, intermediates are kept under the work dir, named by what
// they compute (plan.Key): a computation that failed can be run again and
// skips every op whose output is already complete.
func ExampleExecute_resume() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "cubego-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	spec := &plan.Spec{WorkDir: dir, AllowedMem: 100_000_000}
	opts := engine.Options{Resume: true, Retries: 0}

	// e = exp(x) is an intermediate of both computations below.
	exp := func() *plan.Array {
		x, err := ops.Random([]int{1000}, ops.Float64, 3, 100, spec)
		if err != nil {
			log.Fatal(err)
		}
		e, err := ops.Elemwise("exp", ops.Operand{Array: x})
		if err != nil {
			log.Fatal(err)
		}
		return e
	}

	// The first fails after computing e: nanargmax of only NaNs.
	nan := &plan.Scalar{Kind: 'f', F: math.NaN()}
	allNaN, err := ops.Elemwise("multiply", ops.Operand{Array: exp()}, ops.Operand{Scalar: nan})
	if err != nil {
		log.Fatal(err)
	}
	bad, err := ops.ArgReduce("nanargmax", allNaN, nil, false)
	if err != nil {
		log.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{bad})
	if err != nil {
		log.Fatal(err)
	}
	_, err = engine.Execute(ctx, p, opts, nil)
	var taskErr *engine.TaskError
	fmt.Println("first computation failed:", errors.As(err, &taskErr))

	// The second finds e complete.
	total, err := ops.Reduce("sum", exp(), nil, false, nil, 0)
	if err != nil {
		log.Fatal(err)
	}
	p, err = plan.Build([]*plan.Array{total})
	if err != nil {
		log.Fatal(err)
	}
	res, err := engine.Execute(ctx, p, opts, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Close()
	for _, o := range res.Stats.Ops {
		fmt.Println(o.Func, "skipped:", o.Skipped)
	}
	// Output:
	// first computation failed: true
	// exp skipped: true
	// sum skipped: false
}

// workerPool is a Runner whose workers receive only the serialised array
// graph, as workers on other machines would: each rebuilds the plan and runs
// its batches with engine.RunTasks. A real runner would send the graph and
// the batch over the network instead of calling RunTasks here.
type workerPool struct {
	graph []byte
	once  sync.Once
	plan  *plan.Plan
	err   error
	calls atomic.Int64
}

func (w *workerPool) RunBatch(ctx context.Context, b engine.Batch) ([]engine.TaskStat, error) {
	w.once.Do(func() {
		outs, err := plan.Unmarshal(w.graph)
		if err != nil {
			w.err = err
			return
		}
		if w.plan, w.err = plan.Build(outs); w.err == nil {
			w.plan.Fuse()
		}
	})
	if w.err != nil {
		return nil, w.err
	}
	w.calls.Add(1)
	return engine.RunTasks(ctx, w.plan, b)
}

// A Runner runs the tasks elsewhere while the engine keeps scheduling them:
// batching, retries, backups and events are the same as in process.
func ExampleRunner() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "cubego-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	spec := &plan.Spec{WorkDir: dir, AllowedMem: 100_000_000}
	x, err := ops.Random([]int{1000, 1000}, ops.Float64, 7, []int{100, 100}, spec)
	if err != nil {
		log.Fatal(err)
	}
	y, err := ops.Rechunk(x, []any{1000, 10})
	if err != nil {
		log.Fatal(err)
	}
	s, err := ops.Reduce("sum", y, []int{0}, false, nil, 0)
	if err != nil {
		log.Fatal(err)
	}
	graph, err := plan.Marshal([]*plan.Array{s}) // what every worker receives once
	if err != nil {
		log.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{s})
	if err != nil {
		log.Fatal(err)
	}
	p.Fuse()
	pool := &workerPool{graph: graph}
	opts := engine.Options{Runner: pool, MaxWorkers: 4, TasksPerBatch: 10}
	res, err := engine.Execute(ctx, p, opts, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Close()
	sums, err := engine.ReadAs[float64](ctx, res, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("tasks:", res.Stats.NumTasks, "calls:", pool.calls.Load(), "column sums:", len(sums))
	// Output:
	// tasks: 110 calls: 11 column sums: 1000
}
