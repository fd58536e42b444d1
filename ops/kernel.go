package ops

import (
	"fmt"

	"github.com/cubego/cubego/ops/internal/kernels"
	"github.com/cubego/cubego/plan"
)

// Allocator provides the buffers of a task. Free returns a buffer that the
// task no longer uses.
type Allocator interface {
	Allocate(n int) []byte
	Free(b []byte)
}

// Block is a C-contiguous block of elements. Origin, for the regions of a
// piecewise kernel, is the position of the block's first element within
// the region the task asked for (nil: at its start); a nil Data with a
// non-nil Origin means the region was empty after clipping.
type Block struct {
	DType  DType
	Shape  []int
	Data   []byte
	Origin []int
	// Acc is, for the output block of a kernel that accumulates in another
	// form than its result (a record reduction's last round), the
	// accumulator of TaskKernel.AccBytes, kept across the task's steps.
	Acc []byte
	// Const marks a broadcast block: every element of Shape equals the one
	// element in Data. The engine hands a kernel the input regions of a
	// constant virtual array this way (TaskKernel.ConstInput) instead of
	// filling them; Data is shared, never written or freed.
	Const bool
}

// TaskKernel runs the kernel of one op on the blocks of one task: Step is
// called once per iteration step with that step's input regions (in each
// input's own dimension order), then Finish once.
type TaskKernel struct {
	op *plan.Op
	// The task's output block and iteration step, for kernels whose work
	// depends on them (take).
	block, step []int
	// helpers, when set, lends the task idle workers' cores (WithHelpers).
	helpers Helpers
	// readAhead and prefetch are op.ReadAheadDepth() and
	// op.PrefetchDepth(), computed once per op: they look at every block
	// size of the inputs, too costly to repeat per task.
	readAhead, prefetch int
	// inPlace is InPlaceInput's answer + 1 (the zero value: none),
	// computed once per op.
	inPlace int
	// consts holds, per input, the value of a constant virtual input that
	// the kernel takes as a broadcast block (ConstInput), else nil.
	consts [][]byte
	// stack holds, for a kernel stacking reductions (plan.Kernel.Stack),
	// the kernel of each one alone (plan.Op.StackMember).
	stack []*TaskKernel
}

// At returns the kernel for one task's output block and iteration step
// (a copy: a TaskKernel is shared by the concurrent tasks of its op).
func (t *TaskKernel) At(block, step []int) *TaskKernel {
	c := *t
	c.block, c.step = block, step
	return &c
}

// NewTaskKernel checks an op's kernel and returns its runner.
func NewTaskKernel(op *plan.Op) (*TaskKernel, error) {
	k := op.Kernel
	switch k.Core {
	case "map":
		if len(k.Exprs) != 1 {
			return nil, fmt.Errorf("ops: map kernel of %s needs one expression", op)
		}
	case "reduce":
		if k.Stack > 0 {
			return newStackKernel(op)
		}
		if len(k.Exprs) < 1 || len(k.Exprs) > 2 {
			return nil, fmt.Errorf("ops: reduce kernel of %s needs one or two expressions", op)
		}
	case "matmul":
		if len(k.Exprs) != 2 || len(op.Inputs) != 2 {
			return nil, fmt.Errorf("ops: matmul kernel of %s needs two operands", op)
		}
		if n := len(k.Transposed); n != 0 && n != 2 {
			return nil, fmt.Errorf("ops: matmul kernel of %s marks %d operands as transposed, not 0 or 2", op, n)
		}
		for i, tr := range k.Transposed {
			if tr && op.Inputs[i].Array.NDim() < 2 {
				return nil, fmt.Errorf("ops: matmul kernel of %s: a transposed operand needs two dimensions", op)
			}
		}
	case "piecewise", "reshape":
	case "cumsum", "cumprod", "sort", "argsort", "take", "searchsorted_left", "searchsorted_right", "isin":
		if len(k.Axes) != 1 {
			return nil, fmt.Errorf("ops: %s kernel of %s needs one axis", k.Core, op)
		}
	case "python": // a Python function (pyfunc.go)
		if err := checkPython(op); err != nil {
			return nil, err
		}
	default:
		if _, ok := blockFuncs[k.Core]; !ok {
			return nil, fmt.Errorf("ops: unknown kernel core %q in %s", k.Core, op)
		}
	}
	return &TaskKernel{op: op, readAhead: op.ReadAheadDepth(), prefetch: op.PrefetchDepth(), inPlace: inPlaceInput(op) + 1, consts: constInputs(op)}, nil
}

