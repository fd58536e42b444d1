package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cubego/cubego/engine"
	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
)

// BenchmarkManySmallChunks measures the engine's cost per task: the sum of
// ones(n×n)+1 in c×c chunks, fused as compute() fuses it (W7 of benchmarks/
// is n = 20000, c = 500), whose kernels are cheap next to scheduling,
// admission and intermediate I/O.
func BenchmarkManySmallChunks(b *testing.B) {
	for _, c := range []struct{ n, chunk int }{{20000, 500}, {20000, 250}, {20000, 125}} {
		n := c.n
		b.Run(fmt.Sprintf("n=%d/chunk=%d", n, c.chunk), func(b *testing.B) {
			spec := &plan.Spec{WorkDir: b.TempDir(), AllowedMem: 200_000_000, ReservedMem: 10_000_000}
			x, err := ops.Full([]int{n, n}, ops.Float64, plan.Scalar{Kind: 'f', F: 1}, []any{c.chunk, c.chunk}, spec)
			if err != nil {
				b.Fatal(err)
			}
			y, err := ops.Elemwise("add", ops.Operand{Array: x}, ops.Operand{Scalar: &plan.Scalar{Kind: 'i', I: 1}})
			if err != nil {
				b.Fatal(err)
			}
			s, err := ops.Reduce("sum", y, nil, false, nil, 0)
			if err != nil {
				b.Fatal(err)
			}
			p, err := plan.Build([]*plan.Array{s})
			if err != nil {
				b.Fatal(err)
			}
			p.Fuse()
			tasks := p.NumTasks()
			b.ResetTimer()
			for range b.N {
				res, err := engine.Execute(context.Background(), p, engine.Options{}, nil)
				if err != nil {
					b.Fatal(err)
				}
				res.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(int64(b.N)*tasks), "µs/task")
		})
	}
}
