package ops

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cubego/cubego/ops/internal/kernels"
	"github.com/cubego/cubego/plan"
)

// randomExpr builds a random element-wise expression of dtype dt over
// inputs 0..2 (float64) and constants, depth at most depth.
func randomExpr(r *rand.Rand, dt DType, depth int) *plan.Expr {
	f := func(op string, dt DType, args ...*plan.Expr) *plan.Expr {
		return &plan.Expr{Op: op, DType: dt, Args: args}
	}
	if depth <= 0 || r.IntN(4) == 0 {
		if dt == Float64 && r.IntN(3) > 0 {
			return plan.InputExpr(r.IntN(3), Float64)
		}
		if dt == Float64 || dt == Float32 {
			return &plan.Expr{Op: "const", DType: dt, Value: plan.Scalar{Kind: 'f', F: r.NormFloat64()}}
		}
		if dt == Int32 {
			return &plan.Expr{Op: "const", DType: dt, Value: plan.Scalar{Kind: 'i', I: r.Int64N(100) - 50}}
		}
		return f("less", Bool, plan.InputExpr(r.IntN(3), Float64), plan.InputExpr(r.IntN(3), Float64))
	}
	switch dt {
	case Bool:
		return f([]string{"less", "greater_equal", "not_equal"}[r.IntN(3)], Bool,
			randomExpr(r, Float64, depth-1), randomExpr(r, Float64, depth-1))
	case Int32:
		if r.IntN(2) == 0 {
			return f("astype", Int32, randomExpr(r, Float64, depth-1))
		}
		return f([]string{"add", "multiply", "maximum"}[r.IntN(3)], Int32, randomExpr(r, Int32, depth-1), randomExpr(r, Int32, depth-1))
	case Float32:
		if r.IntN(2) == 0 {
			return f("astype", Float32, randomExpr(r, Float64, depth-1))
		}
		return f([]string{"add", "subtract", "multiply"}[r.IntN(3)], Float32, randomExpr(r, Float32, depth-1), randomExpr(r, Float32, depth-1))
	}
	switch r.IntN(8) {
	case 0:
		return f([]string{"negative", "sqrt", "exp", "abs"}[r.IntN(4)], Float64, randomExpr(r, Float64, depth-1))
	case 1:
		return f("where", Float64, randomExpr(r, Bool, depth-1), randomExpr(r, Float64, depth-1), randomExpr(r, Float64, depth-1))
	case 2:
		return f("astype", Float64, randomExpr(r, []DType{Float32, Int32}[r.IntN(2)], depth-1))
	}
	return f([]string{"add", "subtract", "multiply", "divide", "maximum"}[r.IntN(5)], Float64,
		randomExpr(r, Float64, depth-1), randomExpr(r, Float64, depth-1))
}