// ConstInput returns, when the kernel takes input i as a broadcast block
// (Block.Const), the value of its elements (one element's bytes), else
// nil. The input is then a virtual array of one value (ones, zeros, full,
// empty), and the engine does not fill its regions: the kernel reads the
// one element through zero strides, as it reads a constant of its
// expression.
func (t *TaskKernel) ConstInput(i int) []byte {
	if i < len(t.consts) {
		return t.consts[i]
	}
	return nil
}

// constInputs returns the values of the inputs of op that its kernel takes
// as broadcast blocks (nil entries for the others; nil for none). Only the
// cores that read every input through a strided view take them: map (its
// inputs are viewed in the output's dimensions, outView) and reduce
// (frameView; kernels.Reduce folds a zero-stride run in the same order as
// a contiguous one, so sums keep their bits), except a record reduction
// whose operand is the input itself. Every other core reads its regions
// as C-ordered blocks and gets them filled.
func constInputs(op *plan.Op) [][]byte {
	k := op.Kernel
	var consts [][]byte
	for i, in := range op.Inputs {
		g := in.Array.Generator
		if g == nil || g.Kind != "full" {
			continue
		}
		switch k.Core {
		case "map":
		case "reduce":
			// Only through an expression, whose contiguous result (a
			// strip at a time) the reduction folds at full speed. The
			// input itself as the operand is filled: a record reduction
			// (argmax, var...) folds its operand only as a C-ordered
			// block, and a zero-stride run folds one element at a time.
			// Nothing folds a constant operand in fewer steps: sum(ones)
			// does the additions a stored array of ones would.
			e := k.Exprs[0]
			if (e.Op == "input" && e.Input == i) || (plan.FoldsCast(k.Reduce, e) && e.Args[0].Input == i) {
				continue
			}
		default:
			continue
		}
		if consts == nil {
			consts = make([][]byte, len(op.Inputs))
		}
		consts[i] = kernels.ScalarBytes(toKernelScalar(g.Value), in.Array.DType)
	}
	return consts
}

// ReadAheadDepth is the op's plan.Op.ReadAheadDepth, computed when the
// kernel was made.
func (t *TaskKernel) ReadAheadDepth() int { return t.readAhead }

// PrefetchDepth is the op's plan.Op.PrefetchDepth, computed when the
// kernel was made.
func (t *TaskKernel) PrefetchDepth() int { return t.prefetch }

// MapsInputs reports whether the task's input blocks may be read-only
// mappings of stored chunks (zarr.Array.MapChunk): the kernel only reads
// them, in Go, on the task's goroutine and on its split helpers (which run
// with debug.SetPanicOnFault, so a fault on a mapping is a panic they
// recover, not a crash). That holds for the element-wise and reduction
// kernels (map, reduce) except the input a one-step map task computes in
// place (InPlaceInput), which the engine never maps; Python functions may
// write into their inputs and other kernels are not audited for it.
func (t *TaskKernel) MapsInputs() bool {
	c := t.op.Kernel.Core
	return c == "map" || c == "reduce"
}

// FoldedDims returns, for a reduce kernel that may fold a step's input in
// parts, which dimensions of its one input it folds (they run along a
// reduced axis of the frame); nil when it may not. Folding a step's input
// as several boxes cut along folded dimensions, one Step each (first only
// for the first), gives what folding the whole region gives, up to the
// order a float sum adds its terms: the kernel is a plain reduction (sum,
// prod, min, max, any, all and their nan-forms; not the record reductions,
// whose arg forms need each element's position) of one expression of
// the one input, which does not depend on where the box lies.
func (t *TaskKernel) FoldedDims() []bool {
	k := t.op.Kernel
	if k.Core != "reduce" || len(k.Exprs) != 1 || len(t.op.Inputs) != 1 || k.RecordIn || k.RecordOut {
		return nil
	}
	if _, ok := recordKinds[k.Reduce]; ok {
		return nil
	}
	axes := make(map[int]bool, len(k.Axes))
	for _, a := range k.Axes {
		axes[a] = true
	}
	dims := t.op.Inputs[0].Dims
	folded := make([]bool, len(dims))
	any := false
	for d, m := range dims {
		folded[d] = inFrame(m) && axes[m.Frame]
		any = any || folded[d]
	}
	if !any {
		return nil
	}
	return folded
}

// CopyOnly reports whether the kernel copies input 0 unchanged into the
// output, so the engine may read the input region straight into the output
// buffer.
func (t *TaskKernel) CopyOnly() bool { return t.op.CopiesInput() }

