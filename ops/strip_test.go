package ops

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/cubego/cubego/ops/internal/kernels"
	"github.com/cubego/cubego/plan"
)

// peakAlloc is a heap allocator that tracks the bytes in use and their
// peak, and checks every buffer is freed once.
type peakAlloc struct {
	mu             sync.Mutex
	cur, peak, bad int
	live           map[*byte]int
}

func (a *peakAlloc) Allocate(n int) []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	b := make([]byte, n)
	if a.live == nil {
		a.live = map[*byte]int{}
	}
	if n > 0 {
		a.live[&b[0]] = n
	}
	a.cur += n
	a.peak = max(a.peak, a.cur)
	return b
}

func (a *peakAlloc) Free(b []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(b) == 0 {
		return
	}
	n, ok := a.live[&b[0]]
	if !ok || n != len(b) {
		a.bad++
		return
	}
	delete(a.live, &b[0])
	a.cur -= n
}

func randFloats(r *rand.Rand, n int) []byte {
	b := make([]byte, 8*n)
	for i := range n {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(r.NormFloat64()))
	}
	return b
}

// Evaluating an expression strip by strip gives the same bytes as
// evaluating it whole, for every strip size and layout of the inputs
// (contiguous, broadcast, transposed; strips along the first, a middle
// and the last axis), holds at most Temporaries strips of temporaries,
// and frees every buffer it allocates.
func TestStripEvaluationIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	shape := []int{5, 37, 300}
	n := int(plan.Prod(shape))
	aData := randFloats(r, n)
	bData := randFloats(r, 37*300)
	cData := randFloats(r, n) // laid out (300, 37, 5)
	leaf := func(i int) kernels.Operand {
		switch i {
		case 0:
			return kernels.Operand{DType: Float64, Data: aData, Shape: shape}
		case 1: // broadcast along axis 0
			return kernels.Operand{DType: Float64, Data: bData, Shape: shape, Strides: []int{0, 300, 1}}
		}
		return kernels.Operand{DType: Float64, Data: cData, Shape: shape, Strides: []int{1, 5, 185}}
	}
	in := func(i int) *plan.Expr { return plan.InputExpr(i, Float64) }
	f := func(op string, dt DType, args ...*plan.Expr) *plan.Expr {
		return &plan.Expr{Op: op, DType: dt, Args: args}
	}
	half := &plan.Expr{Op: "const", DType: Float64, Value: plan.Scalar{Kind: 'f', F: 0.5}}
	exprs := map[string]*plan.Expr{
		// W1.chain: astype(-(a + b) * 0.5 + a * c, float32)
		"chain": f("astype", Float32, f("add", Float64,
			f("multiply", Float64, f("negative", Float64, f("add", Float64, in(0), in(1))), half),
			f("multiply", Float64, in(0), in(2)))),
		// Temporaries of three dtypes (bool, float32, float64) in one strip.
		"where": f("where", Float64, f("less", Bool, in(0), in(2)),
			f("astype", Float64, f("sqrt", Float32, f("astype", Float32, f("abs", Float64, in(1))))),
			f("exp", Float64, f("multiply", Float64, in(0), half))),
	}
	for name, e := range exprs {
		size := e.DType.Size()
		want := make([]byte, n*size)
		if err := evalWhole(heapAlloc{}, e, shape, leaf, want); err != nil {
			t.Fatal(err)
		}
		for _, strip := range []int{1, 7, 100, 299, 300, 1000, 11100, 20000, n - 1, n} {
			a := &peakAlloc{}
			got := make([]byte, n*size)
			if err := evalInto(a, e, shape, leaf, got, strip); err != nil {
				t.Fatalf("%s, strip %d: %v", name, strip, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s, strip %d: the result differs from the whole evaluation", name, strip)
			}
			if a.cur != 0 || a.bad != 0 {
				t.Fatalf("%s, strip %d: %d bytes not freed, %d bad frees", name, strip, a.cur, a.bad)
			}
			bound := e.Temporaries() * min(n, strip) * plan.MaxElemBytes
			if a.peak > bound {
				t.Fatalf("%s, strip %d: temporaries peaked at %d bytes, more than %d", name, strip, a.peak, bound)
			}
			if strip < n && a.peak != e.Temporaries()*strip*plan.MaxElemBytes {
				t.Fatalf("%s, strip %d: temporaries peaked at %d bytes, want %d strips of %d", name, strip, a.peak,
					e.Temporaries(), strip*plan.MaxElemBytes)
			}
		}
	}
}

