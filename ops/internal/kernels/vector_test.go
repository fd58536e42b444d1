package kernels

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cubego/cubego/zarr"
)

// The vector loops (vector.go) must mean exactly what the generated loops
// mean. Without GOEXPERIMENT=simd on amd64 the tables are empty and these
// tests check nothing.

// vectorLengths covers empty runs, every tail length around the unrolled
// steps, and long runs.
var vectorLengths = []int{0, 1, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 1000, 4099}

// hostileValues returns n elements of dt: random bit patterns (NaN
// payloads, infinities, subnormals), the special values of randomFloats,
// ordinary numbers, and runs of equal and zero elements.
func hostileValues(r *rand.Rand, dt zarr.DataType, n int) []byte {
	b := randomBytes(r, dt, n)
	sz := dt.Size()
	var ordinary []byte
	switch dt {
	case zarr.Float32, zarr.Float64:
		ordinary = floatBytes(dt, randomFloats(r, n, dt == zarr.Float32))
	default:
		ordinary = randomInts(r, dt, n)
	}
	for i := range n {
		switch r.IntN(4) {
		case 0, 1:
			copy(b[i*sz:(i+1)*sz], ordinary[i*sz:(i+1)*sz])
		case 2:
			if i > 0 && r.IntN(2) == 0 {
				copy(b[i*sz:(i+1)*sz], b[(i-1)*sz:i*sz])
			}
		}
	}
	return b
}

// sameElems compares two buffers of dt element by element, any NaN
// matching any NaN (numpy does not promise NaN payloads), and returns the
// first index that differs, or -1.
func sameElems(dt zarr.DataType, a, b []byte) int {
	switch dt {
	case zarr.Float64:
		x, y := as[float64](a), as[float64](b)
		for i := range x {
			if math.Float64bits(x[i]) != math.Float64bits(y[i]) && !(x[i] != x[i] && y[i] != y[i]) {
				return i
			}
		}
	case zarr.Float32:
		x, y := as[float32](a), as[float32](b)
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(y[i]) && !(x[i] != x[i] && y[i] != y[i]) {
				return i
			}
		}
	default:
		sz := dt.Size()
		for i := 0; i < len(a)/sz; i++ {
			if string(a[i*sz:(i+1)*sz]) != string(b[i*sz:(i+1)*sz]) {
				return i
			}
		}
	}
	return -1
}

func TestVectorBinaryMatchesLoops(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 1))
	for key, vk := range vectorBinary {
		k, out := binaryLoop(key.op, key.dt)
		for _, n := range vectorLengths {
			for range 4 {
				x, y := hostileValues(r, key.dt, n), hostileValues(r, key.dt, n)
				if r.IntN(3) == 0 { // equal operands exercise the ordered/unordered cases
					copy(y, x)
				}
				want, got := make([]byte, n*out.Size()), make([]byte, n*out.Size())
				k(want, x, y, nil)
				vk(got, x, y, nil)
				if i := sameElems(out, want, got); i >= 0 {
					sz := key.dt.Size()
					t.Fatalf("%s %s n=%d: element %d of %x, %x: vector %x, loop %x", key.op, key.dt, n, i,
						x[i*sz:(i+1)*sz], y[i*sz:(i+1)*sz], got[i*out.Size():(i+1)*out.Size()], want[i*out.Size():(i+1)*out.Size()])
				}
			}
		}
	}
}