// Step applies one iteration step.
func (t *TaskKernel) Step(alloc Allocator, out Block, ins []Block, first bool) error {
	k := t.op.Kernel
	switch k.Core {
	case "map":
		leaf := func(i int) kernels.Operand { return t.outView(i, ins[i], out.Shape) }
		if d, pieces := t.splitPieces(out.Shape, plan.Prod(out.Shape)); pieces > 1 {
			row := int(plan.Prod(out.Shape[d+1:])) * out.DType.Size()
			return t.runPieces(out.Shape[d], pieces, func(lo, hi int) error {
				shape := append([]int(nil), out.Shape...)
				shape[d] = hi - lo
				pleaf := func(i int) kernels.Operand { return sliceOperand(leaf(i), d, lo, hi) }
				return evalInto(alloc, k.Exprs[0], shape, pleaf, out.Data[lo*row:hi*row], plan.StripElems/pieces)
			})
		}
		return evalInto(alloc, k.Exprs[0], out.Shape, leaf, out.Data, plan.StripElems)
	case "reduce":
		if t.stack != nil {
			return t.stackStep(alloc, out, ins, first)
		}
		frame := t.frameShape(ins)
		leaf := func(i int) kernels.Operand { return t.frameView(i, ins[i], frame) }
		if rk, ok := recordKinds[k.Reduce]; ok {
			x, release, err := t.reduceOperand(alloc, frame, leaf, plan.StripElems)
			if err != nil {
				return err
			}
			defer release()
			return t.recordStep(alloc, rk, out, x, first)
		}
		accShape := append([]int{}, frame...)
		for _, a := range k.Axes {
			accShape[a] = 1
		}
		if d, pieces := t.splitPieces(accShape, plan.Prod(frame)); pieces > 1 {
			row := int(plan.Prod(accShape[d+1:])) * out.DType.Size()
			return t.runPieces(accShape[d], pieces, func(lo, hi int) error {
				pframe := append([]int(nil), frame...)
				pframe[d] = hi - lo
				pacc := append([]int(nil), accShape...)
				pacc[d] = hi - lo
				pleaf := func(i int) kernels.Operand { return sliceOperand(leaf(i), d, lo, hi) }
				return t.reduceInto(alloc, kernels.Contiguous(out.DType, out.Data[lo*row:hi*row], pacc), pframe, pleaf, first, plan.StripElems/pieces)
			})
		}
		return t.reduceInto(alloc, kernels.Contiguous(out.DType, out.Data, accShape), frame, leaf, first, plan.StripElems)
	case "piecewise":
		return t.piecewiseStep(out, ins, first)
	case "cumsum", "cumprod", "sort", "argsort":
		return chunkFunc(k, out, ins[0])
	case "take", "searchsorted_left", "searchsorted_right", "isin":
		return t.foldStep(out, ins, first)
	case "python": // a Python function (pyfunc.go)
		return t.pythonStep(out, ins, first)
	case "matmul":
		a, relA, err := evalOperand(alloc, k.Exprs[0], ins)
		if err != nil {
			return err
		}
		defer relA()
		b, relB, err := evalOperand(alloc, k.Exprs[1], ins)
		if err != nil {
			return err
		}
		defer relB()
		var ta, tb bool
		if tr := k.Transposed; len(tr) == 2 {
			ta, tb = tr[0], tr[1]
		}
		return matmulStep(out, a, b, t.op.Inputs[0].Array.NDim(), t.op.Inputs[1].Array.NDim(), ta, tb, first)
	default:
		if f, ok := blockFuncs[k.Core]; ok {
			return f(k, out, ins)
		}
	}
	return nil
}

// reduceOperand returns a reduce kernel's operand over frame: the input
// itself, or its expression evaluated into a temporary (release frees it).
func (t *TaskKernel) reduceOperand(alloc Allocator, frame []int, leaf func(int) kernels.Operand, strip int) (kernels.Operand, func(), error) {
	k := t.op.Kernel
	e := k.Exprs[0]
	switch {
	case plan.FoldsCast(k.Reduce, e):
		return leaf(e.Args[0].Input), func() {}, nil // widened as it is folded
	case e.Op != "input":
		buf := alloc.Allocate(int(plan.Prod(frame)) * e.DType.Size())
		if err := evalInto(alloc, e, frame, leaf, buf, strip); err != nil {
			alloc.Free(buf)
			return kernels.Operand{}, nil, err
		}
		return kernels.Contiguous(e.DType, buf, frame), func() { alloc.Free(buf) }, nil
	}
	return leaf(e.Input), func() {}, nil
}