// A fused expression over contiguous inputs is evaluated tile by tile
// (tileProgram) with the same bytes as evalWhole, for random expressions
// of four dtypes, lengths around the tile size and strips smaller than a
// tile; its temporaries stay within Temporaries strips and are all freed.
// Inputs that are not contiguous views leave it to evalStrips.
func TestTileEvaluationIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	ran := 0
	for trial := range 300 {
		dt := []DType{Float64, Float32, Int32, Bool}[trial%4]
		e := randomExpr(r, dt, 4)
		if e.Temporaries() == 0 {
			continue
		}
		p := compileTiles(e)
		if p == nil {
			t.Fatalf("trial %d: no tile program for an expression of supported ops", trial)
		}
		for _, c := range []struct {
			shape  []int
			layout string
		}{
			{[]int{1}, "contiguous"}, {[]int{2047}, "contiguous"}, {[]int{2049}, "contiguous"},
			{[]int{3, 1500}, "contiguous"}, {[]int{4, 2048}, "contiguous"},
			{[]int{2049}, "broadcast"}, {[]int{3, 1500}, "broadcast"}, {[]int{2, 3, 2100}, "broadcast"},
			{[]int{3, 300}, "broadcast"}, {[]int{4, 100}, "broadcast"},
		} {
			shape, nd := c.shape, len(c.shape)
			n := int(plan.Prod(shape))
			// Input 0 is contiguous, or a sliced view: rows 3 elements
			// apart more than their length, from element 2 of its
			// buffer. Input 1 is contiguous, or one row broadcast along
			// the leading axes; input 2 contiguous, or one value per row
			// repeated along it (the last axis broadcast).
			views := [3]kernels.Operand{}
			for i := range views {
				views[i] = kernels.Contiguous(Float64, randFloats(r, n), shape)
			}
			if c.layout == "broadcast" {
				rowLen := shape[nd-1]
				st := CStrides(shape)
				sliced := append([]int(nil), st...)
				for d := range nd - 1 {
					sliced[d] = st[d] / rowLen * (rowLen + 3)
				}
				views[0] = kernels.Operand{DType: Float64, Data: randFloats(r, n/rowLen*(rowLen+3)+2), Shape: shape, Strides: sliced, Offset: 2}
				row := make([]int, nd)
				row[nd-1] = 1
				views[1] = kernels.Operand{DType: Float64, Data: randFloats(r, rowLen), Shape: shape, Strides: row}
				col := make([]int, nd)
				for d := range nd - 1 {
					col[d] = st[d] / rowLen
				}
				views[2] = kernels.Operand{DType: Float64, Data: randFloats(r, max(1, n/rowLen)), Shape: shape, Strides: col}
			}
			for i := range n { // ties, zeros and NaNs among the inputs
				el := func(k int) []byte {
					v := views[k]
					off := v.Offset
					st := v.Strides
					if st == nil {
						st = CStrides(shape)
					}
					rest := i
					for d := nd - 1; d >= 0; d-- {
						off += rest % shape[d] * st[d]
						rest /= shape[d]
					}
					return v.Data[8*off : 8*off+8]
				}
				// Broadcast inputs share their elements among many: only
				// input 0 takes NaNs there, so the others keep distinct
				// values from row to row.
				switch k := r.IntN(16); {
				case k == 0 && c.layout == "contiguous":
					copy(el(1), el(0))
				case k == 1 && c.layout == "contiguous":
					clear(el(2))
				case k == 2:
					copy(el(0), []byte{1, 0, 0, 0, 0, 0, 0xf8, 0x7f})
				}
			}
			leaf := func(i int) kernels.Operand { return views[i] }
			want := make([]byte, n*dt.Size())
			if err := evalWhole(heapAlloc{}, e, shape, leaf, want); err != nil {
				t.Fatal(err)
			}
			for _, strip := range []int{1, 100, 2048, plan.StripElems} {
				a := &peakAlloc{}
				got := make([]byte, n*dt.Size())
				if !p.run(a, shape, leaf, got, min(TileElems, strip)) {
					if min(n, strip) >= TileElems && shape[nd-1] >= minTileRow {
						t.Fatalf("trial %d, %s %v, strip %d: not evaluated by tiles", trial, c.layout, shape, strip)
					}
					continue // constants and slots may not fit a few elements' strips
				}
				if i := differingElem(dt, got, want); i >= 0 {
					sz := dt.Size()
					t.Fatalf("trial %d, %s %v, strip %d: element %d of %s differs from evalWhole's: %x, want %x",
						trial, c.layout, shape, strip, i, exprString(e), got[i*sz:(i+1)*sz], want[i*sz:(i+1)*sz])
				}
				if a.cur != 0 || a.bad != 0 {
					t.Fatalf("trial %d: %d bytes not freed, %d bad frees", trial, a.cur, a.bad)
				}
				if bound := e.Temporaries() * min(n, strip) * plan.MaxElemBytes; a.peak > bound {
					t.Fatalf("trial %d, strip %d: temporaries peaked at %d bytes, more than %d", trial, strip, a.peak, bound)
				}
				ran++
			}
		}
		// A transposed input is not a contiguous view: evalStrips does it.
		shape := []int{40, 60}
		data := randFloats(r, 2400)
		leaf := func(int) kernels.Operand {
			return kernels.Operand{DType: Float64, Data: data, Shape: shape, Strides: []int{1, 40}}
		}
		if len(p.inputs) > 0 && p.run(&peakAlloc{}, shape, leaf, make([]byte, 2400*dt.Size()), TileElems) {
			t.Fatalf("trial %d: tiles ran over a transposed input", trial)
		}
	}
	if ran < 2000 {
		t.Fatalf("only %d tile evaluations compared", ran)
	}
}

func exprString(e *plan.Expr) string {
	switch e.Op {
	case "input":
		return fmt.Sprintf("x%d", e.Input)
	case "const":
		return fmt.Sprintf("%v:%s", e.Value, e.DType)
	}
	s := e.Op + ":" + e.DType.String() + "("
	for k, a := range e.Args {
		if k > 0 {
			s += ", "
		}
		s += exprString(a)
	}
	return s + ")"
}

// differingElem returns the first element of dt where a and b differ, any
// NaN matching any NaN (the loops of a binary op may return either
// operand's NaN, as numpy's do), or -1.
func differingElem(dt DType, a, b []byte) int {
	sz := dt.Size()
	for i := 0; i < len(a)/sz; i++ {
		x, y := a[i*sz:(i+1)*sz], b[i*sz:(i+1)*sz]
		if bytes.Equal(x, y) {
			continue
		}
		switch dt {
		case Float64:
			if u, v := math.Float64frombits(binary.LittleEndian.Uint64(x)), math.Float64frombits(binary.LittleEndian.Uint64(y)); u != u && v != v {
				continue
			}
		case Float32:
			if u, v := math.Float32frombits(binary.LittleEndian.Uint32(x)), math.Float32frombits(binary.LittleEndian.Uint32(y)); u != u && v != v {
				continue
			}
		}
		return i
	}
	return -1
}
