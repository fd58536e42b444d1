package kernels

import (
	"fmt"
	"math"
	"math/big"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/cubego/cubego/zarr"
)

var reduceOps = []string{"sum", "prod", "min", "max", "any", "all", "nansum", "nanprod", "nanmin", "nanmax"}

// reduceRef is the reference reduction of the elements vals (in C order) of
// one accumulator element, computed one element at a time in big integers,
// float64 or complex128. It returns the result as one element of out, and
// ok false where the op is undefined for dt.
func reduceRef(op string, dt zarr.DataType, vals [][]byte) (res []byte, ok bool) {
	nan := op == "nansum" || op == "nanprod" || op == "nanmin" || op == "nanmax"
	base := op
	if nan {
		base = op[3:]
	}
	isNaN := func(e []byte) bool { return elemIsNaN(dt, e) }
	switch {
	case base == "any" || base == "all":
		r := base == "all"
		for _, v := range vals {
			nz := string(v) != string(make([]byte, len(v))) && !isNegZero(dt, v)
			if base == "any" {
				r = r || nz
			} else {
				r = r && nz
			}
		}
		return []byte{b2u(r)}, true
	case dt == zarr.Bool:
		if base != "min" && base != "max" {
			return nil, false
		}
		return reduceRef(map[string]string{"min": "all", "max": "any"}[base], dt, vals)
	case isIntegerType(dt):
		acc := big.NewInt(0)
		if base == "prod" {
			acc.SetInt64(1)
		}
		for i, v := range vals {
			x := getBig(dt, v, 0)
			switch {
			case base == "sum":
				acc.Add(acc, x)
			case base == "prod":
				acc.Mul(acc, x)
			case i == 0, base == "min" && x.Cmp(acc) < 0, base == "max" && x.Cmp(acc) > 0:
				acc.Set(x)
			}
		}
		return wrappedBytes(acc, dt), true
	case dt == zarr.Float32 || dt == zarr.Float64:
		var acc float64
		if base == "prod" {
			acc = 1
		}
		seen := false
		for _, v := range vals {
			x := floatElem(dt, v)
			if nan && math.IsNaN(x) {
				continue
			}
			switch {
			case base == "sum":
				acc += x
			case base == "prod":
				acc *= x
			case !seen || math.IsNaN(x) || math.IsNaN(acc):
				if !seen || !math.IsNaN(acc) {
					acc = x
				}
			case base == "min":
				acc = math.Min(acc, x)
			default:
				acc = math.Max(acc, x)
			}
			seen = true
		}
		if !seen && (base == "min" || base == "max") {
			acc = math.NaN() // all NaN
		}
		return floatBytes(dt, []float64{acc}), true
	}
	var acc complex128
	if base == "prod" {
		acc = 1
	}
	seen := false
	for _, v := range vals {
		x := complexElem(dt, v)
		if nan && isNaN(v) {
			continue
		}
		switch {
		case base == "sum":
			acc += x
		case base == "prod":
			acc *= x
		case !seen:
			acc = x
		case cmplx.IsNaN(acc) || math.IsNaN(real(acc)) || math.IsNaN(imag(acc)):
		case math.IsNaN(real(x)) || math.IsNaN(imag(x)):
			acc = x
		case base == "min" && (real(x) < real(acc) || real(x) == real(acc) && imag(x) < imag(acc)):
			acc = x
		case base == "max" && (real(x) > real(acc) || real(x) == real(acc) && imag(x) > imag(acc)):
			acc = x
		}
		seen = true
	}
	if !seen && (base == "min" || base == "max") {
		acc = complex(math.NaN(), math.NaN())
	}
	return ScalarBytes(Scalar{Kind: 'c', C: acc}, dt), true
}

func wrappedBytes(v *big.Int, dt zarr.DataType) []byte {
	m := new(big.Int).Lsh(big.NewInt(1), 64)
	return ScalarBytes(Scalar{Kind: 'u', U: new(big.Int).Mod(v, m).Uint64()}, dt)
}

func floatElem(dt zarr.DataType, e []byte) float64 {
	if dt == zarr.Float32 {
		return float64(as[float32](e)[0])
	}
	return as[float64](e)[0]
}

func complexElem(dt zarr.DataType, e []byte) complex128 {
	if dt == zarr.Complex64 {
		return complex128(as[complex64](e)[0])
	}
	return as[complex128](e)[0]
}

func elemIsNaN(dt zarr.DataType, e []byte) bool {
	switch dt {
	case zarr.Float32, zarr.Float64:
		return math.IsNaN(floatElem(dt, e))
	case zarr.Complex64, zarr.Complex128:
		c := complexElem(dt, e)
		return math.IsNaN(real(c)) || math.IsNaN(imag(c))
	}
	return false
}