// reduceInto folds the operand over frame into acc.
func (t *TaskKernel) reduceInto(alloc Allocator, acc kernels.Operand, frame []int, leaf func(int) kernels.Operand, first bool, strip int) error {
	k := t.op.Kernel
	if e := k.Exprs[0]; e.Op != "input" && !plan.FoldsCast(k.Reduce, e) && plan.Prod(frame) > int64(max(strip, 1)) &&
		plan.Prod(frame)*int64(e.DType.Size()) >= foldStripsMinBytes {
		return t.foldStrips(alloc, acc, frame, leaf, first, max(strip, 1))
	}
	x, release, err := t.reduceOperand(alloc, frame, leaf, strip)
	if err != nil {
		return err
	}
	defer release()
	return kernels.Reduce(t.op.Kernel.Reduce, acc, x, t.op.Kernel.Axes, first)
}

// foldStripsMinBytes is the smallest evaluated operand reduceInto folds
// strip by strip: a smaller one stays in cache between its evaluation and
// its fold, and folding it whole takes fewer kernel calls (W7's 2 MB blocks
// ran 30% more CPU in strips; W2's 151 MB chunks half the CPU).
var foldStripsMinBytes int64 = 8 << 20

// foldStrips is reduceInto for an operand that is an expression, over a
// frame of more than strip elements and foldStripsMinBytes: the expression is evaluated one
// strip at a time (C-order runs of at most strip elements, as evalStrips
// takes them) and each strip folded into its part of acc at once, while
// it is in cache, instead of evaluating the whole frame into a temporary
// and reading it back. Strips that fold into the same part of acc (they
// differ only along reduced axes) are taken one after the other in C
// order, so each accumulator element folds its values in the order it
// would from the whole operand (a float sum along a run that a strip cuts
// adds the strips' pairwise sums one after the other, which may round
// differently in the last bits), and that part of acc stays in cache
// across them.
func (t *TaskKernel) foldStrips(alloc Allocator, acc kernels.Operand, frame []int, leaf func(int) kernels.Operand, first bool, strip int) error {
	k := t.op.Kernel
	e := k.Exprs[0]
	n := len(frame)
	reduced := make([]bool, n)
	for _, a := range k.Axes {
		reduced[a] = true
	}
	// d is the first axis whose inner block fits a strip; a strip is a
	// range of rows of d at one index of every axis before it.
	d, inner := n-1, 1
	for d > 0 && inner*frame[d] <= strip {
		inner *= frame[d]
		d--
	}
	rows := max(1, strip/inner)
	elem := e.DType.Size()
	buf := alloc.Allocate(min(rows, frame[d]) * inner * elem)
	defer alloc.Free(buf)
	accStrides := CStrides(acc.Shape)
	accElem := acc.DType.Size()
	// Outer: the kept axes before d, then the ranges of d; inner: the
	// reduced axes before d (those strips fold into the same acc part).
	var kept, red []int
	for a := range d {
		if reduced[a] {
			red = append(red, a)
		} else {
			kept = append(kept, a)
		}
	}
	idx := make([]int, n)
	var walk func(axes []int, body func() error) error
	walk = func(axes []int, body func() error) error {
		if len(axes) == 0 {
			return body()
		}
		a := axes[0]
		for i := range frame[a] {
			idx[a] = i
			if err := walk(axes[1:], body); err != nil {
				return err
			}
		}
		return nil
	}
	// piece folds the strip of rows [lo, hi) of d at idx into acc.
	piece := func(lo, hi int) error {
		pframe := make([]int, n)
		pacc := make([]int, n)
		off := 0
		for a := range n {
			switch {
			case a < d:
				pframe[a], pacc[a] = 1, 1
				if !reduced[a] {
					off += idx[a] * accStrides[a]
				}
			case a == d:
				pframe[a], pacc[a] = hi-lo, hi-lo
				if reduced[a] {
					pacc[a] = 1
				} else {
					off += lo * accStrides[a]
				}
			default:
				pframe[a], pacc[a] = frame[a], acc.Shape[a]
			}
		}
		size := int(plan.Prod(pacc))
		part := kernels.Contiguous(acc.DType, acc.Data[(acc.Offset+off)*accElem:(acc.Offset+off+size)*accElem], pacc)
		pleaf := func(i int) kernels.Operand {
			o := leaf(i)
			for a := range d {
				o = sliceOperand(o, a, idx[a], idx[a]+1)
			}
			return sliceOperand(o, d, lo, hi)
		}
		x := buf[:int(plan.Prod(pframe))*elem]
		if err := evalInto(alloc, e, pframe, pleaf, x, strip); err != nil {
			return err
		}
		pfirst := first && (!reduced[d] || lo == 0)
		for _, a := range red {
			pfirst = pfirst && idx[a] == 0
		}
		return kernels.Reduce(k.Reduce, part, kernels.Contiguous(e.DType, x, pframe), k.Axes, pfirst)
	}
	ranges := func() error {
		for lo := 0; lo < frame[d]; lo += rows {
			if err := piece(lo, min(lo+rows, frame[d])); err != nil {
				return err
			}
		}
		return nil
	}
	if reduced[d] {
		// Every strip at the same kept indices folds into one part.
		return walk(kept, func() error { return walk(red, ranges) })
	}
	return walk(kept, func() error {
		for lo := 0; lo < frame[d]; lo += rows {
			hi := min(lo+rows, frame[d])
			if err := walk(red, func() error { return piece(lo, hi) }); err != nil {
				return err
			}
		}
		return nil
	})
}

