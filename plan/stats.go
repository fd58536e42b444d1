package plan

import (
	"fmt"
	"strings"
)

// Stats summarise a finalised plan, as Cubed's FinalizedPlan does: what
// will run (ops, tasks, stages), how much memory each task is projected to
// use against the budget, and how much data moves. Computing them does no
// I/O; they describe the plan as it is (fused or not).
type Stats struct {
	NumOps   int   `json:"num_ops"`
	NumTasks int64 `json:"num_tasks"`
	// NumStages is the number of topological generations that have work:
	// ops in one stage read nothing another op of the same stage writes, so
	// they may run at the same time (compute_arrays_in_parallel).
	NumStages int `json:"num_stages"`
	NumArrays int `json:"num_arrays"`
	// NumIntermediateArrays counts the arrays ops write that are neither
	// requested outputs nor written to a target (to_zarr).
	NumIntermediateArrays int   `json:"num_intermediate_arrays"`
	MaxProjectedMem       int64 `json:"max_projected_mem"`
	AllowedMem            int64 `json:"allowed_mem"`
	ReservedMem           int64 `json:"reserved_mem"`
	// TotalNBytesRead is the bytes of stored arrays that tasks read, as
	// element regions (see OpStats.NBytesRead).
	TotalNBytesRead int64 `json:"total_nbytes_read"`
	// TotalNBytesWritten is the bytes of every array an op writes.
	TotalNBytesWritten int64        `json:"total_nbytes_written"`
	Ops                []OpStats    `json:"ops"`
	Arrays             []ArrayStats `json:"arrays"`
	// OpsExceedingMemory names the ops projected over allowed_mem, worst
	// first.
	OpsExceedingMemory []string `json:"ops_exceeding_memory"`
}

// OpStats describe one op of a plan.
type OpStats struct {
	Name         string `json:"name"`
	Func         string `json:"func"`
	Kind         string `json:"kind"`
	NumTasks     int64  `json:"num_tasks"`
	ProjectedMem int64  `json:"projected_mem"`
	// Stage is the op's topological generation (0 for ops reading only
	// inputs and virtual arrays).
	Stage   int      `json:"stage"`
	Inputs  []string `json:"inputs"`
	Outputs []string `json:"outputs"`
	// NBytesRead is the bytes of stored (not virtual) inputs that the op's
	// tasks read, summed over tasks: a region read by several tasks counts
	// each time. Tasks decode whole chunks, so a read that is not aligned
	// with the stored chunks moves more bytes than this.
	NBytesRead    int64 `json:"nbytes_read"`
	NBytesWritten int64 `json:"nbytes_written"`
	ExceedsMemory bool  `json:"exceeds_memory"`
}

// Array roles in a plan.
const (
	RoleInput        = "input"        // an existing Zarr array
	RoleVirtual      = "virtual"      // generated where it is read, never stored
	RoleIntermediate = "intermediate" // written under the work dir, not requested
	RoleOutput       = "output"       // requested, or written to a target
)

// ArrayStats describe one array of a plan.
type ArrayStats struct {
	Name      string `json:"name"`
	Shape     []int  `json:"shape"`
	DType     string `json:"dtype"`
	ChunkSize []int  `json:"chunksize"`
	NumBlocks []int  `json:"numblocks"`
	NBytes    int64  `json:"nbytes"`
	Role      string `json:"role"`
	// Target is the store (and path) an output is written to, if any.
	Target string `json:"target,omitempty"`
}

// Stages returns the plan's ops grouped by topological generation: an op's
// generation is one more than the latest generation among the ops that
// write its inputs. Ops keep their plan order within a generation.
func (p *Plan) Stages() [][]*OpInfo {
	gen := map[*Array]int{} // array -> generation of the op writing it
	var stages [][]*OpInfo
	for _, o := range p.Ops {
		g := 0
		for _, a := range o.Op.InputArrays() {
			if pg, ok := gen[a]; ok {
				g = max(g, pg+1)
			}
		}
		gen[o.Op.Output] = g
		for len(stages) <= g {
			stages = append(stages, nil)
		}
		stages[g] = append(stages[g], o)
	}
	return stages
}

