package ops

import (
	"github.com/cubego/cubego/ops/internal/kernels"
	"github.com/cubego/cubego/plan"
)

// TileElems is the number of elements a fused element-wise expression is
// evaluated over at a time when every input it reads is contiguous
// (tileProgram). Its temporaries then hold 2,048 elements each (16 KiB of
// float64), so the chain's intermediate results stay in the L1 and L2
// caches and each input element comes from memory once for all the
// operations that read it. ops' BenchmarkChainStrips: W1.chain's
// expression over a 2048² block in 8.8 ms by tiles against 11.1 ms by
// 64 Ki-element strips; 512 to 8,192 elements per tile measured alike.
const TileElems = 2048

// tileProgram is an element-wise expression compiled to a list of loops
// (kernels.Loop), run tile by tile over contiguous inputs: each step reads
// inputs, constants and earlier steps' tiles and writes a tile of its own,
// the last one the output. It is the numexpr way of evaluating a chain,
// without evalWhole's per-call checks and allocations, which at this tile
// size would cost more than the arithmetic.
type tileProgram struct {
	steps  []tileStep
	slots  int          // temporary tiles held at once
	temps  int          // the expression's Temporaries
	consts []*plan.Expr // constant operands, filled once per run
	inputs []*plan.Expr // the inputs it reads, each once
}

// tileStep is one loop of a program: dst = loop(args...).
type tileStep struct {
	loop  kernels.Loop
	dst   int // a slot, or -1 for the output
	dstSz int
	args  [3]tileArg
	nargs int
}

// tileArg names a step's operand: p.inputs[i], p.consts[i] or slot i.
type tileArg struct {
	kind, i, size int
}

const (
	tileInput = iota
	tileConst
	tileSlot
)

// compileTiles returns e's program, or nil when an op of e has no
// contiguous loop for its dtypes (e is then evaluated by evalWhole, which
// reports what is wrong), or when e has no temporaries to save.
func compileTiles(e *plan.Expr) *tileProgram {
	if e.Temporaries() == 0 {
		return nil
	}
	p := &tileProgram{temps: e.Temporaries()}
	var free []int
	var emit func(e *plan.Expr, root bool) (tileArg, bool)
	emit = func(e *plan.Expr, root bool) (tileArg, bool) {
		switch e.Op {
		case "input":
			for k, in := range p.inputs {
				if in.Input == e.Input {
					if in.DType != e.DType {
						return tileArg{}, false
					}
					return tileArg{kind: tileInput, i: k, size: e.DType.Size()}, true
				}
			}
			p.inputs = append(p.inputs, e)
			return tileArg{kind: tileInput, i: len(p.inputs) - 1, size: e.DType.Size()}, true
		case "const":
			p.consts = append(p.consts, e)
			return tileArg{kind: tileConst, i: len(p.consts) - 1, size: e.DType.Size()}, true
		}
		if len(e.Args) == 0 || len(e.Args) > 3 {
			return tileArg{}, false
		}
		st := tileStep{nargs: len(e.Args), dstSz: e.DType.Size(), dst: -1}
		dts := make([]DType, len(e.Args))
		for k, a := range e.Args {
			arg, ok := emit(a, false)
			if !ok {
				return tileArg{}, false
			}
			st.args[k], dts[k] = arg, a.DType
		}
		loop, err := kernels.ElementwiseLoop(e.Op, e.DType, dts...)
		if err != nil {
			return tileArg{}, false
		}
		st.loop = loop
		if !root {
			// The result's slot is taken before the arguments' are given
			// back: a step never writes a tile it reads.
			if n := len(free); n > 0 {
				st.dst, free = free[n-1], free[:n-1]
			} else {
				st.dst = p.slots
				p.slots++
			}
		}
		for _, a := range st.args[:st.nargs] {
			if a.kind == tileSlot {
				free = append(free, a.i)
			}
		}
		p.steps = append(p.steps, st)
		return tileArg{kind: tileSlot, i: st.dst, size: st.dstSz}, true
	}
	if _, ok := emit(e, true); !ok {
		return nil
	}
	if p.slots > p.temps {
		// Not reached: post-order evaluation holds no more temporaries
		// than evalWhole, which the projection charges.
		return nil
	}
	return p
}

