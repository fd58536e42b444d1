package kernels

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cubego/cubego/zarr"
)

var (
	aliasUnary = []string{"negative", "positive", "abs", "sign", "square", "sqrt", "exp", "expm1", "log",
		"log1p", "log2", "log10", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
		"asinh", "acosh", "atanh", "floor", "ceil", "trunc", "round", "reciprocal", "bitwise_invert",
		"logical_not", "conj", "isnan", "isinf", "isfinite", "signbit", "real", "imag"}
	aliasBinary = []string{"add", "subtract", "multiply", "divide", "floor_divide", "remainder", "pow",
		"maximum", "minimum", "atan2", "hypot", "copysign", "nextafter", "logaddexp", "bitwise_and",
		"bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "logical_and",
		"logical_or", "logical_xor", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}
)

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// Every element-wise kernel that OverwritesInputSafely allows may write
// its result over an input of the same element size (the engine computes
// a map op in place in an input's buffer): for each op and dtype, dst
// aliasing an operand gives the bytes a separate dst gives.
func TestElementwiseKernelsMayOverwriteTheirInputs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n = 5003 // several blocks and a ragged tail
	shape := []int{n}
	checked := 0
	for dt := zarr.Bool; dt <= zarr.Complex128; dt++ {
		if dt == zarr.Float16 {
			continue
		}
		sz := dt.Size()
		x, y := randBytes(r, n*sz), randBytes(r, n*sz)
		if dt == zarr.Bool {
			for i := range x {
				x[i], y[i] = x[i]&1, y[i]&1
			}
		}
		run := func(name string, outDT zarr.DataType, call func(dst, a, b Operand) error, nin int) {
			if outDT.Size() != sz || !OverwritesInputSafely(strings.Fields(name)[0]) {
				return
			}
			want := make([]byte, n*outDT.Size())
			if err := call(Contiguous(outDT, want, shape), Contiguous(dt, x, shape), Contiguous(dt, y, shape)); err != nil {
				return // not defined for dt
			}
			for k := range nin {
				buf := append([]byte(nil), [][]byte{x, y}[k]...)
				a, b := Contiguous(dt, x, shape), Contiguous(dt, y, shape)
				if k == 0 {
					a = Contiguous(dt, buf, shape)
				} else {
					b = Contiguous(dt, buf, shape)
				}
				if err := call(Contiguous(outDT, buf, shape), a, b); err != nil {
					t.Fatalf("%s %s: %v", name, dt, err)
				}
				if !bytes.Equal(buf, want) {
					t.Errorf("%s %s: writing over operand %d changes the result", name, dt, k)
				}
				checked++
			}
		}
		for _, op := range aliasUnary {
			if _, out := unaryLoop(op, dt); out.Valid() {
				run(op, out, func(d, a, _ Operand) error { return Unary(op, d, a) }, 1)
			}
		}
		for _, op := range aliasBinary {
			if _, out := binaryLoop(op, dt); out.Valid() {
				run(op, out, func(d, a, b Operand) error { return Binary(op, d, a, b) }, 2)
			}
		}
		for to := zarr.Bool; to <= zarr.Complex128; to++ {
			run("astype "+to.String(), to, func(d, a, _ Operand) error { return Cast(d, a) }, 1)
		}
		cond := randBytes(r, n)
		for i := range cond {
			cond[i] &= 1
		}
		run("where", dt, func(d, a, b Operand) error { return Where(d, Contiguous(zarr.Bool, cond, shape), a, b) }, 2)
		if dt == zarr.Bool { // the condition overwritten
			run("where", dt, func(d, a, b Operand) error { return Where(d, a, b, Contiguous(zarr.Bool, cond, shape)) }, 1)
		}
	}
	if checked < 500 {
		t.Fatalf("only %d kernel and operand pairs checked", checked)
	}
}