// Finish applies a reduction's final expression (e.g. mean's division), or
// writes a record reduction's results from its accumulator.
func (t *TaskKernel) Finish(alloc Allocator, out Block) error {
	k := t.op.Kernel
	if rk, ok := recordKinds[k.Reduce]; ok && k.Core == "reduce" && !k.RecordOut {
		return t.recordFinish(rk, out)
	}
	post := k.Post()
	if post == nil {
		return nil
	}
	tmp := alloc.Allocate(len(out.Data))
	defer alloc.Free(tmp)
	copy(tmp, out.Data)
	leaf := func(int) kernels.Operand { return kernels.Contiguous(out.DType, tmp, out.Shape) }
	return evalInto(alloc, post, out.Shape, leaf, out.Data, plan.StripElems)
}

// outView views input region b of input i in the output's dimensions:
// broadcast dimensions get stride 0, dropped dimensions vanish and
// permuted dimensions keep their own strides.
func (t *TaskKernel) outView(i int, b Block, outShape []int) kernels.Operand {
	if b.Const {
		return kernels.Operand{DType: b.DType, Data: b.Data, Shape: outShape, Strides: make([]int, len(outShape))}
	}
	in := t.op.Inputs[i]
	strides := CStrides(b.Shape)
	view := make([]int, len(outShape))
	for d, m := range in.Dims {
		mapped := (m.Kind == plan.Affine && m.Step != 0) || (m.Kind == plan.Full && m.OutDim >= 0)
		if mapped && b.Shape[d] == outShape[m.OutDim] && b.Shape[d] > 1 {
			view[m.OutDim] = strides[d]
		}
	}
	return kernels.Operand{DType: b.DType, Data: b.Data, Shape: outShape, Strides: view}
}

// frameShape returns the shape of a reduce kernel's operand at this step:
// along each frame dimension, the extent of the input regions running
// along it (1 where only broadcast inputs do).
func (t *TaskKernel) frameShape(ins []Block) []int {
	frame := make([]int, t.op.Kernel.FrameNDim)
	for i := range frame {
		frame[i] = 1
	}
	for i, in := range t.op.Inputs {
		for d, m := range in.Dims {
			if inFrame(m) {
				frame[m.Frame] = max(frame[m.Frame], ins[i].Shape[d])
			}
		}
	}
	return frame
}

// inFrame reports whether an input dimension runs along a frame dimension.
func inFrame(m plan.DimMap) bool {
	return m.Kind == plan.Blocks || m.Kind == plan.Full || m.Kind == plan.Ranges || (m.Kind == plan.Affine && m.Step != 0)
}

// frameView views input region b of input i in the operand frame.
func (t *TaskKernel) frameView(i int, b Block, frame []int) kernels.Operand {
	if b.Const {
		return kernels.Operand{DType: b.DType, Data: b.Data, Shape: frame, Strides: make([]int, len(frame))}
	}
	strides := CStrides(b.Shape)
	view := make([]int, len(frame))
	for d, m := range t.op.Inputs[i].Dims {
		if inFrame(m) && b.Shape[d] > 1 {
			view[m.Frame] = strides[d]
		}
	}
	return kernels.Operand{DType: b.DType, Data: b.Data, Shape: frame, Strides: view}
}

// evalOperand evaluates an operand expression of a reduce or matmul kernel
// over the region of the one input it reads.
func evalOperand(alloc Allocator, e *plan.Expr, ins []Block) (kernels.Operand, func(), error) {
	i := exprInput(e)
	if i < 0 {
		return kernels.Operand{}, nil, fmt.Errorf("ops: operand expression reads no input")
	}
	b := ins[i]
	leaf := func(int) kernels.Operand { return kernels.Contiguous(b.DType, b.Data, b.Shape) }
	if e.Op == "input" {
		return leaf(0), func() {}, nil
	}
	buf := alloc.Allocate(int(plan.Prod(b.Shape)) * e.DType.Size())
	if err := evalInto(alloc, e, b.Shape, leaf, buf, plan.StripElems); err != nil {
		alloc.Free(buf)
		return kernels.Operand{}, nil, err
	}
	return kernels.Contiguous(e.DType, buf, b.Shape), func() { alloc.Free(buf) }, nil
}