func TestVectorReductionsMatchLoops(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 2))
	for key, wrap := range vectorRows {
		sz := key.dt.Size()
		for _, n := range vectorLengths {
			for trial := range 12 {
				var x []byte
				switch trial % 4 {
				case 0:
					x = hostileValues(r, key.dt, n)
				case 1: // no NaN: the vector path decides
					x = convertFloats(key.dt, randomFloats(r, n+12, false)[12:])
				case 2: // signed zeros and negatives only: the extreme may be a zero of either sign
					v := make([]float64, n)
					for i := range v {
						v[i] = []float64{0, math.Copysign(0, -1), -1, -2}[r.IntN(4)]
					}
					x = convertFloats(key.dt, v)
				default: // one NaN somewhere in otherwise ordinary numbers
					v := randomFloats(r, n+12, false)[12:]
					if n > 0 {
						v[r.IntN(n)] = math.NaN()
					}
					x = convertFloats(key.dt, v)
				}
				for _, start := range [][]byte{x[:min(len(x), sz)], hostileValues(r, key.dt, 1)} {
					if n == 0 {
						continue
					}
					want, got := slices.Clone(start), slices.Clone(start)
					base, ok := newReduction(key.op, key.dt, want, x)
					if !ok {
						t.Fatalf("%s %s: no scalar reduction", key.op, key.dt)
					}
					base.row(0, 0, 1, n)
					vbase, _ := newReduction(key.op, key.dt, got, x)
					wrap(got, x, vbase).row(0, 0, 1, n)
					if sameElems(key.dt, want, got) >= 0 {
						t.Fatalf("%s %s n=%d trial %d: vector %x, loop %x", key.op, key.dt, n, trial, got, want)
					}
				}
			}
		}
	}
}

// TestVectorAccumMatchesLoops checks the accumulating loops (a reduction
// over a non-last axis: acc[ai+i] = combine(acc[ai+i], x[xo+i])) against
// the scalar ones, at offsets into both buffers.
func TestVectorAccumMatchesLoops(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 3))
	for key, wrap := range vectorRows {
		sz := key.dt.Size()
		for _, n := range vectorLengths {
			for trial := range 12 {
				const ao, xo = 1, 3
				var acc, x []byte
				switch trial % 4 {
				case 0:
					acc, x = hostileValues(r, key.dt, n+ao), hostileValues(r, key.dt, n+xo)
				case 1: // equal operands, or equal but for the sign of zeros
					x = hostileValues(r, key.dt, n+xo)
					acc = slices.Concat(x[:ao*sz], x[xo*sz:])
					if key.dt != zarr.Int32 {
						for i := ao; i < n+ao; i++ {
							if r.IntN(2) == 0 {
								acc[(i+1)*sz-1] ^= 0x80 // flip the sign bit
							}
						}
					}
				case 2: // signed zeros and negatives only
					v := make([]float64, 2*n+ao+xo)
					for i := range v {
						v[i] = []float64{0, math.Copysign(0, -1), -1, -2}[r.IntN(4)]
					}
					b := convertFloats(key.dt, v)
					acc, x = b[:(n+ao)*sz], b[(n+ao)*sz:]
				default: // ordinary numbers with a NaN in either
					v := randomFloats(r, 2*n+ao+xo+12, false)[12:]
					if n > 0 {
						v[ao+r.IntN(n)] = math.NaN()
						v[n+ao+xo+r.IntN(n)] = math.NaN()
					}
					b := convertFloats(key.dt, v)
					acc, x = b[:(n+ao)*sz], b[(n+ao)*sz:]
				}
				want, got := slices.Clone(acc), slices.Clone(acc)
				base, ok := newReduction(key.op, key.dt, want, x)
				if !ok {
					t.Fatalf("%s %s: no scalar reduction", key.op, key.dt)
				}
				base.accum(ao, xo, 1, n)
				vbase, _ := newReduction(key.op, key.dt, got, x)
				wrap(got, x, vbase).accum(ao, xo, 1, n)
				if i := sameElems(key.dt, want, got); i >= 0 {
					t.Fatalf("%s %s n=%d trial %d: element %d of acc %x, x %x: vector %x, loop %x", key.op, key.dt, n, trial, i,
						acc[i*sz:(i+1)*sz], x[(i-ao+xo)*sz:(i-ao+xo+1)*sz], got[i*sz:(i+1)*sz], want[i*sz:(i+1)*sz])
				}
			}
		}
	}
}