// A map step split across helpers divides the strip among its pieces, so
// that the pieces' temporaries together stay within the projection's
// StripElems per temporary.
func TestSplitStripsStayWithinProjection(t *testing.T) {
	spec := &plan.Spec{AllowedMem: 1 << 30}
	shape, chunks := []int{1024, 1024}, []int{512, 1024}
	a, err := Random(shape, Float64, 7, chunks, spec)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Elemwise("add", Operand{Array: a}, Operand{Array: a})
	if err != nil {
		t.Fatal(err)
	}
	e, err := Elemwise("exp", Operand{Array: s})
	if err != nil {
		t.Fatal(err)
	}
	out, err := Elemwise("multiply", Operand{Array: e}, Operand{Array: a})
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{out})
	if err != nil {
		t.Fatal(err)
	}
	p.Fuse()
	var op *plan.Op
	temps := 0
	for _, o := range p.Ops {
		if o.Op.Kernel.Core == "map" && o.Op.Kernel.Exprs[0].Temporaries() > temps {
			op, temps = o.Op, o.Op.Kernel.Exprs[0].Temporaries()
		}
	}
	if temps < 2 {
		t.Fatalf("the fused expression has %d temporaries, want at least 2", temps)
	}
	k, err := NewTaskKernel(op)
	if err != nil {
		t.Fatal(err)
	}
	for _, helpers := range []int{0, 1, 3} {
		var l *lender
		kk := k
		if helpers > 0 {
			l = &lender{n: helpers}
			kk = k.WithHelpers(l)
		}
		block := []int{0, 0}
		outShape := []int{512, 1024}
		outBuf := make([]byte, 512*1024*8)
		ins := []Block{{DType: Float64, Shape: outShape, Data: randFloats(rand.New(rand.NewPCG(3, 4)), 512*1024)}}
		alloc := &peakAlloc{}
		if err := kk.At(block, []int{0, 0}).Step(alloc, Block{DType: Float64, Shape: outShape, Data: outBuf}, ins, true); err != nil {
			t.Fatal(err)
		}
		if helpers > 0 && l.borrows.Load() == 0 {
			t.Fatalf("%d helpers: the step was not split", helpers)
		}
		if bound := temps * plan.StripElems * plan.MaxElemBytes; alloc.peak > bound || alloc.peak == 0 {
			t.Fatalf("%d helpers: temporaries peaked at %d bytes, want (0, %d]", helpers, alloc.peak, bound)
		}
	}
}

// BenchmarkChainStrips evaluates W1.chain's fused expression,
// astype(-(a + b) * 0.5 + a * b, float32), over one 2048² float64 block:
// whole, strip by strip (evalStrips, plan.StripElems), and tile by tile
// (evalInto's tileProgram over contiguous inputs, TileElems).
func BenchmarkChainStrips(b *testing.B) {
	shape := []int{2048, 2048}
	n := int(plan.Prod(shape))
	r := rand.New(rand.NewPCG(1, 2))
	aData, bData := randFloats(r, n), randFloats(r, n)
	leaf := func(i int) kernels.Operand {
		if i == 0 {
			return kernels.Contiguous(Float64, aData, shape)
		}
		return kernels.Contiguous(Float64, bData, shape)
	}
	in := func(i int) *plan.Expr { return plan.InputExpr(i, Float64) }
	f := func(op string, dt DType, args ...*plan.Expr) *plan.Expr {
		return &plan.Expr{Op: op, DType: dt, Args: args}
	}
	half := &plan.Expr{Op: "const", DType: Float64, Value: plan.Scalar{Kind: 'f', F: 0.5}}
	e := f("astype", Float32, f("add", Float64,
		f("multiply", Float64, f("negative", Float64, f("add", Float64, in(0), in(1))), half),
		f("multiply", Float64, in(0), in(1))))
	dst := make([]byte, n*4)
	for _, c := range []struct {
		name string
		eval func(Allocator) error
	}{
		{"whole", func(a Allocator) error { return evalWhole(a, e, shape, leaf, dst) }},
		{"strips", func(a Allocator) error { return evalStrips(a, e, shape, leaf, dst, plan.StripElems) }},
		{"tiles", func(a Allocator) error { return evalInto(a, e, shape, leaf, dst, plan.StripElems) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(n) * 16)
			a := &poolAlloc{free: map[int][][]byte{}}
			for b.Loop() {
				if err := c.eval(a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// poolAlloc keeps freed buffers for reuse by size, as the engine's
// allocator does within its pool limit.
type poolAlloc struct{ free map[int][][]byte }

func (p *poolAlloc) Allocate(n int) []byte {
	if bs := p.free[n]; len(bs) > 0 {
		p.free[n] = bs[:len(bs)-1]
		return bs[len(bs)-1]
	}
	return make([]byte, n)
}

func (p *poolAlloc) Free(b []byte) { p.free[len(b)] = append(p.free[len(b)], b) }
