package plan

import "reflect"

// Fuse rewrites the plan so that elementwise ops feed their consumers
// directly: when an op C reads an array X that only C reads (or that
// several ops read, if P is a view: isView), and X comes from a "map" op
// P, C's kernel is given P's expression in place of its reads of X and
// reads P's inputs itself, so X is never stored. Maps
// compose: P reading element s + t·j of an input for X's element j, and C
// reading X's element S + T·i for its own element i, makes the fused op
// read element (s + t·S) + t·T·i. A fusion is kept only when the fused op's
// projected memory fits allowed_mem and it keeps within FuseOptions.
//
// Fuse leaves the arrays and ops that users hold untouched: fused ops are
// new ops producing the same output arrays. It applies DefaultFuseOptions.
func (p *Plan) Fuse() { p.FuseWith(DefaultFuseOptions) }

// FuseWith is Fuse with the given bounds on what a fused op reads.
func (p *Plan) FuseWith(bounds FuseOptions) {
	outputs := map[*Array]bool{}
	for _, a := range p.Outputs {
		outputs[a] = true
	}
	consumers := map[*Array]int{}
	for _, o := range p.Ops {
		for _, a := range o.Op.InputArrays() {
			consumers[a]++
		}
	}
	producer := map[*Array]*OpInfo{}
	removed := map[*OpInfo]bool{}
	// How many of its readers each producer has been fused into: it is
	// left out once all have (one, or several for a view: isView).
	fusedInto := map[*OpInfo]int{}
	var kept []*OpInfo
	for _, o := range p.Ops {
		cur := o.Op
		chain := bounds.SingleInput
		for changed := !chain || len(cur.InputArrays()) == 1; changed; {
			changed = false
			for _, a := range cur.InputArrays() {
				prod, ok := producer[a]
				if !ok || removed[prod] || outputs[a] || a.Target != nil || bounds.Stored[a] {
					continue
				}
				shared := consumers[a] != 1
				if shared && !isView(prod.Op) {
					continue
				}
				fused := fuseInto(cur, prod.Op)
				if fused == nil {
					continue
				}
				// A rechunk copy fused into its consumer reads just what
				// the copy reads, so the bounds on reads do not apply.
				if ProjectedMem(fused) <= p.Spec.AllowedMem && (isRechunk(prod.Op) || bounds.allows(fused)) {
					cur = fused
					if fusedInto[prod]++; fusedInto[prod] == consumers[a] {
						removed[prod] = true
					}
					changed = !chain
					break
				}
			}
		}
		info := o
		if cur != o.Op {
			info = &OpInfo{Op: cur, NumTasks: cur.NumTasks(), ProjectedMem: ProjectedMem(cur)}
		}
		producer[o.Op.Output] = info
		kept = append(kept, info)
	}
	p.Ops = p.Ops[:0]
	for _, o := range kept {
		if !removed[o] {
			p.Ops = append(p.Ops, o)
		}
	}
	if !bounds.SingleInput {
		p.mergeSiblings(bounds)
	}
}

func isMap(op *Op) bool {
	return op.Kind == "blockwise" && op.Kernel.Core == "map" && len(op.Kernel.Exprs) == 1
}

// isView reports whether op is a map that only reads its one input at
// unit steps, such as a slice (x[1000:2000]), an integer index or a
// transpose: fused into each op that reads it, it costs those ops no
// arithmetic and no more reads than reading its stored copy would, while
// storing it would copy it. So a view that several ops read fuses into
// each of them: the anomaly xs - mean(xs, axis=0) of a slice xs reads the
// slice's chunks of x in both passes and stores no copy. A strided slice
// (x[::2]) is not one: each reader would read whole chunks of x for half
// their elements.
func isView(op *Op) bool {
	if !isMap(op) || len(op.Inputs) != 1 || op.Kernel.Exprs[0].Op != "input" {
		return false
	}
	for _, m := range op.Inputs[0].Dims {
		if !(m.Kind == Const || m.Kind == Affine && m.Step == 1) {
			return false
		}
	}
	return true
}

// isRechunk reports whether op is a rechunk copy (a map whose one input is
// read at the output's positions, through other chunks).
func isRechunk(op *Op) bool {
	return op.Kind == "rechunk" && op.Kernel.Core == "map" && len(op.Kernel.Exprs) == 1
}

