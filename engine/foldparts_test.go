//go:build linux

package engine

import (
	"context"
	"math"
	"sync"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// TestFoldPartsTileTheRegion: the parts of a swap-axes band tile it
// exactly, each inside one chunk along the folded dimensions, at most
// foldPartBytes when chunks are read in part and whole chunks otherwise;
// small regions and regions in one chunk are not cut.
func TestFoldPartsTileTheRegion(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	shape, chunks := []int{64, 60}, []int{64, 7}
	storeRaw(t, dir, "x", zarr.Float64, shape, chunks, make([]float64, 64*60))
	x, err := ops.FromZarr(ctx, dir, "x", nil, testSpec(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !x.PartialReads {
		t.Fatal("a raw local array should read its chunks in part")
	}
	defer func(a, b int64) { foldPartsMinBytes, foldPartBytes = a, b }(foldPartsMinBytes, foldPartBytes)
	foldPartsMinBytes, foldPartBytes = 0, 200
	band := plan.Region{Start: []int{5, 0}, Step: []int{1, 1}, Count: []int{11, 60}}
	for _, c := range []struct {
		folded  []bool
		partial bool
		parts   int
	}{
		// 9 chunks along dim 1; each 11x7 piece (616 B) in bands of 3 rows (168 B),
		{[]bool{true, true}, true, 8*4 + 2}, // the 4-column edge piece (352 B) in bands of 6 rows
		{[]bool{true, true}, false, 9},
		// Dim 1 kept: not cut along it; dim 0 in one chunk, cut into bands
		// of rows when read in part (a row of 60 is 480 B: one row each).
		{[]bool{true, false}, true, 11},
		{[]bool{true, false}, false, 0},
		{[]bool{false, true}, false, 9},
	} {
		a := x
		a.PartialReads = c.partial
		parts := foldParts(a, band, c.folded)
		if len(parts) != c.parts {
			t.Fatalf("folded %v partial %v: %d parts, want %d", c.folded, c.partial, len(parts), c.parts)
		}
		if parts == nil {
			continue
		}
		seen := make([]int, 11*60)
		for _, p := range parts {
			for d := range 2 {
				if c.folded[d] && a.BlockOf(d, p.Start[d]) != a.BlockOf(d, p.Start[d]+p.Count[d]-1) {
					t.Fatalf("part %v crosses a chunk along folded dimension %d", p, d)
				}
			}
			if c.partial && p.Size()*8 > foldPartBytes && p.Count[0] > 1 {
				t.Fatalf("part %v: %d bytes, more than %d", p, p.Size()*8, foldPartBytes)
			}
			for i := p.Start[0]; i < p.Start[0]+p.Count[0]; i++ {
				for j := p.Start[1]; j < p.Start[1]+p.Count[1]; j++ {
					seen[(i-5)*60+j]++
				}
			}
		}
		for k, n := range seen {
			if n != 1 {
				t.Fatalf("folded %v partial %v: element %d of the band in %d parts", c.folded, c.partial, k, n)
			}
		}
	}
	x.PartialReads = true
	foldPartsMinBytes = 11*60*8 + 1
	if parts := foldParts(x, band, []bool{true, true}); parts != nil {
		t.Fatalf("a region under foldPartsMinBytes was cut into %d parts", len(parts))
	}
	foldPartsMinBytes = 0
	one := plan.Region{Start: []int{0, 7}, Step: []int{1, 1}, Count: []int{64, 7}}
	x.PartialReads = false
	if parts := foldParts(x, one, []bool{true, true}); parts != nil {
		t.Fatalf("a whole chunk read whole was cut into %d parts", len(parts))
	}
}

// TestFoldPartsResults: reductions of a swap-axes rechunk (one op reading
// bands of the source's chunks in part) give the same values folded in
// parts as folded whole, exactly for min and max (NaNs included), to the
// last bits for sums; and they do fold in parts.
func TestFoldPartsResults(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// (400, 200) chunks, swapped to (200, 2000): a 200-row band of a chunk
	// is a 320 kB run, and the whole array does not fit the budget, so one
	// op reads the bands in part.
	n, m, c := 400, 2000, 200
	v := make([]float64, n*m)
	for i := range v {
		v[i] = float64((i*7919)%1009) - 504.5
	}
	v[m*137+301] = math.NaN() // in row 137: column sums and row maxes of the others are numbers
	storeRaw(t, dir, "x", zarr.Float64, []int{n, m}, []int{n, c}, v)
	spec := testSpec(t)
	spec.AllowedMem = 6 << 20
	// Each reduction in a plan of its own, so the rechunk fuses into it.
	reductions := []struct {
		fn   string
		axes []int
	}{{"sum", nil}, {"max", nil}, {"min", nil}, {"sum", []int{0}}, {"max", []int{1}}}
	run := func() [][]float64 {
		must := mustArray(t)
		var got [][]float64
		for _, r := range reductions {
			x, err := ops.FromZarr(ctx, dir, "x", nil, spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			y := must(ops.Rechunk(x, []int{c, m}))
			out := must(ops.Reduce(r.fn, y, r.axes, false, nil, 0))
			p, err := plan.Build([]*plan.Array{out})
			if err != nil {
				t.Fatal(err)
			}
			p.Fuse()
			res, err := Execute(ctx, p, Options{MaxWorkers: 2}, nil)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, out.NBytes())
			if err := res.Read(ctx, 0, buf); err != nil {
				t.Fatal(err)
			}
			res.Close()
			got = append(got, toFloats(out.DType, buf))
		}
		return got
	}
	defer func(a, b int64) { foldPartsMinBytes, foldPartBytes = a, b }(foldPartsMinBytes, foldPartBytes)
	foldPartsMinBytes = math.MaxInt64
	whole := run()
	foldPartsMinBytes, foldPartBytes = 0, 64<<10
	var mu sync.Mutex
	parted := 0
	foldPartsHook = func(op *plan.Op, parts int) {
		mu.Lock()
		defer mu.Unlock()
		parted += parts
	}
	defer func() { foldPartsHook = nil }()
	parts := run()
	if parted == 0 {
		t.Fatal("no task folded its steps in parts")
	}
	for o := range whole {
		for i := range whole[o] {
			w, p := whole[o][i], parts[o][i]
			same := w == p || math.IsNaN(w) && math.IsNaN(p) || math.Abs(w-p) <= 1e-12*math.Max(1, math.Abs(w))*float64(n)
			if !same {
				t.Fatalf("output %d element %d: %v folded in parts, %v whole", o, i, p, w)
			}
		}
	}
	if !math.IsNaN(whole[0][0]) || !math.IsNaN(whole[1][0]) || !math.IsNaN(whole[2][0]) {
		t.Fatalf("sum %v, max %v, min %v of data with a NaN", whole[0][0], whole[1][0], whole[2][0])
	}
}
