package zarr

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

func TestFloat16RoundTripAllPatterns(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		f := float16ToFloat64(h)
		got := float64ToFloat16(f)
		if math.IsNaN(f) {
			if got&0x7c00 != 0x7c00 || got&0x3ff == 0 {
				t.Fatalf("NaN %#04x converted back to non-NaN %#04x", h, got)
			}
			continue
		}
		if got != h {
			t.Fatalf("float16 %#04x -> %v -> %#04x", h, f, got)
		}
	}
}

// nearestFloat16 is the reference: the finite half closest to f (ties to
// the even significand), or ±Inf past the rounding limit 65520.
func nearestFloat16(values []float64, bits []uint16, f float64) uint16 {
	if math.Abs(f) >= 65520 {
		if f > 0 {
			return 0x7c00
		}
		return 0xfc00
	}
	i := sort.SearchFloat64s(values, f)
	best := -1
	for _, j := range []int{i - 1, i, i + 1} {
		if j < 0 || j >= len(values) {
			continue
		}
		if best < 0 {
			best = j
			continue
		}
		d, db := math.Abs(values[j]-f), math.Abs(values[best]-f)
		if d < db || (d == db && bits[j]&1 == 0) {
			best = j
		}
	}
	h := bits[best]
	if h&0x7fff == 0 && math.Signbit(f) { // keep the sign of zero
		h = 0x8000
	}
	return h
}

func TestFloat64ToFloat16Rounding(t *testing.T) {
	var values []float64
	var hbits []uint16
	for i := range 1 << 16 {
		h := uint16(i)
		if h&0x7c00 == 0x7c00 || h == 0x8000 {
			continue // skip Inf, NaN and -0 (0 stands for both)
		}
		values = append(values, float16ToFloat64(h))
		hbits = append(hbits, h)
	}
	sort.Sort(byValue{values, hbits})
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(f float64) {
		t.Helper()
		if got, want := float64ToFloat16(f), nearestFloat16(values, hbits, f); got != want {
			t.Fatalf("float64ToFloat16(%v) = %#04x, want %#04x", f, got, want)
		}
	}
	for i := 0; i+1 < len(values); i++ {
		a, b := values[i], values[i+1]
		check(a)
		check((a + b) / 2) // exact midpoint: ties to even
		check(math.Nextafter((a+b)/2, a))
		check(math.Nextafter((a+b)/2, b))
	}
	for range 100000 {
		check(math.Ldexp(rng.Float64()*2-1, rng.IntN(50)-30))
	}
	for _, f := range []float64{0, math.Copysign(0, -1), 65504, 65519.99, 65520, 1e300, 1e-300, -1e-300, math.Ldexp(1, -25), math.Ldexp(1.5, -25), math.Ldexp(1, -24)} {
		check(f)
	}
	if got := float64ToFloat16(0.1); got != 0x2e66 {
		t.Errorf("float16(0.1) = %#04x, want 0x2e66", got)
	}
	if got := float64ToFloat16(math.Inf(-1)); got != 0xfc00 {
		t.Errorf("float16(-Inf) = %#04x", got)
	}
	if got := float64ToFloat16(math.Float64frombits(0x7ff8000000000000)); got != 0x7e00 {
		t.Errorf("float16(NaN) = %#04x, want 0x7e00", got)
	}
}

type byValue struct {
	v []float64
	b []uint16
}

func (s byValue) Len() int           { return len(s.v) }
func (s byValue) Less(i, j int) bool { return s.v[i] < s.v[j] }
func (s byValue) Swap(i, j int) {
	s.v[i], s.v[j] = s.v[j], s.v[i]
	s.b[i], s.b[j] = s.b[j], s.b[i]
}