// fuseInto returns consumer c with producer p fused in, or nil when the
// two cannot fuse. The consumer is a map, a rechunk copy (which then
// evaluates p's expression over its own blocks, as to_zarr of a
// misaligned difference does), or a reduction round folding over p's
// output (only its folded operand, Exprs[0], reads inputs). A rechunk is
// fused into a consumer only when the consumer reads nothing else and
// reads it block for block (see fuseRechunkInto): reading its source
// through other blocks would read source chunks more than once, which is
// what rechunking in stages avoids.
func fuseInto(c, p *Op) *Op {
	if c.Mirror || p.Mirror {
		return nil // a mirrored op's tasks do not each compute their own block
	}
	if isRechunk(p) {
		return fuseRechunkInto(c, p)
	}
	reduce := c.Kind == "blockwise" && c.Kernel.Core == "reduce"
	if !(isMap(c) || isRechunk(c) || reduce) || !isMap(p) {
		return nil
	}
	x := p.Output
	// C's inputs, less those reading X; then P's inputs composed with C's
	// map of X, for each read of X (C may read X more than once, as in
	// x*x). Inputs reading the same array through the same maps are one
	// input, which a task reads once: a*b + a reads a once.
	var inputs inputSet
	add := inputs.add
	remap := make([]int, len(c.Inputs))
	var xReads []int
	for i, in := range c.Inputs {
		if in.Array == x {
			remap[i] = -1
			xReads = append(xReads, i)
			continue
		}
		remap[i] = add(in)
	}
	subst := map[int]*Expr{}
	for _, i := range xReads {
		outer := c.Inputs[i].Dims
		pmap := make([]int, len(p.Inputs))
		for k, pin := range p.Inputs {
			dims := make([]DimMap, len(pin.Dims))
			for d, m := range pin.Dims {
				cm, ok := compose(m, outer, pin.Array.Chunks[d], x.Chunks)
				if !ok {
					return nil
				}
				dims[d] = cm
			}
			pmap[k] = add(Input{Array: pin.Array, Dims: dims})
		}
		subst[i] = renumber(p.Kernel.Exprs[0], func(k int) *Expr { return &Expr{Op: "input", Input: pmap[k], DType: p.Inputs[k].Array.DType} })
	}
	expr := renumber(c.Kernel.Exprs[0], func(i int) *Expr {
		if e, ok := subst[i]; ok {
			return e
		}
		return &Expr{Op: "input", Input: remap[i], DType: c.Inputs[i].Array.DType}
	})
	if reduce && !sameFrames(c.Inputs, inputs) {
		// A fold must keep an input running along each dimension of its
		// operand, which gives the dimension its extent: P broadcasting
		// along a dimension C folds over X would shrink it to one element.
		return nil
	}
	k := c.Kernel
	k.Exprs = append([]*Expr{expr}, c.Kernel.Exprs[1:]...)
	fn := p.Func + "+" + c.Func
	return &Op{ID: c.ID, Name: c.Name, Func: fn, Kind: c.Kind, Inputs: inputs, Output: c.Output,
		Kernel: k, ExtraMem: max(c.ExtraMem, p.ExtraMem), TaskBlocks: c.TaskBlocks}
}

// fuseRechunkInto returns consumer c with rechunk copy p fused in, or nil
// when c is not a map whose one input is p's output X read block for block
// (identity maps, c's output chunked like X, one block per task). The
// fused op is p's copy, each task reading the same source chunks as p's
// and evaluating c's expression over the blocks it assembles, then writing
// them as c's output: X is never stored. This is what `to_zarr` of a
// misaligned or irregularly chunked result, or of a rechunk, plans: the
// copy that makes the stored chunks writes them to the target directly.
func fuseRechunkInto(c, p *Op) *Op {
	if c.Kind == "blockwise" && c.Kernel.Core == "reduce" {
		return fuseRechunkIntoFold(c, p)
	}
	x := p.Output
	if !isMap(c) || len(c.Inputs) != 1 || c.Inputs[0].Array != x || c.TaskBlocks != nil ||
		!reflect.DeepEqual(c.Inputs[0].Dims, Identity(x.NDim())) || len(c.Output.Chunks) != len(x.Chunks) {
		return nil
	}
	for d := range x.Chunks {
		if !equalInts(c.Output.Chunks[d], x.Chunks[d]) {
			return nil
		}
	}
	expr := renumber(c.Kernel.Exprs[0], func(int) *Expr { return p.Kernel.Exprs[0] })
	k := c.Kernel
	k.Exprs = []*Expr{expr}
	return &Op{ID: c.ID, Name: c.Name, Func: p.Func + "+" + c.Func, Kind: p.Kind, Inputs: p.Inputs, Output: c.Output,
		Kernel: k, ExtraMem: max(c.ExtraMem, p.ExtraMem), TaskBlocks: p.TaskBlocks}
}

