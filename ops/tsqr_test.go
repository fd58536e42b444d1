package ops

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/cubego/cubego/plan"
)

// A 64×2 float64 matrix in 8×2 blocks whose whole-matrix factorization does
// not fit allowed_mem is factorized by TSQR: every op fits, and the outputs
// keep the input's row chunks.
func TestTSQRPlan(t *testing.T) {
	for _, allowed := range []int64{3_000, 4_000, 6_000} {
		spec := &plan.Spec{AllowedMem: allowed}
		x := linalgInput(t, []int{64, 2}, Float64, []any{8, 2}, spec)
		for _, c := range []struct {
			fn     string
			shape  []int
			chunks [][]int
		}{
			{"qr_q", []int{64, 2}, [][]int{slices.Repeat([]int{8}, 8), {2}}},
			{"qr_r", []int{2, 2}, [][]int{{2}, {2}}},
			{"svd_u", []int{64, 2}, [][]int{slices.Repeat([]int{8}, 8), {2}}},
			{"svd_s", []int{2}, [][]int{{2}}},
			{"svd_vh", []int{2, 2}, [][]int{{2}, {2}}},
		} {
			if c.fn[:3] == "svd" && allowed < 4_000 {
				continue // the SVD of R needs LAPACK's work arrays too
			}
			out, err := Linalg(c.fn, x, nil)
			if err != nil {
				t.Fatalf("%s at %d B: %v", c.fn, allowed, err)
			}
			if !slices.Equal(out.Shape, c.shape) || !slices.EqualFunc(out.Chunks, c.chunks, slices.Equal) {
				t.Errorf("%s at %d B: shape %v chunks %v, want %v %v", c.fn, allowed, out.Shape, out.Chunks, c.shape, c.chunks)
			}
			p, err := plan.Build([]*plan.Array{out})
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Validate(); err != nil {
				t.Errorf("%s at %d B: %v", c.fn, allowed, err)
			}
		}
	}
}

// When the stacked R factors do not fit one task either, TSQR recurses on
// them: more levels of "qr" ops, each within allowed_mem.
func TestTSQRRecursion(t *testing.T) {
	spec := &plan.Spec{AllowedMem: 40_000}
	x := linalgInput(t, []int{4096, 4}, Float64, []any{16, 4}, spec)
	out, err := Linalg("qr_r", x, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{out})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Error(err)
	}
	rSteps := 0
	for _, op := range p.Ops {
		if op.Op.Kernel.Core == tsqrCore("qr_r") {
			rSteps++
		}
	}
	if rSteps < 2 {
		t.Errorf("%d levels of R factors, want a recursion", rSteps)
	}
}

// Several column chunks cannot be factorized in parts: the error says to
// rechunk, as Cubed's does; the complete factors point to the reduced ones.
func TestTSQRErrors(t *testing.T) {
	spec := &plan.Spec{AllowedMem: 4_000}
	x := linalgInput(t, []int{64, 4}, Float64, []any{8, 2}, spec)
	_, err := Linalg("qr_q", x, nil)
	if !errors.Is(err, plan.ErrValue) || !strings.Contains(err.Error(), "single column chunk") {
		t.Errorf("qr with two column chunks: %v", err)
	}
	y := linalgInput(t, []int{64, 2}, Float64, []any{8, 2}, spec)
	_, err = Linalg("qr_complete_q", y, nil)
	if !errors.Is(err, plan.ErrValue) || !strings.Contains(err.Error(), "mode='reduced'") {
		t.Errorf("complete qr: %v", err)
	}
}

// A row block with fewer rows than columns gives zero-padded factors.
func TestTSQRBlockPadding(t *testing.T) {
	block := func(shape []int, vs ...float64) Block {
		b := make([]byte, 8*len(vs))
		for i, v := range vs {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
		}
		return Block{DType: Float64, Shape: shape, Data: b}
	}
	values := func(b Block) []float64 {
		got := make([]float64, len(b.Data)/8)
		for i := range got {
			got[i] = math.Float64frombits(binary.LittleEndian.Uint64(b.Data[8*i:]))
		}
		return got
	}
	in := block([]int{1, 3}, 3, 4, 0)
	q := block([]int{1, 3}, 9, 9, 9)
	if err := tsqrBlock("qr_q", q, in); err != nil {
		t.Fatal(err)
	}
	r := block([]int{3, 3}, 9, 9, 9, 9, 9, 9, 9, 9, 9)
	if err := tsqrBlock("qr_r", r, in); err != nil {
		t.Fatal(err)
	}
	// [3 4 0] = [±1] · [±3 ±4 0]: Q gets two zero columns, R two zero rows.
	gq, gr := values(q), values(r)
	s := gq[0]
	if math.Abs(math.Abs(s)-1) > 1e-12 || gq[1] != 0 || gq[2] != 0 {
		t.Errorf("Q = %v", gq)
	}
	want := []float64{3 * s, 4 * s, 0, 0, 0, 0, 0, 0, 0}
	for i := range want {
		if math.Abs(gr[i]-want[i]) > 1e-12 {
			t.Fatalf("R = %v, want %v", gr, want)
		}
	}
}

// The factors of one decomposition take the same path even when one of them
// alone would fit one task: R of a whole-matrix QR would not match the Q of
// TSQR (their signs may differ).
func TestTSQRFactorsAgree(t *testing.T) {
	spec := &plan.Spec{AllowedMem: 8_000} // R alone fits one task, Q does not
	x := linalgInput(t, []int{64, 2}, Float64, []any{8, 2}, spec)
	r, err := Linalg("qr_r", x, nil)
	if err != nil {
		t.Fatal(err)
	}
	if in := r.Op.Inputs[0].Array; !slices.Equal(in.Shape, []int{16, 2}) {
		t.Errorf("R factorizes a %v array, want the stacked 16×2 factors of TSQR", in.Shape)
	}
}

// Asking for Q and then R of one matrix factorizes its row blocks once.
func TestTSQRFactorsShareOneFactorization(t *testing.T) {
	spec := &plan.Spec{AllowedMem: 4_000}
	x := linalgInput(t, []int{64, 2}, Float64, []any{8, 2}, spec)
	q, err := Linalg("qr_q", x, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Linalg("qr_r", x, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{q, r})
	if err != nil {
		t.Fatal(err)
	}
	steps := 0
	for _, op := range p.Ops {
		if op.Op.Kernel.Core == tsqrCore("qr_r") {
			steps++
		}
	}
	if steps != 1 {
		t.Errorf("%d ops stack the R factors of the row blocks, want 1", steps)
	}
}