// TestVectorSlabsMatchLoops checks the slab loops (rows runs of x, rs
// apart, accumulated into one acc row) against the scalar accumulating loop
// applied row after row.
func TestVectorSlabsMatchLoops(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 5))
	for key, mk := range vectorSlabs {
		sz := key.dt.Size()
		for _, n := range vectorLengths {
			for _, rows := range []int{1, 2, 3, 4, 5, 7, 8, 9} {
				const ao, xo = 2, 1
				rs := n + r.IntN(3)
				acc, x := reductionOperands(r, key.dt, n+ao, xo+(rows-1)*rs+n, r.IntN(3))
				want, got := slices.Clone(acc), slices.Clone(acc)
				base, ok := newReduction(key.op, key.dt, want, x)
				if !ok {
					t.Fatalf("%s %s: no scalar reduction", key.op, key.dt)
				}
				for j := range rows {
					base.accum(ao, xo+j*rs, 1, n)
				}
				mk(got, x)(ao, xo, n, rows, rs)
				if i := sameElems(key.dt, want, got); i >= 0 {
					t.Fatalf("%s %s n=%d rows=%d rs=%d: element %d: vector %x, loop %x", key.op, key.dt, n, rows, rs, i,
						got[i*sz:(i+1)*sz], want[i*sz:(i+1)*sz])
				}
			}
		}
	}
}

// TestVectorRowRunsMatchLoops checks the row-runs loops (a reduction over
// the last axis: acc[ao+j] = combine(acc[ao+j], x[xo+j*rs:][:n]...)) against
// the scalar row loop, over more rows than a group of the vector loop.
func TestVectorRowRunsMatchLoops(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 6))
	for key, mk := range vectorRowRuns {
		sz := key.dt.Size()
		for _, n := range vectorLengths {
			if n == 0 {
				continue
			}
			for _, rows := range []int{1, 3, 4, 31, 32, 33, 70} {
				const ao, xo = 2, 1
				rs := n + r.IntN(3)
				acc, x := reductionOperands(r, key.dt, rows+ao, xo+(rows-1)*rs+n, r.IntN(4))
				want, got := slices.Clone(acc), slices.Clone(acc)
				base, ok := newReduction(key.op, key.dt, want, x)
				if !ok {
					t.Fatalf("%s %s: no scalar reduction", key.op, key.dt)
				}
				for j := range rows {
					base.row(ao+j, xo+j*rs, 1, n)
				}
				mk(got, x)(ao, xo, n, rows, rs)
				if i := sameElems(key.dt, want, got); i >= 0 {
					t.Fatalf("%s %s n=%d rows=%d rs=%d: element %d: vector %x, loop %x", key.op, key.dt, n, rows, rs, i,
						got[i*sz:(i+1)*sz], want[i*sz:(i+1)*sz])
				}
			}
		}
	}
}

// reductionOperands returns an accumulator of accN and an operand of xN
// elements of dt, by kind: 0 hostile values, 1 signed zeros and negatives
// only (extremes may be zeros of either sign), 2 ordinary numbers with a
// few NaNs (in either), 3 ordinary numbers without NaN (the vector paths
// decide).
func reductionOperands(r *rand.Rand, dt zarr.DataType, accN, xN, kind int) (acc, x []byte) {
	var v []float64
	switch kind {
	case 0:
		return hostileValues(r, dt, accN), hostileValues(r, dt, xN)
	case 1:
		v = make([]float64, accN+xN)
		for i := range v {
			v[i] = []float64{0, math.Copysign(0, -1), -1, -2}[r.IntN(4)]
		}
	case 2:
		v = randomFloats(r, accN+xN+12, false)[12:]
		for range 3 {
			v[r.IntN(len(v))] = math.NaN()
		}
	default:
		v = randomFloats(r, accN+xN+12, false)[12:]
	}
	b := convertFloats(dt, v)
	sz := dt.Size()
	return b[:accN*sz], b[accN*sz:]
}

// convertFloats encodes float64 values as dt, which may be an integer
// dtype (values truncated toward zero).
func convertFloats(dt zarr.DataType, v []float64) []byte {
	switch dt {
	case zarr.Float32, zarr.Float64:
		return floatBytes(dt, v)
	case zarr.Int32:
		o := make([]int32, len(v))
		for i, f := range v {
			if f == f {
				o[i] = int32(f)
			}
		}
		return enc(o...)
	}
	panic("convertFloats: " + dt.String())
}