func isNegZero(dt zarr.DataType, e []byte) bool {
	switch dt {
	case zarr.Float32, zarr.Float64:
		return floatElem(dt, e) == 0
	case zarr.Complex64, zarr.Complex128:
		return complexElem(dt, e) == 0
	}
	return false
}

// closeReduce compares a reduction with its reference: exactly for integers
// and bools, within tol relative to scale for sums and products.
func closeReduce(dt zarr.DataType, got, want []byte, tol float64) bool {
	switch dt {
	case zarr.Float32, zarr.Float64:
		g, w := floatElem(dt, got), floatElem(dt, want)
		if math.IsNaN(g) || math.IsNaN(w) || math.IsInf(w, 0) {
			return math.IsNaN(g) == math.IsNaN(w) && (math.IsNaN(g) || g == w)
		}
		return math.Abs(g-w) <= tol*max(1, math.Abs(w))
	case zarr.Complex64, zarr.Complex128:
		g, w := complexElem(dt, got), complexElem(dt, want)
		gn := math.IsNaN(real(g)) || math.IsNaN(imag(g))
		wn := math.IsNaN(real(w)) || math.IsNaN(imag(w))
		if gn || wn {
			return gn == wn
		}
		return cmplx.Abs(g-w) <= tol*max(1, cmplx.Abs(w))
	}
	return string(got) == string(want)
}

// randomReduceData returns n elements of dt: random values with a few NaNs
// (for floats), kept small for products of floats.
func randomReduceData(r *rand.Rand, dt zarr.DataType, n int, nanRate float64) []byte {
	switch dt {
	case zarr.Float32, zarr.Float64:
		v := make([]float64, n)
		for i := range v {
			v[i] = 0.5 + r.Float64()
			if r.IntN(2) == 0 {
				v[i] = -v[i]
			}
			if r.Float64() < nanRate {
				v[i] = math.NaN()
			}
		}
		return floatBytes(dt, v)
	case zarr.Complex64, zarr.Complex128:
		var b []byte
		for range n {
			c := complex(float64(r.IntN(3))-1, 0.5+r.Float64()) // ties in the real part
			if r.Float64() < nanRate {
				c = complex(math.NaN(), 1)
			}
			b = append(b, ScalarBytes(Scalar{Kind: 'c', C: c}, dt)...)
		}
		return b
	case zarr.Bool:
		b := randomBytes(r, dt, n)
		for i := range b {
			b[i] = b2u(r.IntN(8) != 0)
		}
		return b
	}
	return randomBytes(r, dt, n)
}

