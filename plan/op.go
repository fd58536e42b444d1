package plan

import (
	"fmt"
	"slices"

	"github.com/cubego/cubego/zarr"
)

// Op is a blockwise primitive: each task computes one block of Output from
// regions of its Inputs. Which region of each input a task reads is given by
// per-dimension maps, so element-aligned, misaligned, broadcast, sliced,
// rechunked and reduced inputs are all expressed the same way. How the
// regions become the output block is the Kernel.
type Op struct {
	ID     int64
	Name   string // "op-003"
	Func   string // what the user called, e.g. "add", "sum", "rechunk"
	Kind   string // "blockwise" or "rechunk"
	Inputs []Input
	Output *Array
	Kernel Kernel
	// ExtraMem is memory a task needs beyond its input regions, output
	// block and expression temporaries (projected by Kernel).
	ExtraMem int64
	// TaskBlocks, when set, makes each task compute TaskBlocks[d]
	// consecutive output blocks along each dimension d at once (and write
	// them as separate chunks): a rechunk copy whose reads are whole source
	// chunks. Task coordinates then index this coarser grid.
	TaskBlocks []int
	// Mirror, when set, says the output is symmetric in its last two
	// dimensions (a @ a.T): block (..., i, j) is the transpose of block
	// (..., j, i). The task of a block with i < j writes both; a task
	// with i > j computes nothing (MirroredTask), so the op does about
	// half the work. The last two dimensions have the same shape and
	// chunks, and TaskBlocks is unset.
	Mirror bool
}

// MirroredTask reports whether the task of block is left to the task of
// its transposed block (Mirror, below the diagonal): it computes nothing.
func (op *Op) MirroredTask(block []int) bool {
	n := len(block)
	return op.Mirror && n >= 2 && block[n-2] > block[n-1]
}

// MirrorsTask reports whether the task of block also writes the
// transposed block (Mirror, above the diagonal).
func (op *Op) MirrorsTask(block []int) bool {
	n := len(block)
	return op.Mirror && n >= 2 && block[n-2] < block[n-1]
}

// TaskGrid returns the number of tasks along each dimension.
func (op *Op) TaskGrid() []int {
	nb := op.Output.NumBlocks()
	if op.TaskBlocks == nil {
		return nb
	}
	g := make([]int, len(nb))
	for d, n := range nb {
		g[d] = (n + op.TaskBlocks[d] - 1) / op.TaskBlocks[d]
	}
	return g
}

// NumTasks returns the number of tasks of the op.
func (op *Op) NumTasks() int64 { return Prod(op.TaskGrid()) }

// TaskBlockRange returns the output blocks [b0, b1) a task computes.
func (op *Op) TaskBlockRange(task []int) (b0, b1 []int) {
	b0 = make([]int, len(task))
	b1 = make([]int, len(task))
	for d, t := range task {
		k := 1
		if op.TaskBlocks != nil {
			k = op.TaskBlocks[d]
		}
		b0[d], b1[d] = t*k, min((t+1)*k, len(op.Output.Chunks[d]))
	}
	return b0, b1
}

// maxOutExtent returns the largest extent of a task's output along d.
func (op *Op) maxOutExtent(d int) int {
	c := MaxChunk(op.Output.Chunks[d])
	if op.TaskBlocks != nil {
		c *= op.TaskBlocks[d]
	}
	return c
}

// Input binds an array to an op: Dims has one map per dimension of Array.
type Input struct {
	Array *Array
	Dims  []DimMap
}

// DimKind says how an input dimension follows the output block.
type DimKind uint8

const (
	// Affine: input element = Start + Step*output element along OutDim.
	// Step 0 reads the single element Start (broadcasting).
	Affine DimKind = iota
	// Const: the single input element Index (the dimension is dropped).
	Const
	// Blocks: the input blocks [e0*Factor, e1*Factor) where [e0, e1) is the
	// output block's element range along OutDim, or all blocks when OutDim
	// is -1. The task iterates over them one block at a time, in lockstep
	// with the other inputs' Blocks dimensions on the same IterAxis. With
	// Grid set, the blocks are those of Grid, a chunking of the input
	// dimension other than the array's own: a rechunk fused into the
	// reader (each step assembles a block of the rechunked array from the
	// stored chunks it overlaps, and the rechunked array is never stored).
	Blocks
	// Full: the whole input dimension (which runs along OutDim of the
	// output, or no output dimension when OutDim is -1).
	Full
	// Scaled: the input elements [lo·Num/Den, hi·Num/Den) where [lo, hi) is
	// the output block's range along OutDim (reshape's merged or split
	// leading dimensions, whose block boundaries match by construction).
	Scaled
	// BlockIndex: the single input element whose index is the output
	// block's index along OutDim (per-block values such as scan carries).
	BlockIndex
	// Ranges: the input elements Ranges[b] = [lo, hi) where b is the output
	// block's index along OutDim: any per-block range, such as the input
	// block with the output block's index when the two chunkings differ
	// (map_blocks with new chunks), or a block extended by its neighbours'
	// elements (map_overlap).
	Ranges
)

