package ops

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/cubego/cubego/plan"
)

// lender lends up to n helpers and counts what it lent.
type lender struct {
	n             int
	lent, borrows atomic.Int64
}

func (l *lender) Borrow(want int) int {
	got := min(want, l.n)
	l.lent.Add(int64(got))
	if got > 0 {
		l.borrows.Add(1)
	}
	return got
}

func (l *lender) Return(n int) { l.lent.Add(-int64(n)) }

type heapAlloc struct{}

func (heapAlloc) Allocate(n int) []byte { return make([]byte, n) }
func (heapAlloc) Free([]byte)           {}

// runFirstTask runs the first task of op's plan (every step, then Finish)
// with kernel k, as the engine runs it, and returns its output block's
// bytes: the inputs the kernel takes as broadcast blocks (ConstInput) are
// handed over as their one value, never filled; a record reduction gets
// its accumulator.
func runFirstTask(t *testing.T, op *plan.Op, k *TaskKernel) []byte {
	t.Helper()
	block := make([]int, len(op.TaskGrid()))
	lo, hi := op.OutputRange(block)
	shape := make([]int, len(lo))
	for d := range lo {
		shape[d] = hi[d] - lo[d]
	}
	out := Block{DType: op.Output.DType, Shape: shape, Data: make([]byte, int(plan.Prod(shape))*op.Output.DType.Size())}
	if n := k.AccBytes(shape); n > 0 {
		out.Acc = make([]byte, n)
	}
	iter := op.IterShape(block)
	step := make([]int, len(iter))
	for s := range int(plan.Prod(iter)) {
		ins := make([]Block, len(op.Inputs))
		for i, in := range op.Inputs {
			r := op.InputRegion(i, block, step)
			if v := k.ConstInput(i); v != nil {
				ins[i] = Block{DType: in.Array.DType, Shape: r.Count, Data: v, Const: true}
				continue
			}
			buf := make([]byte, int(r.Size())*in.Array.DType.Size())
			if err := GenerateRegion(in.Array, r, buf); err != nil {
				t.Fatal(err)
			}
			ins[i] = Block{DType: in.Array.DType, Shape: r.Count, Data: buf}
		}
		if err := k.At(block, step).Step(heapAlloc{}, out, ins, s == 0); err != nil {
			t.Fatal(err)
		}
		for d := len(step) - 1; d >= 0; d-- {
			if step[d]++; step[d] < iter[d] {
				break
			}
			step[d] = 0
		}
	}
	if err := k.Finish(heapAlloc{}, out); err != nil {
		t.Fatal(err)
	}
	return out.Data
}

// A step split across helpers gives the same bytes as the whole step, for
// reductions along every axis (float sums too: each output element is
// folded in the same order) and element-wise chains.
func TestSplitStepsAreExact(t *testing.T) {
	spec := &plan.Spec{AllowedMem: 1 << 30}
	shape, chunks := []int{6, 250, 1100}, []int{3, 250, 1100}
	x, err := Random(shape, Float64, 7, chunks, spec)
	if err != nil {
		t.Fatal(err)
	}
	x32, err := AsType(x, Float32)
	if err != nil {
		t.Fatal(err)
	}
	type cse struct {
		name string
		out  func() (*plan.Array, error)
	}
	var cases []cse
	for _, src := range []struct {
		name string
		a    *plan.Array
	}{{"f8", x}, {"f4", x32}} {
		for _, fn := range []string{"sum", "mean", "max", "prod"} {
			for _, axes := range [][]int{{0}, {1}, {2}, {0, 2}, {1, 2}} {
				cases = append(cases, cse{fmt.Sprintf("%s-%s%v", fn, src.name, axes), func() (*plan.Array, error) {
					sq, err := Elemwise("multiply", Operand{Array: src.a}, Operand{Array: src.a})
					if err != nil {
						return nil, err
					}
					return Reduce(fn, sq, axes, false, nil, 0)
				}})
			}
		}
		cases = append(cases, cse{"exp-chain-" + src.name, func() (*plan.Array, error) {
			e, err := Elemwise("exp", Operand{Array: src.a})
			if err != nil {
				return nil, err
			}
			return Elemwise("subtract", Operand{Array: e}, Operand{Array: src.a})
		}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := c.out()
			if err != nil {
				t.Fatal(err)
			}
			p, err := plan.Build([]*plan.Array{out})
			if err != nil {
				t.Fatal(err)
			}
			op := p.Ops[0].Op
			k, err := NewTaskKernel(op)
			if err != nil {
				t.Fatal(err)
			}
			want := runFirstTask(t, op, k)
			split := 0
			for _, n := range []int{1, 2, 3, 7} {
				l := &lender{n: n}
				got := runFirstTask(t, op, k.WithHelpers(l))
				if !bytes.Equal(got, want) {
					t.Fatalf("%d helpers: the split step's result differs from the whole step's", n)
				}
				if l.lent.Load() != 0 {
					t.Fatalf("%d helpers: %d still lent after the task", n, l.lent.Load())
				}
				split += int(l.borrows.Load())
			}
			// Every op here has an output axis long enough to split.
			if split == 0 {
				t.Fatalf("no step was split")
			}
		})
	}
}
