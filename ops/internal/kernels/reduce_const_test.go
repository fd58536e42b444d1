package kernels

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/cubego/cubego/zarr"
)

// A reduction of a zero-stride operand (every element the same value, as
// a constant virtual array's broadcast block) gives the bits the same
// reduction of the value stored at every position gives: pairwise sums
// take the same splits, the other folds combine equal values. Over every
// axis, lengths around the pairwise block and its splits, values whose
// repeated sums round, and NaN.
func TestReduceZeroStrideRunMatchesContiguous(t *testing.T) {
	values := []Scalar{
		{Kind: 'f', F: 0.1}, {Kind: 'f', F: 1.0 / 3}, {Kind: 'f', F: -2.5}, {Kind: 'f', F: 1e16},
		{Kind: 'f', F: math.NaN()}, {Kind: 'f', F: 1.0000001}, {Kind: 'i', I: 7}, {Kind: 'i', I: 0},
		{Kind: 'c', C: complex(0.1, -1.0/3)}, {Kind: 'c', C: complex(math.NaN(), 1)},
	}
	dtypes := []zarr.DataType{zarr.Float64, zarr.Float32, zarr.Complex128, zarr.Complex64, zarr.Int32, zarr.Int64, zarr.Uint8, zarr.Bool}
	ops := []string{"sum", "nansum", "prod", "nanprod", "min", "max", "nanmin", "nanmax", "any", "all"}
	shapes := [][]int{{1}, {7}, {8}, {9}, {127}, {128}, {129}, {1000}, {4097}, {250000}, {300, 1100}, {3, 129, 17}}
	checked := 0
	for _, dt := range dtypes {
		for _, v := range values {
			val := ScalarBytes(v, dt)
			for _, shape := range shapes {
				n := 1
				for _, e := range shape {
					n *= e
				}
				filled := make([]byte, n*dt.Size())
				Fill(filled, dt, val)
				axesSets := [][]int{}
				all := make([]int, len(shape))
				for d := range all {
					all[d] = d
					axesSets = append(axesSets, []int{d})
				}
				axesSets = append(axesSets, all)
				for _, op := range ops {
					accDT := dt
					if op == "any" || op == "all" {
						accDT = zarr.Bool
					}
					for _, axes := range axesSets {
						accShape := append([]int(nil), shape...)
						for _, a := range axes {
							accShape[a] = 1
						}
						na := 1
						for _, e := range accShape {
							na *= e
						}
						want := make([]byte, na*accDT.Size())
						errW := Reduce(op, Contiguous(accDT, want, accShape), Contiguous(dt, filled, shape), axes, true)
						got := make([]byte, na*accDT.Size())
						x := Operand{DType: dt, Data: val, Shape: shape, Strides: make([]int, len(shape))}
						errG := Reduce(op, Contiguous(accDT, got, accShape), x, axes, true)
						if (errW == nil) != (errG == nil) {
							t.Fatalf("%s %s %v axes %v: errors differ: %v vs %v", op, dt, shape, axes, errW, errG)
						}
						if errW != nil {
							continue
						}
						// A second step folds into the accumulator.
						errW = Reduce(op, Contiguous(accDT, want, accShape), Contiguous(dt, filled, shape), axes, false)
						errG = Reduce(op, Contiguous(accDT, got, accShape), x, axes, false)
						if errW != nil || errG != nil {
							t.Fatalf("%s %s %v axes %v: second step: %v, %v", op, dt, shape, axes, errW, errG)
						}
						if !bytes.Equal(got, want) {
							t.Fatalf("%s of %v (%s) over %v axes %v: zero-stride %v, contiguous %v", op, v, dt, shape, axes,
								fmt.Sprint(got[:min(len(got), 16)]), fmt.Sprint(want[:min(len(want), 16)]))
						}
						checked++
					}
				}
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d cases compared", checked)
	}
}
