package engine

import (
	"context"
	"encoding/binary"
	"math"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// A block of a shifted slice (W6's a[1:, 1:]) over four raw chunks is
// read box by box with no chunk-sized scratch: the task holds the gaps'
// scratch only (zarr.BoxReadGap at most), and gets the right elements. A
// compressed array's chunks are read whole, through a chunk of scratch.
func TestReadRegionShiftedBlock(t *testing.T) {
	ctx := context.Background()
	spec := testSpec(t)
	dir := t.TempDir()
	rows, cols := 128, 2048
	v := make([]float64, rows*cols)
	for i := range v {
		v[i] = float64(i)
	}
	x := literal(t, spec, []int{rows, cols}, []any{64, 1024}, v)
	for _, tc := range []struct {
		path        string
		compressors []zarr.Codec
		peak        int64
	}{
		{"raw", nil, zarr.BoxReadGap},
		{"packed", []zarr.Codec{zarr.ZstdCodec(1, false)}, 64 * 1024 * 8},
	} {
		out, err := ops.ToZarr(x, plan.ZarrRef{Store: dir, Path: tc.path, Compressors: tc.compressors}, nil)
		if err != nil {
			t.Fatal(err)
		}
		compute(t, Options{}, out)
		a, err := ops.FromZarr(ctx, dir, tc.path, nil, spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		j := &job{storage: newStorage(t.TempDir())}
		ta := &taskAllocator{parent: NewAllocator()}
		r := plan.Region{Start: []int{1, 1}, Step: []int{1, 1}, Count: []int{64, 1024}}
		dst := make([]byte, 8*64*1024)
		if err := j.readRegion(ctx, ta, a, r, dst); err != nil {
			t.Fatal(err)
		}
		for i := range 64 {
			for k := range 1024 {
				got := math.Float64frombits(binary.LittleEndian.Uint64(dst[8*(i*1024+k):]))
				if want := v[(1+i)*cols+1+k]; got != want {
					t.Fatalf("%s: element (%d, %d) = %v, want %v", tc.path, i, k, got, want)
				}
			}
		}
		if ta.peak != tc.peak || ta.cur != 0 {
			t.Errorf("%s: the read allocated %d bytes at its peak and holds %d after; want %d and 0", tc.path, ta.peak, ta.cur, tc.peak)
		}
	}
}
