package engine

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// failingStore fails every chunk write of one array path.
type failingStore struct {
	zarr.Store
	prefix string
}

func (f *failingStore) Set(ctx context.Context, key string, v []byte) error {
	if len(key) > len(f.prefix) && key[:len(f.prefix)] == f.prefix && key[len(key)-1] != 'n' {
		return errors.New("injected failure")
	}
	return f.Store.Set(ctx, key, v)
}

func (f *failingStore) List(ctx context.Context, prefix string) ([]string, error) {
	return f.Store.(zarr.Lister).List(ctx, prefix)
}

func TestResumeSkipsCompleteOps(t *testing.T) {
	spec := testSpec(t)
	build := func() (*plan.Array, *plan.Array) {
		x := literal(t, spec, []int{8, 6}, []any{3, 4}, seq(48))
		a, _ := ops.Elemwise("negative", ops.Operand{Array: x})
		r, _ := ops.Rechunk(a, []any{8, 2}) // not fusable: a is stored
		s, _ := ops.Reduce("sum", r, []int{0}, false, nil, 0)
		return r, s
	}
	_, first := build()
	firstKeyR, _ := plan.Key(first.Op.Inputs[0].Array)

	// The first try fails in the last op: the rechunked intermediate is
	// complete and kept.
	orig := openStore
	defer func() { openStore = orig }()
	var mu sync.Mutex
	openStore = func(ctx context.Context, url string) (zarr.Store, error) {
		s, err := orig(ctx, url)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		key, _ := plan.Key(first)
		return &failingStore{Store: s, prefix: key + "/c"}, nil
	}
	p, _ := plan.Build([]*plan.Array{first})
	if _, err := Execute(context.Background(), p, Options{Resume: true, Retries: 0}, nil); err == nil {
		t.Fatal("the injected failure did not fail the computation")
	}
	openStore = orig

	// The same arrays, built again (as after unpickling in a new process),
	// resume: the ops before the failed one are skipped.
	_, again := build()
	if k, _ := plan.Key(again.Op.Inputs[0].Array); k != firstKeyR {
		t.Fatalf("rebuilt arrays have another key: %s, %s", k, firstKeyR)
	}
	p, _ = plan.Build([]*plan.Array{again})
	res, err := Execute(context.Background(), p, Options{Resume: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var skipped []string
	for _, o := range res.Stats.Ops {
		if o.Skipped {
			skipped = append(skipped, o.Func)
		}
	}
	if len(skipped) != 2 {
		t.Errorf("skipped ops %v, want the negation and the rechunk", skipped)
	}
	buf := make([]byte, again.NBytes())
	if err := res.Read(context.Background(), 0, buf); err != nil {
		t.Fatal(err)
	}
	got := toFloats(again.DType, buf)
	for j := range 6 {
		want := 0.0
		for i := range 8 {
			want -= float64(i*6 + j)
		}
		if got[j] != want {
			t.Fatalf("sum[%d] = %v, want %v", j, got[j], want)
		}
	}
	res.Close()
}
