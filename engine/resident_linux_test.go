package engine

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
)

// cachedAtEnd finds a stored array whose last chunks are in the page cache
// and whose first are not, from mincore alone.
func TestCachedAtEndFindsThePageCachedEnd(t *testing.T) {
	defer func(n int64) { residencyMinBytes = n }(residencyMinBytes)
	residencyMinBytes = 0
	dir := t.TempDir()
	spec := testSpec(t)
	const rows = 32
	x := storedArray(t, spec, dir, "x", []int{rows, 2048}, []any{1, 2048}, seq(rows*2048))
	drop := func(rows ...int) {
		for _, r := range rows {
			f, err := os.Open(filepath.Join(dir, "x", "c", strconv.Itoa(r), "0"))
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				t.Fatal(err)
			}
			_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
			f.Close()
		}
	}
	s, err := ops.Reduce("sum", x, []int{0}, false, nil, 4)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{s})
	if err != nil {
		t.Fatal(err)
	}
	j := &job{plan: p, storage: newStorage(t.TempDir())}
	defer j.storage.close()
	ctx := context.Background()
	if got := j.cachedAtEnd(ctx, p); got[x] {
		t.Fatal("x is all in the page cache: reported cached at its end only")
	}
	drop(0, 1, 2, 3)
	if got := j.cachedAtEnd(ctx, p); !got[x] {
		z, _ := j.storage.array(ctx, x)
		if f, _ := z.ChunkResident(ctx, []int{0, 0}); f > 0 {
			t.Skipf("pages stay in memory after POSIX_FADV_DONTNEED (tmpfs?)")
		}
		t.Fatal("x's first chunks dropped from the page cache: not reported cached at its end")
	}
	drop(rows-2, rows-1, rows-4, rows-3)
	if got := j.cachedAtEnd(ctx, p); got[x] {
		t.Fatal("both ends of x dropped: reported cached at its end")
	}
}

// The last of two passes over a stored array larger than memory
// (sum(x - mean(x))) reads directly the chunks it finds out of the page
// cache, and through the cache those it finds there, with the same
// results; the first pass reads through the cache. lastPassReads names
// the last reader only, and nothing when the readers do not run one after
// the other.
func TestLastPassReadsUncachedChunksDirectly(t *testing.T) {
	dir, x, anom := twoPassAnomaly(t)
	want := computeFusedValues(t, []*plan.Array{anom})
	withMemory(t, x.NBytes()/2)
	p, err := plan.Build([]*plan.Array{anom})
	if err != nil {
		t.Fatal(err)
	}
	p.Fuse()
	last := lastPassReads(p)
	if len(last) != 1 {
		t.Fatalf("last passes %v, want one op", last)
	}
	for op, ins := range last {
		if len(ins) != 1 || op.Inputs[firstKey(ins)].Array != x || op.Func == "mean" {
			t.Fatalf("last pass %s reading %v", op.Func, ins)
		}
	}
	// Two reductions of x in one computation run side by side: no pass is
	// last.
	s, _ := ops.Reduce("sum", x, nil, false, nil, 0)
	m, _ := ops.Reduce("max", x, nil, false, nil, 0)
	if q, err := plan.Build([]*plan.Array{s, m}); err != nil || lastPassReads(q) != nil {
		t.Fatalf("independent readers of x: last passes %v (%v)", lastPassReads(q), err)
	}
	drop := func() {
		files, _ := filepath.Glob(filepath.Join(dir, "x", "c", "*", "*"))
		if len(files) != 8 {
			t.Fatalf("%d chunk files of x", len(files))
		}
		for _, p := range files {
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			_ = f.Sync()
			_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
			f.Close()
		}
	}
	counts := countDirect(t)
	counts[x] = &atomic.Int64{}
	run := func(evict bool) []float64 {
		t.Helper()
		p, err := plan.Build([]*plan.Array{anom})
		if err != nil {
			t.Fatal(err)
		}
		p.Fuse()
		onEvent := func(e Event) {
			// Out of the cache once the first pass is done.
			if evict && e.Type == OperationStart && e.Func != "mean" && e.NumTasks > 1 {
				drop()
			}
		}
		return executeValues(t, p, onEvent, anom)
	}
	if got := run(false); got[0] != want[0][0] || counts[x].Load() != 0 {
		t.Fatalf("x in the page cache: %v (want %v), %d chunks read directly", got[0], want[0][0], counts[x].Load())
	}
	got := run(true)
	if n := counts[x].Load(); n != 8 {
		j := &job{plan: p, storage: newStorage(t.TempDir())}
		defer j.storage.close()
		drop()
		if z, err := j.storage.array(context.Background(), x); err == nil && n == 0 {
			if f, _ := z.ChunkResident(context.Background(), []int{0, 0}); f > 0 {
				t.Skip("pages stay in memory after POSIX_FADV_DONTNEED (tmpfs?)")
			}
		}
		t.Fatalf("%d chunks of x read directly by the last pass after leaving the cache, want 8", n)
	}
	if got[0] != want[0][0] {
		t.Fatalf("read directly: %v, through the cache: %v", got[0], want[0][0])
	}
}