// ulpDiff is the distance of a and b in units in the last place (0 for
// equal values or two NaNs, max for a NaN beside a number).
func ulpDiff(a, b float64) uint64 {
	if a != a || b != b {
		if a != a && b != b {
			return 0
		}
		return math.MaxUint64
	}
	ord := func(f float64) int64 {
		u := int64(math.Float64bits(f))
		if u < 0 {
			return math.MinInt64 - u
		}
		return u
	}
	d := ord(a) - ord(b)
	if d < 0 {
		d = -d
	}
	return uint64(d)
}

// vectorMathCases are the vector transcendental functions and input ranges
// of TestVectorMathAccuracy.
var vectorMathCases = []struct {
	op     string
	lo, hi float64 // the range of the uniformly random inputs
}{
	{"exp", -745.2, 709.8},
	{"exp", -1, 1},
	{"exp", -40, 40},
	{"log", 0, 1e300},
	{"log", 0.5, 2},
	{"log", 0, 1e-300},
}

// specialMathInputs are checked with every vector exp and log. Those
// outside the vector's domain must give the generated loops' bits exactly:
// the loops' own function computes them; the others are checked as the
// random inputs are, and always against the exact value.
var specialMathInputs = []float64{
	0, math.Copysign(0, -1), 1, -1, math.Inf(1), math.Inf(-1), math.NaN(), -math.NaN(),
	math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 0x1p-1022, 0x1p-1023, math.MaxFloat64, -math.MaxFloat64,
	708, -708, 708.0000001, -708.0000001, 709.782712893384, 709.7827128933841, -745.1332191019411, -745.1332191019412,
	-744.44007192138126, 1e-300, 1e300, math.Ln2, -math.Ln2, 0.5 * math.Ln2, 1e-18, -1e-18, 0x1p-54,
}

// bigPrec is the precision of the reference values: far beyond float64's.
const bigPrec = 160

// bigLn2 is ln 2 to 60 digits (about 200 bits).
var bigLn2, _, _ = big.ParseFloat("0.693147180559945309417232121458176568075500134360255254120680", 10, bigPrec, big.ToNearestEven)

// bigExp is e^x to about bigPrec bits (for finite x): x = k·ln2 + r,
// e^r by its Taylor series.
func bigExp(x float64) *big.Float {
	k := math.Round(x / math.Ln2)
	r := new(big.Float).SetPrec(bigPrec).SetFloat64(x)
	r.Sub(r, new(big.Float).SetPrec(bigPrec).Mul(bigLn2, big.NewFloat(k)))
	sum := new(big.Float).SetPrec(bigPrec).SetInt64(1)
	term := new(big.Float).SetPrec(bigPrec).SetInt64(1)
	for n := 1; n < 80; n++ {
		term.Mul(term, r)
		term.Quo(term, new(big.Float).SetInt64(int64(n)))
		sum.Add(sum, term)
	}
	return sum.SetMantExp(sum, int(k))
}

// bigLog is ln x to about bigPrec bits (for positive finite x):
// x = m·2^e, ln m = 2·atanh((m−1)/(m+1)).
func bigLog(x float64) *big.Float {
	m := new(big.Float).SetPrec(bigPrec)
	e := new(big.Float).SetPrec(bigPrec).SetFloat64(x).MantExp(m) // m in [0.5, 1)
	one := new(big.Float).SetPrec(bigPrec).SetInt64(1)
	s := new(big.Float).SetPrec(bigPrec).Sub(m, one)
	s.Quo(s, new(big.Float).SetPrec(bigPrec).Add(m, one))
	s2 := new(big.Float).SetPrec(bigPrec).Mul(s, s)
	sum := new(big.Float).SetPrec(bigPrec)
	pow := new(big.Float).SetPrec(bigPrec).Set(s)
	for n := 0; n < 90; n++ {
		sum.Add(sum, new(big.Float).SetPrec(bigPrec).Quo(pow, new(big.Float).SetInt64(int64(2*n+1))))
		pow.Mul(pow, s2)
	}
	sum.Mul(sum, big.NewFloat(2))
	return sum.Add(sum, new(big.Float).SetPrec(bigPrec).Mul(bigLn2, new(big.Float).SetInt64(int64(e))))
}