// contiguousData returns the bytes of o's n elements when o is a
// C-contiguous view of shape.
func contiguousData(o kernels.Operand, shape []int, n int) ([]byte, bool) {
	if len(o.Shape) != len(shape) {
		return nil, false
	}
	cs := CStrides(shape)
	for d, s := range shape {
		if o.Shape[d] != s {
			return nil, false
		}
		if o.Strides != nil && s > 1 && o.Strides[d] != cs[d] {
			return nil, false
		}
	}
	sz := o.DType.Size()
	if (o.Offset+n)*sz > len(o.Data) {
		return nil, false
	}
	return o.Data[o.Offset*sz : (o.Offset+n)*sz], true
}

// run evaluates the program over shape into dst when every input it reads
// is a contiguous view of shape, tile elements at a time, and reports
// whether it did. Its temporaries (one tile per slot and per constant, at
// most plan.MaxElemBytes wide) come from alloc.
func (p *tileProgram) run(alloc Allocator, shape []int, leaf func(int) kernels.Operand, dst []byte, tile int) bool {
	n := int(plan.Prod(shape))
	ins := make([][]byte, len(p.inputs))
	for i, in := range p.inputs {
		o := leaf(in.Input)
		if o.DType != in.DType {
			return false
		}
		data, ok := contiguousData(o, shape, n)
		if !ok {
			return false
		}
		ins[i] = data
	}
	// The tiles held (slots at the widest element, constants at their own)
	// stay within what evalStrips would hold: Temporaries strips of the
	// widest element, a strip being at most the block, the memory the
	// projection charges.
	held := p.slots * plan.MaxElemBytes
	for _, c := range p.consts {
		held += c.DType.Size()
	}
	tile = max(1, min(tile, n))
	limit := tile * p.temps * plan.MaxElemBytes / held
	if limit < 1 {
		return false // a block or strips of a few elements: evalStrips
	}
	tile = min(tile, limit)
	bufs := make([][]byte, 0, p.slots+len(p.consts))
	defer func() {
		for _, b := range bufs {
			alloc.Free(b)
		}
	}()
	slots := make([][]byte, p.slots)
	for k := range slots {
		slots[k] = alloc.Allocate(tile * plan.MaxElemBytes)
		bufs = append(bufs, slots[k])
	}
	consts := make([][]byte, len(p.consts))
	for k, c := range p.consts {
		consts[k] = alloc.Allocate(tile * c.DType.Size())
		bufs = append(bufs, consts[k])
		kernels.Fill(consts[k], c.DType, kernels.ScalarBytes(toKernelScalar(c.Value), c.DType))
	}
	flat := make([][]byte, len(p.steps)*3)
	for lo := 0; lo < n; lo += tile {
		cnt := min(tile, n-lo)
		for s := range p.steps {
			st := &p.steps[s]
			a := flat[s*3 : s*3+3]
			for k, arg := range st.args[:st.nargs] {
				switch arg.kind {
				case tileInput:
					a[k] = ins[arg.i][lo*arg.size : (lo+cnt)*arg.size]
				case tileConst:
					a[k] = consts[arg.i][:cnt*arg.size]
				default:
					a[k] = slots[arg.i][:cnt*arg.size]
				}
			}
			var d []byte
			if st.dst < 0 {
				d = dst[lo*st.dstSz : (lo+cnt)*st.dstSz]
			} else {
				d = slots[st.dst][:cnt*st.dstSz]
			}
			st.loop(d, a[0], a[1], a[2])
		}
	}
	return true
}
