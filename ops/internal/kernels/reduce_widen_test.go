package kernels

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/cubego/cubego/zarr"
)

// TestWideningReduceMatchesCastFirst folds narrow operands straight into a
// wide accumulator and compares with casting first, over strided views,
// axis sets and accumulation across two steps.
func TestWideningReduceMatchesCastFirst(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	froms := []zarr.DataType{zarr.Bool, zarr.Int8, zarr.Int16, zarr.Int32, zarr.Int64, zarr.Uint8, zarr.Uint16, zarr.Uint32, zarr.Uint64}
	shape := []int{3, 5, 4}
	for _, from := range froms {
		for _, to := range []zarr.DataType{zarr.Int64, zarr.Uint64} {
			for _, op := range []string{"sum", "prod", "nansum", "nanprod"} {
				if !Widens(op, from, to) {
					if from != to {
						t.Errorf("Widens(%s, %s, %s) = false", op, from, to)
					}
					continue
				}
				for _, axes := range [][]int{{0}, {2}, {0, 2}, {0, 1, 2}} {
					accShape := append([]int(nil), shape...)
					for _, a := range axes {
						accShape[a] = 1
					}
					nAcc, _ := numElements(accShape)
					want := make([]byte, nAcc*to.Size())
					got := make([]byte, nAcc*to.Size())
					for step := range 2 {
						data := randomReduceData(r, from, 60, 0)
						x := Contiguous(from, data, shape)
						// A transposed view of the same data (strides not C order).
						x.Strides = []int{4, 12, 1}
						wide := make([]byte, 60*to.Size())
						mustNil(t, Cast(Contiguous(to, wide, shape), x))
						mustNil(t, Reduce(op, Contiguous(to, want, accShape), Contiguous(to, wide, shape), axes, step == 0))
						mustNil(t, Reduce(op, Contiguous(to, got, accShape), x, axes, step == 0))
					}
					if !bytes.Equal(got, want) {
						t.Errorf("%s %s -> %s axes %v: widening fold differs from casting first", op, from, to, axes)
					}
				}
			}
		}
	}
	if Widens("max", zarr.Int16, zarr.Int64) || Widens("sum", zarr.Float32, zarr.Float64) {
		t.Error("Widens admits a max or a float sum")
	}
	if err := Reduce("max", Contiguous(zarr.Int64, make([]byte, 8), []int{1}), Contiguous(zarr.Int16, make([]byte, 4), []int{2}), []int{0}, true); err == nil {
		t.Error("max of int16 into an int64 accumulator: no error")
	}
}

func BenchmarkWideningSum(b *testing.B) {
	x := make([]byte, 1<<24) // 8 M uint16
	acc := make([]byte, 8)
	b.SetBytes(int64(len(x)))
	for b.Loop() {
		if err := Reduce("sum", Contiguous(zarr.Uint64, acc, []int{1}), Contiguous(zarr.Uint16, x, []int{len(x) / 2}), []int{0}, true); err != nil {
			b.Fatal(err)
		}
	}
}
