//go:build goexperiment.simd && amd64

package kernels

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"simd/archsimd"
)

// log512Interval returns the first and last m of interval j of
// logVec512's table.
func log512Interval(j int) (lo, hi float64) {
	return math.Float64frombits(log512Base + uint64(j)<<48), math.Float64frombits(log512Base + uint64(j+1)<<48 - 1)
}

// TestLog512Table checks what logVec512's method (vector_log512_amd64.go)
// needs of its table: interval 0 has invc = 1 and log c = 0; every T_j is
// a multiple of 2^-37 within 2^-66 of log c − (j/16)·(ln2Hi + ln2Lo);
// r = m·invc − 1 stays in logQRange; hi = (k + j/16)·ln2Hi + T_j has an
// exponent at least r's, as Fast2Sum needs; and where the result is small
// (k = 0 and k = −1), r's exponent is below the result's, so that r's
// rounding is at most a quarter of the result's ULP.
func TestLog512Table(t *testing.T) {
	inv, tab := log512Table[0], log512Table[1]
	if inv[0] != 1 || tab[0] != 0 {
		t.Fatalf("interval 0 (holding 1.0): invc %v, T %v; want 1 and 0", inv[0], tab[0])
	}
	ln2 := new(big.Float).SetPrec(bigPrec).Add(big.NewFloat(ln2Hi), big.NewFloat(ln2Lo))
	limit := new(big.Float).SetMantExp(big.NewFloat(1), -66)
	for j := range 16 {
		if s := math.Ldexp(tab[j], 37); s != math.Trunc(s) {
			t.Errorf("interval %d: T = %x is not a multiple of 2^-37", j, tab[j])
		}
		want := bigLog(inv[j])
		want.Neg(want).Sub(want, new(big.Float).SetPrec(bigPrec).Mul(ln2, big.NewFloat(float64(j)/16)))
		if d := want.Sub(want, big.NewFloat(tab[j])); d.Abs(d).Cmp(limit) >= 0 {
			f, _ := d.Float64()
			t.Errorf("interval %d: T = %x is %g from log c − (j/16)·ln2", j, tab[j], f)
		}
		lo, hi := log512Interval(j)
		rLo, rHi := math.FMA(lo, inv[j], -1), math.FMA(hi, inv[j], -1)
		if rLo < logQRange[0] || rHi > logQRange[1] {
			t.Errorf("interval %d: r in [%v, %v], outside logQRange %v", j, rLo, rHi, logQRange)
		}
		_, er := math.Frexp(max(-rLo, rHi))
		for _, k := range []int{-2, -1, 0, 1} { // |hi| > 0.69 beyond
			h := math.FMA(float64(16*k+j)/16, ln2Hi, tab[j]) // exact
			if _, eh := math.Frexp(h); h != 0 && eh < er {
				t.Errorf("interval %d, k = %d: hi = %v has a smaller exponent than r's (up to %v)", j, k, h, max(-rLo, rHi))
			}
		}
		if j == 0 {
			continue // r is exact
		}
		for _, k := range []int{-1, 0} {
			// The exponents of r and of the result change only where |r| or
			// |log x| crosses a power of 2: look a few doubles either side
			// of each such m, and at the interval's ends.
			ms := []float64{lo, hi}
			for e := -80; e <= -3; e++ {
				for _, p := range []float64{math.Ldexp(1, e), -math.Ldexp(1, e)} {
					ms = append(ms, (1+p)/inv[j], math.Exp(p-float64(k)*math.Ln2))
				}
			}
			for _, m0 := range ms {
				m := m0
				for range 4 {
					m = math.Nextafter(m, 0)
				}
				for range 9 {
					if m >= lo && m <= hi {
						r := math.FMA(m, inv[j], -1)
						y := math.Log(m) + float64(k)*math.Ln2
						_, er := math.Frexp(r)
						_, ey := math.Frexp(y)
						if r != 0 && er >= ey {
							t.Errorf("interval %d, k = %d, m = %v: r = %v is not below the result %v's binade", j, k, m, r, y)
						}
					}
					m = math.Nextafter(m, 2)
				}
			}
		}
	}
}

// TestLog512Boundaries checks logFloat64AVX512 against the exact value on
// dense inputs around every edge of the table's intervals, at several
// exponents, and around 1: there r is largest, and near 1 the result can
// be as small as r. It catches one wrong table entry or coefficient.
func TestLog512Boundaries(t *testing.T) {
	if !archsimd.X86.AVX512() {
		t.Skip("no AVX-512")
	}
	r := rand.New(rand.NewPCG(29, 1))
	n := 150
	if testing.Short() {
		n = 20
	}
	var xs []float64
	for j := 0; j <= 16; j++ {
		edge, _ := log512Interval(j)
		for _, k := range []int{-1021, -1, 0, 1, 1023} {
			e := math.Ldexp(edge, k)
			for d := -3; d <= 3; d++ {
				xs = append(xs, math.Float64frombits(math.Float64bits(e)+uint64(d)))
			}
			for range n {
				xs = append(xs, e*(1+(r.Float64()-0.5)*0x1p-5))
			}
		}
	}
	for i := 1; i < 64; i++ {
		xs = append(xs, 1+float64(i)*0x1p-52, 1-float64(i)*0x1p-53)
		for range n / 10 {
			xs = append(xs, 1+(r.Float64()-0.5)*math.Ldexp(1, -i))
		}
	}
	xs = slices.DeleteFunc(xs, func(x float64) bool { return !(x >= 0x1p-1022 && x <= math.MaxFloat64) })
	got := make([]float64, len(xs))
	logFloat64AVX512(got, xs)
	worst, at := 0.0, 0.0
	for i, x := range xs {
		if e := ulpError(got[i], bigLog(x)); e > worst {
			worst, at = e, x
		}
	}
	t.Logf("%d inputs: max error %.3f ULP (at %v)", len(xs), worst, at)
	if worst >= 1 {
		t.Errorf("log(%v) = %v is %.3f ULP from the exact value", at, got[slices.Index(xs, at)], worst)
	}
}