// refReduceView computes the reference of Reduce for every accumulator
// element of x (a view) over axes.
func refReduceView(op string, x Operand, axes []int, out zarr.DataType) ([]byte, bool) {
	accShape := append([]int(nil), x.Shape...)
	for _, a := range axes {
		accShape[a] = 1
	}
	n := 1
	for _, e := range accShape {
		n *= e
	}
	groups := make([][][]byte, n)
	idx := make([]int, len(x.Shape))
	size := x.DType.Size()
	total := 1
	for _, e := range x.Shape {
		total *= e
	}
	acs := cStrides(accShape)
	for range total {
		ai := 0
		for d, i := range idx {
			if accShape[d] != 1 {
				ai += i * acs[d]
			}
		}
		p := viewElem(x, idx)
		groups[ai] = append(groups[ai], x.Data[p:p+size])
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < x.Shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	var res []byte
	for _, g := range groups {
		v, ok := reduceRef(op, x.DType, g)
		if !ok {
			return nil, false
		}
		res = append(res, v...)
	}
	_ = out
	return res, true
}

// TestReduceReference checks every op and dtype over every combination of
// axes of a 3-D shape, for contiguous and transposed inputs, against the
// one-element-at-a-time reference; and that reducing two halves (first,
// then accumulate) equals reducing the whole.
func TestReduceReference(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, sc := range []struct {
		shape, transposed []int
		axesSets          [][]int
	}{
		{[]int{3, 4, 5}, []int{1, 3, 12}, [][]int{{}, {0}, {1}, {2}, {0, 1}, {0, 2}, {1, 2}, {0, 1, 2}}},
		{[]int{3, 45}, []int{1, 3}, [][]int{{}, {0}, {1}, {0, 1}}},
		// Enough rows and columns for the vector slab loops (vector.go).
		{[]int{9, 2, 37}, []int{1, 9, 18}, [][]int{{0}, {1}, {0, 1}}},
	} {
		testReduceShape(t, r, sc.shape, sc.transposed, sc.axesSets)
	}
}

func testReduceShape(t *testing.T, r *rand.Rand, shape, transposed []int, axesSets [][]int) {
	size := 1
	for _, e := range shape {
		size *= e
	}
	for _, dt := range allDTypes {
		for _, op := range reduceOps {
			out := dt
			if op == "any" || op == "all" {
				out = zarr.Bool
			}
			for _, nanRate := range []float64{0, 0.05} {
				data := randomReduceData(r, dt, size, nanRate)
				views := map[string]Operand{
					"contiguous": Contiguous(dt, data, shape),
					"transposed": {DType: dt, Data: data, Shape: shape, Strides: transposed},
				}
				for vname, x := range views {
					for _, axes := range axesSets {
						name := fmt.Sprintf("%s %s %s axes %v nan %v", op, dt, vname, axes, nanRate)
						want, defined := refReduceView(op, x, axes, out)
						accShape := append([]int(nil), shape...)
						for _, a := range axes {
							accShape[a] = 1
						}
						acc := make([]byte, len(want))
						if !defined {
							acc = make([]byte, size*out.Size())
						}
						err := Reduce(op, Contiguous(out, acc, accShape), x, axes, true)
						if !defined {
							if err == nil {
								t.Errorf("%s: no error", name)
							}
							continue
						}
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						tol := 1e-12
						if dt == zarr.Float32 || dt == zarr.Complex64 {
							tol = 1e-5
						}
						for i := range len(want) / out.Size() {
							g, w := acc[i*out.Size():(i+1)*out.Size()], want[i*out.Size():(i+1)*out.Size()]
							if !closeReduce(out, g, w, tol) {
								t.Errorf("%s element %d = %s, want %s", name, i, formatElem(out, g), formatElem(out, w))
								break
							}
						}
						// Two halves along axis 0 (reduced or not, acc covers it).
						if len(axes) == 0 || axes[0] != 0 {
							continue
						}
						acc2 := make([]byte, len(want))
						half := func(lo, hi int) Operand {
							s := x.Strides
							if s == nil {
								s = cStrides(shape)
							}
							hs := append([]int{hi - lo}, shape[1:]...)
							return Operand{DType: dt, Data: x.Data, Shape: hs, Strides: s, Offset: lo * s[0]}
						}
						mustNil(t, Reduce(op, Contiguous(out, acc2, accShape), half(0, 1), axes, true))
						mustNil(t, Reduce(op, Contiguous(out, acc2, accShape), half(1, shape[0]), axes, false))
						for i := range len(want) / out.Size() {
							g, w := acc2[i*out.Size():(i+1)*out.Size()], want[i*out.Size():(i+1)*out.Size()]
							if !closeReduce(out, g, w, tol) {
								t.Errorf("%s accumulated element %d = %s, want %s", name, i, formatElem(out, g), formatElem(out, w))
								break
							}
						}
					}
				}
			}
		}
	}
}

// TestReduceSpecial covers NaN semantics, empty and 0-d inputs and errors.
func TestReduceSpecial(t *testing.T) {
	nan := math.NaN()
	f := func(op string, first bool, acc0 float64, xs ...float64) float64 {
		acc := enc(acc0)
		mustNil(t, Reduce(op, Contiguous(zarr.Float64, acc, []int{1}), Contiguous(zarr.Float64, enc(xs...), []int{len(xs)}), []int{0}, first))
		return dec[float64](acc)[0]
	}
	for _, c := range []struct {
		op    string
		first bool
		acc   float64
		xs    []float64
		want  float64
	}{
		{"max", true, 0, []float64{1, nan, 3}, nan},
		{"min", true, 0, []float64{nan, 1}, nan},
		{"nanmax", true, 0, []float64{1, nan, 3}, 3},
		{"nanmin", true, 0, []float64{nan, 2, 1}, 1},
		{"nanmin", true, 0, []float64{nan, nan}, nan},
		{"nanmin", false, nan, []float64{nan, 5}, 5},
		{"nanmax", false, 7, []float64{nan, nan}, 7},
		{"nansum", true, 9, []float64{nan, 1, nan, 2}, 3},
		{"nansum", true, 9, []float64{nan}, 0},
		{"nanprod", false, 2, []float64{nan, 3}, 6},
		{"sum", false, 1, []float64{2, 3}, 6},
		{"prod", true, 5, []float64{2, 3}, 6},
		{"sum", true, 5, []float64{}, 0},
		{"prod", true, 5, []float64{}, 1},
		{"max", false, 5, []float64{}, 5},
		{"max", true, -1, []float64{math.Inf(-1)}, math.Inf(-1)},
	} {
		got := f(c.op, c.first, c.acc, c.xs...)
		if got != c.want && !(math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("%s(first=%v, acc=%v, %v) = %v, want %v", c.op, c.first, c.acc, c.xs, got, c.want)
		}
	}
	// min of an empty array is an error, as in numpy.
	if err := Reduce("min", Contiguous(zarr.Float64, enc(0.0), []int{1}), Contiguous(zarr.Float64, nil, []int{0}), []int{0}, true); err == nil {
		t.Error("min of empty: no error")
	}
	// any/all of empty.
	b := []byte{7}
	mustNil(t, Reduce("all", Contiguous(zarr.Bool, b, []int{1, 1}), Contiguous(zarr.Float64, nil, []int{0, 1}), []int{0}, true))
	if b[0] != 1 {
		t.Errorf("all of empty = %d", b[0])
	}
	// Empty accumulator: nothing to do.
	mustNil(t, Reduce("sum", Contiguous(zarr.Int8, nil, []int{1, 0}), Contiguous(zarr.Int8, nil, []int{4, 0}), []int{0}, true))
	// 0-d.
	acc := enc(int16(0))
	mustNil(t, Reduce("max", Contiguous(zarr.Int16, acc, []int{}), Contiguous(zarr.Int16, enc(int16(-9)), []int{}), nil, true))
	if v := dec[int16](acc)[0]; v != -9 {
		t.Errorf("0-d max = %d", v)
	}
	// Errors.
	x := Contiguous(zarr.Float64, make([]byte, 48), []int{2, 3})
	for name, err := range map[string]error{
		"bad axis":        Reduce("sum", Contiguous(zarr.Float64, make([]byte, 48), []int{2, 3}), x, []int{2}, true),
		"duplicate axis":  Reduce("sum", Contiguous(zarr.Float64, make([]byte, 24), []int{1, 3}), x, []int{0, 0}, true),
		"acc shape":       Reduce("sum", Contiguous(zarr.Float64, make([]byte, 24), []int{3}), x, []int{0}, true),
		"acc dtype":       Reduce("sum", Contiguous(zarr.Float32, make([]byte, 24), []int{1, 3}), x, []int{0}, true),
		"any to float":    Reduce("any", Contiguous(zarr.Float64, make([]byte, 24), []int{1, 3}), x, []int{0}, true),
		"unknown op":      Reduce("mean", Contiguous(zarr.Float64, make([]byte, 24), []int{1, 3}), x, []int{0}, true),
		"bool sum":        Reduce("sum", Contiguous(zarr.Bool, make([]byte, 3), []int{1, 3}), Contiguous(zarr.Bool, make([]byte, 6), []int{2, 3}), []int{0}, true),
		"float16 min":     Reduce("min", Contiguous(zarr.Float16, make([]byte, 6), []int{1, 3}), Contiguous(zarr.Float16, make([]byte, 12), []int{2, 3}), []int{0}, true),
		"acc not C order": Reduce("sum", Operand{DType: zarr.Float64, Data: make([]byte, 48), Shape: []int{1, 3}, Strides: []int{1, 2}}, x, []int{0}, true),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestPairwiseSum checks that float32 sums keep numpy's pairwise accuracy:
// a naive float32 loop over 2^22 values of 0.1 is off by percents.
func TestPairwiseSum(t *testing.T) {
	const n = 1 << 22
	x := make([]float32, n)
	for i := range x {
		x[i] = 0.1
	}
	want := float64(float32(0.1)) * n
	for name, v := range map[string]Operand{
		"contiguous": Contiguous(zarr.Float32, enc(x...), []int{n}),
		"strided":    {DType: zarr.Float32, Data: enc(x...), Shape: []int{n / 2}, Strides: []int{2}},
	} {
		acc := make([]byte, 4)
		mustNil(t, Reduce("sum", Contiguous(zarr.Float32, acc, []int{1}), v, []int{0}, true))
		w := want
		if name == "strided" {
			w /= 2
		}
		if got := float64(dec[float32](acc)[0]); math.Abs(got-w)/w > 1e-6 {
			t.Errorf("%s: sum = %v, want %v", name, got, w)
		}
	}
}

func ExampleReduce() {
	// Column sums of a 2×3 chunk, then a second chunk accumulated.
	acc := make([]byte, 3*8)
	a := Contiguous(zarr.Int64, enc[int64](1, 2, 3, 4, 5, 6), []int{2, 3})
	b := Contiguous(zarr.Int64, enc[int64](10, 20, 30), []int{1, 3})
	if err := Reduce("sum", Contiguous(zarr.Int64, acc, []int{1, 3}), a, []int{0}, true); err != nil {
		panic(err)
	}
	if err := Reduce("sum", Contiguous(zarr.Int64, acc, []int{1, 3}), b, []int{0}, false); err != nil {
		panic(err)
	}
	fmt.Println(dec[int64](acc))
	// Output: [15 27 39]
}