// The first of two passes over a stored array larger than memory reads
// directly, when they are out of the page cache, the chunks it reads
// first beyond what the cache can keep (firstPassReads: the first 5 of 8
// chunks with room for 3, the last 5 when the pass runs in reverse), and
// the rest through the cache; the last pass then finds those 3 cached and
// reads the 5 others directly. The results are those of reads through the
// cache.
func TestFirstPassReadsEarlyChunksDirectly(t *testing.T) {
	dir, x, anom := twoPassAnomaly(t)
	want := computeFusedValues(t, []*plan.Array{anom})
	withMemory(t, x.NBytes()/2)
	defer func(f func(int64) int64) { cacheBytes = f }(cacheBytes)
	cacheBytes = func(int64) int64 { return 3 << 20 }
	p, err := plan.Build([]*plan.Array{anom})
	if err != nil {
		t.Fatal(err)
	}
	p.Fuse()
	var meanOp *plan.OpInfo
	for _, o := range p.Ops {
		if o.Op.Func == "mean" && len(o.Op.Inputs) == 1 && o.Op.Inputs[0].Array == x {
			meanOp = o
		}
	}
	if meanOp == nil {
		t.Fatal("no op reads x for the mean")
	}
	for _, tc := range []struct {
		reverse bool
		want    span
	}{{false, span{0, 5.0 / 8}}, {true, span{3.0 / 8, 1}}} {
		first := firstPassReads(p, lastPassReads(p), map[*plan.OpInfo]bool{meanOp: tc.reverse}, 3<<20)
		if len(first) != 1 || len(first[meanOp.Op]) != 1 || first[meanOp.Op][0] != tc.want {
			t.Fatalf("reverse %v: first passes %v, want the mean reading x's chunks %v directly", tc.reverse, first, tc.want)
		}
	}
	if got := firstPassReads(p, lastPassReads(p), nil, x.NBytes()); got != nil {
		t.Fatalf("x fits in the cache: first passes %v, want none", got)
	}
	counts, inFirst, onEvent := passDirectCounts(t, x)
	dropOrSkip(t, filepath.Join(dir, "x"), x)
	if got := executeValues(t, p, onEvent, anom); got[0] != want[0][0] {
		t.Fatalf("read partly directly: %v, through the cache: %v", got[0], want[0][0])
	}
	if total := counts.Load(); *inFirst != 5 || total != 10 {
		t.Fatalf("chunks of x read directly: %d by the first pass, %d in all; want 5 and 10", *inFirst, total)
	}
}

// passDirectCounts counts the chunks of x read directly (countDirect): in
// all, and, through onEvent, by the time the first op other than the mean
// with more than one task (the last pass) started.
func passDirectCounts(t *testing.T, x *plan.Array) (total *atomic.Int64, inFirst *int64, onEvent func(Event)) {
	t.Helper()
	counts := countDirect(t)
	total, inFirst = &atomic.Int64{}, new(int64)
	counts[x] = total
	*inFirst = -1
	return total, inFirst, func(e Event) {
		if e.Type == OperationStart && e.Func != "mean" && e.NumTasks > 1 {
			*inFirst = total.Load()
		}
	}
}

// dropOrSkip drops the stored array x, whose files are under root, from
// the page cache, and skips the test where its pages stay in memory anyway
// (tmpfs).
func dropOrSkip(t *testing.T, root string, x *plan.Array) {
	t.Helper()
	dropFromCache(t, root)
	z, err := (&job{storage: newStorage(t.TempDir())}).storage.array(context.Background(), x)
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := z.ChunkResident(context.Background(), make([]int, x.NDim())); f > 0 {
		t.Skip("pages stay in memory after POSIX_FADV_DONTNEED (tmpfs?)")
	}
}

