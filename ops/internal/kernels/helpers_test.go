package kernels

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/cubego/cubego/zarr"
)

// allDTypes lists every dtype a kernel may see (Float16 only in Cast).
var allDTypes = []zarr.DataType{
	zarr.Bool, zarr.Int8, zarr.Int16, zarr.Int32, zarr.Int64, zarr.Uint8, zarr.Uint16, zarr.Uint32,
	zarr.Uint64, zarr.Float32, zarr.Float64, zarr.Complex64, zarr.Complex128,
}

var intDTypes = []zarr.DataType{
	zarr.Int8, zarr.Int16, zarr.Int32, zarr.Int64, zarr.Uint8, zarr.Uint16, zarr.Uint32, zarr.Uint64,
}

// enc returns the bytes of values.
func enc[T any](vs ...T) []byte { return append([]byte(nil), bytesOfSlice(vs)...) }

// dec returns a copy of the elements in b.
func dec[T any](b []byte) []T { return append([]T(nil), as[T](b)...) }

func isSigned(dt zarr.DataType) bool {
	return dt == zarr.Int8 || dt == zarr.Int16 || dt == zarr.Int32 || dt == zarr.Int64
}

// getBig returns element i of an integer or bool buffer as a big.Int.
func getBig(dt zarr.DataType, b []byte, i int) *big.Int {
	e := b[i*dt.Size() : (i+1)*dt.Size()]
	switch dt {
	case zarr.Int8:
		return big.NewInt(int64(as[int8](e)[0]))
	case zarr.Int16:
		return big.NewInt(int64(as[int16](e)[0]))
	case zarr.Int32:
		return big.NewInt(int64(as[int32](e)[0]))
	case zarr.Int64:
		return big.NewInt(as[int64](e)[0])
	case zarr.Uint8, zarr.Bool:
		return new(big.Int).SetUint64(uint64(e[0]))
	case zarr.Uint16:
		return new(big.Int).SetUint64(uint64(as[uint16](e)[0]))
	case zarr.Uint32:
		return new(big.Int).SetUint64(uint64(as[uint32](e)[0]))
	}
	return new(big.Int).SetUint64(as[uint64](e)[0])
}

// wrapBig reduces v modulo 2^bits into dt's range (two's complement).
func wrapBig(v *big.Int, dt zarr.DataType) *big.Int {
	bits := uint(dt.Size() * 8)
	m := new(big.Int).Lsh(big.NewInt(1), bits)
	r := new(big.Int).Mod(v, m)
	if isSigned(dt) && r.Cmp(new(big.Int).Rsh(m, 1)) >= 0 {
		r.Sub(r, m)
	}
	return r
}

// randomInts returns n values of an integer dtype: the special values 0,
// ±1, the extremes and bit widths, then uniformly random bit patterns and
// small numbers.
func randomInts(r *rand.Rand, dt zarr.DataType, n int) []byte {
	bits := dt.Size() * 8
	lo, hi := new(big.Int), new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(bits)), big.NewInt(1))
	if isSigned(dt) {
		lo = new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), uint(bits-1)))
		hi = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(bits-1)), big.NewInt(1))
	}
	special := []*big.Int{big.NewInt(0), big.NewInt(1), big.NewInt(-1), big.NewInt(2), big.NewInt(-3),
		big.NewInt(int64(bits - 1)), big.NewInt(int64(bits)), big.NewInt(int64(bits + 1)), lo, hi}
	out := make([]byte, 0, n*dt.Size())
	for i := range n {
		var v *big.Int
		switch {
		case i < len(special):
			v = special[i]
		case i%3 == 0:
			v = big.NewInt(int64(r.IntN(21) - 10))
		default:
			v = new(big.Int).SetUint64(r.Uint64())
		}
		v = wrapBig(v, dt)
		out = append(out, ScalarBytes(Scalar{Kind: 'u', U: new(big.Int).Mod(v, new(big.Int).Lsh(big.NewInt(1), 64)).Uint64()}, dt)...)
	}
	return out
}

// randomFloats returns n float64 values: specials then random ones of
// moderate magnitude (as float32 values when f32).
func randomFloats(r *rand.Rand, n int, f32 bool) []float64 {
	special := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 2.5, -2.5, 3, -7.25, math.Inf(1), math.Inf(-1), math.NaN()}
	out := make([]float64, n)
	for i := range out {
		if i < len(special) {
			out[i] = special[i]
			continue
		}
		v := (r.Float64()*2 - 1) * math.Pow(10, float64(r.IntN(7)-3))
		if i%5 == 0 {
			v = math.Round(v * 4)
		}
		if f32 {
			v = float64(float32(v))
		}
		out[i] = v
	}
	return out
}

// floatBytes encodes float64 values as dt (Float32 or Float64).
func floatBytes(dt zarr.DataType, vs []float64) []byte {
	if dt == zarr.Float32 {
		f := make([]float32, len(vs))
		for i, v := range vs {
			f[i] = float32(v)
		}
		return enc(f...)
	}
	return enc(vs...)
}

func mustNil(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// viewElem returns the byte offset of the element at idx of a view.
func viewElem(o Operand, idx []int) int {
	strides := o.Strides
	if strides == nil {
		strides = cStrides(o.Shape)
	}
	off := o.Offset
	for d, i := range idx {
		off += i * strides[d]
	}
	return off * o.DType.Size()
}

// naiveMaterialize copies a view to a C-contiguous buffer one element at a
// time (the test's independent reference for strided reads).
func naiveMaterialize(o Operand) []byte {
	n := 1
	for _, e := range o.Shape {
		n *= e
	}
	size := o.DType.Size()
	out := make([]byte, 0, n*size)
	idx := make([]int, len(o.Shape))
	for range n {
		p := viewElem(o, idx)
		out = append(out, o.Data[p:p+size]...)
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < o.Shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return out
}

// randomBytes returns n elements of dt with random bit patterns, bools
// canonical.
func randomBytes(r *rand.Rand, dt zarr.DataType, n int) []byte {
	b := make([]byte, n*dt.Size())
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	if dt == zarr.Bool {
		for i := range b {
			b[i] &= 1
		}
	}
	return b
}
