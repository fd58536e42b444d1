package kernels

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/cubego/cubego/zarr"
)

// TestHalfRoundTrip checks every binary16 bit pattern: to float64 and back
// gives the same bits (NaN payloads included).
func TestHalfRoundTrip(t *testing.T) {
	for h := range 1 << 16 {
		f := halfToFloat64(uint16(h))
		if got := float64ToHalf(f); got != uint16(h) {
			t.Fatalf("half %#04x -> %v -> %#04x", h, f, got)
		}
		if exp := h >> 10 & 0x1f; exp == 0x1f && h&0x3ff != 0 && !math.IsNaN(f) {
			t.Fatalf("half NaN %#04x -> %v", h, f)
		}
	}
}

// TestHalfRounding checks round to nearest even between every pair of
// neighbouring positive halves, overflow and underflow.
func TestHalfRounding(t *testing.T) {
	for h := uint16(0); h < 0x7bff; h++ {
		lo, hi := halfToFloat64(h), halfToFloat64(h+1)
		mid := (lo + hi) / 2
		even := h
		if h&1 != 0 {
			even = h + 1
		}
		for _, c := range []struct {
			f    float64
			want uint16
		}{
			{mid, even},
			{math.Nextafter(mid, 0), h},
			{math.Nextafter(mid, 1e9), h + 1},
			{-mid, even | 0x8000},
		} {
			if got := float64ToHalf(c.f); got != c.want {
				t.Fatalf("float64ToHalf(%v) = %#04x, want %#04x", c.f, got, c.want)
			}
		}
	}
	for _, c := range []struct {
		f    float64
		want uint16
	}{
		{65504, 0x7bff},
		{65519.99, 0x7bff},
		{65520, 0x7c00}, // the tie rounds to even: Inf
		{1e300, 0x7c00},
		{-1e300, 0xfc00},
		{math.Inf(-1), 0xfc00},
		{0x1p-25, 0},                         // tie between 0 and the smallest subnormal
		{math.Nextafter(0x1p-25, 1), 0x0001}, // just above
		{0x1p-26, 0},
		{math.Copysign(0, -1), 0x8000},
		{5e-324, 0},
		{0x1p-14 - 0x1p-25, 0x0400}, // rounds up from the largest subnormal to the smallest normal
	} {
		if got := float64ToHalf(c.f); got != c.want {
			t.Errorf("float64ToHalf(%v) = %#04x, want %#04x", c.f, got, c.want)
		}
	}
	if got := float64ToHalf(math.NaN()); got&0x7c00 != 0x7c00 || got&0x3ff == 0 {
		t.Errorf("float64ToHalf(NaN) = %#04x", got)
	}
}

// TestCastIntToFloatRounding checks integer to float conversions of random
// 64-bit values against big.Float rounding to nearest even.
func TestCastIntToFloatRounding(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	const n = 2000
	for _, src := range []zarr.DataType{zarr.Int64, zarr.Uint64} {
		x := randomInts(r, src, n)
		for _, dst := range []zarr.DataType{zarr.Float32, zarr.Float64} {
			d := make([]byte, n*dst.Size())
			mustNil(t, Cast(Contiguous(dst, d, []int{n}), Contiguous(src, x, []int{n})))
			prec := uint(24)
			if dst == zarr.Float64 {
				prec = 53
			}
			for i := range n {
				want, _ := new(big.Float).SetPrec(prec).SetMode(big.ToNearestEven).SetInt(getBig(src, x, i)).Float64()
				if got := floatElem(dst, d[i*dst.Size():]); got != want {
					t.Fatalf("cast %s %v to %s = %v, want %v", src, getBig(src, x, i), dst, got, want)
				}
			}
		}
	}
}

// TestCastFloatToInt checks truncation and wrapping of random floats.
func TestCastFloatToInt(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	const n = 2000
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = (r.Float64()*2 - 1) * math.Exp2(float64(r.IntN(70)))
	}
	vals[0], vals[1], vals[2], vals[3] = math.NaN(), math.Inf(1), -0x1p63, 0x1p64-2048
	x := Contiguous(zarr.Float64, enc(vals...), []int{n})
	for _, dst := range intDTypes {
		d := make([]byte, n*dst.Size())
		mustNil(t, Cast(Contiguous(dst, d, []int{n}), x))
		for i, v := range vals {
			var want *big.Int
			switch {
			case math.IsNaN(v):
				want = big.NewInt(0)
			case math.Abs(v) < 0x1p63 || v == -0x1p63 || v >= 0 && v < 0x1p64:
				want, _ = big.NewFloat(math.Trunc(v)).Int(nil)
			default:
				want = big.NewInt(math.MinInt64)
			}
			if got, w := getBig(dst, d, i), wrapBig(want, dst); got.Cmp(w) != 0 {
				t.Fatalf("cast float64 %v to %s = %v, want %v", v, dst, got, w)
			}
		}
	}
}

