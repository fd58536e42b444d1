package ops

import (
	"github.com/cubego/cubego/ops/internal/kernels"
	"github.com/cubego/cubego/plan"
)

// TileElems is the number of elements a fused element-wise expression is
// evaluated over at a time where tileProgram.run can read its inputs (as
// contiguous runs, or row by row). Its temporaries then hold 2,048
// elements each (16 KiB of float64), so the chain's intermediate results
// stay in the L1 and L2 caches and each input element comes from memory
// once for all the operations that read it. ops' BenchmarkChainStrips:
// W1.chain's expression over a 2048² block in 8.8 ms by tiles against
// 11.1 ms by 64 Ki-element strips; 512 to 8,192 elements per tile
// measured alike.
const TileElems = 2048

// tileProgram is an element-wise expression compiled to a list of loops
// (kernels.Loop), run tile by tile (run): each step reads
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

// cOrder reports whether strides walk shape in C order (axes of length 1
// may have any stride).
func cOrder(strides, shape []int) bool {
	cs := CStrides(shape)
	for d, n := range shape {
		if n > 1 && strides[d] != cs[d] {
			return false
		}
	}
	return true
}

// minTileRow is the shortest row (last axis) run evaluates row by row
// when an input is not a contiguous view of the whole block; shorter rows
// are left to evalStrips, which gathers several of them per block.
const minTileRow = 256

// tileLeaf is how run reads one input of the program: the input's view
// (element offset and strides over the block's shape), and for an input
// repeated along rows (inner stride 0, a broadcast trailing axis) a tile
// filled with the row's element.
type tileLeaf struct {
	data    []byte
	dt      DType
	off     int
	strides []int
	repeat  []byte
}

// run evaluates the program over shape into dst, tile elements at a time,
// and reports whether it did. Inputs that are contiguous views of the
// whole block are read as one row of it; otherwise, with rows of at least
// minTileRow elements, row by row, each input's row contiguous (a leading
// axis broadcast or sliced: any outer strides) or one element repeated (a
// trailing axis broadcast). Any other input (a transposed one) leaves the
// block to evalStrips. The temporaries (one tile per slot, per constant
// and per repeated input) come from alloc.
func (p *tileProgram) run(alloc Allocator, shape []int, leaf func(int) kernels.Operand, dst []byte, tile int) bool {
	n := int(plan.Prod(shape))
	nd := len(shape)
	leaves := make([]tileLeaf, len(p.inputs))
	flat := true
	for i, in := range p.inputs {
		o := leaf(in.Input)
		if o.DType != in.DType || len(o.Shape) != nd {
			return false
		}
		st := o.Strides
		if st == nil {
			st = CStrides(o.Shape)
		}
		last := o.Offset
		for d, s := range shape {
			if o.Shape[d] != s || len(st) != nd || st[d] < 0 {
				return false
			}
			last += (s - 1) * st[d]
		}
		if n > 0 && (o.Offset < 0 || (last+1)*o.DType.Size() > len(o.Data)) {
			return false
		}
		flat = flat && cOrder(st, shape)
		leaves[i] = tileLeaf{data: o.Data, dt: o.DType, off: o.Offset, strides: st}
	}
	if n == 0 {
		return true
	}
	if flat {
		// One row of the whole block, each input one contiguous run.
		shape = []int{n}
		for i := range leaves {
			leaves[i].strides = []int{1}
		}
	} else if shape[nd-1] < minTileRow {
		return false
	}
	nd = len(shape)
	rowLen := shape[nd-1]
	held := p.slots * plan.MaxElemBytes
	for _, c := range p.consts {
		held += c.DType.Size()
	}
	for _, l := range leaves {
		switch l.strides[nd-1] {
		case 0:
			held += l.dt.Size()
		case 1:
		default:
			return false
		}
	}
	// The tiles held (slots at the widest element, constants and repeated
	// inputs at their own) stay within what evalStrips would hold:
	// Temporaries strips of the widest element, a strip being at most the
	// block, the memory the projection charges.
	tile = max(1, min(tile, n))
	limit := tile * p.temps * plan.MaxElemBytes / held
	if limit < 1 {
		return false // a block or strips of a few elements: evalStrips
	}
	tile = min(tile, limit, rowLen)
	var bufs [][]byte
	defer func() {
		for _, b := range bufs {
			alloc.Free(b)
		}
	}()
	take := func(size int) []byte {
		b := alloc.Allocate(size)
		bufs = append(bufs, b)
		return b
	}
	slots := make([][]byte, p.slots)
	for k := range slots {
		slots[k] = take(tile * plan.MaxElemBytes)
	}
	consts := make([][]byte, len(p.consts))
	for k, c := range p.consts {
		consts[k] = take(tile * c.DType.Size())
		kernels.Fill(consts[k], c.DType, kernels.ScalarBytes(toKernelScalar(c.Value), c.DType))
	}
	for i := range leaves {
		if leaves[i].strides[nd-1] == 0 {
			leaves[i].repeat = take(tile * leaves[i].dt.Size())
		}
	}
	cur := make([][]byte, len(leaves))
	args := make([][]byte, len(p.steps)*3)
	idx := make([]int, nd-1) // the row's index over the outer axes
	base := make([]int, len(leaves))
	for r := 0; r < n/rowLen; r++ {
		for i, l := range leaves {
			base[i] = l.off
			for d, j := range idx {
				base[i] += j * l.strides[d]
			}
			if l.repeat != nil {
				sz := l.dt.Size()
				kernels.Fill(l.repeat, l.dt, l.data[base[i]*sz:(base[i]+1)*sz])
			}
		}
		for col := 0; col < rowLen; col += tile {
			cnt := min(tile, rowLen-col)
			for i, l := range leaves {
				sz := l.dt.Size()
				if l.repeat != nil {
					cur[i] = l.repeat[:cnt*sz]
				} else {
					cur[i] = l.data[(base[i]+col)*sz : (base[i]+col+cnt)*sz]
				}
			}
			p.step(cur, consts, slots, args, dst[(r*rowLen+col)*p.outSize():], cnt)
		}
		for d := nd - 2; d >= 0; d-- {
			if idx[d]++; idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return true
}

// outSize is the program's result element size.
func (p *tileProgram) outSize() int { return p.steps[len(p.steps)-1].dstSz }

// step runs every loop of the program over one tile of cnt elements: cur
// holds each input's elements, out the tile's place in the result (at
// least cnt elements), args scratch for the loops' operands.
func (p *tileProgram) step(cur, consts, slots, args [][]byte, out []byte, cnt int) {
	for s := range p.steps {
		st := &p.steps[s]
		a := args[s*3 : s*3+3]
		for k, arg := range st.args[:st.nargs] {
			switch arg.kind {
			case tileInput:
				a[k] = cur[arg.i]
			case tileConst:
				a[k] = consts[arg.i][:cnt*arg.size]
			default:
				a[k] = slots[arg.i][:cnt*arg.size]
			}
		}
		var d []byte
		if st.dst < 0 {
			d = out[:cnt*st.dstSz]
		} else {
			d = slots[st.dst][:cnt*st.dstSz]
		}
		st.loop(d, a[0], a[1], a[2])
	}
}
