package kernels

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/cubego/cubego/zarr"
)

// recordCase folds a rows × cols float64 matrix over axes, block by block
// (blocks of br × bc, in a shuffled order), in two ways: streaming every
// block into one accumulator, and as a tree (each block into its own
// records, then those records combined with recordIn). It returns the
// records of both.
type recordCase struct {
	rows, cols, br, bc int
	axes               []int // of the matrix: {0}, {1} or {0, 1}
}

func (c recordCase) reduced(d int) bool {
	for _, a := range c.axes {
		if a == d {
			return true
		}
	}
	return false
}

// blocks returns the block origins along the reduced dimensions (kept
// dimensions are whole).
func (c recordCase) blocks() [][2]int {
	var out [][2]int
	stepR, stepC := c.rows, c.cols
	if c.reduced(0) {
		stepR = c.br
	}
	if c.reduced(1) {
		stepC = c.bc
	}
	for r := 0; r < c.rows; r += stepR {
		for q := 0; q < c.cols; q += stepC {
			out = append(out, [2]int{r, q})
		}
	}
	return out
}

func (c recordCase) extent(origin [2]int) (int, int) {
	nr, nc := c.rows, c.cols
	if c.reduced(0) {
		nr = min(c.br, c.rows-origin[0])
	}
	if c.reduced(1) {
		nc = min(c.bc, c.cols-origin[1])
	}
	return nr, nc
}

// accShape returns the records' shape for fields.
func (c recordCase) accShape(fields int) []int {
	s := []int{fields, c.rows, c.cols}
	for _, a := range c.axes {
		s[1+a] = 1
	}
	return s
}

