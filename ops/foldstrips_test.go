package ops

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cubego/cubego/ops/internal/kernels"
	"github.com/cubego/cubego/plan"
)

// A reduction of an expression folded strip by strip (foldStrips) gives
// what folding the whole evaluated operand gives: the same bytes for
// max, min and integer sums, float sums within rounding; over shapes,
// axes and strip lengths that cut every axis, and for a task's first and
// later steps.
func TestFoldStripsMatchesWholeOperand(t *testing.T) {
	defer func(n int64) { foldStripsMinBytes = n }(foldStripsMinBytes)
	foldStripsMinBytes = 0
	r := rand.New(rand.NewPCG(5, 6))
	spec := &plan.Spec{AllowedMem: 1 << 30}
	shapes := [][]int{{37}, {5, 41}, {3, 4, 29}, {2, 3, 5, 7}, {64, 1}}
	checked := 0
	for _, dt := range []DType{Float64, Int32} {
		for _, shape := range shapes {
			n := int(plan.Prod(shape))
			for _, fn := range []string{"sum", "max", "min"} {
				for _, axes := range axesSets(len(shape)) {
					data := func() [2][]byte {
						var b [2][]byte
						for i := range b {
							b[i] = make([]byte, n*dt.Size())
							for j := range n {
								v := r.IntN(201) - 100
								if dt == Float64 {
									putF64(b[i][j*8:], float64(v)/7)
								} else {
									putI32(b[i][j*4:], int32(v))
								}
							}
						}
						return b
					}
					x, _ := FromBuffer(shape, dt, make([]byte, n*dt.Size()), nil, spec)
					y, _ := FromBuffer(shape, dt, make([]byte, n*dt.Size()), nil, spec)
					prod, err := Elemwise("multiply", Operand{Array: x}, Operand{Array: y})
					if err != nil {
						t.Fatal(err)
					}
					red, err := Reduce(fn, prod, axes, true, nil, 0)
					if err != nil {
						t.Fatal(err)
					}
					p, err := plan.Build([]*plan.Array{red})
					if err != nil {
						t.Fatal(err)
					}
					p.Fuse()
					op := p.Ops[0].Op
					if op.Kernel.Core != "reduce" || op.Kernel.Exprs[0].Op == "input" {
						t.Fatalf("%s%v of a product: first op %s has core %q", fn, axes, op, op.Kernel.Core)
					}
					k, err := NewTaskKernel(op)
					if err != nil {
						t.Fatal(err)
					}
					steps := [2][2][]byte{data(), data()}
					fold := func(strip int) []byte {
						accShape := append([]int(nil), shape...)
						for _, a := range op.Kernel.Axes {
							accShape[a] = 1
						}
						acc := kernels.Contiguous(op.Output.DType, make([]byte, int(plan.Prod(accShape))*op.Output.DType.Size()), accShape)
						for s, in := range steps {
							leaf := func(i int) kernels.Operand { return kernels.Contiguous(dt, in[i], shape) }
							if err := k.reduceInto(heapAlloc{}, acc, shape, leaf, s == 0, strip); err != nil {
								t.Fatal(err)
							}
						}
						return acc.Data
					}
					want := fold(math.MaxInt32)
					for _, strip := range []int{1, 2, 5, 7, 30, n - 1} {
						got := fold(max(strip, 1))
						name := fmt.Sprintf("%s %s%v of %v, strips of %d", dt, fn, axes, shape, strip)
						if dt == Float64 && fn == "sum" {
							for i := range len(got) / 8 {
								g, w := getF64(got[i*8:]), getF64(want[i*8:])
								if math.Abs(g-w) > 1e-9*max(1, math.Abs(w)) {
									t.Fatalf("%s: [%d] = %v, want %v", name, i, g, w)
								}
							}
						} else if !bytes.Equal(got, want) {
							t.Fatalf("%s: other bytes than the whole operand's", name)
						}
						checked++
					}
				}
			}
		}
	}
	if checked < 500 {
		t.Fatalf("only %d cases", checked)
	}
}

// axesSets returns every non-empty set of axes of n dimensions.
func axesSets(n int) [][]int {
	var out [][]int
	for m := 1; m < 1<<n; m++ {
		var s []int
		for a := range n {
			if m&(1<<a) != 0 {
				s = append(s, a)
			}
		}
		out = append(out, s)
	}
	return out
}

func putF64(b []byte, v float64) {
	u := math.Float64bits(v)
	for i := range 8 {
		b[i] = byte(u >> (8 * i))
	}
}

func getF64(b []byte) float64 {
	var u uint64
	for i := range 8 {
		u |= uint64(b[i]) << (8 * i)
	}
	return math.Float64frombits(u)
}

func putI32(b []byte, v int32) {
	for i := range 4 {
		b[i] = byte(uint32(v) >> (8 * i))
	}
}
