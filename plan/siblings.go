package plan

import (
	"reflect"
	"slices"
	"strings"
)

// plainFolds are the reductions a stacked kernel may fold: those whose
// accumulator is the output block itself (not a record reduction).
var plainFolds = []string{"sum", "nansum", "prod", "nanprod", "min", "nanmin", "max", "nanmax", "any", "all"}

// stackable reports whether op may be merged with its siblings: a plain
// reduction, one block a task, whose output is an intermediate the plan
// computes (not a stored one a resumed computation found).
func stackable(op *Op, bounds FuseOptions) bool {
	k := op.Kernel
	return op.Kind == "blockwise" && k.Core == "reduce" && k.Stack == 0 && !k.RecordIn && !k.RecordOut &&
		slices.Contains(plainFolds, k.Reduce) && len(k.Exprs) >= 1 && len(k.Exprs) <= 2 &&
		!op.Mirror && op.TaskBlocks == nil && !bounds.Stored[op.Output]
}

// siblings reports whether a and b fold alike over the same steps: the
// same reduction and post expression, the same output grid and dtype, and
// every input of either read through the same maps as a's first input,
// from arrays of its shape and chunks. Such reductions read the same
// blocks of their inputs at the same steps, so one task can fold both.
func siblings(a, b *Op) bool {
	ka, kb := a.Kernel, b.Kernel
	if ka.Reduce != kb.Reduce || !slices.Equal(ka.Axes, kb.Axes) || ka.FrameNDim != kb.FrameNDim ||
		len(ka.Exprs) != len(kb.Exprs) || (len(ka.Exprs) == 2 && !reflect.DeepEqual(ka.Exprs[1], kb.Exprs[1])) {
		return false
	}
	if a.Output.DType != b.Output.DType || !slices.Equal(a.Output.Shape, b.Output.Shape) ||
		!reflect.DeepEqual(a.Output.Chunks, b.Output.Chunks) {
		return false
	}
	ref := a.Inputs[0]
	for _, op := range []*Op{a, b} {
		for _, in := range op.Inputs {
			if !slices.Equal(in.Array.Shape, ref.Array.Shape) || !reflect.DeepEqual(in.Array.Chunks, ref.Array.Chunks) ||
				!reflect.DeepEqual(in.Dims, ref.Dims) {
				return false
			}
		}
	}
	return true
}

// stackOps returns the op computing the reductions of members side by side
// (Kernel.Stack): one task reads the union of their inputs once per step
// and folds each member's operand into its slice of a stacked output.
func stackOps(members []*Op) *Op {
	first := members[0]
	var inputs inputSet
	add := inputs.add
	k := first.Kernel
	k.Stack = len(members)
	k.Exprs = nil
	names := make([]string, len(members))
	funcs := make([]string, len(members))
	var extra int64
	for m, op := range members {
		remap := make([]int, len(op.Inputs))
		for i, in := range op.Inputs {
			remap[i] = add(in)
		}
		k.Exprs = append(k.Exprs, renumber(op.Kernel.Exprs[0], func(i int) *Expr {
			return &Expr{Op: "input", Input: remap[i], DType: op.Inputs[i].Array.DType}
		}))
		names[m], funcs[m] = op.Name, op.Func
		extra = max(extra, op.ExtraMem)
	}
	if post := first.Kernel.Post(); post != nil {
		k.Exprs = append(k.Exprs, post)
	}
	// The stacked output: a leading dimension of extent K in one chunk.
	out := first.Output
	shape := append([]int{len(members)}, out.Shape...)
	chunks := append([][]int{{len(members)}}, out.Chunks...)
	stacked := NewArray(shape, out.DType, chunks, out.Spec)
	for i := range inputs {
		inputs[i].Dims = shiftOutDims(inputs[i].Dims, 1)
	}
	op := &Op{ID: first.ID, Name: strings.Join(names, "+"), Func: strings.Join(funcs, ","), Kind: first.Kind,
		Inputs: inputs, Output: stacked, Kernel: k, ExtraMem: extra}
	stacked.Op = op
	return op
}

// unstackOp returns the op that copies reduction k of a stacked op's
// output into out (the member's own array, which the plan returns or
// stores), named name.
func unstackOp(stacked *Op, k int, out *Array, name string) *Op {
	dims := append([]DimMap{{Kind: Const, Index: k}}, Identity(out.NDim())...)
	return &Op{ID: stacked.ID, Name: name, Func: "stack-item", Kind: "blockwise",
		Inputs: []Input{{Array: stacked.Output, Dims: dims}}, Output: out,
		Kernel: Kernel{Core: "map", Exprs: []*Expr{InputExpr(0, out.DType)}}}
}

