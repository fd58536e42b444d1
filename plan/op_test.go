package plan

import (
	"errors"
	"reflect"
	"testing"

	"github.com/cubego/cubego/zarr"
)

func testArray(shape []int, chunks [][]int) *Array {
	return NewArray(shape, zarr.Float64, chunks, &Spec{AllowedMem: 1 << 30, ReservedMem: 0})
}

func TestInputRegionAffine(t *testing.T) {
	// out = x[1:8:2] with x of 10 elements in chunks of 4, out in chunks of 2.
	x := testArray([]int{10}, [][]int{{4, 4, 2}})
	out := testArray([]int{4}, [][]int{{2, 2}})
	op := NewOp("getitem", "blockwise", []Input{{Array: x, Dims: []DimMap{{Kind: Affine, OutDim: 0, Start: 1, Step: 2}}}}, out, Kernel{Core: "map"})
	r := op.InputRegion(0, []int{1}, nil)
	if !reflect.DeepEqual(r, Region{Start: []int{5}, Step: []int{2}, Count: []int{2}}) {
		t.Errorf("got %+v", r)
	}
}

func TestInputRegionBlocks(t *testing.T) {
	// A reduction round over axis 0 with fan-in 2 of x (5 blocks of 2 rows).
	x := testArray([]int{9, 3}, [][]int{{2, 2, 2, 2, 1}, {3}})
	out := testArray([]int{3, 3}, [][]int{{1, 1, 1}, {3}})
	op := NewOp("sum", "blockwise", []Input{{Array: x, Dims: []DimMap{
		{Kind: Blocks, OutDim: 0, Factor: 2}, {Kind: Affine, OutDim: 1, Step: 1}}}}, out, Kernel{Core: "reduce"})
	if got := op.IterShape([]int{2, 0}); !reflect.DeepEqual(got, []int{1}) {
		t.Errorf("last group has %v steps, want [1]", got)
	}
	if got := op.IterShape([]int{0, 0}); !reflect.DeepEqual(got, []int{2}) {
		t.Errorf("first group has %v steps, want [2]", got)
	}
	r := op.InputRegion(0, []int{1, 0}, []int{1})
	if !reflect.DeepEqual(r, Region{Start: []int{6, 0}, Step: []int{1, 1}, Count: []int{2, 3}}) {
		t.Errorf("got %+v", r)
	}
	if got := op.MaxInputRegionBytes(0); got != 2*3*8 {
		t.Errorf("max region %d bytes, want 48", got)
	}
}

func TestInputRegionBlocksGrid(t *testing.T) {
	// The same round over x stored in chunks of 3 rows, iterating over the
	// 2-row blocks of a rechunk fused into it (Grid): each step assembles
	// its block from the stored chunks it overlaps.
	x := testArray([]int{9, 3}, [][]int{{3, 3, 3}, {3}})
	out := testArray([]int{3, 3}, [][]int{{1, 1, 1}, {3}})
	grid := GridOf([]int{2, 2, 2, 2, 1})
	op := NewOp("sum", "blockwise", []Input{{Array: x, Dims: []DimMap{
		{Kind: Blocks, OutDim: 0, Factor: 2, Grid: grid}, {Kind: Affine, OutDim: 1, Step: 1}}}}, out, Kernel{Core: "reduce"})
	if err := op.check(); err != nil {
		t.Fatal(err)
	}
	if got := op.IterShape([]int{2, 0}); !reflect.DeepEqual(got, []int{1}) {
		t.Errorf("last group has %v steps, want [1]", got)
	}
	r := op.InputRegion(0, []int{1, 0}, []int{1})
	if !reflect.DeepEqual(r, Region{Start: []int{6, 0}, Step: []int{1, 1}, Count: []int{2, 3}}) {
		t.Errorf("got %+v", r)
	}
	if op.InputAligned(0) {
		t.Error("a grid other than the stored chunks reads misaligned regions")
	}
	if got := InputBlocks(op); got != 2 {
		t.Errorf("a step overlaps at most %d stored chunks, want 2", got)
	}
	for _, bad := range [][]int{{0, 2, 9, 8, 9}, {-1, 4}, {0, 4, 10}, {0, 4, 4, 9}, {0}} {
		op.Inputs[0].Dims[0].Grid = bad
		if op.check() == nil {
			t.Errorf("grid %v accepted for a dimension of 9", bad)
		}
	}
}

