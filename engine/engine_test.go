package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

func testSpec(t *testing.T) *plan.Spec {
	return &plan.Spec{WorkDir: t.TempDir(), AllowedMem: 100 << 20, ReservedMem: 1 << 20}
}

// compute runs outs and returns their float64 values.
func compute(t *testing.T, opts Options, outs ...*plan.Array) [][]float64 {
	t.Helper()
	p, err := plan.Build(outs)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Execute(context.Background(), p, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	vals := make([][]float64, len(outs))
	for i, a := range outs {
		buf := make([]byte, a.NBytes())
		if err := res.Read(context.Background(), i, buf); err != nil {
			t.Fatal(err)
		}
		vals[i] = toFloats(a.DType, buf)
	}
	return vals
}

// mustArray returns a function that passes an array through and fails
// the test on an error: must(ops.Elemwise(...)).
func mustArray(t *testing.T) func(*plan.Array, error) *plan.Array {
	return func(a *plan.Array, err error) *plan.Array {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
}

func toFloats(dt zarr.DataType, b []byte) []float64 {
	n := len(b) / max(dt.Size(), 1)
	out := make([]float64, n)
	for i := range out {
		switch dt {
		case zarr.Float64:
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[i*8:]))
		case zarr.Int64:
			out[i] = float64(int64(binary.LittleEndian.Uint64(b[i*8:])))
		case zarr.Float32:
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[i*4:])))
		case zarr.Bool:
			if b[i] != 0 {
				out[i] = 1
			}
		}
	}
	return out
}

func fromFloats(v []float64) []byte {
	b := make([]byte, 8*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint64(b[i*8:], math.Float64bits(f))
	}
	return b
}

func literal(t *testing.T, spec *plan.Spec, shape []int, chunks any, v []float64) *plan.Array {
	t.Helper()
	a, err := ops.FromBuffer(shape, zarr.Float64, fromFloats(v), chunks, spec)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func seq(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i)
	}
	return v
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestElementwiseMisalignedChunks(t *testing.T) {
	spec := testSpec(t)
	x := literal(t, spec, []int{7, 5}, []any{3, 2}, seq(35))
	y := literal(t, spec, []int{7, 5}, []any{2, 4}, seq(35))
	z, err := ops.Elemwise("multiply", ops.Operand{Array: x}, ops.Operand{Array: y})
	if err != nil {
		t.Fatal(err)
	}
	// A second op reads z (stored) with other chunks again.
	w, err := ops.Elemwise("add", ops.Operand{Array: z}, ops.Operand{Array: y})
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 3} {
		got := compute(t, Options{MaxWorkers: workers}, w)[0]
		for i, g := range got {
			if want := float64(i*i + i); g != want {
				t.Fatalf("workers %d: element %d = %v, want %v", workers, i, g, want)
			}
		}
	}
}

func TestReductionRounds(t *testing.T) {
	spec := testSpec(t)
	x := literal(t, spec, []int{9, 4}, []any{2, 3}, seq(36))
	for _, split := range []int{2, 3, 16} {
		s0, err := ops.Reduce("sum", x, []int{0}, false, nil, split)
		if err != nil {
			t.Fatal(err)
		}
		m1, err := ops.Reduce("mean", x, []int{1}, true, nil, split)
		if err != nil {
			t.Fatal(err)
		}
		mx, err := ops.Reduce("max", x, nil, false, nil, split)
		if err != nil {
			t.Fatal(err)
		}
		got := compute(t, Options{}, s0, m1, mx)
		for j := range 4 {
			want := 0.0
			for i := range 9 {
				want += float64(i*4 + j)
			}
			if got[0][j] != want {
				t.Errorf("split %d: sum axis 0 [%d] = %v, want %v", split, j, got[0][j], want)
			}
		}
		for i := range 9 {
			if want := float64(i*4) + 1.5; !near(got[1][i], want) {
				t.Errorf("split %d: mean axis 1 [%d] = %v, want %v", split, i, got[1][i], want)
			}
		}
		if got[2][0] != 35 {
			t.Errorf("split %d: max = %v, want 35", split, got[2][0])
		}
	}
}

func TestMatmulStreamsContraction(t *testing.T) {
	spec := testSpec(t)
	a := literal(t, spec, []int{5, 7}, []any{2, 3}, seq(35))
	b := literal(t, spec, []int{7, 3}, []any{2, 2}, seq(21)) // K chunks differ: rechunked
	c, err := ops.Matmul(a, b)
	if err != nil {
		t.Fatal(err)
	}
	got := compute(t, Options{}, c)[0]
	for i := range 5 {
		for j := range 3 {
			want := 0.0
			for k := range 7 {
				want += float64(i*7+k) * float64(k*3+j)
			}
			if !near(got[i*3+j], want) {
				t.Fatalf("c[%d,%d] = %v, want %v", i, j, got[i*3+j], want)
			}
		}
	}
}

