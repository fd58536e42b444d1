package kernels

import (
	"bytes"
	"math"
	"testing"

	"github.com/cubego/cubego/zarr"
)

// Element-wise kernels whose every input is one value broadcast (zero
// strides) compute it once and fill the result: the bytes the same kernels
// give over inputs holding the value at every position.
func TestUniformInputsMatchFilled(t *testing.T) {
	shape := []int{3, 5, 70}
	n := 3 * 5 * 70
	scalar := func(dt zarr.DataType, v Scalar) Operand {
		return Operand{DType: dt, Data: ScalarBytes(v, dt), Shape: shape, Strides: make([]int, len(shape))}
	}
	filled := func(o Operand) Operand {
		b := make([]byte, n*o.DType.Size())
		Fill(b, o.DType, o.Data)
		return Contiguous(o.DType, b, shape)
	}
	values := []Scalar{{Kind: 'f', F: 0.1}, {Kind: 'f', F: -3}, {Kind: 'f', F: math.NaN()}, {Kind: 'i', I: 7}}
	checked := 0
	for _, dt := range []zarr.DataType{zarr.Float64, zarr.Float32, zarr.Int32, zarr.Complex128} {
		for _, va := range values {
			for _, vb := range values {
				a, b := scalar(dt, va), scalar(dt, vb)
				for _, op := range []string{"add", "subtract", "multiply", "maximum", "minimum"} {
					got := Contiguous(dt, make([]byte, n*dt.Size()), shape)
					want := Contiguous(dt, make([]byte, n*dt.Size()), shape)
					errG := Binary(op, got, a, b)
					errW := Binary(op, want, filled(a), filled(b))
					if (errG == nil) != (errW == nil) {
						t.Fatalf("%s %s: errors %v and %v", dt, op, errG, errW)
					}
					if errG == nil && !bytes.Equal(got.Data, want.Data) {
						t.Fatalf("%s %s(%v, %v): broadcast inputs give other bytes", dt, op, va, vb)
					}
					checked++
				}
			}
			if dt == zarr.Float64 || dt == zarr.Float32 {
				for _, op := range []string{"exp", "sqrt", "negative", "isnan"} {
					out := dt
					if op == "isnan" {
						out = zarr.Bool
					}
					got := Contiguous(out, make([]byte, n*out.Size()), shape)
					want := Contiguous(out, make([]byte, n*out.Size()), shape)
					if err := Unary(op, got, scalar(dt, va)); err != nil {
						t.Fatal(err)
					}
					if err := Unary(op, want, filled(scalar(dt, va))); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got.Data, want.Data) {
						t.Fatalf("%s %s(%v): broadcast input gives other bytes", dt, op, va)
					}
					checked++
				}
			}
		}
	}
	if checked < 300 {
		t.Fatalf("only %d cases", checked)
	}
}