// ulpError is |got − want| in units of the last place of want rounded to
// float64 (subnormal results in units of the smallest subnormal).
func ulpError(got float64, want *big.Float) float64 {
	w, _ := want.Float64()
	if math.IsInf(w, 0) || w == 0 {
		if got == w {
			return 0
		}
		return math.Inf(1)
	}
	_, e := math.Frexp(w)
	// The difference is divided by the ULP in big arithmetic: as a float64
	// it would underflow near the subnormal range (a difference below
	// 2^-1074 rounds to 0 or 1 ULP).
	ulp := new(big.Float).SetMantExp(big.NewFloat(1), max(e-53, -1074))
	d := new(big.Float).SetPrec(bigPrec).SetFloat64(got)
	d.Sub(d, want).Quo(d, ulp)
	f, _ := d.Float64()
	return math.Abs(f)
}

// TestVectorMathAccuracy checks the vector exp and log against the
// generated loops (math.Exp, math.Log) and against values exact to 160
// bits: inputs outside the vector's domain must have the loop's bits, and
// every result must be within 1 ULP of the loop's or, where not (math.Exp
// on amd64 is itself up to about 1.3 ULP from the exact value), closer to
// the exact value than the loop's; for float64 the vector error from the
// exact value must stay below 1 ULP. float32 results are compared with the
// loop's in float32 ULPs, and special values must have their bits.
func TestVectorMathAccuracy(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 3))
	n := 200_000
	if testing.Short() {
		n = 20_000
	}
	for _, variant := range vectorMath() {
		for _, c := range vectorMathCases {
			for _, dt := range []zarr.DataType{zarr.Float64, zarr.Float32} {
				vk := variant.kernels[opDType{c.op, dt}]
				if vk == nil {
					continue
				}
				checkVectorMath(t, variant.name, c.op, c.lo, c.hi, dt, vk, r, n)
			}
		}
	}
}

// TestVectorLogsAgree checks the logs of every variant this CPU runs
// against each other, over bit patterns of every magnitude, every tail
// length and the special inputs. The float32 logs give the same bits (the
// AVX-512 loop computes the AVX2 arithmetic). The float64 ones have
// different methods (vector_log512_amd64.go): they must give the same bits
// outside the vectors' domain, where logF computes both, and be within
// 1 ULP of each other elsewhere, each below 1 ULP from the exact value
// where they differ.
func TestVectorLogsAgree(t *testing.T) {
	variants := vectorMath()
	if len(variants) < 2 {
		t.Skipf("this CPU runs %d log variant(s): nothing to compare", len(variants))
	}
	r := rand.New(rand.NewPCG(23, 5))
	v := slices.Clone(specialMathInputs)
	for range 100_000 {
		v = append(v, math.Float64frombits(r.Uint64()>>1), 0.5+1.5*r.Float64())
	}
	inputs := [][]float64{v}
	for n := range 40 { // every tail length
		inputs = append(inputs, v[:n])
	}
	for _, dt := range []zarr.DataType{zarr.Float64, zarr.Float32} {
		for _, in := range inputs {
			x := floatBytes(dt, in)
			want := make([]byte, len(x))
			variants[0].kernels[opDType{"log", dt}](want, x, nil, nil)
			for _, variant := range variants[1:] {
				got := make([]byte, len(x))
				variant.kernels[opDType{"log", dt}](got, x, nil, nil)
				if dt == zarr.Float32 {
					if !slices.Equal(got, want) {
						t.Fatalf("%s %s log of %d elements differs from %s's", variant.name, dt, len(in), variants[0].name)
					}
					continue
				}
				differ := 0
				for i, xi := range in {
					g, w := as[float64](got)[i], as[float64](want)[i]
					d := ulpDiff(g, w)
					switch {
					case d == 0:
						continue
					case !vectorMathDomain("log", xi) || d > 1:
						t.Fatalf("%s float64 log(%v) = %v, %s's %v", variant.name, xi, g, variants[0].name, w)
					}
					if differ++; differ%16 == 1 { // a sample: the exact value is slow
						exact := bigLog(xi)
						if eg, ew := ulpError(g, exact), ulpError(w, exact); eg >= 1 || ew >= 1 {
							t.Fatalf("float64 log(%v): %s %v (%.3f ULP from exact), %s %v (%.3f ULP)", xi, variant.name, g, eg, variants[0].name, w, ew)
						}
					}
				}
				if len(in) == len(v) {
					t.Logf("%s float64 log: %d of %d results differ from %s's by 1 ULP", variant.name, differ, len(in), variants[0].name)
				}
			}
		}
	}
}

