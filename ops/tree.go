package ops

import (
	"math"
	"slices"

	"github.com/cubego/cubego/plan"
)

// tree is a tree reduction to build: a first round folding x's blocks into
// partial results, then rounds combining partial results until one is
// left per output element.
//
// Partial results have extent 1 per task along each reduced axis (one
// element per group of folded blocks, in chunks of 1). A plain reduction's
// partial results are values of dtype partial; a record reduction's
// (fields > 0) are records of that many fields of dtype partial, held
// along a leading axis of the partial-result arrays (see
// kernels.ArgFold). The last round writes the result, of dtype out.
type tree struct {
	fn       string // the ops' Func
	kernel   string // the rounds' Kernel.Reduce
	x        *plan.Array
	axes     []int
	keepdims bool
	operand  *plan.Expr // the first round's folded operand, over input 0 (x)
	partial  DType
	fields   int
	out      DType
	post     *plan.Expr // a plain reduction's finishing expression
	// scratch is, for a record reduction, how many record buffers the
	// last round holds besides its output: the accumulator, and for the
	// moments a block's own records.
	scratch    int
	correction float64
	split      Split
}

func (t *tree) build() (*plan.Array, error) {
	first, err := t.split.fanIn(t.axes, t.x.NDim())
	if err != nil {
		return nil, err
	}
	cur := t.x
	recIn := false
	for round := 0; ; round++ {
		off := 0
		if recIn {
			off = 1
		}
		nb := cur.NumBlocks()
		fan, region := first, false
		if round > 0 && !t.split.Given() {
			// Read the partial results at once when more fit the budget
			// than a streaming task would fold.
			if f := t.memoryFanIn(cur, recIn); f != nil {
				held, streamed := 1, 1
				for i, a := range t.axes {
					held *= f[i]
					streamed *= min(first[i], nb[a+off])
				}
				if held >= streamed {
					fan, region = f, true
				}
			}
		}
		last := true
		for i, a := range t.axes {
			if (nb[a+off]+fan[i]-1)/fan[i] > 1 {
				last = false
			}
		}
		op := t.round(cur, recIn, fan, region, last, false)
		cur = op.Output
		if last {
			return cur, nil
		}
		recIn = t.fields > 0
	}
}

// round returns the op of one round over x (partial results after the
// first round) folding fan[i] blocks along axes[i]: streamed one block at
// a time, or with region all at once. A trial op is not linked into the
// plan (for projecting memory).
func (t *tree) round(x *plan.Array, recIn bool, fan []int, region, last, trial bool) *plan.Op {
	nb := x.NumBlocks()
	off := 0
	var shape []int
	var chunks [][]int
	dims := make([]plan.DimMap, x.NDim())
	recOut := t.fields > 0 && !last
	if recOut {
		shape = append(shape, t.fields)
		chunks = append(chunks, []int{t.fields})
	}
	if recIn {
		off = 1
		outDim := -1
		if recOut {
			outDim = 0
		}
		dims[0] = plan.DimMap{Kind: plan.Full, OutDim: outDim, Frame: 0}
	}
	squeeze := last && !t.keepdims
	var kAxes []int
	iter := 0
	for d := off; d < x.NDim(); d++ {
		i := slices.Index(t.axes, d-off)
		if i < 0 {
			dims[d] = plan.DimMap{Kind: plan.Affine, OutDim: len(shape), Step: 1, Frame: d}
			shape = append(shape, x.Shape[d])
			chunks = append(chunks, x.Chunks[d])
			continue
		}
		kAxes = append(kAxes, d)
		groups := (nb[d] + fan[i] - 1) / fan[i]
		outDim := -1
		if !squeeze {
			outDim = len(shape)
			shape = append(shape, groups)
			chunks = append(chunks, unitBlocks(groups)) // groups <= nb[d]: no more blocks than x has
		}
		switch {
		case !region:
			if outDim < 0 {
				dims[d] = plan.DimMap{Kind: plan.Blocks, OutDim: -1, IterAxis: iter, Frame: d}
			} else {
				dims[d] = plan.DimMap{Kind: plan.Blocks, OutDim: outDim, Factor: fan[i], IterAxis: iter, Frame: d}
			}
			iter++
		case last:
			dims[d] = plan.DimMap{Kind: plan.Full, OutDim: outDim, Frame: d}
		default:
			// Partial results are one element per chunk: group g is the
			// elements [g·fan, (g+1)·fan).
			rs := make([][2]int, groups)
			for g := range rs {
				rs[g] = [2]int{g * fan[i], min((g+1)*fan[i], x.Shape[d])}
			}
			dims[d] = plan.DimMap{Kind: plan.Ranges, OutDim: outDim, Ranges: rs, Frame: d}
		}
	}
	dt := t.partial
	if last {
		dt = t.out
	}
	operand := plan.InputExpr(0, x.DType)
	if x == t.x {
		operand = t.operand
	}
	k := plan.Kernel{Core: "reduce", Reduce: t.kernel, Axes: kAxes, FrameNDim: x.NDim(), Exprs: []*plan.Expr{operand},
		RecordIn: recIn, RecordOut: recOut, Correction: t.correction}
	if last && t.post != nil {
		k.Exprs = append(k.Exprs, t.post)
	}
	inputs := []plan.Input{{Array: x, Dims: dims}}
	fn := t.fn
	var out *plan.Array
	var op *plan.Op
	if trial {
		out = &plan.Array{Shape: shape, DType: dt, Chunks: chunks, Spec: x.Spec}
		op = &plan.Op{Func: fn, Kind: "blockwise", Inputs: inputs, Output: out, Kernel: k}
		out.Op = op
	} else {
		out = plan.NewArray(shape, dt, chunks, x.Spec)
		op = plan.NewOp(fn, "blockwise", inputs, out, k)
	}
	if t.fields > 0 && last {
		op.ExtraMem = int64(t.scratch*t.fields*t.partial.Size()) * plan.Prod(out.ChunkShape())
	}
	return op
}

