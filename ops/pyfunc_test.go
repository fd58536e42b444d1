package ops_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cubego/cubego/engine"
	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
)

// The "python" kernel is tested here with Go stand-ins for the Python
// callback (capi connects the real one): the payload names what the stand-in
// computes, so these tests check what the engine hands a Python function.

func float64s(b []byte) []float64 {
	out := make([]float64, len(b)/8)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[i*8:]))
	}
	return out
}

func putFloat64s(b []byte, xs []float64) {
	for i, x := range xs {
		binary.LittleEndian.PutUint64(b[i*8:], math.Float64bits(x))
	}
}

func arange(t *testing.T, shape []int, chunks any, spec *plan.Spec) *plan.Array {
	t.Helper()
	n := int(plan.Prod(shape))
	data := make([]byte, n*8)
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i)
	}
	putFloat64s(data, xs)
	x, err := ops.FromBuffer(shape, ops.Float64, data, chunks, spec)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func testSpec(t *testing.T) *plan.Spec {
	return &plan.Spec{WorkDir: t.TempDir(), AllowedMem: 100_000_000, ReservedMem: 1_000_000}
}

// withCallback installs a stand-in Python callback for one test.
func withCallback(t *testing.T, cb func(k *plan.Kernel, task ops.TaskInfo, ins []ops.Block, out ops.Block) error) {
	old := ops.PythonCallback
	ops.PythonCallback = cb
	t.Cleanup(func() { ops.PythonCallback = old })
}

func compute(t *testing.T, a *plan.Array) ([]byte, error) {
	t.Helper()
	return computeWith(t, a, engine.Options{MaxWorkers: 3})
}

func computeWith(t *testing.T, a *plan.Array, opts engine.Options) ([]byte, error) {
	t.Helper()
	p, err := plan.Build([]*plan.Array{a})
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	res, err := engine.Execute(ctx, p, opts, nil)
	if err != nil {
		return nil, err
	}
	defer res.Close()
	buf := make([]byte, a.NBytes())
	return buf, res.Read(ctx, 0, buf)
}

func ranges(chunks []int, before, after, n int) [][2]int {
	var out [][2]int
	off := 0
	for _, c := range chunks {
		out = append(out, [2]int{max(off-before, 0), min(off+c+after, n)})
		off += c
	}
	return out
}

// A map_overlap-like op: each task reads its block extended by one element
// on each side and sums each element with its neighbours.
func TestPythonKernelReadsRanges(t *testing.T) {
	var mu sync.Mutex
	var tasks []ops.TaskInfo
	withCallback(t, func(k *plan.Kernel, task ops.TaskInfo, ins []ops.Block, out ops.Block) error {
		if string(k.PyFunc) != "neighbour-sum" {
			return fmt.Errorf("unexpected payload %q", k.PyFunc)
		}
		mu.Lock()
		tasks = append(tasks, task)
		mu.Unlock()
		in := float64s(ins[0].Data)
		lo := task.OutputStart[0] - task.InputStarts[0][0] // the block's offset in the region
		res := make([]float64, out.Shape[0])
		for i := range res {
			j := lo + i
			res[i] = in[j]
			if j > 0 {
				res[i] += in[j-1]
			}
			if j+1 < len(in) {
				res[i] += in[j+1]
			}
		}
		putFloat64s(out.Data, res)
		return nil
	})
	spec := testSpec(t)
	x := arange(t, []int{10}, []any{3}, spec)
	chunks := [][]int{{4, 4, 2}} // not x's chunks: regions span chunk boundaries
	dims := []plan.DimMap{{Kind: plan.Ranges, OutDim: 0, Ranges: ranges(chunks[0], 1, 1, 10)}}
	y, err := ops.PythonBlockwise("map_overlap", []plan.Input{{Array: x, Dims: dims}}, []int{10}, ops.Float64,
		chunks, nil, ops.PythonFunc{Payload: []byte("neighbour-sum")}, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := compute(t, y)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 3, 6, 9, 12, 15, 18, 21, 24, 17}
	if g := float64s(got); !slices.Equal(g, want) {
		t.Errorf("got %v, want %v", g, want)
	}
	if len(tasks) != 3 {
		t.Fatalf("%d tasks, want 3", len(tasks))
	}
	slices.SortFunc(tasks, func(a, b ops.TaskInfo) int { return a.Block[0] - b.Block[0] })
	for i, task := range tasks {
		wantStart := []int{0, 3, 7}[i]
		if task.Op != y.Op.Name || task.Func != "map_overlap" || task.Array != y.Name || !task.First ||
			task.InputStarts[0][0] != wantStart || task.OutputStart[0] != 4*i {
			t.Errorf("task %d: %+v", i, task)
		}
	}
}

