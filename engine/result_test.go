package engine

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// execute builds and runs outs, closing the result when the test ends.
func execute(t *testing.T, outs ...*plan.Array) *Result {
	t.Helper()
	p, err := plan.Build(outs)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Execute(context.Background(), p, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Close() })
	return res
}

// arrays returns a function that passes on an array and fails the test
// on an error: m := arrays(t); x := m(ops.Full(...)).
func arrays(t *testing.T) func(*plan.Array, error) *plan.Array {
	return func(a *plan.Array, err error) *plan.Array {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
}

// resultGrid is x[i, j] = 10i + j for a 5×7 array in irregular blocks
// (2, 3 rows; 3, 3, 1 columns), and the outputs y = 2x + 1 (int32, stored
// as an intermediate) and y > 40 (bool), with their references.
func resultGrid(t *testing.T) (x, y, big *plan.Array, wantY []int32, wantBig []bool) {
	m := arrays(t)
	spec := testSpec(t)
	data := make([]int32, 35)
	for i := range 5 {
		for j := range 7 {
			data[i*7+j] = int32(10*i + j)
		}
	}
	x = m(ops.FromSlice([]int{5, 7}, data, [][]int{{2, 3}, {3, 3, 1}}, spec))
	two := ops.Operand{Scalar: &plan.Scalar{Kind: 'i', I: 2}}
	y = m(ops.Elemwise("multiply", ops.Operand{Array: x}, two))
	y = m(ops.Elemwise("add", ops.Operand{Array: y}, ops.Operand{Scalar: &plan.Scalar{Kind: 'i', I: 1}}))
	big = m(ops.Elemwise("greater", ops.Operand{Array: y}, ops.Operand{Scalar: &plan.Scalar{Kind: 'i', I: 40}}))
	for _, v := range data {
		wantY = append(wantY, 2*v+1)
		wantBig = append(wantBig, 2*v+1 > 40)
	}
	return x, y, big, wantY, wantBig
}

func TestReadAs(t *testing.T) {
	ctx := context.Background()
	_, y, big, wantY, wantBig := resultGrid(t)
	res := execute(t, y, big)

	gotY, err := ReadAs[int32](ctx, res, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gotY, wantY) {
		t.Errorf("ReadAs[int32] = %v, want %v", gotY, wantY)
	}
	gotBig, err := ReadAs[bool](ctx, res, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gotBig, wantBig) {
		t.Errorf("ReadAs[bool] = %v, want %v", gotBig, wantBig)
	}

	// A wrong element type names the output's dtype and the Go type to use.
	_, err = ReadAs[float64](ctx, res, 0)
	if !errors.Is(err, plan.ErrType) || !strings.Contains(err.Error(), "has dtype int32, not float64: read it as []int32") {
		t.Errorf("ReadAs[float64] of int32: err = %v, want ErrType naming int32", err)
	}
	if _, err := ReadAs[int64](ctx, res, 0); !errors.Is(err, plan.ErrType) {
		t.Errorf("ReadAs[int64] of int32: err = %v, want ErrType", err)
	}
	if _, err := ReadAs[uint8](ctx, res, 1); !errors.Is(err, plan.ErrType) {
		t.Errorf("ReadAs[uint8] of bool: err = %v, want ErrType", err)
	}
	for _, i := range []int{-1, 2} {
		if _, err := ReadAs[int32](ctx, res, i); !errors.Is(err, plan.ErrIndex) {
			t.Errorf("ReadAs(%d) of 2 outputs: err = %v, want ErrIndex", i, err)
		}
	}
}

func TestReadBlocks(t *testing.T) {
	ctx := context.Background()
	x, y, big, wantY, wantBig := resultGrid(t)
	res := execute(t, y, big, x) // x: a virtual output, generated when read

	// Every block in C order of its coordinates, each compared with the
	// reference at its place.
	rowStarts, colStarts := []int{0, 2}, []int{0, 3, 6}
	rows, cols := []int{2, 3}, []int{3, 3, 1}
	for _, out := range []int{0, 2} {
		var n int
		for b, err := range ReadBlocks[int32](ctx, res, out) {
			if err != nil {
				t.Fatal(err)
			}
			bi, bj := n/3, n%3
			if !slices.Equal(b.Coords, []int{bi, bj}) || !slices.Equal(b.Start, []int{rowStarts[bi], colStarts[bj]}) ||
				!slices.Equal(b.Shape, []int{rows[bi], cols[bj]}) {
				t.Fatalf("output %d block %d: coords %v start %v shape %v", out, n, b.Coords, b.Start, b.Shape)
			}
			var want []int32
			for i := range b.Shape[0] {
				for j := range b.Shape[1] {
					v := wantY[(b.Start[0]+i)*7+b.Start[1]+j]
					if out == 2 {
						v = (v - 1) / 2
					}
					want = append(want, v)
				}
			}
			if !slices.Equal(b.Data, want) {
				t.Errorf("output %d block %v = %v, want %v", out, b.Coords, b.Data, want)
			}
			n++
		}
		if n != 6 {
			t.Errorf("output %d: %d blocks, want 6", out, n)
		}
	}

	// Bools, collected with slices.Clone since Data is reused.
	got := make([]bool, 35)
	for b, err := range ReadBlocks[bool](ctx, res, 1) {
		if err != nil {
			t.Fatal(err)
		}
		data := slices.Clone(b.Data)
		for i := range b.Shape[0] {
			copy(got[(b.Start[0]+i)*7+b.Start[1]:], data[i*b.Shape[1]:(i+1)*b.Shape[1]])
		}
	}
	if !slices.Equal(got, wantBig) {
		t.Errorf("ReadBlocks[bool] = %v, want %v", got, wantBig)
	}

	// Stopping early stops reading.
	n := 0
	for range ReadBlocks[int32](ctx, res, 0) {
		n++
		if n == 2 {
			break
		}
	}
	if n != 2 {
		t.Errorf("break after 2 blocks: %d iterations", n)
	}
}

func TestReadBlocksErrors(t *testing.T) {
	_, y, big, _, _ := resultGrid(t)
	res := execute(t, y, big)
	cases := []struct {
		name string
		seq  func(context.Context) func(func(Block[int32], error) bool)
		ctx  context.Context
		want error
	}{
		{"wrong type", func(ctx context.Context) func(func(Block[int32], error) bool) {
			return ReadBlocks[int32](ctx, res, 1)
		}, context.Background(), plan.ErrType},
		{"out of range", func(ctx context.Context) func(func(Block[int32], error) bool) {
			return ReadBlocks[int32](ctx, res, 5)
		}, context.Background(), plan.ErrIndex},
		{"cancelled", func(ctx context.Context) func(func(Block[int32], error) bool) {
			return ReadBlocks[int32](ctx, res, 0)
		}, cancelled(), context.Canceled},
	}
	for _, c := range cases {
		var errs []error
		for b, err := range c.seq(c.ctx) {
			if err == nil {
				t.Errorf("%s: yielded block %v without an error", c.name, b.Coords)
				continue
			}
			if b.Data != nil || b.Coords != nil {
				t.Errorf("%s: error with a non-zero block %+v", c.name, b)
			}
			errs = append(errs, err)
		}
		if len(errs) != 1 || !errors.Is(errs[0], c.want) {
			t.Errorf("%s: errors %v, want one wrapping %v", c.name, errs, c.want)
		}
	}
}

func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// A bool array written elsewhere may hold bytes other than 0 and 1; they
// read as true.
func TestReadAsBoolBytes(t *testing.T) {
	m := arrays(t)
	ctx := context.Background()
	dir := t.TempDir()
	store, err := zarr.OpenStore(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	z, err := zarr.CreateArray(ctx, store, "b", zarr.ArrayMetadata{Shape: []int{4}, ChunkShape: []int{4},
		DataType: zarr.Bool, Codecs: []zarr.Codec{zarr.BytesCodec()}})
	if err != nil {
		t.Fatal(err)
	}
	if err := z.WriteChunk(ctx, []int{0}, []byte{0, 1, 2, 255}); err != nil {
		t.Fatal(err)
	}
	zarr.Close(store)
	a := m(ops.FromZarr(ctx, dir, "b", nil, testSpec(t), nil))
	// Copied through a task, so the engine's own kernels read the bytes,
	// and read straight from the source too.
	c := m(ops.ToZarr(a, plan.ZarrRef{Store: filepath.Join(dir, "c.zarr")}, nil))
	res := execute(t, c, a)
	want := []bool{false, true, true, true}
	for i := range 2 {
		got, err := ReadAs[bool](ctx, res, i)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("output %d: ReadAs[bool] = %v, want %v", i, got, want)
		}
		for b, err := range ReadBlocks[bool](ctx, res, i) {
			if err != nil || !slices.Equal(b.Data, want) {
				t.Errorf("output %d: ReadBlocks[bool] = %v, %v; want %v", i, b.Data, err, want)
			}
		}
	}
}

func TestReadBlocksZeroSizeAndScalar(t *testing.T) {
	m := arrays(t)
	ctx := context.Background()
	spec := testSpec(t)
	empty := m(ops.FromSlice([]int{0, 3}, []float64{}, nil, spec))
	scalar := m(ops.Reduce("sum", m(ops.FromSlice([]int{3}, []float64{1, 2, 4}, nil, spec)), nil, false, nil, 0))
	res := execute(t, empty, scalar)
	for b, err := range ReadBlocks[float64](ctx, res, 0) {
		t.Errorf("zero-size output yielded %+v, %v", b, err)
	}
	n := 0
	for b, err := range ReadBlocks[float64](ctx, res, 1) {
		if err != nil || len(b.Coords) != 0 || !slices.Equal(b.Data, []float64{7}) {
			t.Errorf("0-d output: %+v, %v; want one block of 7", b, err)
		}
		n++
	}
	if n != 1 {
		t.Errorf("0-d output: %d blocks, want 1", n)
	}
	if got, err := ReadAs[float64](ctx, res, 0); err != nil || len(got) != 0 {
		t.Errorf("ReadAs of a zero-size output = %v, %v", got, err)
	}
}