// DimMap maps an output block to the range of one input dimension.
type DimMap struct {
	Kind     DimKind
	OutDim   int
	Start    int
	Step     int
	Index    int
	Factor   int
	IterAxis int
	Num, Den int
	// Frame is, for reduce kernels, the dimension of the folded operand
	// that this input dimension runs along (Affine with Step ≠ 0, Blocks,
	// Full, Ranges).
	Frame int
	// Ranges are, for the Ranges kind, the input range [lo, hi) read for
	// each output block along OutDim.
	Ranges [][2]int `json:",omitempty"`
	// Grid is, for the Blocks kind, the block boundaries (increasing,
	// within the dimension; see GridOf) the task's steps iterate over
	// along this dimension when they differ from the input array's chunks
	// (nil: the array's own chunks). A grid need not cover the dimension:
	// a fold over a slice of the input steps over the slice's blocks.
	Grid []int `json:",omitempty"`
}

// numBlocks returns the number of blocks a Blocks map iterates over along
// dimension d of input array in: those of its Grid, else the array's.
func (m DimMap) numBlocks(in *Array, d int) int {
	if m.Grid != nil {
		return len(m.Grid) - 1
	}
	return len(in.Chunks[d])
}

// maxBlock returns the largest block a Blocks map reads along dimension d.
func (m DimMap) maxBlock(in *Array, d int) int {
	if m.Grid == nil {
		return MaxChunk(in.Chunks[d])
	}
	most := 0
	for b := 1; b < len(m.Grid); b++ {
		most = max(most, m.Grid[b]-m.Grid[b-1])
	}
	return most
}

// GridOf returns the Grid of a Blocks map iterating over the given chunk
// sizes: their boundaries, from 0 to the dimension's length.
func GridOf(chunks []int) []int {
	return Offsets(chunks)
}

// Identity returns the maps of an input read at the output's own positions.
func Identity(ndim int) []DimMap {
	d := make([]DimMap, ndim)
	for i := range d {
		d[i] = DimMap{Kind: Affine, OutDim: i, Step: 1}
	}
	return d
}

// Kernel says how input regions become an output block.
type Kernel struct {
	// Core is "map" (Exprs[0] evaluated over the output block), "reduce"
	// (Exprs[0] folded over the iteration steps with Reduce along Axes,
	// keeping dims), "matmul" (Exprs[0] @ Exprs[1], summed over steps),
	// "piecewise" (the block filled with Fill, then each input's region,
	// clipped to the input, copied to its place: concat, pad), "reshape"
	// (the one input's region has the output block's bytes), or a chunk
	// function along Axes[0] of the one input: "cumsum", "cumprod",
	// "sort", "argsort" (Descending, stable), or "python" (a Python
	// function, PyFunc, computes the block from the regions).
	Core   string
	Exprs  []*Expr
	Reduce string
	// Axes are the folded dimensions of the operand frame (reduce), which
	// has FrameNDim dimensions.
	Axes      []int
	FrameNDim int
	// RecordIn and RecordOut mark the rounds of a record reduction (Reduce
	// "var", "argmax", ...; see ops/records.go): with RecordIn the folded
	// operand is an array of partial records, whose frame dimension 0 holds
	// the record's fields; with RecordOut the output holds records too
	// (fields along its dimension 0), else the round is the last one and
	// the output holds the final values. Correction is var's and std's
	// degrees of freedom removed (ddof).
	RecordIn, RecordOut bool
	Correction          float64
	Fill                Scalar
	Descending          bool
	// Transposed, for "matmul", marks the operands whose input regions hold
	// their last two dimensions swapped (x.T read straight from x, without
	// storing the transpose).
	Transposed []bool
	// Indices are a take's source positions along Axes[0], one per output
	// element along that axis.
	Indices []int64

	// The "python" core calls a Python function per task step (see
	// ops.PythonCallback): PyFunc is the function as Python serialised it
	// (cloudpickle; opaque to Go), PyKey the hex SHA-256 of PyFunc, by
	// which Python caches the unpickled function, and PyMeta a JSON object
	// describing it for people (the user function's name).
	PyFunc []byte
	PyKey  string
	PyMeta string

	// Stack, for "reduce", is the number K > 0 of reductions one task
	// computes side by side over the same steps (sibling reductions of
	// shared inputs merged by Fuse, so each input block is read once):
	// Exprs[0..K-1] are the folded operands, the optional Exprs[K] is
	// applied to the whole folded block at the end, and the output has a
	// leading dimension of extent K, in one chunk, whose element k holds
	// reduction k. Input maps' OutDim count that leading dimension.
	Stack int
}

