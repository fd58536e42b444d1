package kernels_test

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cubego/cubego/engine"
	"github.com/cubego/cubego/ops/internal/kernels"
	"github.com/cubego/cubego/zarr"
)

// TestKernelRates prints the best-of-reps throughput of the kernels named
// in $CUBEGO_KERNEL_RATES (space-separated BenchmarkBinary, BenchmarkUnary
// and BenchmarkReduce names, e.g. Binary/less/float32/contiguous,
// Unary/exp/float64, Reduce/max/int32/axis0) on 1M-element chunks, one
// line "RATE name Melem/s" each: benchmarks/kernels.py --best. The fastest
// of many short runs is what the kernel does when it has the core, which a
// busy machine's mean hides. Skipped without the variable.
//
// Operands and results are chunk buffers from engine.NewAllocator, the
// memory the engine's kernels work on: from 4 MiB up their whole 2 MiB
// pages are advised to be huge pages, as numpy's arrays of 4 MiB or more
// are (engine/hugemem_linux.go), so both sides of benchmarks/kernels.py
// pay the same for the TLB.
func TestKernelRates(t *testing.T) {
	names := strings.Fields(os.Getenv("CUBEGO_KERNEL_RATES"))
	if len(names) == 0 {
		t.Skip("CUBEGO_KERNEL_RATES not set")
	}
	reps := 40
	if v, err := strconv.Atoi(os.Getenv("CUBEGO_KERNEL_REPS")); err == nil && v > 0 {
		reps = v
	}
	const side = 1024
	sq := []int{side, side}
	alloc := engine.NewAllocator()
	chunk := func(dt zarr.DataType, n int) []byte { // benchData in a chunk buffer
		return append(alloc.Allocate(n * dt.Size())[:0], kernels.BenchData(dt, n)...)
	}
	for _, name := range names {
		p := strings.Split(name, "/")
		if len(p) < 3 {
			t.Fatalf("kernel %q: want kind/op/dtype[/variant]", name)
		}
		dt, err := zarr.ParseDataType(p[2])
		if err != nil {
			t.Fatalf("kernel %q: %v", name, err)
		}
		var f func() error
		switch p[0] {
		case "Binary":
			out := dt
			if slices.Contains([]string{"less", "less_equal", "greater", "greater_equal", "equal", "not_equal"}, p[1]) {
				out = zarr.Bool
			}
			x, y := kernels.Contiguous(dt, chunk(dt, kernels.BenchN), sq), kernels.Contiguous(dt, chunk(dt, kernels.BenchN), sq)
			d := kernels.Contiguous(out, alloc.Allocate(kernels.BenchN*out.Size()), sq)
			f = func() error { return kernels.Binary(p[1], d, x, y) }
		case "Unary":
			x := kernels.Contiguous(dt, chunk(dt, kernels.BenchN), []int{kernels.BenchN})
			d := kernels.Contiguous(dt, alloc.Allocate(kernels.BenchN*dt.Size()), []int{kernels.BenchN})
			f = func() error { return kernels.Unary(p[1], d, x) }
		case "Reduce":
			axes := map[string][]int{"all": {0, 1}, "axis0": {0}, "axis1": {1}}[p[len(p)-1]]
			if axes == nil {
				t.Fatalf("kernel %q: reduce over all, axis0 or axis1", name)
			}
			x := kernels.Contiguous(dt, chunk(dt, kernels.BenchN), sq)
			accShape := []int{side, side}
			for _, a := range axes {
				accShape[a] = 1
			}
			acc := kernels.Contiguous(dt, alloc.Allocate(accShape[0]*accShape[1]*dt.Size()), accShape)
			f = func() error { return kernels.Reduce(p[1], acc, x, axes, true) }
		default:
			t.Fatalf("kernel %q: kind Binary, Unary or Reduce", name)
		}
		best := time.Duration(math.MaxInt64)
		for range reps {
			start := time.Now()
			if err := f(); err != nil {
				t.Fatalf("kernel %q: %v", name, err)
			}
			best = min(best, time.Since(start))
		}
		fmt.Printf("RATE %s %.1f\n", name, kernels.BenchN/best.Seconds()/1e6)
	}
}