// checkVectorMath is TestVectorMathAccuracy for one kernel of one variant
// (named in the messages) over n random inputs in [lo, hi).
func checkVectorMath(t *testing.T, variant, op string, lo, hi float64, dt zarr.DataType, vk kernel, r *rand.Rand, n int) {
	t.Helper()
	k, _ := unaryLoop(op, dt)
	v := make([]float64, n)
	for i := range v {
		v[i] = lo + (hi-lo)*r.Float64()
		if i%7 == 0 { // random bit patterns of every magnitude
			v[i] = math.Float64frombits(r.Uint64())
		}
	}
	v = append(slices.Clone(specialMathInputs), v...)
	x := floatBytes(dt, v)
	want, got := make([]byte, len(x)), make([]byte, len(x))
	k(want, x, nil, nil)
	vk(got, x, nil, nil)
	var worstLoop uint64
	var worstExact, loopExact, worstAt float64
	beyond := 0
	for i := range v {
		var d uint64
		if dt == zarr.Float32 {
			g, w := as[float32](got)[i], as[float32](want)[i]
			if d = ulpDiff32(g, w); d > 0 && (i < len(specialMathInputs) || d > 1) {
				t.Errorf("%s %s %s(%v) = %v, loop %v", variant, dt, op, float64(as[float32](x)[i]), g, w)
			}
			worstLoop = max(worstLoop, d)
			in := float64(as[float32](x)[i])
			if i%10 == 0 && (op == "exp" && math.Abs(in) <= 80 || op == "log" && in >= 0x1p-126 && in < math.Inf(1)) {
				exact := bigExp
				if op == "log" {
					exact = bigLog
				}
				eg := ulpError32(g, exact(in))
				if eg > worstExact {
					worstExact, worstAt = eg, in
				}
				loopExact = max(loopExact, ulpError32(w, exact(in)))
			}
			continue
		}
		g, w := as[float64](got)[i], as[float64](want)[i]
		d = ulpDiff(g, w)
		worstLoop = max(worstLoop, d)
		in := v[i]
		if !vectorMathDomain(op, in) { // computed by the loop's function
			if d != 0 {
				t.Errorf("%s %s %s(%v) = %v, loop %v", variant, dt, op, in, g, w)
			}
			continue
		}
		if !(d > 1 || i%10 == 0 || i < len(specialMathInputs)) {
			continue
		}
		var exact *big.Float
		if op == "exp" {
			exact = bigExp(in)
		} else {
			exact = bigLog(in)
		}
		eg, ew := ulpError(g, exact), ulpError(w, exact)
		if eg > worstExact {
			worstExact, worstAt = eg, in
		}
		loopExact = max(loopExact, ew)
		if d > 1 {
			beyond++
			if eg >= ew {
				t.Errorf("%s %s %s(%v) = %v (%.3f ULP from exact), loop %v (%.3f ULP): %d ULP apart",
					variant, dt, op, in, g, eg, w, ew, d)
			}
		}
	}
	t.Logf("%s %s %s on [%g, %g]: max %d ULP from the loop (%d results > 1 ULP, each closer to exact); max error from exact: vector %.3f ULP (at %v), loop %.3f ULP",
		variant, dt, op, lo, hi, worstLoop, beyond, worstExact, worstAt, loopExact)
	if worstExact >= 1 {
		t.Errorf("%s %s %s: vector error %.3f ULP from the exact value", variant, dt, op, worstExact)
	}
}

// vectorMathDomain reports whether the vector exp or log computes x: the
// loops give the scalar function's result for every other input.
func vectorMathDomain(op string, x float64) bool {
	if op == "exp" {
		return math.Abs(x) <= expLimit
	}
	return x >= 0x1p-1022 && x < math.Inf(1)
}

