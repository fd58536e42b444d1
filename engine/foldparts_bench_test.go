package engine

import (
	"context"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// BenchmarkFoldPartsCached runs W4's shape at a 1/16 scale: the sum of a
// (11584, 11584) float64 array stored in column chunks of 362, rechunked
// to rows of 362, so each task folds 1 MiB bands of every chunk (1,024
// parts a run), read from the page cache. It reports the wall time per
// part: the band's copy out of the page cache, its sum, and the engine's
// own work around them.
func BenchmarkFoldPartsCached(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	n, c := 11584, 362
	v := make([]float64, n*n)
	for i := range v {
		v[i] = float64(i%1000) - 499.5
	}
	storeRaw(b, dir, "x", zarr.Float64, []int{n, n}, []int{n, c}, v)
	v = nil
	// As W4 at L: allowed_mem 16 times a chunk, so the rechunk is one
	// stage that fuses into the sum.
	spec := &plan.Spec{WorkDir: b.TempDir(), AllowedMem: 16 * int64(n*c*8), ReservedMem: 1 << 20}
	for b.Loop() {
		x, err := ops.FromZarr(ctx, dir, "x", nil, spec, nil)
		if err != nil {
			b.Fatal(err)
		}
		y, err := ops.Rechunk(x, []int{c, n})
		if err != nil {
			b.Fatal(err)
		}
		out, err := ops.Reduce("sum", y, nil, false, nil, 0)
		if err != nil {
			b.Fatal(err)
		}
		p, err := plan.Build([]*plan.Array{out})
		if err != nil {
			b.Fatal(err)
		}
		p.Fuse()
		if len(p.Ops) != 2 {
			b.Fatalf("%d ops, want the fused rechunk and sum and the final sum", len(p.Ops))
		}
		res, err := Execute(ctx, p, Options{MaxWorkers: 2}, nil)
		if err != nil {
			b.Fatal(err)
		}
		res.Close()
	}
	parts := (n + c - 1) / c * ((n + c - 1) / c)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(parts), "ns/part")
}
