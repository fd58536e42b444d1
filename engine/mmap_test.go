//go:build linux

package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// storeRaw writes v (as dt) to a raw Zarr array "name" of shape and
// chunks under dir.
func storeRaw(t testing.TB, dir, name string, dt zarr.DataType, shape, chunks []int, v []float64) {
	t.Helper()
	ctx := context.Background()
	s, err := zarr.OpenStore(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, s, name, zarr.ArrayMetadata{Shape: shape, ChunkShape: chunks, DataType: dt})
	if err != nil {
		t.Fatal(err)
	}
	a.SetWriteEmptyChunks(true)
	b := make([]byte, len(v)*dt.Size())
	for i, f := range v {
		switch dt {
		case zarr.Float64:
			binary.LittleEndian.PutUint64(b[i*8:], math.Float64bits(f))
		case zarr.Float32:
			binary.LittleEndian.PutUint32(b[i*4:], math.Float32bits(float32(f)))
		case zarr.Int32:
			binary.LittleEndian.PutUint32(b[i*4:], uint32(int32(f)))
		}
	}
	// Two dimensions: copy each chunk's rows into a padded chunk buffer.
	e := dt.Size()
	grid := a.GridShape()
	for ci := range grid[0] {
		for cj := range grid[1] {
			buf := make([]byte, a.ChunkBytes())
			for r := range chunks[0] {
				i := ci*chunks[0] + r
				if i >= shape[0] {
					break
				}
				j0, j1 := cj*chunks[1], min((cj+1)*chunks[1], shape[1])
				copy(buf[r*chunks[1]*e:], b[(i*shape[1]+j0)*e:(i*shape[1]+j1)*e])
			}
			if err := a.WriteChunk(ctx, []int{ci, cj}, buf); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func decode(dt zarr.DataType, b []byte) []float64 {
	if dt != zarr.Int32 {
		return toFloats(dt, b)
	}
	out := make([]float64, len(b)/4)
	for i := range out {
		out[i] = float64(int32(binary.LittleEndian.Uint32(b[i*4:])))
	}
	return out
}

// snapshot returns the contents of every file under dir.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		files[p] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// Stored raw inputs read whole by their tasks are mapped, not copied:
// element-wise and reduction results equal the plain read's, with full
// chunks and edge chunks (a short first dimension is mapped, a short
// last dimension is read), for several data types; the input files are
// never written, also by a one-step task computing in place.
func TestMappedInputs(t *testing.T) {
	defer func(n int) { minMapBytes = n }(minMapBytes)
	minMapBytes = 0 // map the tests' small chunks
	ctx := context.Background()
	for _, dt := range []zarr.DataType{zarr.Float64, zarr.Float32, zarr.Int32} {
		for _, c := range []struct {
			shape, chunks []int
			mapped        bool
		}{
			{[]int{8, 6}, []int{2, 6}, true},
			{[]int{7, 6}, []int{3, 6}, true},  // edge chunk short along dim 0
			{[]int{6, 7}, []int{2, 3}, true},  // full chunks mapped, edge chunks short along dim 1 read
			{[]int{6, 2}, []int{2, 3}, false}, // every chunk short along dim 1: read
		} {
			spec := testSpec(t)
			dir := t.TempDir()
			n := int(plan.Prod(c.shape))
			xv, yv := make([]float64, n), make([]float64, n)
			for i := range n {
				xv[i], yv[i] = float64(i%13-6), float64(3*i%7)
			}
			storeRaw(t, dir, "x", dt, c.shape, c.chunks, xv)
			storeRaw(t, dir, "y", dt, c.shape, c.chunks, yv)
			before := snapshot(t, dir)
			x, err := ops.FromZarr(ctx, dir, "x", nil, spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			y, err := ops.FromZarr(ctx, dir, "y", nil, spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			// x*y summed over axis 0 (a reduction reading both) and x+y
			// stored (a one-step map that may compute in place).
			xy, err := ops.Elemwise("multiply", ops.Operand{Array: x}, ops.Operand{Array: y})
			if err != nil {
				t.Fatal(err)
			}
			s, err := ops.Reduce("sum", xy, []int{0}, false, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			add, err := ops.Elemwise("add", ops.Operand{Array: x}, ops.Operand{Array: y})
			if err != nil {
				t.Fatal(err)
			}
			for _, workers := range []int{1, 2} {
				out, err := ops.ToZarr(add, plan.ZarrRef{Store: t.TempDir(), Path: "out"}, nil)
				if err != nil {
					t.Fatal(err)
				}
				var mu sync.Mutex
				mapped := 0
				mapHook = func(a *plan.Array) {
					mu.Lock()
					defer mu.Unlock()
					if a == x || a == y {
						mapped++
					}
				}
				p, err := plan.Build([]*plan.Array{s, out, add})
				if err != nil {
					t.Fatal(err)
				}
				res, err := Execute(ctx, p, Options{MaxWorkers: workers}, nil)
				if err != nil {
					t.Fatal(err)
				}
				mapHook = nil
				got := make([][]float64, 3)
				for i, a := range []*plan.Array{s, out, add} {
					buf := make([]byte, a.NBytes())
					if err := res.Read(ctx, i, buf); err != nil {
						t.Fatal(err)
					}
					got[i] = decode(a.DType, buf)
				}
				res.Close()
				cols := c.shape[1]
				for j := range cols {
					want := 0.0
					for r := range c.shape[0] {
						want += xv[r*cols+j] * yv[r*cols+j]
					}
					if got[0][j] != want {
						t.Fatalf("%s %v: sum[%d] = %v, want %v", dt, c.shape, j, got[0][j], want)
					}
				}
				for i := range n {
					if got[1][i] != xv[i]+yv[i] || got[2][i] != xv[i]+yv[i] {
						t.Fatalf("%s %v: add[%d] = %v (stored %v), want %v", dt, c.shape, i, got[2][i], got[1][i], xv[i]+yv[i])
					}
				}
				if c.mapped != (mapped > 0) {
					t.Errorf("%s %v: %d chunks mapped, want mapped %v", dt, c.shape, mapped, c.mapped)
				}
			}
			after := snapshot(t, dir)
			if len(after) != len(before) {
				t.Errorf("%s %v: the input store holds %d files, had %d", dt, c.shape, len(after), len(before))
			}
			for p, b := range before {
				if !bytes.Equal(after[p], b) {
					t.Errorf("%s %v: input file %s changed", dt, c.shape, p)
				}
			}
		}
	}
}

// A chunk file truncated in place by another program while a task has it
// mapped fails the task with an error (the fault is a recovered panic),
// not the process.
func TestTruncatedMappedChunkFailsTask(t *testing.T) {
	defer func(n int) { minMapBytes = n }(minMapBytes)
	minMapBytes = 0 // map the tests' small chunks
	ctx := context.Background()
	spec := testSpec(t)
	dir := t.TempDir()
	storeRaw(t, dir, "x", zarr.Float64, []int{8, 1 << 12}, []int{2, 1 << 12}, seq(8<<12))
	x, err := ops.FromZarr(ctx, dir, "x", nil, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	sq, err := ops.Elemwise("multiply", ops.Operand{Array: x}, ops.Operand{Array: x})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ops.Reduce("sum", sq, []int{0}, false, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{s})
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	mapHook = func(a *plan.Array) {
		once.Do(func() {
			err := filepath.WalkDir(filepath.Join(dir, "x", "c"), func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				return os.Truncate(p, 0)
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	defer func() { mapHook = nil }()
	_, err = Execute(ctx, p, Options{MaxWorkers: 1, Retries: 0}, nil)
	if err == nil || !errors.Is(err, errPanic) || !strings.Contains(err.Error(), "invalid memory address") {
		t.Fatalf("got %v, want the task's fault as an error", err)
	}
}