// Stats returns the plan's statistics.
func (p *Plan) Stats() Stats {
	s := Stats{
		NumOps: len(p.Ops), NumTasks: p.NumTasks(), MaxProjectedMem: p.MaxProjectedMem(),
		AllowedMem: p.Spec.AllowedMem, ReservedMem: p.Spec.ReservedMem,
		Ops: []OpStats{}, Arrays: []ArrayStats{}, OpsExceedingMemory: []string{},
	}
	requested := map[*Array]bool{}
	for _, a := range p.Outputs {
		requested[a] = true
	}
	written := map[*Array]bool{}
	for _, o := range p.Ops {
		written[o.Op.Output] = true
	}
	seen := map[*Array]bool{}
	addArray := func(a *Array) {
		if seen[a] {
			return
		}
		seen[a] = true
		as := ArrayStats{Name: a.Name, Shape: nonNil(a.Shape), DType: a.DType.String(),
			ChunkSize: nonNil(a.ChunkShape()), NumBlocks: nonNil(a.NumBlocks()), NBytes: a.NBytes()}
		switch {
		case a.Virtual():
			as.Role = RoleVirtual
		case !written[a]:
			as.Role = RoleInput
		case requested[a] || a.Target != nil:
			as.Role = RoleOutput
		default:
			as.Role = RoleIntermediate
			s.NumIntermediateArrays++
		}
		if a.Target != nil {
			as.Target = a.Target.Store
			if a.Target.Path != "" {
				as.Target += " (" + a.Target.Path + ")"
			}
		}
		s.Arrays = append(s.Arrays, as)
	}
	stageOf := map[*OpInfo]int{}
	for i, stage := range p.Stages() {
		for _, o := range stage {
			stageOf[o] = i
		}
		if stageHasWork(stage) {
			s.NumStages = i + 1
		}
	}
	for _, o := range p.Ops {
		st := OpStats{Name: o.Op.Name, Func: o.Op.Func, Kind: o.Op.Kind, NumTasks: o.NumTasks,
			ProjectedMem: o.ProjectedMem, Stage: stageOf[o], Inputs: []string{}, Outputs: []string{o.Op.Output.Name},
			NBytesWritten: o.Op.Output.NBytes(), ExceedsMemory: o.ProjectedMem > p.Spec.AllowedMem}
		for _, a := range o.Op.InputArrays() {
			st.Inputs = append(st.Inputs, a.Name)
			addArray(a)
		}
		for k, in := range o.Op.Inputs {
			if !in.Array.Virtual() {
				st.NBytesRead += o.Op.nbytesRead(k)
			}
		}
		addArray(o.Op.Output)
		s.TotalNBytesRead += st.NBytesRead
		s.TotalNBytesWritten += st.NBytesWritten
		s.Ops = append(s.Ops, st)
	}
	for _, a := range p.Outputs {
		addArray(a)
	}
	s.NumArrays = len(s.Arrays)
	for _, o := range p.OpsExceedingMemory() {
		s.OpsExceedingMemory = append(s.OpsExceedingMemory, o.Op.Name)
	}
	return s
}

func stageHasWork(stage []*OpInfo) bool {
	for _, o := range stage {
		if o.NumTasks > 0 && o.Op.Output.Size() > 0 {
			return true
		}
	}
	return false
}

func nonNil(x []int) []int {
	if x == nil {
		return []int{}
	}
	return x
}