func exprInput(e *plan.Expr) int {
	if e.Op == "input" {
		return e.Input
	}
	for _, a := range e.Args {
		if i := exprInput(a); i >= 0 {
			return i
		}
	}
	return -1
}

// evalInto evaluates e over shape into dst (C order), reading inputs
// through leaf. Temporaries come from alloc and are freed once used.
//
// An expression with temporaries over more than strip elements is
// evaluated strip by strip (evalStrips), so that its temporaries hold one
// strip each instead of the whole block: a fused chain over 128 MiB chunks
// no longer holds several 128 MiB intermediates per task, and the strips
// stay in cache between the operations of the chain. strip is
// plan.StripElems, divided by the number of pieces when a step is split
// across goroutines (the pieces' temporaries together stay within the
// projection's plan.StripElems per temporary).
func evalInto(alloc Allocator, e *plan.Expr, shape []int, leaf func(int) kernels.Operand, dst []byte, strip int) error {
	strip = max(strip, 1)
	if p := compileTiles(e); p != nil && p.run(alloc, shape, leaf, dst, min(TileElems, strip)) {
		return nil
	}
	if plan.Prod(shape) > int64(strip) && e.Temporaries() > 0 {
		return evalStrips(alloc, e, shape, leaf, dst, strip)
	}
	return evalWhole(alloc, e, shape, leaf, dst)
}

// evalStrips evaluates e into dst one strip at a time: C-order runs of at
// most strip elements, each a range of one axis d (every axis before it at
// one index, every axis after it whole), so that a strip of dst is
// contiguous and each input's strip is a view of it. Temporaries are
// buffers of strip × plan.MaxElemBytes bytes, allocated once for all the
// strips and freed at the end (stripScratch).
func evalStrips(alloc Allocator, e *plan.Expr, shape []int, leaf func(int) kernels.Operand, dst []byte, strip int) error {
	// d is the first axis whose inner block fits a strip; a strip takes
	// rows of it.
	d, inner := len(shape)-1, 1
	for d > 0 && inner*shape[d] <= strip {
		inner *= shape[d]
		d--
	}
	rows := max(1, strip/inner)
	size := e.DType.Size()
	// The inputs' views of the whole shape, made once.
	leaves := map[int]kernels.Operand{}
	whole := func(i int) kernels.Operand {
		o, ok := leaves[i]
		if !ok {
			o = leaf(i)
			leaves[i] = o
		}
		return o
	}
	s := &stripScratch{alloc: alloc, size: strip * plan.MaxElemBytes}
	defer s.release()
	outer := make([]int, d) // index over the axes before d
	sub := make([]int, len(shape))
	for {
		flat := 0
		for k := range d {
			flat = flat*shape[k] + outer[k]
		}
		for lo := 0; lo < shape[d]; lo += rows {
			hi := min(lo+rows, shape[d])
			for k := range d {
				sub[k] = 1
			}
			sub[d] = hi - lo
			copy(sub[d+1:], shape[d+1:])
			sleaf := func(i int) kernels.Operand {
				o := whole(i)
				for k := range d {
					o = sliceOperand(o, k, outer[k], outer[k]+1)
				}
				return sliceOperand(o, d, lo, hi)
			}
			start := (flat*shape[d] + lo) * inner
			n := (hi - lo) * inner
			if err := evalWhole(s, e, sub, sleaf, dst[start*size:(start+n)*size]); err != nil {
				return err
			}
		}
		// Next index of the outer axes.
		k := d - 1
		for ; k >= 0; k-- {
			outer[k]++
			if outer[k] < shape[k] {
				break
			}
			outer[k] = 0
		}
		if k < 0 {
			return nil
		}
	}
}

// stripScratch hands out the temporaries of evalStrips: every buffer has
// size bytes (a strip of the widest element), so a freed one serves any
// later request and the buffers held never outnumber the temporaries alive
// at once (plan.Expr.Temporaries), which the projection charges. release
// returns them to the task's allocator.
type stripScratch struct {
	alloc      Allocator
	size       int
	free, held [][]byte
}

func (s *stripScratch) Allocate(n int) []byte {
	if n > s.size {
		// Not reached: a strip's elements are at most plan.MaxElemBytes wide.
		panic(fmt.Sprintf("ops: strip temporary of %d bytes exceeds %d", n, s.size))
	}
	if k := len(s.free); k > 0 {
		b := s.free[k-1]
		s.free = s.free[:k-1]
		return b[:n]
	}
	b := s.alloc.Allocate(s.size)
	s.held = append(s.held, b)
	return b[:n]
}

