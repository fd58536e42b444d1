package engine

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
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
