package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/cubego/cubego/zarr"
)

// TestElementwiseLoopMatchesOperations checks that the loop ElementwiseLoop
// returns gives Unary's, Binary's, Cast's and Where's results bit for bit,
// and that it refuses what they refuse.
func TestElementwiseLoopMatchesOperations(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 1))
	const n = 1031
	compared := 0
	check := func(name string, out zarr.DataType, loopErr, opErr error, run func(dst []byte) error, loop Loop, ins ...[]byte) {
		t.Helper()
		if (loopErr == nil) != (opErr == nil) {
			t.Fatalf("%s: ElementwiseLoop error %v, operation error %v", name, loopErr, opErr)
		}
		if loopErr != nil {
			return
		}
		want, got := make([]byte, n*out.Size()), make([]byte, n*out.Size())
		if err := run(want); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var a [3][]byte
		copy(a[:], ins)
		loop(got, a[0], a[1], a[2])
		if string(got) != string(want) {
			t.Fatalf("%s: element %d differs", name, sameElems(out, want, got))
		}
		compared++
	}
	dts := append([]zarr.DataType{zarr.Float16}, allDTypes...)
	for _, dt := range allDTypes {
		x, y := hostileValues(r, dt, n), hostileValues(r, dt, n)
		for _, op := range unaryOps {
			_, out := unaryLoop(op, dt)
			if !out.Valid() {
				out = dt
			}
			loop, lerr := ElementwiseLoop(op, out, dt)
			oerr := Unary(op, Contiguous(out, make([]byte, n*out.Size()), []int{n}), Contiguous(dt, x, []int{n}))
			check(op+" "+dt.String(), out, lerr, oerr, func(d []byte) error {
				return Unary(op, Contiguous(out, d, []int{n}), Contiguous(dt, x, []int{n}))
			}, loop, x)
		}
		for _, op := range binaryOps {
			_, out := binaryLoop(op, dt)
			if !out.Valid() {
				out = dt
			}
			loop, lerr := ElementwiseLoop(op, out, dt, dt)
			oerr := Binary(op, Contiguous(out, make([]byte, n*out.Size()), []int{n}), Contiguous(dt, x, []int{n}), Contiguous(dt, y, []int{n}))
			check(op+" "+dt.String(), out, lerr, oerr, func(d []byte) error {
				return Binary(op, Contiguous(out, d, []int{n}), Contiguous(dt, x, []int{n}), Contiguous(dt, y, []int{n}))
			}, loop, x, y)
		}
		cond := hostileValues(r, zarr.Bool, n)
		for i := range cond {
			cond[i] &= 1
		}
		loop, lerr := ElementwiseLoop("where", dt, zarr.Bool, dt, dt)
		check("where "+dt.String(), dt, lerr, nil, func(d []byte) error {
			return Where(Contiguous(dt, d, []int{n}), Contiguous(zarr.Bool, cond, []int{n}), Contiguous(dt, x, []int{n}), Contiguous(dt, y, []int{n}))
		}, loop, cond, x, y)
		for _, to := range dts {
			from := dt
			xs := x
			loop, lerr := ElementwiseLoop("astype", to, from)
			oerr := Cast(Contiguous(to, make([]byte, n*to.Size()), []int{n}), Contiguous(from, xs, []int{n}))
			check("astype "+from.String()+" to "+to.String(), to, lerr, oerr, func(d []byte) error {
				return Cast(Contiguous(to, d, []int{n}), Contiguous(from, xs, []int{n}))
			}, loop, xs)
		}
	}
	if compared < 500 {
		t.Fatalf("only %d loops compared", compared)
	}
	if _, err := ElementwiseLoop("add", zarr.Float64, zarr.Float64, zarr.Float32); err == nil {
		t.Fatal("add of float64 and float32: no error")
	}
	if _, err := ElementwiseLoop("add", zarr.Float32, zarr.Float64, zarr.Float64); err == nil {
		t.Fatal("add of float64 into float32: no error")
	}
	if _, err := ElementwiseLoop("where", zarr.Float64, zarr.Int8, zarr.Float64, zarr.Float64); err == nil {
		t.Fatal("where with an int8 condition: no error")
	}
	if _, err := ElementwiseLoop("no_such_op", zarr.Float64, zarr.Float64); err == nil {
		t.Fatal("unknown op: no error")
	}
}