// fuseRechunkIntoFold returns reduction round c with rechunk copy p fused
// in, or nil when c reads anything but p's output X or p computes more
// than one block of X per task. Each step of a fused task assembles the
// block of X it folds from the chunks of p's source that the block
// overlaps (c's Blocks maps iterate over X's chunks through DimMap.Grid),
// so X is never stored: `sum(rechunk(x, c))` writes and reads the
// rechunked array once less. A task of p reads exactly one block of X's
// worth of source, as each fused step does, so no stored chunk is read
// more often than p reads it; a p that assembles several blocks per task
// to read each source chunk once (TaskBlocks) is left alone.
func fuseRechunkIntoFold(c, p *Op) *Op {
	x := p.Output
	if len(c.Inputs) != 1 || c.Inputs[0].Array != x {
		return nil
	}
	for _, k := range p.TaskBlocks {
		if k != 1 {
			return nil
		}
	}
	identity := Identity(x.NDim())
	inputs := make([]Input, len(p.Inputs))
	for k, pin := range p.Inputs {
		if !equalInts(pin.Array.Shape, x.Shape) || !reflect.DeepEqual(pin.Dims, identity) {
			return nil
		}
		dims := make([]DimMap, len(c.Inputs[0].Dims))
		for d, m := range c.Inputs[0].Dims {
			if m.Kind == Blocks && m.Grid == nil && !equalInts(pin.Array.Chunks[d], x.Chunks[d]) {
				m.Grid = GridOf(x.Chunks[d])
			}
			dims[d] = m
		}
		inputs[k] = Input{Array: pin.Array, Dims: dims}
	}
	expr := renumber(c.Kernel.Exprs[0], func(int) *Expr { return p.Kernel.Exprs[0] })
	k := c.Kernel
	k.Exprs = append([]*Expr{expr}, c.Kernel.Exprs[1:]...)
	return &Op{ID: c.ID, Name: c.Name, Func: p.Func + "+" + c.Func, Kind: c.Kind, Inputs: inputs, Output: c.Output,
		Kernel: k, ExtraMem: max(c.ExtraMem, p.ExtraMem), TaskBlocks: c.TaskBlocks}
}

// sameFrames reports whether every operand frame dimension that an input
// of before runs along with more than one element has an input of after
// running along it.
func sameFrames(before, after []Input) bool {
	covered := map[int]bool{}
	for _, in := range after {
		for _, m := range in.Dims {
			if runsAlongFrame(m) {
				covered[m.Frame] = true
			}
		}
	}
	for _, in := range before {
		for d, m := range in.Dims {
			if runsAlongFrame(m) && in.Array.Shape[d] > 1 && !covered[m.Frame] {
				return false
			}
		}
	}
	return true
}

// runsAlongFrame reports whether an input dimension of a reduce kernel runs
// along a dimension of its operand frame (as ops' frame views read it).
func runsAlongFrame(m DimMap) bool {
	return m.Kind == Blocks || m.Kind == Full || m.Kind == Ranges || (m.Kind == Affine && m.Step != 0)
}

// compose maps a dimension of one of P's inputs, given in the frame of
// P's output X, into the frame of C's output through C's maps of X. in is
// that input dimension's chunks, xChunks X's chunks. A dimension C folds
// over block by block composes where P reads it at unit step: the fold
// then steps over X's blocks where they lie in the input, a grid (DimMap
// Grid) that need not be the input's chunks nor cover the input (a slice
// such as x[1000:2000], or x[5:] whose blocks straddle the input's
// chunks), so sum(x[a:b]) reads the slice's chunks and stores no copy.
func compose(m DimMap, outer []DimMap, in []int, xChunks [][]int) (DimMap, bool) {
	switch m.Kind {
	case Const:
		return m, true
	case Affine:
		if m.Step == 0 {
			return DimMap{Kind: Affine, Start: m.Start, Step: 0}, true
		}
		o := outer[m.OutDim]
		switch o.Kind {
		case Const:
			return DimMap{Kind: Const, Index: m.Start + m.Step*o.Index}, true
		case Affine:
			if o.Step == 0 {
				return DimMap{Kind: Affine, Start: m.Start + m.Step*o.Start, Step: 0}, true
			}
			return DimMap{Kind: Affine, OutDim: o.OutDim, Start: m.Start + m.Step*o.Start, Step: m.Step * o.Step, Frame: o.Frame}, true
		case Blocks:
			if m.Step != 1 {
				return DimMap{}, false
			}
			// C folds over X's blocks (o.Grid's, else X's chunks); P
			// reads them at offset Start of its input: the fold steps
			// over the same blocks there, as a grid on the input.
			grid := o.Grid
			if grid == nil {
				grid = GridOf(xChunks[m.OutDim])
			}
			shifted := make([]int, len(grid))
			for b, g := range grid {
				shifted[b] = m.Start + g
			}
			if m.Start == 0 && equalInts(shifted, GridOf(in)) {
				shifted = nil // the input's own chunks
			}
			o.Grid = shifted
			return o, true
		}
	}
	return DimMap{}, false
}

// renumber copies e, replacing each input leaf by leaf(index).
func renumber(e *Expr, leaf func(int) *Expr) *Expr {
	if e.Op == "input" {
		return leaf(e.Input)
	}
	c := *e
	c.Args = make([]*Expr, len(e.Args))
	for i, a := range e.Args {
		c.Args[i] = renumber(a, leaf)
	}
	return &c
}

// inputSet is the inputs of an op being assembled from others': inputs
// reading the same array through the same maps are one input, which a
// task reads once.
type inputSet []Input

// add returns the index of in in the set, adding it if it is new.
func (s *inputSet) add(in Input) int {
	for j, have := range *s {
		if have.Array == in.Array && reflect.DeepEqual(have.Dims, in.Dims) {
			return j
		}
	}
	*s = append(*s, in)
	return len(*s) - 1
}
