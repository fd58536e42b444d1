package engine

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
)

func TestInterleave(t *testing.T) {
	for _, c := range []struct{ a, b, want []int }{
		{[]int{7, 6, 5}, []int{4, 3, 2, 1, 0}, []int{7, 4, 3, 6, 2, 1, 5, 0}},
		{[]int{1, 2}, []int{10, 11}, []int{1, 10, 2, 11}},
		{[]int{1}, []int{10, 11, 12, 13}, []int{1, 10, 11, 12, 13}},
		{nil, []int{3}, []int{3}},
	} {
		if got := interleave(c.a, c.b); !reflect.DeepEqual(got, c.want) {
			t.Errorf("interleave(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestOrderStepWalksTheOrder(t *testing.T) {
	nb := []int{3, 2}
	order := []int{5, 0, 4, 1, 3, 2}
	step := orderStep(order)
	block := unravel(int64(order[0]), nb)
	var got []int
	for more := true; more; more = step(block, nb) {
		got = append(got, block[0]*nb[1]+block[1])
	}
	if !reflect.DeepEqual(got, order) {
		t.Errorf("walked %v, want %v", got, order)
	}
	// Stateless: a second walker from the third block goes on from there.
	b := unravel(int64(order[2]), nb)
	if !step(b, nb) || b[0]*nb[1]+b[1] != order[3] {
		t.Errorf("from %d: got %v, want %d", order[2], b, order[3])
	}
}

func TestLastPassInterleavesCachedAndDiskTasks(t *testing.T) {
	// sum(x - mean(x, axis=0)) over x of 16 chunks of 1 MiB, with memory
	// for half of x and a page cache for 10 chunks: the first pass reads
	// chunks 0-5 directly, the cache keeps 6-15 for the last pass, whose 4
	// tasks fold four chunks each: tasks 0 and 1 start on chunks read
	// from the disk, 2 and 3 on cached ones.
	spec := testSpec(t)
	v := make([]float64, 128*16384)
	for i := range v {
		v[i] = float64(i % 1013)
	}
	dir := t.TempDir()
	x := storedArray(t, spec, dir, "x", []int{128, 16384}, []any{8, 16384}, v)
	withMemory(t, x.NBytes()/2)
	mean, _ := ops.Reduce("mean", x, []int{0}, false, nil, 0)
	d, _ := ops.Elemwise("subtract", ops.Operand{Array: x}, ops.Operand{Array: mean})
	anom, err := ops.Reduce("sum", d, nil, false, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{anom})
	if err != nil {
		t.Fatal(err)
	}
	p.Fuse()
	j := &job{lastPass: lastPassReads(p)}
	j.firstPass = firstPassReads(p, j.lastPass, nil, 10<<20)
	var last *plan.OpInfo
	for _, o := range p.Ops {
		if j.lastPass[o.Op] != nil {
			last = o
		}
	}
	if last == nil || last.NumTasks != 4 {
		t.Fatalf("last pass %v, want one of 4 tasks", last)
	}
	// Reversed: the cached tasks 3, 2 and the disk's 1, 0 in turn.
	if got, want := j.lastPassOrder(context.Background(), last, true), []int{3, 1, 2, 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("reversed last pass order %v, want %v", got, want)
	}
	if got, want := j.lastPassOrder(context.Background(), last, false), []int{2, 0, 3, 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("forward last pass order %v, want %v", got, want)
	}
	// The whole of x fits the cache: no first pass reads directly, and
	// the last pass keeps its order.
	j.firstPass = firstPassReads(p, j.lastPass, nil, x.NBytes())
	if got := j.lastPassOrder(context.Background(), last, true); got != nil {
		t.Errorf("order %v without a direct first pass, want nil", got)
	}
	// From a cold cache, run by one worker (tasks start in the order the
	// scheduler hands them out): the first pass reads chunks 0-5 directly
	// and caches 6-15, so the last pass finds tasks 2 and 3 cached and
	// runs in that order; the values are those of the plan run in its own
	// order.
	want := computeFusedValues(t, []*plan.Array{anom})
	dropOrSkip(t, filepath.Join(dir, "x"), x)
	defer func(f func(int64) int64) { cacheBytes = f }(cacheBytes)
	cacheBytes = func(int64) int64 { return 10 << 20 }
	var ran []int
	res, err := Execute(context.Background(), p, Options{MaxWorkers: 1}, func(e Event) {
		if e.Type == TaskEnd && e.Op == last.Op.Name {
			ran = append(ran, e.Block[0])
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	if want := []int{3, 1, 2, 0}; !reflect.DeepEqual(ran, want) {
		t.Errorf("last pass ran blocks %v, want %v", ran, want)
	}
	buf := make([]byte, anom.NBytes())
	if err := res.Read(context.Background(), 0, buf); err != nil {
		t.Fatal(err)
	}
	if got := toFloats(anom.DType, buf); got[0] != want[0][0] {
		t.Errorf("sum %v, want %v", got[0], want[0][0])
	}
}
