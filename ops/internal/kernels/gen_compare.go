//go:build ignore

// gen_compare writes compare_gen_amd64.go: the AVX2 comparison loops
// (equal, not_equal, less, less_equal, greater, greater_equal producing
// Bool bytes) of float64, float32 and int32, one loop per comparison and
// dtype. A loop choosing the comparison inside its body kept more state
// than the 16 vector registers hold, and a switch per vector cost more
// than the comparison: generation gives each comparison its own loop from
// one template.
//
// Run with go generate (see doc.go); -o names another output file
// (TestGeneratedLoopsCurrent uses it to check that the output is current).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"strings"
	"text/template"
)

// cmp is a comparison: its code in vector_amd64.go, the Go operator and
// the archsimd expressions of the lane mask for floats and for integers
// (AVX2 compares integers only for equality and greater than).
type cmp struct{ Code, Op, Float, Int string }

var cmps = []cmp{
	{"cmpLess", "<", "X.Less(Y)", "Y.Greater(X)"},
	{"cmpLessEqual", "<=", "X.LessEqual(Y)", "X.LessEqual(Y)"},
	{"cmpGreater", ">", "X.Greater(Y)", "X.Greater(Y)"},
	{"cmpGreaterEqual", ">=", "X.GreaterEqual(Y)", "X.GreaterEqual(Y)"},
	{"cmpEqual", "==", "X.Equal(Y)", "X.Equal(Y)"},
	{"cmpNotEqual", "!=", "X.NotEqual(Y)", "X.NotEqual(Y)"},
}

// dtype is an element type: its Go name, archsimd vector, lanes and
// whether it is a float.
type dtype struct {
	T, Vec      string
	Lanes, Size int
	Float       bool
}

var dtypes = []dtype{{"float64", "Float64x4", 4, 8, true}, {"float32", "Float32x8", 8, 4, true}, {"int32", "Int32x8", 8, 4, false}}

// The loop takes 32 elements an iteration and packs the 32 lane masks to
// Bool bytes in registers (see packLowBytes in vector_amd64.go): 4-lane
// masks pair by pair to 16 bits, then with 8-lane masks to 16 bits in
// 4-byte groups (VPACKSSDW), whose low bytes VPSHUFB gathers into the low
// (first pair) or high (second pair) 8 bytes of each 128-bit half; VPERMD
// puts the groups in element order and an AND with 1 makes true 1. The
// constants stay in registers: in a struct of more than four fields they
// would be reloaded from the stack every iteration.
var loop = template.Must(template.New("loop").Funcs(template.FuncMap{
	"name":  func(s string) string { return strings.TrimPrefix(s, "cmp") },
	"title": func(s string) string { return strings.ToUpper(s[:1]) + s[1:] },
	"mul2":  func(i int) int { return 2 * i },
	"inc":   func(i int) int { return i + 1 },
	"seq": func(n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = i
		}
		return s
	},
	"mask": func(d dtype, c cmp, i int) string {
		e := c.Int
		if d.Float {
			e = c.Float
		}
		ld := func(v string) string {
			return fmt.Sprintf("archsimd.Load%s((*[%d]%s)(unsafe.Add(%s, %d)))", d.Vec, d.Lanes, d.T, v, i*32)
		}
		return strings.NewReplacer("X", ld("x"), "Y", ld("y")).Replace(e)
	},
}).Parse(`
// compare{{name .C.Code}}{{title .D.T}} is d[i] = b2u(xs[i] {{.C.Op}} ys[i]).
func compare{{name .C.Code}}{{title .D.T}}(d []uint8, xs, ys []{{.D.T}}) {
	n := len(d)
	xs, ys = xs[:n], ys[:n]
	lo, hi, ones := archsimd.LoadInt8x32(&packLowBytes), archsimd.LoadInt8x32(&packHighBytes), archsimd.LoadInt8x32(&packOnes)
	order := archsimd.LoadUint32x8(&packDwordOrder)
{{- if eq .D.Lanes 4}}
	halves := archsimd.LoadUint32x8(&packHalves)
{{- end}}
	// x, y and o walk xs, ys and d a block of 32 elements at a time (never
	// past the last block: a pointer beyond its allocation is invalid), so
	// the loads address registers plus constants; slice expressions would
	// recompute each address from the index.
	i := n &^ 31
	if b := n / 32; b > 0 {
		x, y, o := unsafe.Pointer(unsafe.SliceData(xs)), unsafe.Pointer(unsafe.SliceData(ys)), unsafe.Pointer(unsafe.SliceData(d))
		for {
{{- if eq .D.Lanes 4}}
{{- range $p := seq 4}}
			q{{$p}} := {{mask $.D $.C (mul2 $p)}}.ToInt64x4().AsInt32x8().SaturateToInt16ConcatGrouped({{mask $.D $.C (inc (mul2 $p))}}.ToInt64x4().AsInt32x8()).AsInt32x8()
{{- end}}
			r0 := q0.SaturateToInt16ConcatGrouped(q1).AsInt32x8().Permute(order).AsInt8x32().PermuteOrZeroGrouped(lo)
			r1 := q2.SaturateToInt16ConcatGrouped(q3).AsInt32x8().Permute(order).AsInt8x32().PermuteOrZeroGrouped(hi)
			r0.Or(r1).AsInt32x8().Permute(halves).AsInt8x32().And(ones).Store((*[32]int8)(o))
{{- else}}
			p01 := {{mask .D .C 0}}.ToInt32x8().SaturateToInt16ConcatGrouped({{mask .D .C 1}}.ToInt32x8()).AsInt8x32().PermuteOrZeroGrouped(lo)
			p23 := {{mask .D .C 2}}.ToInt32x8().SaturateToInt16ConcatGrouped({{mask .D .C 3}}.ToInt32x8()).AsInt8x32().PermuteOrZeroGrouped(hi)
			p01.Or(p23).AsInt32x8().Permute(order).AsInt8x32().And(ones).Store((*[32]int8)(o))
{{- end}}
			if b--; b == 0 {
				break
			}
			x, y, o = unsafe.Add(x, 32*{{.D.Size}}), unsafe.Add(y, 32*{{.D.Size}}), unsafe.Add(o, 32)
		}
	}
	clearUpper() // the scalar tail is legacy SSE
	compareScalar({{.C.Code}}, d[i:], xs[i:], ys[i:])
}
`))

func main() {
	out := flag.String("o", "compare_gen_amd64.go", "output file")
	flag.Parse()
	var b bytes.Buffer
	b.WriteString(`// Code generated by gen_compare.go; DO NOT EDIT.

//go:build goexperiment.simd && amd64

package kernels

import (
	"simd/archsimd"
	"unsafe"
)
`)
	for _, d := range dtypes {
		fmt.Fprintf(&b, "\n// compare%sLoops are the %s comparison loops by comparison code.\nvar compare%sLoops = [...]func(d []uint8, xs, ys []%s){\n", strings.Title(d.T), d.T, strings.Title(d.T), d.T)
		for _, c := range cmps {
			fmt.Fprintf(&b, "\t%s: compare%s%s,\n", c.Code, strings.TrimPrefix(c.Code, "cmp"), strings.Title(d.T))
		}
		b.WriteString("}\n")
		for _, c := range cmps {
			if err := loop.Execute(&b, struct {
				D dtype
				C cmp
			}{d, c}); err != nil {
				log.Fatal(err)
			}
		}
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		log.Fatalf("%v\n%s", err, b.Bytes())
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}