func TestInputRegionPartialGrid(t *testing.T) {
	// A round over the slice x[3:9] (a getitem fused into it): the grid
	// covers part of the dimension, on the stored chunks or across them.
	x := testArray([]int{12, 3}, [][]int{{3, 3, 3, 3}, {3}})
	out := testArray([]int{1, 3}, [][]int{{1}, {3}})
	op := NewOp("sum", "blockwise", []Input{{Array: x, Dims: []DimMap{
		{Kind: Blocks, OutDim: -1, Grid: []int{3, 6, 9}}, {Kind: Affine, OutDim: 1, Step: 1}}}}, out, Kernel{Core: "reduce"})
	if err := op.check(); err != nil {
		t.Fatal(err)
	}
	if got := op.IterShape([]int{0, 0}); !reflect.DeepEqual(got, []int{2}) {
		t.Errorf("%v steps, want [2]", got)
	}
	r := op.InputRegion(0, []int{0, 0}, []int{1})
	if !reflect.DeepEqual(r, Region{Start: []int{6, 0}, Step: []int{1, 1}, Count: []int{3, 3}}) {
		t.Errorf("got %+v", r)
	}
	if !op.InputAligned(0) {
		t.Error("each block of grid [3 6 9] is a stored chunk: aligned")
	}
	if op.ReadsWholeChunks(0) {
		t.Error("a grid over part of the dimension does not read the array once in all")
	}
	if got := op.nbytesRead(0); got != 6*3*8 {
		t.Errorf("reads %d bytes, want the slice's %d", got, 6*3*8)
	}
	for _, g := range [][]int{{4, 7, 9}, {3, 9}, {3, 6, 8}} {
		op.Inputs[0].Dims[0].Grid = g
		if op.InputAligned(0) {
			t.Errorf("grid %v across stored chunks counted as aligned", g)
		}
	}
}

func TestProjectedMemAndValidate(t *testing.T) {
	spec := &Spec{AllowedMem: 1000, ReservedMem: 100}
	x := NewArray([]int{100}, zarr.Float64, [][]int{{10, 10, 10, 10, 10, 10, 10, 10, 10, 10}}, spec)
	x.Source = &ZarrRef{Store: "mem://x"}
	out := NewArray([]int{100}, zarr.Float64, x.Chunks, spec)
	op := NewOp("negative", "blockwise", []Input{{Array: x, Dims: Identity(1)}}, out,
		Kernel{Core: "map", Exprs: []*Expr{{Op: "negative", DType: zarr.Float64, Args: []*Expr{InputExpr(0, zarr.Float64)}}}})
	// reserved 100 + input chunk 80 × 2 + output 80 × 2.
	if got := ProjectedMem(op); got != 100+160+160 {
		t.Errorf("projected %d, want 420", got)
	}
	p, err := Build([]*Array{out})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Errorf("validate: %v", err)
	}
	spec.AllowedMem = 400
	p, _ = Build([]*Array{out})
	var mem *MemoryExceededError
	if err := p.Validate(); !errors.As(err, &mem) || mem.Projected != 420 || mem.Allowed != 400 {
		t.Errorf("validate gave %v, want a MemoryExceededError of 420 > 400", err)
	}
}

func TestBuildRejectsMixedSpecs(t *testing.T) {
	a := NewArray([]int{2}, zarr.Float64, [][]int{{2}}, &Spec{AllowedMem: 1000})
	b := NewArray([]int{2}, zarr.Float64, [][]int{{2}}, &Spec{AllowedMem: 2000})
	a.Generator = &Generator{Kind: "full"}
	b.Generator = &Generator{Kind: "full"}
	out := NewArray([]int{2}, zarr.Float64, [][]int{{2}}, a.Spec)
	NewOp("add", "blockwise", []Input{{Array: a, Dims: Identity(1)}, {Array: b, Dims: Identity(1)}}, out, Kernel{Core: "map"})
	if _, err := Build([]*Array{out}); !errors.Is(err, ErrValue) {
		t.Errorf("got %v, want a value error about specs", err)
	}
}

func TestExprTemporaries(t *testing.T) {
	in := InputExpr(0, zarr.Float64)
	neg := &Expr{Op: "negative", Args: []*Expr{in}}
	add := &Expr{Op: "add", Args: []*Expr{neg, &Expr{Op: "multiply", Args: []*Expr{in, neg}}}}
	if got := neg.Temporaries(); got != 0 {
		t.Errorf("negative(x) needs %d temporaries, want 0", got)
	}
	// add(neg(x), mul(x, neg(x))): neg result live (1), then mul needs its
	// own result and a temporary for its neg (2) → 3.
	if got := add.Temporaries(); got != 3 {
		t.Errorf("got %d temporaries, want 3", got)
	}
}
