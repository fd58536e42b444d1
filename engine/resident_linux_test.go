package engine

import (
	"context"
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
	spec := testSpec(t)
	dir := t.TempDir()
	v := make([]float64, 64*16384)
	for i := range v {
		v[i] = float64((i*7919)%1013) - 506
	}
	// 8 chunks of 1 MiB (direct reads need page-aligned buffers, which
	// the allocator gives chunks of 1 MiB or more).
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
		res, err := Execute(context.Background(), p, Options{MaxWorkers: 2}, onEvent)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Close()
		buf := make([]byte, anom.NBytes())
		if err := res.Read(context.Background(), 0, buf); err != nil {
			t.Fatal(err)
		}
		return toFloats(anom.DType, buf)
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

func firstKey(m map[int]bool) int {
	for k := range m {
		return k
	}
	return -1
}