// mergeSiblings merges reductions that read common input arrays at the
// same steps into stacked ops (stackOps), so each input block is read once
// for all of them instead of once per reduction: mean(u*u), mean(v*v) and
// mean(u*v) computed together read u and v once. Readers of a member's
// output read its slice of the stacked output instead; a member whose
// output the plan returns or stores gets a small op copying its slice
// out. A merge is kept only when the stacked op's projected memory fits
// allowed_mem and it keeps within the fusion bounds. Members must not
// depend on each other: every input of a member is a source array or the
// output of an op that comes before the first member.
func (p *Plan) mergeSiblings(bounds FuseOptions) {
	index := map[*Array]int{} // output array → position of its op
	for i, o := range p.Ops {
		index[o.Op.Output] = i
	}
	outputs := map[*Array]bool{}
	for _, a := range p.Outputs {
		outputs[a] = true
	}
	readyBy := func(op *Op) int { // the first position op may run at
		at := 0
		for _, a := range op.InputArrays() {
			if i, ok := index[a]; ok {
				at = max(at, i+1)
			}
		}
		return at
	}
	// A group's stacked op and its members, by the first member's position.
	type stack struct {
		op      *Op
		members []*Op
	}
	merged := map[int]stack{}
	taken := map[int]bool{}
	// Outputs of grouped ops: their readers are rewritten to read slices of
	// a stacked output, so none of them joins a group of its own (it would
	// be stacked from the inputs it had before).
	stackedOut := map[*Array]bool{}
	readsStacked := func(op *Op) bool {
		for _, a := range op.InputArrays() {
			if stackedOut[a] {
				return true
			}
		}
		return false
	}
	for i, o := range p.Ops {
		if taken[i] || !stackable(o.Op, bounds) || readsStacked(o.Op) {
			continue
		}
		group := []int{i}
		var stacked stack
		shared := map[*Array]bool{}
		for _, a := range o.Op.InputArrays() {
			shared[a] = true
		}
		for grew := true; grew; {
			grew = false
			for j := i + 1; j < len(p.Ops); j++ {
				c := p.Ops[j].Op
				if taken[j] || slices.Contains(group, j) || !stackable(c, bounds) || readsStacked(c) || !siblings(o.Op, c) || readyBy(c) > i {
					continue
				}
				common := false
				for _, a := range c.InputArrays() {
					common = common || shared[a]
				}
				if !common {
					continue
				}
				ops := make([]*Op, 0, len(group)+1)
				for _, g := range append(group, j) {
					ops = append(ops, p.Ops[g].Op)
				}
				s := stackOps(ops)
				if ProjectedMem(s) > p.Spec.AllowedMem || !bounds.allows(s) {
					continue
				}
				group, stacked = append(group, j), stack{s, ops}
				for _, a := range c.InputArrays() {
					shared[a] = true
				}
				grew = true
			}
		}
		if stacked.op == nil {
			continue
		}
		for _, g := range group {
			taken[g] = true
			stackedOut[p.Ops[g].Op.Output] = true
		}
		merged[i] = stacked
	}
	if len(merged) == 0 {
		return
	}
	// Readers of a member's output read its slice of the stacked output.
	slice := map[*Array]Input{}
	var ops []*OpInfo
	for i, o := range p.Ops {
		if st, ok := merged[i]; ok {
			s := st.op
			ops = append(ops, &OpInfo{Op: s, NumTasks: s.NumTasks(), ProjectedMem: ProjectedMem(s)})
			for m, member := range st.members {
				out := member.Output
				slice[out] = Input{Array: s.Output, Dims: []DimMap{{Kind: Const, Index: m}}}
				if outputs[out] || out.Target != nil {
					u := unstackOp(s, m, out, member.Name)
					ops = append(ops, &OpInfo{Op: u, NumTasks: u.NumTasks(), ProjectedMem: ProjectedMem(u)})
				}
			}
			continue
		}
		if taken[i] {
			continue
		}
		op := o.Op
		if readsAny(op, slice) {
			c := *op
			c.Inputs = make([]Input, len(op.Inputs))
			for j, in := range op.Inputs {
				if s, ok := slice[in.Array]; ok {
					in = Input{Array: s.Array, Dims: append(append([]DimMap(nil), s.Dims...), in.Dims...)}
				}
				c.Inputs[j] = in
			}
			op = &c
			mem := ProjectedMem(op)
			if mem > p.Spec.AllowedMem && o.ProjectedMem <= p.Spec.AllowedMem {
				// Reading a slice of the larger stacked chunk would not fit.
				return
			}
			o = &OpInfo{Op: op, NumTasks: op.NumTasks(), ProjectedMem: mem}
		}
		ops = append(ops, o)
	}
	p.Ops = ops
}

// shiftOutDims returns dims with the output dimension each map follows
// moved by `by` (a stacked op's leading dimension added or removed).
func shiftOutDims(dims []DimMap, by int) []DimMap {
	out := make([]DimMap, len(dims))
	for d, m := range dims {
		if m.OutDim >= 0 && m.Kind != Const && !(m.Kind == Affine && m.Step == 0) {
			m.OutDim += by
		}
		out[d] = m
	}
	return out
}

// readsAny reports whether op reads one of the arrays of slice.
func readsAny(op *Op, slice map[*Array]Input) bool {
	for _, in := range op.Inputs {
		if _, ok := slice[in.Array]; ok {
			return true
		}
	}
	return false
}
