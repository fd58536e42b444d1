package engine

import (
	"context"
	"math"
	"sync/atomic"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// withMemory makes directReads see a machine of mem bytes.
func withMemory(t *testing.T, mem int64) {
	saved := physicalMemory
	physicalMemory = func() int64 { return mem }
	t.Cleanup(func() { physicalMemory = saved })
}

// sines returns n values sin(seed * (i+1)): distinct inputs for the
// direct-I/O tests, whose results must match bit for bit.
func sines(n int, seed float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.Sin(seed * float64(i+1))
	}
	return v
}

// countDirect counts the chunks read directly, per array.
func countDirect(t *testing.T) map[*plan.Array]*atomic.Int64 {
	counts := map[*plan.Array]*atomic.Int64{}
	saved := directHook
	directHook = func(a *plan.Array) {
		if c := counts[a]; c != nil {
			c.Add(1)
		}
	}
	t.Cleanup(func() { directHook = saved })
	return counts
}

// Stored arrays read once, in whole chunks, by a plan whose stored inputs
// exceed the machine's memory are read with O_DIRECT, every chunk of them,
// with the results of reading through the page cache; arrays read twice or
// in parts of chunks, and any plan whose inputs fit in memory, are not.
func TestDirectReads(t *testing.T) {
	spec := testSpec(t)
	dir := t.TempDir()
	// Chunks of 8 x 16384 float64: 1 MiB, in buffers the allocator aligns
	// to a page (smaller ones are read through the page cache).
	u := storedArray(t, spec, dir, "u", []int{64, 16384}, []any{8, 16384}, sines(64*16384, 1))
	v := storedArray(t, spec, dir, "v", []int{64, 16384}, []any{8, 16384}, sines(64*16384, 2))
	x := storedArray(t, spec, dir, "x", []int{64, 16384}, []any{8, 16384}, sines(64*16384, 3))
	mul := func(a, b *plan.Array) *plan.Array {
		r, _ := ops.Elemwise("multiply", ops.Operand{Array: a}, ops.Operand{Array: b})
		return r
	}
	mean := func(a *plan.Array, split int) *plan.Array {
		r, err := ops.Reduce("mean", a, []int{0}, false, nil, split)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// u and v: three means stacked into one op, each chunk read once, a
	// step folding 4 chunks. x: read by two ops (its mean, then x - mean).
	xm := mean(x, 0)
	d, _ := ops.Elemwise("subtract", ops.Operand{Array: x}, ops.Operand{Array: xm})
	dsum, _ := ops.Reduce("sum", d, nil, false, nil, 0)
	outs := []*plan.Array{mean(mul(u, u), 4), mean(mul(v, v), 4), mean(mul(u, v), 4), dsum}
	want := computeFusedValues(t, outs)
	withMemory(t, 2*u.NBytes()) // u, v and x do not fit
	counts := countDirect(t)
	for _, a := range []*plan.Array{u, v, x} {
		counts[a] = &atomic.Int64{}
	}
	got := computeFusedValues(t, outs)
	for k := range want {
		for i := range want[k] {
			if math.Float64bits(got[k][i]) != math.Float64bits(want[k][i]) {
				t.Fatalf("output %d element %d: %v read directly, %v through the cache", k, i, got[k][i], want[k][i])
			}
		}
	}
	if nu, nv, nx := counts[u].Load(), counts[v].Load(), counts[x].Load(); nu != 8 || nv != 8 || nx != 0 {
		t.Fatalf("chunks read directly: u %d, v %d, x %d; want 8, 8, 0", nu, nv, nx)
	}
	// Inputs that fit in memory are read through the page cache.
	withMemory(t, 4*u.NBytes())
	counts[u].Store(0)
	computeFusedValues(t, outs)
	if n := counts[u].Load(); n != 0 {
		t.Fatalf("%d chunks of u read directly with the inputs fitting in memory", n)
	}
	withMemory(t, 1)
	// A compressed array is read through the page cache (with its
	// prefetch and folds in parts) even where the plan would read it
	// directly.
	zx := literal(t, testSpec(t), []int{64, 16384}, []any{8, 16384}, sines(64*16384, 4))
	zout, err := ops.ToZarr(zx, plan.ZarrRef{Store: dir, Path: "z", Compressors: []zarr.Codec{zarr.ZstdCodec(1, false)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	compute(t, Options{}, zout)
	z, err := ops.FromZarr(context.Background(), dir, "z", nil, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	zmean := mean(z, 4)
	p, err := plan.Build([]*plan.Array{zmean})
	if err != nil {
		t.Fatal(err)
	}
	p.Fuse()
	j := &job{plan: p, storage: newStorage(t.TempDir())}
	j.planDirectReads(context.Background())
	if !directReads(p, nil)[z] || j.direct[z] {
		t.Fatal("a compressed array read once is planned direct but must be read through the page cache")
	}
	// A rechunk reading parts of chunks is not direct.
	r, err := ops.Rechunk(u, []any{64, 1024})
	if err != nil {
		t.Fatal(err)
	}
	p, err = plan.Build([]*plan.Array{r})
	if err != nil {
		t.Fatal(err)
	}
	p.Fuse()
	if dr := directReads(p, nil); dr[u] {
		t.Fatal("a rechunk reading parts of u's chunks reads u directly")
	}
}

// computeFusedValues runs outs with fusion and returns their values.
func computeFusedValues(t *testing.T, outs []*plan.Array) [][]float64 {
	t.Helper()
	v, _ := computeFused(t, outs...)
	return v
}

// A target no op reads, larger than what the kernel lets wait in the page
// cache before it paces writers (dirtyFreerun), is
// written with O_DIRECT, every chunk of it (1 MiB chunks, which the
// allocator aligns; the short last chunk too), with the values a write
// through the page cache gives; intermediates, targets that fit under the
// limit, and compressed targets are written through the page cache.
func TestDirectWrites(t *testing.T) {
	spec := testSpec(t)
	dir := t.TempDir()
	v := make([]float64, 60*16384)
	for i := range v {
		v[i] = math.Sin(float64(i + 1))
	}
	x := literal(t, spec, []int{60, 16384}, []any{8, 16384}, v)
	double := func() *plan.Array {
		r, err := ops.Elemwise("add", ops.Operand{Array: x}, ops.Operand{Array: x})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	var written atomic.Int64
	saved := directWriteHook
	directWriteHook = func(*plan.Array) { written.Add(1) }
	t.Cleanup(func() { directWriteHook = saved })
	savedLimit := dirtyFreerun
	t.Cleanup(func() { dirtyFreerun = savedLimit })
	store := func(limit int64, path string, codecs []zarr.Codec) []float64 {
		dirtyFreerun = func() int64 { return limit }
		written.Store(0)
		out, err := ops.ToZarr(double(), plan.ZarrRef{Store: dir, Path: path, Compressors: codecs}, nil)
		if err != nil {
			t.Fatal(err)
		}
		compute(t, Options{}, out)
		back, err := ops.FromZarr(context.Background(), dir, path, nil, spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		return compute(t, Options{}, back)[0]
	}
	direct := store(1, "direct", nil)
	if n := written.Load(); n != 8 {
		t.Fatalf("%d chunks written directly, want all 8", n)
	}
	cached := store(1<<40, "cached", nil)
	if n := written.Load(); n != 0 {
		t.Fatalf("%d chunks written directly under the freerun limit", n)
	}
	for i := range v {
		if direct[i] != 2*v[i] || cached[i] != 2*v[i] {
			t.Fatalf("element %d: direct %v, cached %v, want %v", i, direct[i], cached[i], 2*v[i])
		}
	}
	store(1, "zstd", []zarr.Codec{zarr.ZstdCodec(1, false)})
	if n := written.Load(); n != 0 {
		t.Fatalf("%d compressed chunks written directly", n)
	}
	// An array a later op reads is an intermediate: not direct.
	dirtyFreerun = func() int64 { return 1 }
	inner := double()
	s, err := ops.Reduce("sum", inner, []int{0}, false, nil, 4)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{s})
	if err != nil {
		t.Fatal(err)
	}
	for a := range directWrites(p) {
		if a.Target == nil {
			t.Fatalf("array %s without a target planned for direct writes", a.Name)
		}
	}
}

// freerun is the midpoint of the background threshold and the dirty
// limit, each from its byte setting or else its ratio of memory, with the
// background threshold held below the limit as the kernel holds it.
func TestFreerun(t *testing.T) {
	const gb = int64(1) << 30
	for _, c := range []struct {
		name                                string
		mem, limitB, limitR, bgB, bgR, want int64
	}{
		{"ratios (20% and 10% of 24 GiB)", 24 * gb, 0, 20, 0, 10, (24*gb*20/100 + 24*gb*10/100) / 2},
		{"byte settings win over ratios", 24 * gb, 2 * gb, 20, 1 * gb, 10, 3 * gb / 2},
		{"background at or above the limit is halved", 24 * gb, 2 * gb, 0, 4 * gb, 0, 3 * gb / 2},
		{"no background threshold", 24 * gb, 2 * gb, 0, 0, 0, 1 * gb},
		{"unknown memory", 0, 0, 20, 0, 10, 0},
		{"no limit", 24 * gb, 0, 0, 0, 10, 0},
	} {
		if got := freerun(c.mem, c.limitB, c.limitR, c.bgB, c.bgR); got != c.want {
			t.Errorf("%s: freerun %d, want %d", c.name, got, c.want)
		}
	}
}