// memoryFanIn returns the fan-in per reduced axis of a round combining the
// partial results x, reading each task's group at once: as many partial
// results as fit allowed_mem besides the reserved memory, the output and
// the buffers the projection charges. It returns nil when fewer than two
// fit along an axis that has several (the round then streams).
func (t *tree) memoryFanIn(x *plan.Array, recIn bool) []int {
	off := 0
	if recIn {
		off = 1
	}
	counts := make([]int, len(t.axes))
	twos := make([]int, len(t.axes))
	fours := make([]int, len(t.axes))
	for i, a := range t.axes {
		counts[i] = x.Shape[a+off]
		twos[i], fours[i] = 2, 4
	}
	// The projection is affine in the number of partial results a task
	// reads (beyond one, which is read like an aligned chunk): measure it
	// at 2^naxes and 4^naxes per task.
	// (On a stand-in for x with at least 4 partial results per axis.)
	probe := &plan.Array{Shape: slices.Clone(x.Shape), DType: x.DType, Chunks: slices.Clone(x.Chunks), Spec: x.Spec}
	for _, a := range t.axes {
		n := max(x.Shape[a+off], 4)
		c, err := plan.RegularChunks(n, 1)
		if err != nil {
			return nil // more partial results than an array may have blocks: stream them
		}
		probe.Shape[a+off], probe.Chunks[a+off] = n, c
	}
	n2, n4 := int64(1)<<len(t.axes), int64(1)<<(2*len(t.axes))
	p2 := plan.ProjectedMem(t.round(probe, recIn, twos, true, false, true))
	p4 := plan.ProjectedMem(t.round(probe, recIn, fours, true, false, true))
	allowed := x.Spec.AllowedMem
	per := float64(p4-p2) / float64(n4-n2)
	if per <= 0 || p2 > allowed {
		return nil
	}
	total := n2 + int64(float64(allowed-p2)/per)
	for total >= 2 {
		fan, ok := distribute(total, counts)
		if !ok {
			return nil
		}
		last := true
		for i := range fan {
			if (counts[i]+fan[i]-1)/fan[i] > 1 {
				last = false
			}
		}
		if plan.ProjectedMem(t.round(x, recIn, fan, true, last, true)) <= allowed {
			return fan
		}
		total = total * 3 / 4
	}
	return nil
}

// distribute splits a fan-in of total partial results per task over axes
// with counts partial results each, as evenly as the counts allow; false
// when an axis with several partial results would get fewer than two.
func distribute(total int64, counts []int) ([]int, bool) {
	order := make([]int, len(counts))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return counts[a] - counts[b] })
	fan := make([]int, len(counts))
	rem := float64(total)
	for k, i := range order {
		left := float64(len(order) - k)
		f := int(math.Floor(math.Pow(rem, 1/left) + 1e-9))
		f = min(f, counts[i])
		if counts[i] > 1 && f < 2 {
			return nil, false
		}
		f = max(f, 1)
		fan[i] = f
		rem /= float64(f)
	}
	return fan, true
}

// unitBlocks returns n blocks of size 1, for an axis whose length is a
// number of blocks of another array (so no longer than that array's list).
func unitBlocks(n int) []int {
	out := make([]int, max(n, 1))
	for i := range out {
		out[i] = 1
	}
	if n == 0 {
		out[0] = 0
	}
	return out
}
