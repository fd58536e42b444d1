package plan_test

import (
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
)

// buildMean plans mean(negative(x)) over a 4c×c float64 array in c×c
// blocks, with intermediates under workDir, and returns the mean's op.
func buildMean(t *testing.T, workDir string, allowed int64, c int) *plan.OpInfo {
	t.Helper()
	spec := &plan.Spec{WorkDir: workDir, AllowedMem: allowed, ReservedMem: 10_000_000}
	x, err := ops.Random([]int{4 * c, c}, ops.Float64, 1, []int{c, c}, spec)
	if err != nil {
		t.Fatal(err)
	}
	y, err := ops.Elemwise("negative", ops.Operand{Array: x})
	if err != nil {
		t.Fatal(err)
	}
	m, err := ops.Reduce("mean", y, []int{0}, false, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{m})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Ops) != 2 || p.Ops[1].Op.Func != "mean" {
		t.Fatalf("want negative then mean, got %d ops", len(p.Ops))
	}
	return p.Ops[1]
}

// A reduction round that streams stored blocks from a store the page
// cache does not back (here mem://; object stores alike) reads ahead, as
// many steps as fit allowed_mem, and its projection counts what that
// holds.
func TestReadAheadIsProjected(t *testing.T) {
	build := func(allowed int64, chunk ...int) *plan.OpInfo {
		c := 500
		if len(chunk) > 0 {
			c = chunk[0]
		}
		return buildMean(t, "mem://readahead", allowed, c)
	}
	const chunk = 500 * 500 * 8
	roomy, mid, tight := build(100_000_000), build(21_000_000), build(19_000_000)
	if roomy.Op.ReadAheadDepth() != 2 || roomy.ProjectedMem != plan.ProjectedMem(roomy.Op) {
		t.Fatalf("with room to spare the mean should read 2 steps ahead (%d, %d)", roomy.Op.ReadAheadDepth(), roomy.ProjectedMem)
	}
	if mid.Op.ReadAheadDepth() != 1 {
		t.Fatalf("a mean projected at %d should read 1 step ahead within 21 MB", mid.ProjectedMem)
	}
	if tight.Op.ReadsAhead() {
		t.Fatalf("a mean projected at %d should not read ahead within 19 MB", tight.ProjectedMem)
	}
	if d := mid.ProjectedMem - tight.ProjectedMem; d != chunk {
		t.Fatalf("one step ahead adds %d bytes to the projection, want one %d-byte chunk", d, chunk)
	}
	// The second step ahead: its buffer and its read's encoded copy.
	if d := roomy.ProjectedMem - mid.ProjectedMem; d != 2*chunk {
		t.Fatalf("the second step ahead adds %d bytes to the projection, want two %d-byte chunks", d, chunk)
	}
	// Chunks over ReadAheadSecondMax (72 MB here) are read one step ahead.
	if big := build(2_000_000_000, 3000); big.Op.ReadAheadDepth() != 1 {
		t.Fatalf("a mean of 72 MB chunks reads %d steps ahead, want 1", big.Op.ReadAheadDepth())
	}
	// Steps over ReadAheadMaxBytes (162 MB here) do not read ahead.
	if huge := build(4_000_000_000, 4500); huge.Op.ReadsAhead() {
		t.Fatalf("a mean of 162 MB chunks reads %d steps ahead, want 0", huge.Op.ReadAheadDepth())
	}
	// The first op generates its input in place and takes one step: no
	// read-ahead.
	spec := &plan.Spec{AllowedMem: 100_000_000, ReservedMem: 10_000_000}
	x, _ := ops.Random([]int{2000, 2000}, ops.Float64, 1, []int{500, 500}, spec)
	s, err := ops.Reduce("sum", x, []int{0}, false, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{s})
	if err != nil {
		t.Fatal(err)
	}
	if p.Ops[0].Op.ReadsAhead() {
		t.Fatal("a reduction of a virtual input should not read ahead")
	}
}

// Inputs on local disk (an empty work dir is the temporary directory) are
// prefetched into the page cache instead of read ahead into buffers: the
// projection holds no read-ahead buffers, and the prefetch depth follows
// the step's stored bytes.
func TestLocalInputsPrefetchInsteadOfReadingAhead(t *testing.T) {
	const chunk = 500 * 500 * 8
	for _, dir := range []string{"", t.TempDir(), "file://" + t.TempDir()} {
		local, remote := buildMean(t, dir, 100_000_000, 500), buildMean(t, "mem://prefetch", 100_000_000, 500)
		if local.Op.ReadsAhead() {
			t.Fatalf("work dir %q: a local input should not be read ahead into buffers (depth %d)", dir, local.Op.ReadAheadDepth())
		}
		// 4 steps per task: 3 ahead at most.
		if d := local.Op.PrefetchDepth(); d != 3 {
			t.Fatalf("work dir %q: prefetch depth %d, want 3", dir, d)
		}
		if remote.Op.PrefetchDepth() != 0 {
			t.Fatal("an input on mem:// should not be prefetched")
		}
		// The remote projection holds two steps' buffers and one read's
		// encoded copy more.
		if d := remote.ProjectedMem - local.ProjectedMem; d != 3*chunk {
			t.Fatalf("work dir %q: local projection %d is %d below the read-ahead one, want %d", dir, local.ProjectedMem, d, 3*chunk)
		}
	}
	// Steps of 72 MB: PrefetchMaxBytes (256 MB) holds 3 of them.
	if d := buildMean(t, "", 2_000_000_000, 3000).Op.PrefetchDepth(); d != 3 {
		t.Fatalf("72 MB steps prefetch %d ahead, want 3", d)
	}
	// Steps of 162 MB: one.
	if d := buildMean(t, "", 4_000_000_000, 4500).Op.PrefetchDepth(); d != 1 {
		t.Fatalf("162 MB steps prefetch %d ahead, want 1", d)
	}
	// A virtual input is neither prefetched nor read ahead.
	spec := &plan.Spec{AllowedMem: 100_000_000, ReservedMem: 10_000_000}
	x, _ := ops.Random([]int{2000, 2000}, ops.Float64, 1, []int{500, 500}, spec)
	s, err := ops.Reduce("sum", x, []int{0}, false, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{s})
	if err != nil {
		t.Fatal(err)
	}
	if p.Ops[0].Op.PrefetchDepth() != 0 {
		t.Fatal("a reduction of a virtual input should not prefetch")
	}
}