// Post returns a reduce kernel's final expression (mean's division; input
// 0 is the folded block), or nil when it has none.
func (k *Kernel) Post() *Expr {
	i := max(k.Stack, 1)
	if k.Core != "reduce" || len(k.Exprs) <= i {
		return nil
	}
	return k.Exprs[i]
}

// StackMember returns, for an op whose kernel stacks K reductions, the op
// computing reduction k alone over the same inputs: its output drops the
// leading dimension (the array is a stand-in with no node of its own) and
// its input maps' OutDim follow. Its kernel has no final expression (the
// stacked op applies it to the whole block).
func (op *Op) StackMember(k int) *Op {
	out := op.Output
	member := &Array{ID: out.ID, Name: out.Name, Shape: out.Shape[1:], DType: out.DType, Chunks: out.Chunks[1:], Spec: out.Spec}
	inputs := make([]Input, len(op.Inputs))
	for i, in := range op.Inputs {
		inputs[i] = Input{Array: in.Array, Dims: shiftOutDims(in.Dims, -1)}
	}
	kernel := op.Kernel
	kernel.Stack = 0
	kernel.Exprs = []*Expr{op.Kernel.Exprs[k]}
	return &Op{ID: op.ID, Name: op.Name, Func: op.Func, Kind: op.Kind, Inputs: inputs, Output: member, Kernel: kernel, ExtraMem: op.ExtraMem}
}

// Expr is an elementwise expression over an op's inputs.
type Expr struct {
	Op    string        // "input", "const", or a kernel op name ("add", "astype", ...)
	Input int           // for "input": the index into Op.Inputs
	Value Scalar        // for "const"
	DType zarr.DataType // the result's data type
	Args  []*Expr
}

// InputExpr returns the expression reading input i of dtype dt.
func InputExpr(i int, dt zarr.DataType) *Expr { return &Expr{Op: "input", Input: i, DType: dt} }

// Temporaries returns how many full-size buffers evaluating e needs beyond
// its result buffer, when operands are freed as soon as they are used.
func (e *Expr) Temporaries() int {
	if e == nil || e.Op == "input" || e.Op == "const" {
		return 0
	}
	// Evaluating argument k needs its own temporaries while the k results
	// before it are alive.
	peak := 0
	live := 0
	for _, a := range e.Args {
		own := 0
		if a.Op != "input" && a.Op != "const" {
			own = 1 + a.Temporaries()
		}
		peak = max(peak, live+own)
		if own > 0 {
			live++
		}
	}
	return peak
}

// NewOp creates an op and links it as the producer of out.
func NewOp(fn, kind string, inputs []Input, out *Array, k Kernel) *Op {
	id := opCounter.Add(1)
	op := &Op{ID: id, Name: fmt.Sprintf("op-%03d", id), Func: fn, Kind: kind, Inputs: inputs, Output: out, Kernel: k}
	out.Op = op
	return op
}

// Region is a strided range of elements per dimension: element i of
// dimension d is Start[d] + Step[d]*i for i < Count[d].
type Region struct {
	Start, Step, Count []int
}

// Size returns the number of elements of the region.
func (r Region) Size() int64 { return Prod(r.Count) }

// OutputRange returns the element range [lo, hi) per dimension of the
// output a task computes: one block, or with TaskBlocks several.
func (op *Op) OutputRange(task []int) (lo, hi []int) {
	out := op.Output
	b0, b1 := op.TaskBlockRange(task)
	lo = make([]int, len(task))
	hi = make([]int, len(task))
	for d := range task {
		off := out.ChunkOffsets(d)
		lo[d], hi[d] = off[b0[d]], off[b1[d]]
	}
	return lo, hi
}

// blocksRange returns the input block range a Blocks map covers for an
// output block.
func (m DimMap) blocksRange(in *Array, d int, lo, hi []int) (int, int) {
	nb := m.numBlocks(in, d)
	if m.OutDim < 0 {
		return 0, nb
	}
	return min(lo[m.OutDim]*m.Factor, nb), min(hi[m.OutDim]*m.Factor, nb)
}