// TestCastAllPairs casts random data between every pair of dtypes, through
// a strided view, and back when the round trip is exact.
func TestCastAllPairs(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	dts := append([]zarr.DataType{zarr.Float16}, allDTypes...)
	for _, src := range dts {
		for _, dst := range dts {
			data := randomBytes(r, src, 40)
			view := Operand{DType: src, Data: data, Shape: []int{4, 5}, Strides: []int{1, 8}} // transposed
			got := make([]byte, 20*dst.Size())
			mustNil(t, Cast(Contiguous(dst, got, []int{4, 5}), view))
			want := make([]byte, 20*dst.Size())
			mustNil(t, Cast(Contiguous(dst, want, []int{4, 5}), Contiguous(src, naiveMaterialize(view), []int{4, 5})))
			if string(got) != string(want) {
				t.Errorf("cast %s to %s: strided view differs", src, dst)
			}
			if src == dst && string(got) != string(naiveMaterialize(view)) {
				t.Errorf("cast %s to itself changes bits", src)
			}
		}
	}
	if err := Cast(Contiguous(zarr.Invalid, nil, []int{0}), Contiguous(zarr.Int8, nil, []int{0})); err == nil {
		t.Error("cast to invalid dtype: no error")
	}
}

func TestScalarBytes(t *testing.T) {
	for _, c := range []struct {
		s    Scalar
		dt   zarr.DataType
		want []byte
	}{
		{Scalar{Kind: 'f', F: -2.7}, zarr.Int16, enc(int16(-2))},
		{Scalar{Kind: 'f', F: math.NaN()}, zarr.Int64, enc(int64(0))},
		{Scalar{Kind: 'f', F: math.NaN()}, zarr.Uint8, []byte{0}},
		{Scalar{Kind: 'f', F: 1.5}, zarr.Float16, enc(uint16(0x3e00))},
		{Scalar{Kind: 'b', B: true}, zarr.Float64, enc(1.0)},
		{Scalar{Kind: 'i', I: -1}, zarr.Uint32, enc(uint32(math.MaxUint32))},
		{Scalar{Kind: 'i', I: 300}, zarr.Int8, enc(int8(44))},
		{Scalar{Kind: 'u', U: math.MaxUint64}, zarr.Float32, enc(float32(0x1p64))},
		{Scalar{Kind: 'c', C: 3 - 4i}, zarr.Float64, enc(3.0)},
		{Scalar{Kind: 'c', C: 1i}, zarr.Bool, []byte{1}},
		{Scalar{Kind: 'c', C: 1 + 2i}, zarr.Complex64, enc(complex64(1 + 2i))},
		{Scalar{Kind: 'f', F: -0.0}, zarr.Bool, []byte{0}},
		{Scalar{Kind: 'x'}, zarr.Int32, make([]byte, 4)},
	} {
		if got := ScalarBytes(c.s, c.dt); string(got) != string(c.want) {
			t.Errorf("ScalarBytes(%+v, %s) = %v, want %v", c.s, c.dt, got, c.want)
		}
	}
	if got := ScalarBytes(Scalar{Kind: 'i', I: 1}, zarr.Invalid); got != nil {
		t.Errorf("invalid dtype gives %v", got)
	}
}

func TestFill(t *testing.T) {
	for _, n := range []int{0, 1, 3, 1000} {
		d := make([]byte, n*16)
		Fill(d, zarr.Complex128, enc(complex(1.5, -2)))
		for i, v := range dec[complex128](d) {
			if v != complex(1.5, -2) {
				t.Fatalf("n %d: element %d = %v", n, i, v)
			}
		}
	}
	d := []byte{1, 2, 3}
	Fill(d, zarr.Int32, []byte{1})
	if string(d) != "\x00\x00\x00" {
		t.Errorf("short value: %v", d)
	}
}