func TestGetItemSlicesAndRechunk(t *testing.T) {
	spec := testSpec(t)
	x := literal(t, spec, []int{10, 6}, []any{4, 4}, seq(60))
	neg, _ := ops.Elemwise("negative", ops.Operand{Array: x}) // stored, then sliced
	two := 2
	m1 := -1
	five := 5
	y, err := ops.GetItem(neg, []ops.Index{{Kind: ops.IndexSlice, Start: &five, Stop: nil, Step: &m1}, {Kind: ops.IndexInt, Int: 1}, {Kind: ops.IndexNewAxis}})
	if err != nil {
		t.Fatal(err)
	}
	z, err := ops.GetItem(neg, []ops.Index{{Kind: ops.IndexSlice, Step: &two}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := ops.Rechunk(neg, []any{3, 5})
	if err != nil {
		t.Fatal(err)
	}
	got := compute(t, Options{}, y, z, r)
	for i, g := range got[0] { // rows 5,4,...,0 of column 1
		if want := -float64((5-i)*6 + 1); g != want {
			t.Errorf("y[%d] = %v, want %v", i, g, want)
		}
	}
	for i, g := range got[1] {
		row, col := i/6, i%6
		if want := -float64(row*2*6 + col); g != want {
			t.Errorf("z[%d] = %v, want %v", i, g, want)
		}
	}
	for i, g := range got[2] {
		if g != -float64(i) {
			t.Fatalf("rechunked[%d] = %v", i, g)
		}
	}
}

func TestToZarrAndFromZarr(t *testing.T) {
	spec := testSpec(t)
	dir := t.TempDir()
	x := literal(t, spec, []int{5, 3}, []any{2, 2}, seq(15))
	out, err := ops.ToZarr(x, plan.ZarrRef{Store: dir, Path: "x"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	compute(t, Options{}, out)
	back, err := ops.FromZarr(context.Background(), dir, "x", nil, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range compute(t, Options{}, back)[0] {
		if g != float64(i) {
			t.Fatalf("element %d = %v", i, g)
		}
	}
	// Writing again without overwrite is refused; nothing is lost.
	again, _ := ops.ToZarr(x, plan.ZarrRef{Store: dir, Path: "x"}, nil)
	p, _ := plan.Build([]*plan.Array{again})
	if _, err := Execute(context.Background(), p, Options{}, nil); !errors.Is(err, plan.ErrValue) {
		t.Errorf("second write gave %v, want a value error", err)
	}
	if _, err := ops.FromZarr(context.Background(), dir, "missing", nil, spec, nil); !errors.Is(err, zarr.ErrNotFound) {
		t.Errorf("missing array gave %v, want ErrNotFound", err)
	}
}

func TestPanickingTaskBecomesError(t *testing.T) {
	spec := testSpec(t)
	x := literal(t, spec, []int{4}, []any{2}, seq(4))
	out := plan.NewArray([]int{4}, zarr.Float64, [][]int{{2, 2}}, spec)
	// A malformed op: its expression reads an input that does not exist, so
	// the task indexes out of range and panics.
	plan.NewOp("broken", "blockwise", []plan.Input{{Array: x, Dims: plan.Identity(1)}}, out,
		plan.Kernel{Core: "map", Exprs: []*plan.Expr{{Op: "negative", DType: zarr.Float64, Args: []*plan.Expr{plan.InputExpr(3, zarr.Float64)}}}})
	p, err := plan.Build([]*plan.Array{out})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Execute(context.Background(), p, Options{Retries: 0}, nil)
	var te *TaskError
	if !errors.Is(err, errPanic) || !errors.As(err, &te) || te.Op != "op-"+out.Op.Name[3:]+" (broken)" {
		t.Fatalf("got %v, want a task error from a recovered panic", err)
	}
}

// flakyStore fails the first writes of chunk keys.
type flakyStore struct {
	zarr.Store
	mu       sync.Mutex
	failures int
}

func (f *flakyStore) Set(ctx context.Context, key string, v []byte) error {
	f.mu.Lock()
	fail := f.failures > 0 && len(key) > 0 && key[len(key)-1] != 'n' // not zarr.json
	if fail {
		f.failures--
	}
	f.mu.Unlock()
	if fail {
		return errors.New("injected write failure")
	}
	return f.Store.Set(ctx, key, v)
}

func TestRetries(t *testing.T) {
	spec := testSpec(t)
	orig := openStore
	defer func() { openStore = orig }()
	var stores []*flakyStore
	openStore = func(ctx context.Context, url string) (zarr.Store, error) {
		s, err := orig(ctx, url)
		if err != nil {
			return nil, err
		}
		f := &flakyStore{Store: s, failures: 2}
		stores = append(stores, f)
		return f, nil
	}
	x := literal(t, spec, []int{4}, []any{1}, seq(4))
	y, _ := ops.Elemwise("negative", ops.Operand{Array: x})
	got := compute(t, Options{MaxWorkers: 1, Retries: 2}, y)[0]
	for i, g := range got {
		if g != -float64(i) {
			t.Fatalf("element %d = %v", i, g)
		}
	}
	// With no retries the injected failure surfaces, naming op and block.
	z, _ := ops.Elemwise("negative", ops.Operand{Array: x})
	p, _ := plan.Build([]*plan.Array{z})
	_, err := Execute(context.Background(), p, Options{MaxWorkers: 1, Retries: 0}, nil)
	var te *TaskError
	if !errors.As(err, &te) || te.Attempts != 1 {
		t.Fatalf("got %v, want a task error after one attempt", err)
	}
}

func TestAdmissionBoundsRunningMemory(t *testing.T) {
	spec := testSpec(t)
	x := literal(t, spec, []int{64}, []any{4}, seq(64))
	y, _ := ops.Elemwise("negative", ops.Operand{Array: x})
	p, _ := plan.Build([]*plan.Array{y})
	budget := p.Ops[0].ProjectedMem * 2 // room for two tasks at once
	var mu sync.Mutex
	var events []Event
	_, err := Execute(context.Background(), p, Options{MaxWorkers: 8, ProcessBudget: budget}, func(ev Event) {
		if ev.Type != TaskEnd {
			return
		}
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	// The most task intervals open at once (a sweep over starts and ends;
	// an end at the same instant as a start comes first).
	type mark struct {
		at    time.Time
		delta int
	}
	var marks []mark
	for _, ev := range events {
		marks = append(marks, mark{ev.FunctionStart, 1}, mark{ev.FunctionEnd, -1})
	}
	sort.Slice(marks, func(i, j int) bool {
		if marks[i].at.Equal(marks[j].at) {
			return marks[i].delta < marks[j].delta
		}
		return marks[i].at.Before(marks[j].at)
	})
	most, open := 0, 0
	for _, m := range marks {
		open += m.delta
		most = max(most, open)
	}
	if most > 2 {
		t.Errorf("%d tasks ran at once under a budget for 2", most)
	}
	if len(events) != 16 {
		t.Errorf("%d task events, want 16", len(events))
	}
	for _, ev := range events {
		if ev.PeakAllocated > ev.ProjectedMem {
			t.Errorf("task %v allocated %d > projected %d", ev.Block, ev.PeakAllocated, ev.ProjectedMem)
		}
	}
}

func TestCancel(t *testing.T) {
	spec := testSpec(t)
	x, _ := ops.Random([]int{20000, 20000}, zarr.Float64, 1, []any{1000, 1000}, spec)
	y, _ := ops.Reduce("sum", x, nil, false, nil, 0)
	p, _ := plan.Build([]*plan.Array{y})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := Execute(ctx, p, Options{}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("cancel took %v", d)
	}
}

func TestPermuteDimsAndZeroSizeTarget(t *testing.T) {
	spec := testSpec(t)
	x := literal(t, spec, []int{2, 3, 4}, []any{1, 2, 3}, seq(24))
	y, err := ops.PermuteDims(x, []int{2, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	got := compute(t, Options{}, y)[0]
	for k := range 4 {
		for i := range 2 {
			for j := range 3 {
				if g, want := got[k*6+i*3+j], float64(i*12+j*4+k); g != want {
					t.Fatalf("y[%d,%d,%d] = %v, want %v", k, i, j, g, want)
				}
			}
		}
	}
	// A zero-size array written to Zarr still gets its metadata.
	dir := t.TempDir()
	empty, _ := ops.Full([]int{0, 4}, zarr.Float64, plan.Scalar{Kind: 'i'}, []any{2, 2}, spec)
	out, _ := ops.ToZarr(empty, plan.ZarrRef{Store: dir, Path: "e"}, nil)
	compute(t, Options{}, out)
	back, err := ops.FromZarr(context.Background(), dir, "e", nil, spec, nil)
	if err != nil || back.Shape[0] != 0 || back.Shape[1] != 4 {
		t.Fatalf("reading the empty array back: %v %v", back, err)
	}
}