// nbytesRead returns the bytes of input k that all the op's tasks read
// together: per input dimension, the elements read summed over the output
// blocks along the output dimension it follows (the whole dimension for a
// fold), times the number of output blocks along output dimensions the
// input does not follow, since each of those tasks reads it again.
func (op *Op) nbytesRead(k int) int64 {
	in := op.Inputs[k]
	out := op.Output
	if out.Size() == 0 {
		return 0
	}
	n := int64(in.Array.DType.Size())
	follows := make([]bool, out.NDim())
	follow := func(d int) {
		if d >= 0 && d < len(follows) {
			follows[d] = true
		}
	}
	for d, m := range in.Dims {
		switch m.Kind {
		case Affine:
			if m.Step != 0 {
				n *= int64(out.Shape[m.OutDim])
				follow(m.OutDim)
			}
		case Blocks:
			if g := m.Grid; g != nil {
				n *= int64(g[len(g)-1] - g[0])
			} else {
				n *= int64(in.Array.Shape[d])
			}
			follow(m.OutDim)
		case Full:
			n *= int64(in.Array.Shape[d]) // by every task
		case Scaled:
			n *= int64(out.Shape[m.OutDim]) * int64(m.Num) / int64(max(m.Den, 1))
			follow(m.OutDim)
		case BlockIndex:
			n *= int64(len(out.Chunks[m.OutDim]))
			follow(m.OutDim)
		case Ranges:
			total := 0
			for _, r := range m.Ranges {
				total += r[1] - r[0]
			}
			n *= int64(total)
			follow(m.OutDim)
		}
	}
	for o, f := range follows {
		if !f {
			n *= int64(len(out.Chunks[o]))
		}
	}
	return n
}

// DOT renders the plan as a Graphviz digraph: ops as boxes labelled with
// their function, tasks and projected memory (filled red when over
// allowed_mem), arrays as ellipses (dashed when virtual, bold when an
// output), and edges from each op's inputs to it and from it to its output.
func (s *Stats) DOT() string {
	var b strings.Builder
	b.WriteString("digraph cubego {\n")
	b.WriteString("  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=10];\n")
	b.WriteString("  node [fontname=\"Helvetica\", fontsize=10];\n")
	b.WriteString("  edge [arrowsize=0.6];\n")
	fmt.Fprintf(&b, "  label=%s;\n  labelloc=t;\n", dotQuote(fmt.Sprintf(
		"%d ops, %d tasks, %d stages; max projected memory %s of allowed %s",
		s.NumOps, s.NumTasks, s.NumStages, FormatBytes(s.MaxProjectedMem), FormatBytes(s.AllowedMem))))
	for _, a := range s.Arrays {
		style := "solid"
		switch a.Role {
		case RoleVirtual:
			style = "dashed"
		case RoleOutput:
			style = "bold"
		}
		label := fmt.Sprintf("%s\n%s %s\nchunks %s\n%s", a.Name, shapeString(a.Shape), a.DType,
			shapeString(a.ChunkSize), a.Role)
		if a.Target != "" {
			label += "\n" + a.Target
		}
		fmt.Fprintf(&b, "  %s [shape=ellipse, style=%s, label=%s];\n", dotQuote(a.Name), style, dotQuote(label))
	}
	for _, o := range s.Ops {
		fill, color := "#dde8f5", "black"
		if o.ExceedsMemory {
			fill, color = "#f4a6a6", "red"
		}
		label := fmt.Sprintf("%s\n%s\ntasks: %d\nprojected memory: %s", o.Name, o.Func, o.NumTasks, FormatBytes(o.ProjectedMem))
		fmt.Fprintf(&b, "  %s [shape=box, style=\"rounded,filled\", fillcolor=%s, color=%s, label=%s];\n",
			dotQuote(o.Name), dotQuote(fill), color, dotQuote(label))
		for _, in := range o.Inputs {
			fmt.Fprintf(&b, "  %s -> %s;\n", dotQuote(in), dotQuote(o.Name))
		}
		for _, out := range o.Outputs {
			fmt.Fprintf(&b, "  %s -> %s;\n", dotQuote(o.Name), dotQuote(out))
		}
	}
	b.WriteString("}\n")
	return b.String()
}

func shapeString(s []int) string {
	parts := make([]string, len(s))
	for i, n := range s {
		parts[i] = fmt.Sprint(n)
	}
	if len(s) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// dotQuote returns s as a DOT string, with line breaks as centred lines.
func dotQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