// twoPassAnomaly stores x, 8 chunks of 1 MiB (direct reads need
// page-aligned buffers, which the allocator gives chunks of 1 MiB or
// more), in a new directory and returns it, x and sum(x - mean(x,
// axis=0)), which reads x twice.
func twoPassAnomaly(t *testing.T) (string, *plan.Array, *plan.Array) {
	t.Helper()
	spec := testSpec(t)
	dir := t.TempDir()
	v := make([]float64, 64*16384)
	for i := range v {
		v[i] = float64((i*7919)%1013) - 506
	}
	x := storedArray(t, spec, dir, "x", []int{64, 16384}, []any{8, 16384}, v)
	mean, err := ops.Reduce("mean", x, []int{0}, false, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := ops.Elemwise("subtract", ops.Operand{Array: x}, ops.Operand{Array: mean})
	anom, err := ops.Reduce("sum", d, nil, false, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	return dir, x, anom
}

// executeValues runs p with 2 workers, passing its events to onEvent, and
// returns the values of a.
func executeValues(t *testing.T, p *plan.Plan, onEvent func(Event), a *plan.Array) []float64 {
	t.Helper()
	res, err := Execute(context.Background(), p, Options{MaxWorkers: 2}, onEvent)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	buf := make([]byte, a.NBytes())
	if err := res.Read(context.Background(), 0, buf); err != nil {
		t.Fatal(err)
	}
	return toFloats(a.DType, buf)
}

func firstKey(m map[int]bool) int {
	for k := range m {
		return k
	}
	return -1
}

// dropFromCache writes back and drops from the page cache every file under
// root.
func dropFromCache(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := f.Sync(); err != nil {
			return err
		}
		return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A stored array read once, in whole chunks, of at least a quarter of the
// machine's memory and mostly out of the page cache is read directly,
// every chunk of it, with the values a read through the cache gives, though
// the plan's inputs fit in memory; the same array in the cache, smaller
// than a quarter of memory, or read twice is read through the cache.
func TestColdScanReadsDirect(t *testing.T) {
	dir := t.TempDir()
	spec := testSpec(t)
	// 1 MiB chunks, which the allocator aligns to a page.
	u := storedArray(t, spec, dir, "u", []int{64, 16384}, []any{8, 16384}, sines(64*16384, 1))
	x := storedArray(t, spec, dir, "x", []int{64, 16384}, []any{8, 16384}, sines(64*16384, 2))
	mean := func(a *plan.Array) *plan.Array {
		r, err := ops.Reduce("mean", a, []int{0}, false, nil, 4)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	d, err := ops.Elemwise("subtract", ops.Operand{Array: x}, ops.Operand{Array: mean(x)})
	if err != nil {
		t.Fatal(err)
	}
	dsum, err := ops.Reduce("sum", d, nil, false, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	outs := []*plan.Array{mean(u), dsum}
	counts := countDirect(t)
	counts[u], counts[x] = &atomic.Int64{}, &atomic.Int64{}
	// u is a quarter of memory; u and x together fit.
	withMemory(t, 4*u.NBytes())
	want := computeFusedValues(t, outs)
	if nu, nx := counts[u].Load(), counts[x].Load(); nu != 0 || nx != 0 {
		t.Fatalf("chunks read directly from the page cache: u %d, x %d; want 0, 0", nu, nx)
	}
	dropFromCache(t, filepath.Join(dir, "u"))
	dropFromCache(t, filepath.Join(dir, "x"))
	j := &job{storage: newStorage(t.TempDir())}
	defer j.storage.close()
	if !j.cold(context.Background(), u) {
		t.Skip("pages stay in memory after POSIX_FADV_DONTNEED (tmpfs?)")
	}
	got := computeFusedValues(t, outs)
	for k := range want {
		for i := range want[k] {
			if math.Float64bits(got[k][i]) != math.Float64bits(want[k][i]) {
				t.Fatalf("output %d element %d: %v read cold, %v from the cache", k, i, got[k][i], want[k][i])
			}
		}
	}
	if nu, nx := counts[u].Load(), counts[x].Load(); nu != 8 || nx != 0 {
		t.Fatalf("chunks read directly from a cold cache: u %d, x %d; want 8, 0", nu, nx)
	}
	// Read directly, u stays out of the cache: still cold, but now less
	// than a quarter of memory.
	if !j.cold(context.Background(), u) {
		t.Fatal("u read directly came into the page cache")
	}
	withMemory(t, 4*u.NBytes()+8)
	counts[u].Store(0)
	computeFusedValues(t, outs)
	if n := counts[u].Load(); n != 0 {
		t.Fatalf("%d chunks of u, less than a quarter of memory, read directly", n)
	}
}
