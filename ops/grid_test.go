package ops_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// Issue #17 finding 1: sizes that once aborted the process (a list of
// 2**35 block sizes) or panicked (a shape whose size overflows int64) are
// plan.ErrValue errors saying what is wrong.

func wantValueError(t *testing.T, what string, err error, fragment string) {
	t.Helper()
	if !errors.Is(err, plan.ErrValue) || !strings.Contains(err.Error(), fragment) {
		t.Errorf("%s: %v; want a plan.ErrValue saying %q", what, err, fragment)
	}
}

func TestFromZarrHostileGrids(t *testing.T) {
	ctx := context.Background()
	const url = "mem://test-from-zarr-hostile-grids"
	s, err := zarr.OpenStore(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		doc, key, want string
	}{
		{metadataSeeds[1].doc, "zarr.json", "has shape (34359738368,) and chunks (1,): more than the 4194304 blocks"},
		{metadataSeeds[6].doc, ".zarray", "more than the 4194304 blocks"},
		{metadataSeeds[2].doc, "zarr.json", "overflows int64"},
	} {
		_ = s.Delete(ctx, "zarr.json")
		_ = s.Delete(ctx, ".zarray")
		if err := s.Set(ctx, c.key, []byte(c.doc)); err != nil {
			t.Fatal(err)
		}
		_, err := ops.FromZarr(ctx, url, "", nil, nil, nil)
		if !strings.Contains(fmtErr(err), c.want) || (!errors.Is(err, plan.ErrValue) && !errors.Is(err, zarr.ErrInvalid)) {
			t.Errorf("from_zarr of %s: %v; want a value error saying %q", c.key, err, c.want)
		}
	}
	// 2**20 chunks of 2**10: opened, as a list of 2**20 block sizes.
	_ = s.Delete(ctx, ".zarray")
	doc := strings.Replace(strings.Replace(metadataSeeds[1].doc, "34359738368", "1073741824", 1), `"chunk_shape": [1]`, `"chunk_shape": [1024]`, 1)
	if err := s.Set(ctx, "zarr.json", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	a, err := ops.FromZarr(ctx, url, "", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Chunks[0]) != 1<<20 || a.NBytes() != 1<<30 {
		t.Errorf("%d blocks, %d bytes", len(a.Chunks[0]), a.NBytes())
	}
}

func fmtErr(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func TestCreationHostileSizes(t *testing.T) {
	one := plan.Scalar{Kind: 'f', F: 1}
	_, err := ops.Full([]int{1 << 40}, ops.Float64, one, []any{1}, nil)
	wantValueError(t, "full((2**40,), chunks=1)", err, "1099511627776 blocks")
	_, err = ops.Full([]int{1 << 62, 1 << 62}, ops.Float64, one, []any{1 << 30, 1 << 30}, nil)
	wantValueError(t, "full((2**62, 2**62))", err, "the number of elements overflows int64")
	_, err = ops.Full([]int{1 << 62, 100}, ops.Float64, one, "auto", nil)
	wantValueError(t, "full((2**62, 100))", err, "overflows int64")
	_, err = ops.Arange(0, 1<<63-1, 1, ops.Int64, "auto", nil)
	wantValueError(t, "arange(2**63-1)", err, "the number of elements overflows int64")
	_, err = ops.Arange(0, 1<<62, 1, ops.Int64, "auto", nil)
	wantValueError(t, "arange(2**62)", err, "the size in bytes overflows int64")
	// A slice with a huge step selects one element (no overflow in the count).
	x, err := ops.Full([]int{10}, ops.Float64, one, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []int{1<<63 - 1, -1 << 63} {
		s := step
		y, err := ops.GetItem(x, []ops.Index{{Kind: ops.IndexSlice, Step: &s}})
		if err != nil || y.Shape[0] != 1 {
			t.Errorf("x[::%d]: %v, %v", step, y, err)
		}
	}
	// Padding, concatenation, broadcasting and reshaping past int64.
	_, err = ops.PadConstant(x, [][2]int{{1 << 40, 0}}, one)
	wantValueError(t, "pad by 2**40 in blocks of 3", err, "blocks")
	_, err = ops.PadConstant(x, [][2]int{{1<<63 - 5, 0}}, one)
	wantValueError(t, "pad by 2**63-5", err, "overflows int64")
	big, err := ops.Full([]int{1 << 62}, ops.Uint8, plan.Scalar{Kind: 'i', I: 1}, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ops.Concat([]*plan.Array{big, big}, 0)
	wantValueError(t, "concat of two 2**62", err, "overflows int64")
	col, err := ops.Reshape(big, []int{1 << 62, 1})
	if err != nil {
		t.Fatal(err)
	}
	row, err := ops.Full([]int{1, 100}, ops.Uint8, plan.Scalar{Kind: 'i', I: 1}, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ops.Elemwise("add", ops.Operand{Array: col}, ops.Operand{Array: row})
	wantValueError(t, "(2**62, 1) + (1, 100)", err, "overflows int64")
	_, err = ops.Reshape(big, []int{1 << 62, 4, -1})
	wantValueError(t, "reshape to (2**62, 4, -1)", err, "overflows int64")
}