// TestVectorMathPerElement checks that each vector exp and log result
// depends only on its input, whatever its position, the run's length or its
// neighbours (the loops test their range a pair of vectors at a time and
// compute the tail in a padded vector): every element of a run equals the
// kernel's result for that element alone, bit for bit. The runs mix inputs
// inside the vector range with special values at random places.
func TestVectorMathPerElement(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 6))
	for _, variant := range vectorMath() {
		for key, vk := range variant.kernels {
			for _, n := range vectorLengths {
				v := make([]float64, n)
				for i := range v {
					v[i] = r.Float64()*4 + 0.1
					if r.IntN(16) == 0 {
						v[i] = specialMathInputs[r.IntN(len(specialMathInputs))]
					}
				}
				x := floatBytes(key.dt, v)
				size := key.dt.Size()
				got := make([]byte, len(x))
				vk(got, x, nil, nil)
				one := make([]byte, size)
				for i := range n {
					vk(one, x[i*size:(i+1)*size], nil, nil)
					if string(one) != string(got[i*size:(i+1)*size]) {
						t.Fatalf("%s %s %s n=%d: element %d (%v) is %x in the run, %x alone",
							variant.name, key.dt, key.op, n, i, v[i], got[i*size:(i+1)*size], one)
					}
				}
			}
		}
	}
}

// ulpDiff32 is ulpDiff for float32.
func ulpDiff32(a, b float32) uint64 {
	if a != a || b != b {
		if a != a && b != b {
			return 0
		}
		return math.MaxUint64
	}
	ord := func(f float32) int64 {
		u := int64(int32(math.Float32bits(f)))
		if u < 0 {
			return math.MinInt32 - u
		}
		return u
	}
	d := ord(a) - ord(b)
	if d < 0 {
		d = -d
	}
	return uint64(d)
}

func TestVectorUnaryMatchesLoops(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 4))
	for key, vk := range vectorUnary {
		if key.op == "exp" || key.op == "log" {
			continue // TestVectorMathAccuracy
		}
		k, out := unaryLoop(key.op, key.dt)
		for _, n := range vectorLengths {
			x := hostileValues(r, key.dt, n)
			want, got := make([]byte, n*out.Size()), make([]byte, n*out.Size())
			k(want, x, nil, nil)
			vk(got, x, nil, nil)
			if i := sameElems(out, want, got); i >= 0 {
				t.Fatalf("%s %s n=%d: element %d differs: vector %x, loop %x", key.op, key.dt, n, i, got, want)
			}
		}
	}
}

func TestVectorCastMatchesLoops(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 5))
	vector := vectorCast
	defer func() { vectorCast = vector }()
	vectorCast = map[[2]zarr.DataType]kernel{} // castKernel's own loops
	for key, vk := range vector {
		k := castKernel(key[0], key[1])
		for _, n := range vectorLengths {
			x := hostileValues(r, key[0], n)
			want, got := make([]byte, n*key[1].Size()), make([]byte, n*key[1].Size())
			k(want, x, nil, nil)
			vk(got, x, nil, nil)
			// Bit for bit, NaN payloads included: both are the same
			// conversion instruction.
			if string(got) != string(want) {
				i := sameElems(key[1], want, got)
				t.Fatalf("cast %s to %s n=%d: vector %x, loop %x (first differing element %d)", key[0], key[1], n, got, want, i)
			}
		}
	}
}

// withinOneULP reports whether the float elements a and b of dt are at
// most 1 ULP apart.
func withinOneULP(dt zarr.DataType, a, b []byte) bool {
	if dt == zarr.Float32 {
		return ulpDiff32(as[float32](a)[0], as[float32](b)[0]) <= 1
	}
	return ulpDiff(as[float64](a)[0], as[float64](b)[0]) <= 1
}

// ulpError32 is ulpError in float32 ULPs.
func ulpError32(got float32, want *big.Float) float64 {
	w, _ := want.Float32()
	if math.IsInf(float64(w), 0) || w == 0 {
		if got == w {
			return 0
		}
		return math.Inf(1)
	}
	_, e := math.Frexp(float64(w))
	ulp := math.Ldexp(1, max(e-24, -149))
	d := new(big.Float).SetPrec(bigPrec).SetFloat64(float64(got))
	d.Sub(d, want)
	f, _ := d.Float64()
	return math.Abs(f) / ulp
}