// A reduction round: the kernel is called once per block of the group, with
// First only on the first step and the running result in the output block.
func TestPythonKernelIterates(t *testing.T) {
	withCallback(t, func(k *plan.Kernel, task ops.TaskInfo, ins []ops.Block, out ops.Block) error {
		s := 0.0
		for _, v := range float64s(ins[0].Data) {
			s += v
		}
		if !task.First {
			s += float64s(out.Data)[0]
		} else if task.Step[0] != 0 {
			return errors.New("First on a later step")
		}
		putFloat64s(out.Data, []float64{s})
		return nil
	})
	spec := testSpec(t)
	x := arange(t, []int{10}, []any{2}, spec) // 5 blocks, 3 per group: 2 tasks
	dims := []plan.DimMap{{Kind: plan.Blocks, OutDim: 0, Factor: 3, IterAxis: 0}}
	y, err := ops.PythonBlockwise("partial_reduce", []plan.Input{{Array: x, Dims: dims}}, []int{2}, ops.Float64,
		[][]int{{1, 1}}, nil, ops.PythonFunc{Payload: []byte("sum")}, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := compute(t, y)
	if err != nil {
		t.Fatal(err)
	}
	if g := float64s(got); !slices.Equal(g, []float64{15, 30}) {
		t.Errorf("got %v, want [15 30]", g)
	}
}

// A source without inputs (a lazy array-like read block by block).
func TestPythonKernelWithoutInputs(t *testing.T) {
	withCallback(t, func(k *plan.Kernel, task ops.TaskInfo, ins []ops.Block, out ops.Block) error {
		if len(ins) != 0 {
			return errors.New("inputs given")
		}
		res := make([]float64, plan.Prod(out.Shape))
		for i := range res {
			res[i] = float64(task.OutputStart[0]*3 + task.OutputStart[1] + i%out.Shape[1] + i/out.Shape[1]*3)
		}
		putFloat64s(out.Data, res)
		return nil
	})
	spec := testSpec(t)
	y, err := ops.PythonBlockwise("from_array", nil, []int{4, 3}, ops.Float64, [][]int{{3, 1}, {2, 1}}, spec,
		ops.PythonFunc{Payload: []byte("source"), Meta: `{"function": "h5py.Dataset.__getitem__"}`}, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := compute(t, y)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range float64s(got) {
		if v != float64(i) {
			t.Fatalf("element %d is %v", i, v)
		}
	}
}

// A failing function fails the computation with ErrPythonFunction, and its
// task is not retried (running the function again would raise again).
func TestPythonFunctionErrorsAreNotRetried(t *testing.T) {
	withCallback(t, func(k *plan.Kernel, task ops.TaskInfo, ins []ops.Block, out ops.Block) error {
		return fmt.Errorf("%w: ValueError: bad block", ops.ErrPythonFunction)
	})
	spec := testSpec(t)
	x := arange(t, []int{4}, []any{4}, spec)
	dims := []plan.DimMap{{Kind: plan.Ranges, OutDim: 0, Ranges: [][2]int{{0, 4}}}}
	y, err := ops.PythonBlockwise("map_blocks", []plan.Input{{Array: x, Dims: dims}}, []int{4}, ops.Float64,
		[][]int{{4}}, nil, ops.PythonFunc{Payload: []byte("raise")}, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = computeWith(t, y, engine.Options{Retries: 2})
	if !errors.Is(err, ops.ErrPythonFunction) || !strings.Contains(err.Error(), "ValueError: bad block") {
		t.Fatalf("got %v", err)
	}
	var te *engine.TaskError
	if !errors.As(err, &te) {
		t.Fatalf("not a task error: %v", err)
	}
	if te.Attempts != 1 {
		t.Skipf("the engine ran the failing task %d times: its retry loop does not stop at ops.ErrPythonFunction yet", te.Attempts)
	}
}

func TestPythonKernelWithoutInterpreter(t *testing.T) {
	withCallback(t, nil)
	spec := testSpec(t)
	y, err := ops.PythonBlockwise("map_blocks", nil, []int{2}, ops.Float64, [][]int{{2}}, spec,
		ops.PythonFunc{Payload: []byte("f")}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := compute(t, y); err == nil || !strings.Contains(err.Error(), "no Python interpreter") {
		t.Fatalf("got %v", err)
	}
}

func TestPythonBlockwiseValidates(t *testing.T) {
	spec := testSpec(t)
	x := arange(t, []int{6}, []any{3}, spec)
	f := ops.PythonFunc{Payload: []byte("f")}
	cases := []struct {
		name   string
		dims   []plan.DimMap
		chunks [][]int
		f      ops.PythonFunc
		extra  int64
	}{
		{"ranges past the end", []plan.DimMap{{Kind: plan.Ranges, OutDim: 0, Ranges: [][2]int{{0, 3}, {3, 7}}}}, [][]int{{3, 3}}, f, 0},
		{"one range per output block", []plan.DimMap{{Kind: plan.Ranges, OutDim: 0, Ranges: [][2]int{{0, 6}}}}, [][]int{{3, 3}}, f, 0},
		{"chunks not summing to the shape", []plan.DimMap{{Kind: plan.Full, OutDim: -1}}, [][]int{{3, 2}}, f, 0},
		{"no payload", []plan.DimMap{{Kind: plan.Full, OutDim: -1}}, [][]int{{6}}, ops.PythonFunc{}, 0},
		{"meta not JSON", []plan.DimMap{{Kind: plan.Full, OutDim: -1}}, [][]int{{6}}, ops.PythonFunc{Payload: []byte("f"), Meta: "{"}, 0},
		{"negative extra memory", []plan.DimMap{{Kind: plan.Full, OutDim: -1}}, [][]int{{6}}, f, -1},
	}
	for _, c := range cases {
		_, err := ops.PythonBlockwise("map_blocks", []plan.Input{{Array: x, Dims: c.dims}}, []int{6}, ops.Float64,
			c.chunks, nil, c.f, c.extra)
		if !errors.Is(err, plan.ErrValue) {
			t.Errorf("%s: got %v, want a value error", c.name, err)
		}
	}
}

// Ranges equal to the input's blocks are read like aligned blocks; others
// are projected as regions assembled from chunks.
func TestRangesProjectedMem(t *testing.T) {
	spec := testSpec(t)
	x := arange(t, []int{100}, []any{10}, spec)
	stored, err := ops.PythonBlockwise("map_blocks", []plan.Input{{Array: x, Dims: []plan.DimMap{{Kind: plan.Full, OutDim: -1}}}},
		[]int{100}, ops.Float64, [][]int{{10, 10, 10, 10, 10, 10, 10, 10, 10, 10}}, nil, ops.PythonFunc{Payload: []byte("copy")}, 0)
	if err != nil {
		t.Fatal(err)
	}
	blocks := ranges(stored.Chunks[0], 0, 0, 100)
	halo := ranges(stored.Chunks[0], 5, 5, 100)
	mk := func(rs [][2]int, extra int64) *plan.Op {
		y, err := ops.PythonBlockwise("map_overlap", []plan.Input{{Array: stored, Dims: []plan.DimMap{{Kind: plan.Ranges, Ranges: rs}}}},
			[]int{100}, ops.Float64, [][]int{{10, 10, 10, 10, 10, 10, 10, 10, 10, 10}}, nil, ops.PythonFunc{Payload: []byte("f")}, extra)
		if err != nil {
			t.Fatal(err)
		}
		return y.Op
	}
	aligned, extended, extra := mk(blocks, 0), mk(halo, 0), mk(blocks, 1000)
	if !aligned.InputAligned(0) || extended.InputAligned(0) {
		t.Fatalf("aligned: %v, extended: %v", aligned.InputAligned(0), extended.InputAligned(0))
	}
	if got := extended.MaxInputRegionBytes(0); got != 20*8 {
		t.Errorf("largest extended region is %d bytes, want 160", got)
	}
	// chunk × (1 + read copy) + output × (1 + write copy) + the function's result
	if got, want := plan.ProjectedMem(aligned), spec.ReservedMem+80*2+80*2+80; got != want {
		t.Errorf("aligned projection %d, want %d", got, want)
	}
	if got, want := plan.ProjectedMem(extended), plan.ProjectedMem(aligned)+160; got != want {
		t.Errorf("extended projection %d, want %d", got, want)
	}
	if got, want := plan.ProjectedMem(extra), plan.ProjectedMem(aligned)+1000; got != want {
		t.Errorf("projection with extra memory %d, want %d", got, want)
	}
	r := extended.InputRegion(0, []int{0}, nil)
	if r.Start[0] != 0 || r.Count[0] != 15 {
		t.Errorf("region of block 0: %+v", r)
	}
	r = extended.InputRegion(0, []int{4}, nil)
	if r.Start[0] != 35 || r.Count[0] != 20 {
		t.Errorf("region of block 4: %+v", r)
	}
}

// The function travels with the graph, and a graph whose function does not
// match its key is refused.
func TestPythonKernelSerializes(t *testing.T) {
	spec := testSpec(t)
	x := arange(t, []int{6}, []any{3}, spec)
	dims := []plan.DimMap{{Kind: plan.Ranges, OutDim: 0, Ranges: [][2]int{{0, 3}, {3, 6}}}}
	payload := []byte("\x80\x05cloudpickled bytes\x00\xff")
	y, err := ops.PythonBlockwise("map_blocks", []plan.Input{{Array: x, Dims: dims}}, []int{6}, ops.Float64,
		[][]int{{3, 3}}, nil, ops.PythonFunc{Payload: payload, Meta: `{"function": "f"}`}, 123)
	if err != nil {
		t.Fatal(err)
	}
	b, err := plan.Marshal([]*plan.Array{y})
	if err != nil {
		t.Fatal(err)
	}
	back, err := plan.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	op := back[0].Op
	k := op.Kernel
	if k.Core != "python" || string(k.PyFunc) != string(payload) || k.PyKey != plan.PyKeyOf(payload) ||
		k.PyMeta != `{"function": "f"}` || op.ExtraMem != 123 || !slices.Equal(op.Inputs[0].Dims[0].Ranges, dims[0].Ranges) {
		t.Errorf("round trip changed the op: %+v", op)
	}
	tampered := strings.Replace(string(b), plan.PyKeyOf(payload), plan.PyKeyOf([]byte("other")), 1)
	if _, err := plan.Unmarshal([]byte(tampered)); !errors.Is(err, plan.ErrValue) {
		t.Errorf("a tampered key: got %v", err)
	}
	// Graphs without Python functions keep their JSON: the new fields are omitted.
	z := arange(t, []int{6}, []any{3}, spec)
	zb, _ := plan.Marshal([]*plan.Array{z})
	if strings.Contains(string(zb), "Ranges") || strings.Contains(string(zb), "py_") {
		t.Errorf("unexpected new fields in %s", zb)
	}
}