// IterShape returns the number of steps along each iteration axis of the
// task computing the given output block (nil for a single step).
func (op *Op) IterShape(block []int) []int {
	lo, hi := op.OutputRange(block)
	var shape []int
	for _, in := range op.Inputs {
		for d, m := range in.Dims {
			if m.Kind != Blocks {
				continue
			}
			for len(shape) <= m.IterAxis {
				shape = append(shape, 0)
			}
			b0, b1 := m.blocksRange(in.Array, d, lo, hi)
			shape[m.IterAxis] = b1 - b0
		}
	}
	return shape
}

// InputRegion returns the region of input i that the task for an output
// block reads at an iteration step (nil step for ops without iteration).
func (op *Op) InputRegion(i int, block, step []int) Region {
	in := op.Inputs[i]
	lo, hi := op.OutputRange(block)
	n := len(in.Dims)
	r := Region{Start: make([]int, n), Step: make([]int, n), Count: make([]int, n)}
	for d, m := range in.Dims {
		switch m.Kind {
		case Affine:
			if m.Step == 0 {
				r.Start[d], r.Step[d], r.Count[d] = m.Start, 1, 1
			} else {
				r.Start[d], r.Step[d], r.Count[d] = m.Start+m.Step*lo[m.OutDim], m.Step, hi[m.OutDim]-lo[m.OutDim]
			}
		case Const:
			r.Start[d], r.Step[d], r.Count[d] = m.Index, 1, 1
		case Blocks:
			b0, _ := m.blocksRange(in.Array, d, lo, hi)
			b := b0 + step[m.IterAxis]
			if m.Grid != nil {
				r.Start[d], r.Step[d], r.Count[d] = m.Grid[b], 1, m.Grid[b+1]-m.Grid[b]
			} else {
				r.Start[d], r.Step[d], r.Count[d] = in.Array.ChunkOffsets(d)[b], 1, in.Array.Chunks[d][b]
			}
		case Full:
			r.Start[d], r.Step[d], r.Count[d] = 0, 1, in.Array.Shape[d]
		case Scaled:
			a, b := lo[m.OutDim]*m.Num/m.Den, hi[m.OutDim]*m.Num/m.Den
			r.Start[d], r.Step[d], r.Count[d] = a, 1, b-a
		case BlockIndex:
			r.Start[d], r.Step[d], r.Count[d] = block[m.OutDim], 1, 1
		case Ranges:
			rg := m.Ranges[block[m.OutDim]]
			r.Start[d], r.Step[d], r.Count[d] = rg[0], 1, rg[1]-rg[0]
		}
	}
	return r
}

// Clip limits a region to an array of the given shape along dimensions
// with a positive step. It returns the clipped region, the offset of its
// first element within the unclipped region per dimension, and false when
// nothing is left.
func (r Region) Clip(shape []int) (Region, []int, bool) {
	n := len(r.Count)
	c := Region{Start: append([]int{}, r.Start...), Step: append([]int{}, r.Step...), Count: append([]int{}, r.Count...)}
	origin := make([]int, n)
	for d := range n {
		if r.Step[d] <= 0 {
			continue
		}
		// Indices i with 0 <= Start + Step·i < shape[d].
		lo := 0
		if r.Start[d] < 0 {
			lo = (-r.Start[d] + r.Step[d] - 1) / r.Step[d]
		}
		hi := r.Count[d]
		if last := r.Start[d] + r.Step[d]*(hi-1); hi > 0 && last >= shape[d] {
			hi = (shape[d] - r.Start[d] + r.Step[d] - 1) / r.Step[d]
		}
		if hi <= lo {
			return c, origin, false
		}
		origin[d] = lo
		c.Start[d] = r.Start[d] + r.Step[d]*lo
		c.Count[d] = hi - lo
	}
	return c, origin, true
}

// MaxInputRegionBytes returns the bytes of the largest region of input i
// that any task reads at one step.
func (op *Op) MaxInputRegionBytes(i int) int64 {
	in := op.Inputs[i]
	out := op.Output
	n := int64(in.Array.DType.Size())
	for d, m := range in.Dims {
		switch m.Kind {
		case Affine:
			if m.Step != 0 {
				n *= int64(op.maxOutExtent(m.OutDim))
			}
		case Blocks:
			n *= int64(m.maxBlock(in.Array, d))
		case Full:
			n *= int64(in.Array.Shape[d])
		case Scaled:
			n *= int64((MaxChunk(out.Chunks[m.OutDim])*m.Num + m.Den - 1) / m.Den)
		case Ranges:
			n *= int64(maxRange(m.Ranges))
		}
	}
	return n
}

