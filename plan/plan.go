package plan

import (
	"fmt"
	"math"
	"slices"
)

// Plan is a finalised computation: the ops that produce a set of output
// arrays, in an order in which every op runs after the ops it reads from.
type Plan struct {
	Outputs []*Array
	Ops     []*OpInfo
	Spec    *Spec
}

// OpInfo is an op with its finalised task count and projected memory.
type OpInfo struct {
	Op           *Op
	NumTasks     int64
	ProjectedMem int64
}

// Build finalises the plan that computes outputs. It checks that every
// array involved shares one spec; it does not check memory (see Validate).
func Build(outputs []*Array) (*Plan, error) {
	var all []*Array
	var ops []*Op
	seen := map[*Array]bool{}
	var visit func(a *Array)
	visit = func(a *Array) {
		if seen[a] {
			return
		}
		seen[a] = true
		all = append(all, a)
		if a.Op != nil {
			for _, in := range a.Op.Inputs {
				visit(in.Array)
			}
			ops = append(ops, a.Op)
		}
	}
	for _, a := range outputs {
		visit(a)
	}
	spec, err := CommonSpec(all...)
	if err != nil {
		return nil, err
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	p := &Plan{Outputs: outputs, Spec: spec}
	for _, op := range ops {
		if err := op.check(); err != nil {
			return nil, err
		}
	}
	for _, op := range ops {
		p.Ops = append(p.Ops, &OpInfo{Op: op, NumTasks: op.NumTasks(), ProjectedMem: ProjectedMem(op)})
	}
	return p, nil
}

// OpsExceedingMemory returns the ops whose projected memory is over the
// allowed memory, worst first.
func (p *Plan) OpsExceedingMemory() []*OpInfo {
	var over []*OpInfo
	for _, o := range p.Ops {
		if o.ProjectedMem > p.Spec.AllowedMem {
			over = append(over, o)
		}
	}
	slices.SortStableFunc(over, func(a, b *OpInfo) int {
		return int(b.ProjectedMem - a.ProjectedMem)
	})
	return over
}

// Validate returns a *MemoryExceededError for the worst op whose projected
// memory is over the allowed memory.
func (p *Plan) Validate() error {
	over := p.OpsExceedingMemory()
	if len(over) == 0 {
		return nil
	}
	o := over[0]
	chunk := o.Op.Output.ChunkBytes()
	for _, in := range o.Op.Inputs {
		chunk = max(chunk, in.Array.ChunkBytes())
	}
	return &MemoryExceededError{
		Op: o.Op.String(), Projected: o.ProjectedMem, Allowed: p.Spec.AllowedMem, Reserved: p.Spec.ReservedMem,
		Hint: fmt.Sprintf("use smaller chunks (its largest chunk is %s) or increase allowed_mem", FormatBytes(chunk)),
	}
}

// NumTasks returns the number of tasks of all ops.
func (p *Plan) NumTasks() int64 {
	var n int64
	for _, o := range p.Ops {
		n += o.NumTasks
		if n < 0 { // overflowed: more tasks than int64 counts
			return math.MaxInt64
		}
	}
	return n
}

// MaxProjectedMem returns the largest projected memory of any op (the
// reserved memory when there are no ops).
func (p *Plan) MaxProjectedMem() int64 {
	m := p.Spec.ReservedMem
	for _, o := range p.Ops {
		m = max(m, o.ProjectedMem)
	}
	return m
}
