package ops

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/cubego/cubego/plan"
)

func linalgInput(t *testing.T, shape []int, dt DType, chunks any, spec *plan.Spec) *plan.Array {
	t.Helper()
	x, err := Full(shape, dt, plan.Scalar{Kind: 'f', F: 1}, chunks, spec)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestLinalgPlans(t *testing.T) {
	spec := &plan.Spec{AllowedMem: 100_000_000}
	x := linalgInput(t, []int{3, 4, 4}, Float32, []any{2, 3, 3}, spec)
	cases := []struct {
		fn     string
		shape  []int
		dtype  DType
		chunks [][]int
	}{
		{"det", []int{3}, Float32, [][]int{{2, 1}}},
		{"inv", []int{3, 4, 4}, Float32, [][]int{{2, 1}, {4}, {4}}},
		{"svd_s", []int{3, 4}, Float32, [][]int{{2, 1}, {4}}},
		{"qr_r", []int{3, 4, 4}, Float32, [][]int{{2, 1}, {4}, {4}}},
	}
	for _, c := range cases {
		out, err := Linalg(c.fn, x, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.fn, err)
		}
		if !slices.Equal(out.Shape, c.shape) || out.DType != c.dtype || !slices.EqualFunc(out.Chunks, c.chunks, slices.Equal) {
			t.Errorf("%s: shape %v %s chunks %v, want %v %s %v", c.fn, out.Shape, out.DType, out.Chunks, c.shape, c.dtype, c.chunks)
		}
		in := out.Op.Inputs[0].Array
		if !slices.Equal(in.Chunks[1], []int{4}) || !slices.Equal(in.Chunks[2], []int{4}) {
			t.Errorf("%s: matrices not gathered into one chunk: %v", c.fn, in.Chunks)
		}
	}
	// Complex inputs: real singular values, complex factors; integers compute in float64.
	z := linalgInput(t, []int{5, 3}, Complex64, 2, spec)
	if s, _ := Linalg("svd_s", z, nil); s.DType != Float32 || !slices.Equal(s.Shape, []int{3}) {
		t.Errorf("svd_s of complex64: %s %v", s.DType, s.Shape)
	}
	if u, _ := Linalg("svd_u", z, nil); u.DType != Complex64 || !slices.Equal(u.Shape, []int{5, 3}) {
		t.Errorf("svd_u of complex64: %s %v", u.DType, u.Shape)
	}
	i := linalgInput(t, []int{2, 2}, Int32, nil, spec)
	if d, _ := Linalg("det", i, nil); d.DType != Float64 {
		t.Errorf("det of int32: %s", d.DType)
	}
}

func TestLinalgErrors(t *testing.T) {
	spec := &plan.Spec{AllowedMem: 100_000_000}
	x := linalgInput(t, []int{3, 4}, Float64, nil, spec)
	if _, err := Linalg("det", x, nil); !errors.Is(err, plan.ErrValue) {
		t.Errorf("det of a 3×4 matrix: %v", err)
	}
	if _, err := Linalg("eig", x, nil); !errors.Is(err, plan.ErrNotImplemented) {
		t.Errorf("unknown function: %v", err)
	}
	v := linalgInput(t, []int{4}, Float64, nil, spec)
	if _, err := Linalg("svd_s", v, nil); !errors.Is(err, plan.ErrValue) {
		t.Errorf("svd of a vector: %v", err)
	}
	sq := linalgInput(t, []int{4, 4}, Float64, nil, spec)
	b := linalgInput(t, []int{3, 1}, Float64, nil, spec)
	if _, err := Linalg("solve", sq, b); !errors.Is(err, plan.ErrValue) {
		t.Errorf("solve with mismatched sides: %v", err)
	}
	if _, err := Linalg("inv", sq, b); !errors.Is(err, plan.ErrValue) {
		t.Errorf("inv with a right-hand side: %v", err)
	}
	// One 2000×2000 float64 matrix (32 MB) cannot fit 10 MB.
	small := &plan.Spec{AllowedMem: 10_000_000}
	big := linalgInput(t, []int{2000, 2000}, Float64, 500, small)
	_, err := Linalg("inv", big, nil)
	if !errors.Is(err, plan.ErrValue) {
		t.Fatalf("oversized matrix: %v", err)
	}
	// A batch that does not fit in one task gets one matrix per task.
	tight := &plan.Spec{AllowedMem: 2_000_000}
	batch := linalgInput(t, []int{6, 150, 150}, Float64, []any{6, 70, 90}, tight)
	out, err := Linalg("det", batch, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Chunks[0], []int{1, 1, 1, 1, 1, 1}) {
		t.Errorf("batch chunks %v, want one matrix per block", out.Chunks[0])
	}
	if pm := plan.ProjectedMem(out.Op); pm > tight.AllowedMem {
		t.Errorf("projected memory %d over allowed %d", pm, tight.AllowedMem)
	}
}

func TestLinalgBlockFuncs(t *testing.T) {
	f := blockFuncs[linalgCore("inv")]
	if f == nil {
		t.Fatal("inv is not registered")
	}
	block := func(vs ...float64) Block {
		b := make([]byte, 8*len(vs))
		for i, v := range vs {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
		}
		return Block{DType: Float64, Shape: []int{1, 2, 2}, Data: b}
	}
	out := block(0, 0, 0, 0)
	if err := f(plan.Kernel{}, out, []Block{block(2, 0, 0, 4)}); err != nil {
		t.Fatal(err)
	}
	got := make([]float64, 4)
	for i := range got {
		got[i] = math.Float64frombits(binary.LittleEndian.Uint64(out.Data[8*i:]))
	}
	if !slices.Equal(got, []float64{0.5, 0, 0, 0.25}) {
		t.Errorf("inv(diag(2, 4)) = %v", got)
	}
	err := f(plan.Kernel{}, out, []Block{block(1, 2, 2, 4)})
	if !errors.Is(err, plan.ErrValue) {
		t.Errorf("inv of a singular matrix: %v, want a value error", err)
	}
}