func maxRange(rs [][2]int) int {
	m := 0
	for _, r := range rs {
		m = max(m, r[1]-r[0])
	}
	return m
}

// rangesAreBlocks reports whether per-block ranges are exactly the blocks
// of chunks, in order.
func rangesAreBlocks(rs [][2]int, chunks []int) bool {
	if len(rs) != len(chunks) {
		return false
	}
	off := 0
	for b, c := range chunks {
		if rs[b] != [2]int{off, off + c} {
			return false
		}
		off += c
	}
	return true
}

// check verifies that the op's maps fit its arrays, so that computing
// regions cannot go out of range.
func (op *Op) check() error {
	nout := op.Output.NDim()
	if op.TaskBlocks != nil {
		bad := len(op.TaskBlocks) != nout
		for _, k := range op.TaskBlocks {
			bad = bad || k < 1
		}
		if bad {
			return fmt.Errorf("plan: %s has task blocks %v for %d dimensions (want one count >= 1 each)", op, op.TaskBlocks, nout)
		}
	}
	if op.Mirror {
		out := op.Output
		if nout < 2 || op.TaskBlocks != nil || out.Shape[nout-2] != out.Shape[nout-1] || !slices.Equal(out.Chunks[nout-2], out.Chunks[nout-1]) {
			return fmt.Errorf("plan: %s mirrors blocks of an output of shape %v and chunks %v (want its last two dimensions alike, one block a task)", op, out.Shape, out.Chunks)
		}
	}
	for i, in := range op.Inputs {
		if len(in.Dims) != in.Array.NDim() {
			return fmt.Errorf("plan: %s input %d has %d dimension maps for %d dimensions", op, i, len(in.Dims), in.Array.NDim())
		}
		for d, m := range in.Dims {
			bad := false
			switch m.Kind {
			case Affine:
				bad = m.Step != 0 && (m.OutDim < 0 || m.OutDim >= nout)
			case Const:
				bad = m.Index < 0 || m.Index >= in.Array.Shape[d]
			case Blocks:
				bad = m.OutDim >= nout || m.IterAxis < 0 || (m.OutDim >= 0 && m.Factor < 1)
				if m.Grid != nil {
					g := m.Grid
					bad = bad || len(g) < 2 || g[0] < 0 || g[len(g)-1] > in.Array.Shape[d]
					for b := 1; b < len(g) && !bad; b++ {
						bad = g[b] <= g[b-1]
					}
				}
			case Full:
				bad = m.OutDim >= nout
			case Scaled:
				bad = m.OutDim < 0 || m.OutDim >= nout || m.Num < 1 || m.Den < 1
			case BlockIndex:
				bad = m.OutDim < 0 || m.OutDim >= nout
			case Ranges:
				bad = m.OutDim < 0 || m.OutDim >= nout || len(m.Ranges) != len(op.Output.Chunks[m.OutDim])
				for _, r := range m.Ranges {
					bad = bad || r[0] < 0 || r[1] < r[0] || r[1] > in.Array.Shape[d]
				}
			default:
				bad = true
			}
			if bad {
				return fmt.Errorf("plan: %s input %d has an invalid map %+v for dimension %d", op, i, m, d)
			}
		}
	}
	return nil
}

// Check verifies that the op's maps fit its arrays, for builders of ops
// from untrusted descriptions (Build checks every op again).
func (op *Op) Check() error { return op.check() }

// InputArrays returns the arrays an op reads, without repeats.
func (op *Op) InputArrays() []*Array {
	var out []*Array
	seen := map[*Array]bool{}
	for _, in := range op.Inputs {
		if !seen[in.Array] {
			seen[in.Array] = true
			out = append(out, in.Array)
		}
	}
	return out
}

func (op *Op) String() string { return fmt.Sprintf("%s (%s)", op.Name, op.Func) }

// FoldsCast reports whether a reduce kernel folding with reduce reads its
// operand e straight from the input: e is a cast of a plain input that the
// reduction accumulates in the wider dtype as it goes (a sum or product of
// integers or booleans in int64 or uint64), so no buffer holds the cast
// operand. The kernels' Widens is the same rule.
func FoldsCast(reduce string, e *Expr) bool {
	if e.Op != "astype" || len(e.Args) != 1 || e.Args[0].Op != "input" {
		return false
	}
	switch reduce {
	case "sum", "prod", "nansum", "nanprod":
	default:
		return false
	}
	from := e.Args[0].DType
	return (e.DType == zarr.Int64 || e.DType == zarr.Uint64) && from != e.DType &&
		from >= zarr.Bool && from <= zarr.Uint64 // bool and the integer types
}