func (s *stripScratch) Free(b []byte) { s.free = append(s.free, b[:cap(b)]) }

func (s *stripScratch) release() {
	for _, b := range s.held {
		s.alloc.Free(b)
	}
	s.held, s.free = nil, nil
}

// evalWhole is evalInto without strips: every temporary covers shape.
func evalWhole(alloc Allocator, e *plan.Expr, shape []int, leaf func(int) kernels.Operand, dst []byte) error {
	out := kernels.Contiguous(e.DType, dst, shape)
	switch e.Op {
	case "input":
		src := leaf(e.Input)
		if src.DType != e.DType {
			return fmt.Errorf("ops: input has dtype %s, expression expects %s", src.DType, e.DType)
		}
		return kernels.CopyStrided(out, src)
	case "const":
		kernels.Fill(dst, e.DType, kernels.ScalarBytes(toKernelScalar(e.Value), e.DType))
		return nil
	}
	args := make([]kernels.Operand, len(e.Args))
	for i, a := range e.Args {
		op, release, err := evalArg(alloc, a, shape, leaf)
		if err != nil {
			return err
		}
		defer release()
		args[i] = op
	}
	switch {
	case e.Op == "astype":
		return kernels.Cast(out, args[0])
	case e.Op == "where":
		return kernels.Where(out, args[0], args[1], args[2])
	case len(args) == 1:
		return kernels.Unary(e.Op, out, args[0])
	case len(args) == 2:
		return kernels.Binary(e.Op, out, args[0], args[1])
	}
	return fmt.Errorf("ops: cannot evaluate %q with %d arguments", e.Op, len(args))
}

// evalArg returns an operand for an argument: inputs and constants are
// views, anything else is evaluated into a temporary.
func evalArg(alloc Allocator, e *plan.Expr, shape []int, leaf func(int) kernels.Operand) (kernels.Operand, func(), error) {
	switch e.Op {
	case "input":
		return leaf(e.Input), func() {}, nil
	case "const":
		v := kernels.ScalarBytes(toKernelScalar(e.Value), e.DType)
		return kernels.Operand{DType: e.DType, Data: v, Shape: shape, Strides: make([]int, len(shape))}, func() {}, nil
	}
	buf := alloc.Allocate(int(plan.Prod(shape)) * e.DType.Size())
	if err := evalWhole(alloc, e, shape, leaf, buf); err != nil {
		alloc.Free(buf)
		return kernels.Operand{}, nil, err
	}
	return kernels.Contiguous(e.DType, buf, shape), func() { alloc.Free(buf) }, nil
}

// matmulStep multiplies region blocks a and b into out (accumulating unless
// first), treating 1-D operands as a row (a) or column (b) vector and
// broadcasting batch dimensions. A transposed operand (ta, tb) holds its
// last two dimensions swapped.
func matmulStep(out Block, a, b kernels.Operand, andim, bndim int, ta, tb, first bool) error {
	as, bs := a.Shape, b.Shape
	m, k := 1, as[len(as)-1]
	if andim >= 2 {
		m = as[len(as)-2]
	}
	if ta {
		m, k = k, m
	}
	n := 1
	if bndim >= 2 {
		n = bs[len(bs)-1]
	}
	if tb {
		n = bs[len(bs)-2]
	}
	aBatch := batchOf(as, andim)
	bBatch := batchOf(bs, bndim)
	nb := max(len(aBatch), len(bBatch))
	outBatch := out.Shape[:nb]
	elem := out.DType.Size()
	total := int(plan.Prod(outBatch))
	idx := make([]int, nb)
	for t := range total {
		ao := batchOffset(idx, aBatch, nb) * m * k
		bo := batchOffset(idx, bBatch, nb) * k * n
		a2 := kernels.Operand{DType: a.DType, Data: a.Data[ao*elem : (ao+m*k)*elem], Shape: []int{m, k}}
		if ta {
			a2.Shape = []int{k, m}
		}
		b2 := kernels.Operand{DType: b.DType, Data: b.Data[bo*elem : (bo+k*n)*elem], Shape: []int{k, n}}
		if tb {
			b2.Shape = []int{n, k}
		}
		c2 := kernels.Operand{DType: out.DType, Data: out.Data[t*m*n*elem : (t+1)*m*n*elem], Shape: []int{m, n}}
		if err := kernels.MatmulTrans(c2, a2, b2, ta, tb, first); err != nil {
			return err
		}
		for d := nb - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < outBatch[d] {
				break
			}
			idx[d] = 0
		}
	}
	return nil
}