// fold runs f over the blocks both ways and returns the streamed and the
// tree records. f(acc, x, base, strides, recordIn, first, scratch).
func (c recordCase) fold(t *testing.T, fields int, data []float64, rng *rand.Rand,
	f func(acc, x Operand, base int64, strides []int64, recordIn, first bool, tmp []byte) error) (stream, tree []float64) {
	t.Helper()
	accShape := c.accShape(fields)
	lanes := accShape[1] * accShape[2]
	blocks := c.blocks()
	rng.Shuffle(len(blocks), func(i, j int) { blocks[i], blocks[j] = blocks[j], blocks[i] })
	stream = make([]float64, fields*lanes)
	tmp := make([]byte, fields*lanes*8)
	// Flat index over the reduced dimensions.
	strides := make([]int64, 2)
	switch {
	case c.reduced(0) && c.reduced(1):
		strides[0], strides[1] = int64(c.cols), 1
	case c.reduced(0):
		strides[0] = 1
	default:
		strides[1] = 1
	}
	// The tree's partial records, one block per element along the reduced
	// dimensions: shape [fields, nbr or rows, nbc or cols].
	nbr, nbc := c.rows, c.cols
	if c.reduced(0) {
		nbr = (c.rows + c.br - 1) / c.br
	}
	if c.reduced(1) {
		nbc = (c.cols + c.bc - 1) / c.bc
	}
	partial := make([]float64, fields*nbr*nbc)
	for i, o := range blocks {
		nr, nc := c.extent(o)
		x := Operand{DType: zarr.Float64, Data: enc(data...), Shape: []int{nr, nc}, Strides: []int{c.cols, 1}, Offset: o[0]*c.cols + o[1]}
		base := int64(o[0])*strides[0] + int64(o[1])*strides[1]
		acc := Contiguous(zarr.Float64, enc(stream...), accShape)
		if err := f(acc, x, base, strides, false, i == 0, tmp); err != nil {
			t.Fatal(err)
		}
		stream = dec[float64](acc.Data)
		own := Contiguous(zarr.Float64, make([]byte, fields*lanes*8), accShape)
		if err := f(own, x, base, strides, false, true, nil); err != nil {
			t.Fatal(err)
		}
		rec := dec[float64](own.Data)
		// Place the block's records at its block position.
		for fl := range fields {
			for l := range lanes {
				r, q := l/accShape[2], l%accShape[2]
				if c.reduced(0) {
					r = o[0] / c.br
				}
				if c.reduced(1) {
					q = o[1] / c.bc
				}
				partial[(fl*nbr+r)*nbc+q] = rec[fl*lanes+l]
			}
		}
	}
	// Combine the partial records in two steps (halves along the first
	// reduced dimension) to exercise first and not first.
	acc := Contiguous(zarr.Float64, make([]byte, fields*lanes*8), accShape)
	rd := c.axes[0]
	n := []int{nbr, nbc}[rd]
	h := (n + 1) / 2
	for step, rg := range [][2]int{{0, h}, {h, n}} {
		if rg[1] <= rg[0] {
			continue
		}
		shape := []int{fields, nbr, nbc}
		shape[1+rd] = rg[1] - rg[0]
		off := rg[0] * []int{nbc, 1}[rd]
		x := Operand{DType: zarr.Float64, Data: enc(partial...), Shape: shape, Strides: []int{nbr * nbc, nbc, 1}, Offset: off}
		if err := f(acc, x, 0, nil, true, step == 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	return stream, dec[float64](acc.Data)
}

// lanesOf returns, per lane, the matrix elements reduced into it in flat
// index order, with their flat indices.
func (c recordCase) lanesOf(data []float64) ([][]float64, [][]int64) {
	shape := c.accShape(1)[1:]
	nl := shape[0] * shape[1]
	vals := make([][]float64, nl)
	idx := make([][]int64, nl)
	for r := range c.rows {
		for q := range c.cols {
			lr, lq := r, q
			var flat int64
			switch {
			case c.reduced(0) && c.reduced(1):
				lr, lq, flat = 0, 0, int64(r*c.cols+q)
			case c.reduced(0):
				lr, flat = 0, int64(r)
			default:
				lq, flat = 0, int64(q)
			}
			l := lr*shape[1] + lq
			vals[l] = append(vals[l], data[r*c.cols+q])
			idx[l] = append(idx[l], flat)
		}
	}
	for l := range idx {
		// Sort each lane by flat index (rows were visited first).
		for i := 1; i < len(idx[l]); i++ {
			for j := i; j > 0 && idx[l][j] < idx[l][j-1]; j-- {
				idx[l][j], idx[l][j-1] = idx[l][j-1], idx[l][j]
				vals[l][j], vals[l][j-1] = vals[l][j-1], vals[l][j]
			}
		}
	}
	return vals, idx
}

// argRef is numpy's arg reduction of vals (in index order): the first
// NaN for argmax/argmin, else the first extreme; -1 for a nan variant
// over only NaNs.
func argRef(op string, vals []float64) int {
	best := -1
	for i, v := range vals {
		if v != v {
			if op == "argmax" || op == "argmin" {
				return i
			}
			continue
		}
		switch {
		case best < 0,
			(op == "argmax" || op == "nanargmax") && v > vals[best],
			(op == "argmin" || op == "nanargmin") && v < vals[best]:
			best = i
		}
	}
	return best
}

var recordCases = []recordCase{
	{rows: 5, cols: 7, br: 2, bc: 3, axes: []int{0}},
	{rows: 5, cols: 7, br: 2, bc: 3, axes: []int{1}},
	{rows: 5, cols: 7, br: 2, bc: 3, axes: []int{0, 1}},
	{rows: 6, cols: 1, br: 1, bc: 1, axes: []int{0}},
	{rows: 1, cols: 9, br: 1, bc: 4, axes: []int{0, 1}},
}

func TestArgFoldMatchesNumpy(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range recordCases {
		for trial := range 4 {
			data := make([]float64, c.rows*c.cols)
			for i := range data {
				data[i] = float64(rng.IntN(4)) // many ties
				if rng.IntN(5) == 0 {
					data[i] = math.NaN()
				}
			}
			if trial == 3 && c.cols > 1 {
				for r := range c.rows { // a column of only NaNs
					data[r*c.cols+1] = math.NaN()
				}
			}
			vals, idx := c.lanesOf(data)
			for _, op := range []string{"argmax", "argmin", "nanargmax", "nanargmin"} {
				f := func(acc, x Operand, base int64, strides []int64, recordIn, first bool, _ []byte) error {
					axes := c.axes
					return ArgFold(op, acc, x, axes, base, strides, recordIn, first)
				}
				stream, tree := c.fold(t, ArgRecordFields, data, rng, f)
				for name, rec := range map[string][]float64{"stream": stream, "tree": tree} {
					lanes := len(rec) / 2
					out := Contiguous(zarr.Int64, make([]byte, lanes*8), []int{lanes})
					err := ArgFinish(op, out, Contiguous(zarr.Float64, enc(rec...), []int{2, lanes}))
					got := dec[int64](out.Data)
					allNaN := false
					for l := range lanes {
						want := argRef(op, vals[l])
						if want < 0 {
							allNaN = true
							continue
						}
						if err == nil && got[l] != idx[l][want] {
							t.Fatalf("%+v %s %s lane %d: index %d, want %d (values %v)", c, op, name, l, got[l], idx[l][want], vals[l])
						}
					}
					if allNaN != errors.Is(err, ErrAllNaN) || (err != nil && !allNaN) {
						t.Fatalf("%+v %s %s: error %v, all-NaN lane %v", c, op, name, err, allNaN)
					}
				}
			}
		}
	}
}

// momentsRef returns the count, mean and M2 of vals (skipping NaNs with
// skip) computed exactly (big floats) and rounded.
func momentsRef(vals []float64, skip bool) (n, mean, m2 float64) {
	sum := new(big.Float).SetPrec(400)
	var kept []float64
	for _, v := range vals {
		if skip && v != v {
			continue
		}
		if v != v {
			return float64(len(vals)), math.NaN(), math.NaN()
		}
		kept = append(kept, v)
		sum.Add(sum, new(big.Float).SetPrec(400).SetFloat64(v))
	}
	if len(kept) == 0 {
		return 0, math.NaN(), math.NaN()
	}
	mu := new(big.Float).SetPrec(400).Quo(sum, new(big.Float).SetPrec(400).SetInt64(int64(len(kept))))
	ss := new(big.Float).SetPrec(400)
	for _, v := range kept {
		d := new(big.Float).SetPrec(400).Sub(new(big.Float).SetPrec(400).SetFloat64(v), mu)
		ss.Add(ss, d.Mul(d, d))
	}
	mean, _ = mu.Float64()
	m2, _ = ss.Float64()
	return float64(len(kept)), mean, m2
}

func TestMomentsFoldIsAccurateFarFromZero(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range recordCases {
		for _, skip := range []bool{false, true} {
			data := make([]float64, c.rows*c.cols)
			for i := range data {
				data[i] = 1e9 + rng.NormFloat64()
				if skip && rng.IntN(4) == 0 {
					data[i] = math.NaN()
				}
			}
			vals, _ := c.lanesOf(data)
			f := func(acc, x Operand, _ int64, _ []int64, recordIn, first bool, tmp []byte) error {
				return MomentsFold(skip, acc, x, c.axes, recordIn, first, tmp)
			}
			stream, tree := c.fold(t, MomentRecordFields, data, rng, f)
			for name, rec := range map[string][]float64{"stream": stream, "tree": tree} {
				lanes := len(rec) / MomentRecordFields
				for _, kind := range []string{"mean", "var", "std"} {
					out := Contiguous(zarr.Float64, make([]byte, lanes*8), []int{lanes})
					if err := MomentsFinish(kind, out, Contiguous(zarr.Float64, enc(rec...), []int{MomentRecordFields, lanes}), 1); err != nil {
						t.Fatal(err)
					}
					got := dec[float64](out.Data)
					for l := range lanes {
						n, mean, m2 := momentsRef(vals[l], skip)
						want := mean
						switch kind {
						case "var":
							want = m2 / max(n-1, 0)
						case "std":
							want = math.Sqrt(m2 / max(n-1, 0))
						}
						// A sum of squares would lose all digits here (x² ~ 1e18).
						tol := 1e-13 * math.Abs(want)
						if (want != want) != (got[l] != got[l]) || math.Abs(got[l]-want) > tol {
							t.Fatalf("%+v skip %v %s %s lane %d: %v, want %v", c, skip, name, kind, l, got[l], want)
						}
					}
				}
			}
		}
	}
}

func TestMomentsMergeKeepsInfinities(t *testing.T) {
	// Records of [-inf] (shift 0, total -inf, M2 NaN) and [1, 2] (shift
	// 1.5): numpy's mean of [-inf, 1, 2] is -inf and its var NaN.
	a := Contiguous(zarr.Float64, enc(1.0, 0, math.Inf(-1), math.NaN()), []int{4, 1})
	x := Operand{DType: zarr.Float64, Data: enc(2.0, 1.5, 0, 0.5), Shape: []int{4, 1}}
	if err := MomentsFold(false, a, x, []int{0}, true, false, nil); err != nil {
		t.Fatal(err)
	}
	out := Contiguous(zarr.Float64, make([]byte, 8), []int{1})
	if err := MomentsFinish("mean", out, a, 0); err != nil {
		t.Fatal(err)
	}
	if m := dec[float64](out.Data)[0]; !math.IsInf(m, -1) {
		t.Errorf("mean = %v, want -inf", m)
	}
	if err := MomentsFinish("var", out, a, 0); err != nil {
		t.Fatal(err)
	}
	if v := dec[float64](out.Data)[0]; !math.IsNaN(v) {
		t.Errorf("var = %v, want NaN", v)
	}
}

func TestRecordFoldErrors(t *testing.T) {
	acc := Contiguous(zarr.Float64, make([]byte, 2*8), []int{2, 1})
	x := Contiguous(zarr.Float64, enc(1.0, 2), []int{2})
	if err := ArgFold("argmedian", acc, x, []int{0}, 0, []int64{1}, false, true); err == nil {
		t.Error("unknown arg op accepted")
	}
	if err := ArgFold("argmax", acc, Contiguous(zarr.Int64, enc[int64](1, 2), []int{2}), []int{0}, 0, []int64{1}, false, true); err == nil {
		t.Error("operand dtype other than the records' accepted")
	}
	if err := ArgFold("argmax", Contiguous(zarr.Float64, make([]byte, 3*8), []int{3, 1}), x, []int{0}, 0, []int64{1}, false, true); err == nil {
		t.Error("records of the wrong shape accepted")
	}
	if err := ArgFold("argmax", acc, x, []int{1}, 0, []int64{1}, false, true); err == nil {
		t.Error("axis out of range accepted")
	}
	if err := MomentsFold(false, Contiguous(zarr.Float64, make([]byte, 4*8), []int{4, 1}), x, []int{0}, false, false, nil); err == nil {
		t.Error("missing scratch accepted")
	}
	if err := MomentsFinish("median", Contiguous(zarr.Float64, make([]byte, 8), []int{1}), Contiguous(zarr.Float64, make([]byte, 4*8), []int{4, 1}), 0); err == nil {
		t.Error("unknown moments result accepted")
	}
	// Integer and unsigned records.
	ia := Contiguous(zarr.Uint64, make([]byte, 2*8), []int{2, 1})
	ix := Contiguous(zarr.Uint64, enc[uint64](5, math.MaxUint64, math.MaxUint64, 1), []int{4})
	if err := ArgFold("argmax", ia, ix, []int{0}, 10, []int64{1}, false, true); err != nil {
		t.Fatal(err)
	}
	out := Contiguous(zarr.Int64, make([]byte, 8), []int{1})
	if err := ArgFinish("argmax", out, ia); err != nil || dec[int64](out.Data)[0] != 11 {
		t.Errorf("uint64 argmax = %v (%v), want 11", dec[int64](out.Data), err)
	}
}

func TestComplexMomentsFold(t *testing.T) {
	// z = re + i·im over a 3 × 4 block folded along axis 0 in two steps, then
	// the records combined again: var(z) = var(re) + var(im).
	rng := rand.New(rand.NewPCG(5, 6))
	z := make([]complex128, 12)
	for i := range z {
		z[i] = complex(1e9+rng.NormFloat64(), -5e8+rng.NormFloat64())
	}
	acc := Contiguous(zarr.Float64, make([]byte, ComplexMomentRecordFields*4*8), []int{ComplexMomentRecordFields, 1, 4})
	tmp := make([]byte, len(acc.Data))
	for step, rows := range [][2]int{{0, 2}, {2, 3}} {
		x := Operand{DType: zarr.Complex128, Data: enc(z...), Shape: []int{rows[1] - rows[0], 4}, Strides: []int{4, 1}, Offset: rows[0] * 4}
		if err := ComplexMomentsFold(acc, x, []int{0}, false, step == 0, tmp); err != nil {
			t.Fatal(err)
		}
	}
	// Records in, as a combining round sees them: the same records twice
	// along a reduced axis double every count and keep the variance.
	rec := dec[float64](acc.Data)
	both := make([]float64, 0, 2*len(rec))
	for f := range ComplexMomentRecordFields {
		both = append(both, rec[f*4:(f+1)*4]...)
		both = append(both, rec[f*4:(f+1)*4]...)
	}
	x := Contiguous(zarr.Float64, enc(both...), []int{ComplexMomentRecordFields, 2, 4})
	again := Contiguous(zarr.Float64, make([]byte, len(acc.Data)), []int{ComplexMomentRecordFields, 1, 4})
	if err := ComplexMomentsFold(again, x, []int{0}, true, true, nil); err != nil {
		t.Fatal(err)
	}
	for name, records := range map[string]Operand{"values": acc, "records": again} {
		out := Contiguous(zarr.Float64, make([]byte, 4*8), []int{4})
		if err := MomentsFinish("var", out, Operand{DType: zarr.Float64, Data: records.Data, Shape: []int{ComplexMomentRecordFields, 4}}, 0); err != nil {
			t.Fatal(err)
		}
		got := dec[float64](out.Data)
		for c := range 4 {
			var re, im []float64
			for r := range 3 {
				re = append(re, real(z[r*4+c]))
				im = append(im, imag(z[r*4+c]))
			}
			n, _, m2re := momentsRef(re, false)
			_, _, m2im := momentsRef(im, false)
			if name == "records" {
				n *= 2
				m2re, m2im = 2*m2re, 2*m2im
			}
			want := (m2re + m2im) / n
			if math.Abs(got[c]-want) > 1e-13*want {
				t.Errorf("%s column %d: var %v, want %v", name, c, got[c], want)
			}
		}
	}
	if err := ComplexMomentsFold(acc, Contiguous(zarr.Float64, make([]byte, 12*8), []int{3, 4}), []int{0}, false, true, tmp); err == nil {
		t.Error("float64 values accepted as complex")
	}
	out := Contiguous(zarr.Float64, make([]byte, 4*8), []int{4})
	if err := MomentsFinish("mean", out, Operand{DType: zarr.Float64, Data: acc.Data, Shape: []int{ComplexMomentRecordFields, 4}}, 0); err == nil {
		t.Error("a mean of complex records accepted")
	}
}