func batchOf(shape []int, ndim int) []int {
	if ndim <= 2 {
		return nil
	}
	return shape[:len(shape)-2]
}

// batchOffset returns the flat batch index of an operand whose batch shape
// is right-aligned with the output's and broadcasts size-1 dimensions.
func batchOffset(idx, shape []int, nb int) int {
	off := 0
	for j, n := range shape {
		i := idx[nb-len(shape)+j]
		if n == 1 {
			i = 0
		}
		off = off*n + i
	}
	return off
}

// InPlaceInput returns the input whose buffer a task of a map kernel may
// use as its output block (-1: none), so the task holds one buffer less:
// a stored input read whole chunks at a time ("aligned"), laid out as the
// output (same shape and chunks, no broadcast or permuted axes) with
// elements of the output's size. Every element of the output is then
// computed from the same positions of that input: each strip's
// temporaries are read from the input before the strip's result is
// written, and the expression's last operation reads the input, if it
// does, through a kernel that may overwrite its operand
// (kernels.OverwritesInputSafely). The engine uses it only for tasks of
// one step.
func (t *TaskKernel) InPlaceInput() int { return t.inPlace - 1 }

func inPlaceInput(op *plan.Op) int {
	k := op.Kernel
	if k.Core != "map" || op.CopiesInput() || op.TaskBlocks != nil {
		return -1
	}
	e := k.Exprs[0]
	if e.Op == "input" || e.Op == "const" {
		return -1
	}
	out := op.Output
	for i, in := range op.Inputs {
		a := in.Array
		if a.Virtual() || !op.InputAligned(i) || a.DType.Size() != out.DType.Size() || len(in.Dims) != out.NDim() {
			continue
		}
		same := true
		for d, m := range in.Dims {
			if m.Kind != plan.Affine || m.Step != 1 || m.Start != 0 || m.OutDim != d || a.Shape[d] != out.Shape[d] {
				same = false
				break
			}
		}
		if !same || (!kernels.OverwritesInputSafely(e.Op) && readsInput(e, i)) {
			continue
		}
		return i
	}
	return -1
}

// readsInput reports whether an argument of e is input i itself.
func readsInput(e *plan.Expr, i int) bool {
	for _, a := range e.Args {
		if a.Op == "input" && a.Input == i {
			return true
		}
	}
	return false
}

// newStackKernel returns the kernel of an op stacking K reductions
// (plan.Kernel.Stack): the output's leading dimension, of extent K in one
// chunk, holds them, and each step folds every operand into its slice.
func newStackKernel(op *plan.Op) (*TaskKernel, error) {
	k := op.Kernel
	if len(k.Exprs) != k.Stack && len(k.Exprs) != k.Stack+1 {
		return nil, fmt.Errorf("ops: reduce kernel of %s stacks %d reductions but has %d expressions", op, k.Stack, len(k.Exprs))
	}
	if _, ok := recordKinds[k.Reduce]; ok || k.RecordIn || k.RecordOut {
		return nil, fmt.Errorf("ops: reduce kernel of %s stacks record reductions (%s)", op, k.Reduce)
	}
	if out := op.Output; out.NDim() < 1 || out.Shape[0] != k.Stack || len(out.Chunks[0]) != 1 {
		return nil, fmt.Errorf("ops: reduce kernel of %s stacks %d reductions into an output of shape %v and chunks %v (want a leading dimension of %d in one chunk)",
			op, k.Stack, out.Shape, out.Chunks, k.Stack)
	}
	t := &TaskKernel{op: op, readAhead: op.ReadAheadDepth(), prefetch: op.PrefetchDepth()}
	for m := range k.Stack {
		// Constant inputs are filled for the stack as a whole (consts nil).
		t.stack = append(t.stack, &TaskKernel{op: op.StackMember(m)})
	}
	return t, nil
}

// stackStep folds each stacked reduction's operand over this step's
// regions into its slice of out.
func (t *TaskKernel) stackStep(alloc Allocator, out Block, ins []Block, first bool) error {
	n := len(out.Data) / len(t.stack)
	for m, s := range t.stack {
		sub := *s
		sub.helpers, sub.step = t.helpers, t.step
		if len(t.block) > 0 {
			sub.block = t.block[1:]
		}
		b := Block{DType: out.DType, Shape: out.Shape[1:], Data: out.Data[m*n : (m+1)*n]}
		if len(out.Origin) > 0 {
			b.Origin = out.Origin[1:]
		}
		if err := sub.Step(alloc, b, ins, first); err != nil {
			return err
		}
	}
	return nil
}
