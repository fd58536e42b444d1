//go:build ignore

// gen_loops writes loops_gen.go: one generic loop per (elementwise op, dtype
// category) and the flat switches that pick a loop for an (op, dtype) pair.
// Generics cover the dtypes of a category; generation covers the operators,
// which generics cannot abstract without an indirect call per element.
//
// Run with go generate (see doc.go); -o names another output file
// (TestGeneratedLoopsCurrent uses it to check that loops_gen.go is current).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"regexp"
	"strings"
)

// impl is the loop of an op for some dtype categories (space separated: int,
// uint, float, complex, bool). expr computes the result from v (unary) or x
// and y (binary); T is the input element type and U the result type when it
// differs.
type impl struct {
	cats string
	out  string // "" same dtype as the input, "bool", or "real" (complex to its real type)
	expr string
}

type op struct {
	name  string
	impls []impl
}

func f64(fn string) impl { return impl{"float", "", "T(math." + fn + "(float64(v)))"} }
func c128(fn string) impl {
	return impl{"complex", "", "T(" + fn + "(complex128(v)))"}
}

var unaryOps = []op{
	{"negative", []impl{{"int uint float complex", "", "-v"}}},
	{"positive", []impl{{"int uint float complex", "", "v"}}},
	{"abs", []impl{
		{"int", "", "absInt(v)"}, {"uint bool", "", "v"}, {"float", "", "T(math.Abs(float64(v)))"},
		{"complex", "real", "U(cmplx.Abs(complex128(v)))"},
	}},
	{"sign", []impl{
		{"int", "", "signInt(v)"}, {"uint", "", "signUint(v)"}, {"float", "", "signFloat(v)"},
		c128("csign"),
	}},
	{"square", []impl{{"int uint float complex", "", "v * v"}}},
	{"sqrt", []impl{f64("Sqrt"), c128("csqrt")}},
	{"exp", []impl{f64("Exp"), c128("cmplx.Exp")}},
	{"expm1", []impl{f64("Expm1"), c128("cexpm1")}},
	{"log", []impl{{"float", "", "T(logF(float64(v)))"}, c128("clog")}},
	{"log1p", []impl{f64("Log1p"), c128("clog1p")}},
	{"log2", []impl{f64("Log2"), c128("clog2")}},
	{"log10", []impl{{"float", "", "T(log10F(float64(v)))"}, c128("cmplx.Log10")}},
	{"sin", []impl{f64("Sin"), c128("cmplx.Sin")}},
	{"cos", []impl{f64("Cos"), c128("cmplx.Cos")}},
	{"tan", []impl{f64("Tan"), c128("ctan")}},
	{"asin", []impl{f64("Asin"), c128("casin")}},
	{"acos", []impl{f64("Acos"), c128("cacos")}},
	{"atan", []impl{f64("Atan"), c128("catan")}},
	{"sinh", []impl{f64("Sinh"), c128("cmplx.Sinh")}},
	{"cosh", []impl{f64("Cosh"), c128("cmplx.Cosh")}},
	{"tanh", []impl{f64("Tanh"), c128("ctanh")}},
	{"asinh", []impl{f64("Asinh"), c128("casinh")}},
	{"acosh", []impl{f64("Acosh"), c128("cacosh")}},
	{"atanh", []impl{f64("Atanh"), c128("catanh")}},
	{"floor", []impl{f64("Floor"), {"int uint bool", "", "v"}}},
	{"ceil", []impl{f64("Ceil"), {"int uint bool", "", "v"}}},
	{"trunc", []impl{f64("Trunc"), {"int uint bool", "", "v"}}},
	{"round", []impl{f64("RoundToEven"), {"int uint", "", "v"}, c128("cround")}},
	{"reciprocal", []impl{{"float", "", "1 / v"}, c128("crecip"), {"int uint", "", "recipInt(v)"}}},
	{"bitwise_invert", []impl{{"int uint", "", "^v"}, {"bool", "", "b2u(v == 0)"}}},
	{"logical_not", []impl{{"bool int uint float complex", "bool", "b2u(v == 0)"}}},
	{"conj", []impl{c128("cmplx.Conj"), {"int uint float", "", "v"}}},
	{"isnan", []impl{{"float complex", "bool", "b2u(v != v)"}, {"bool int uint", "bool", "0"}}},
	{"isinf", []impl{
		{"float", "bool", "b2u(math.IsInf(float64(v), 0))"},
		{"complex", "bool", "b2u(cisinf(complex128(v)))"},
		{"bool int uint", "bool", "0"},
	}},
	{"isfinite", []impl{
		{"float", "bool", "b2u(v-v == 0)"},
		{"complex", "bool", "b2u(cisfinite(complex128(v)))"},
		{"bool int uint", "bool", "1"},
	}},
	{"signbit", []impl{
		{"float", "bool", "b2u(math.Signbit(float64(v)))"},
		{"int", "bool", "b2u(v < 0)"},
		{"uint bool", "bool", "0"},
	}},
	{"real", []impl{{"complex", "real", "U(real(complex128(v)))"}, {"int uint float bool", "", "v"}}},
	{"imag", []impl{{"complex", "real", "U(imag(complex128(v)))"}, {"int uint float bool", "", "0"}}},
}

func f64x2(fn string) impl { return impl{"float", "", "T(math." + fn + "(float64(x), float64(y)))"} }

var binaryOps = []op{
	{"add", []impl{{"int uint float complex", "", "x + y"}, {"bool", "", "b2u(x|y != 0)"}}},
	{"subtract", []impl{{"int uint float complex", "", "x - y"}}},
	{"multiply", []impl{{"int uint float complex", "", "x * y"}, {"bool", "", "b2u(x != 0 && y != 0)"}}},
	{"divide", []impl{{"float complex", "", "x / y"}}},
	{"floor_divide", []impl{{"int uint", "", "floorDivInt(x, y)"}, {"float", "", "floorDivFloat(x, y)"}}},
	{"remainder", []impl{{"int uint", "", "remInt(x, y)"}, {"float", "", "remFloat(x, y)"}}},
	{"pow", []impl{
		{"int uint", "", "powInt(x, y)"}, f64x2("Pow"),
		{"complex", "", "T(cpow(complex128(x), complex128(y)))"},
	}},
	{"maximum", []impl{
		{"int uint", "", "max(x, y)"}, {"float", "", "maxFloat(x, y)"}, {"complex", "", "cmax(x, y)"}, {"bool", "", "b2u(x|y != 0)"},
	}},
	{"minimum", []impl{
		{"int uint", "", "min(x, y)"}, {"float", "", "minFloat(x, y)"}, {"complex", "", "cmin(x, y)"}, {"bool", "", "b2u(x != 0 && y != 0)"},
	}},
	{"atan2", []impl{f64x2("Atan2")}},
	{"hypot", []impl{f64x2("Hypot")}},
	{"copysign", []impl{f64x2("Copysign")}},
	{"nextafter", []impl{{"float", "", "nextAfter(x, y)"}}},
	{"logaddexp", []impl{{"float", "", "T(logAddExp(float64(x), float64(y)))"}}},
	{"bitwise_and", []impl{{"int uint", "", "x & y"}, {"bool", "", "b2u(x != 0 && y != 0)"}}},
	{"bitwise_or", []impl{{"int uint", "", "x | y"}, {"bool", "", "b2u(x|y != 0)"}}},
	{"bitwise_xor", []impl{{"int uint", "", "x ^ y"}, {"bool", "", "b2u((x != 0) != (y != 0))"}}},
	{"bitwise_left_shift", []impl{{"int uint", "", "x << uint64(y)"}}},
	{"bitwise_right_shift", []impl{{"int uint", "", "x >> uint64(y)"}}},
	{"logical_and", []impl{{"bool", "", "b2u(x != 0 && y != 0)"}, {"int uint float complex", "bool", "b2u(x != 0 && y != 0)"}}},
	{"logical_or", []impl{{"bool", "", "b2u(x|y != 0)"}, {"int uint float complex", "bool", "b2u(x != 0 || y != 0)"}}},
	{"logical_xor", []impl{{"bool", "", "b2u((x != 0) != (y != 0))"}, {"int uint float complex", "bool", "b2u((x != 0) != (y != 0))"}}},
	{"equal", []impl{{"int uint float complex", "bool", "b2u(x == y)"}, {"bool", "bool", "b2u((x != 0) == (y != 0))"}}},
	{"not_equal", []impl{{"int uint float complex", "bool", "b2u(x != y)"}, {"bool", "bool", "b2u((x != 0) != (y != 0))"}}},
	{"less", []impl{
		{"int uint float", "bool", "b2u(x < y)"}, {"complex", "bool", "b2u(cless(x, y))"},
		{"bool", "bool", "b2u(x == 0 && y != 0)"},
	}},
	{"less_equal", []impl{
		{"int uint float", "bool", "b2u(x <= y)"}, {"complex", "bool", "b2u(clessEqual(x, y))"},
		{"bool", "bool", "b2u(x == 0 || y != 0)"},
	}},
	{"greater", []impl{
		{"int uint float", "bool", "b2u(x > y)"}, {"complex", "bool", "b2u(cless(y, x))"},
		{"bool", "bool", "b2u(x != 0 && y == 0)"},
	}},
	{"greater_equal", []impl{
		{"int uint float", "bool", "b2u(x >= y)"}, {"complex", "bool", "b2u(clessEqual(y, x))"},
		{"bool", "bool", "b2u(x != 0 || y == 0)"},
	}},
}

type dtype struct{ name, goType, realName, realGo string }

var categories = map[string][]dtype{
	"int":     {{"Int8", "int8", "", ""}, {"Int16", "int16", "", ""}, {"Int32", "int32", "", ""}, {"Int64", "int64", "", ""}},
	"uint":    {{"Uint8", "uint8", "", ""}, {"Uint16", "uint16", "", ""}, {"Uint32", "uint32", "", ""}, {"Uint64", "uint64", "", ""}},
	"float":   {{"Float32", "float32", "", ""}, {"Float64", "float64", "", ""}},
	"complex": {{"Complex64", "complex64", "Float32", "float32"}, {"Complex128", "complex128", "Float64", "float64"}},
	"bool":    {{"Bool", "uint8", "", ""}},
}

var usesV = regexp.MustCompile(`\bv\b`)

func loopName(op string, im impl) string {
	var b strings.Builder
	for i, w := range strings.Split(op, "_") {
		if i > 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		b.WriteString(w)
	}
	for _, c := range strings.Fields(im.cats) {
		b.WriteString(strings.ToUpper(c[:1]) + c[1:])
	}
	return b.String() + "Loop"
}

func constraint(im impl) string {
	seen := map[string]bool{}
	var terms []string
	for _, c := range strings.Fields(im.cats) {
		for _, dt := range categories[c] {
			if !seen[dt.goType] {
				seen[dt.goType] = true
				terms = append(terms, dt.goType)
			}
		}
	}
	return strings.Join(terms, " | ")
}

func genLoop(b *bytes.Buffer, op string, im impl, arity int) {
	name := loopName(op, im)
	fmt.Fprintf(b, "// %s is %s for %s.\n", name, op, strings.Join(strings.Fields(im.cats), ", "))
	tp, dstT, inT := "[T "+constraint(im)+"]", "T", "T"
	switch {
	case im.cats == "bool":
		tp, dstT, inT = "", "uint8", "uint8"
	case im.out == "bool":
		dstT = "uint8"
	case im.out == "real":
		tp = "[T " + constraint(im) + ", U float32 | float64]"
		dstT = "U"
	}
	if arity == 1 {
		fmt.Fprintf(b, "func %s%s(d []%s, xs []%s) {\n\txs = xs[:len(d)]\n\tfor i := range d {\n", name, tp, dstT, inT)
		if usesV.MatchString(im.expr) {
			b.WriteString("\t\tv := xs[i]\n")
		}
	} else {
		fmt.Fprintf(b, "func %s%s(d []%s, xs, ys []%s) {\n\txs = xs[:len(d)]\n\tys = ys[:len(d)]\n\tfor i := range d {\n\t\tx, y := xs[i], ys[i]\n", name, tp, dstT, inT)
	}
	fmt.Fprintf(b, "\t\td[i] = %s\n\t}\n}\n\n", im.expr)
}

func genSwitch(b *bytes.Buffer, fn, wrap string, ops []op) {
	fmt.Fprintf(b, "func %s(op string, dt zarr.DataType) (kernel, zarr.DataType) {\n\tswitch op {\n", fn)
	for _, o := range ops {
		fmt.Fprintf(b, "\tcase %q:\n\t\tswitch dt {\n", o.name)
		for _, im := range o.impls {
			name := loopName(o.name, im)
			inst := func(targs string) string {
				if im.cats == "bool" {
					return name
				}
				return name + "[" + targs + "]"
			}
			for _, c := range strings.Fields(im.cats) {
				for _, dt := range categories[c] {
					switch im.out {
					case "":
						fmt.Fprintf(b, "\t\tcase zarr.%s:\n\t\t\treturn %s(%s), zarr.%s\n", dt.name, wrap, inst(dt.goType), dt.name)
					case "bool":
						fmt.Fprintf(b, "\t\tcase zarr.%s:\n\t\t\treturn %s(%s), zarr.Bool\n", dt.name, wrap, inst(dt.goType))
					case "real":
						fmt.Fprintf(b, "\t\tcase zarr.%s:\n\t\t\treturn %s(%s), zarr.%s\n", dt.name, wrap, inst(dt.goType+", "+dt.realGo), dt.realName)
					}
				}
			}
		}
		b.WriteString("\t\t}\n")
	}
	b.WriteString("\t}\n\treturn nil, zarr.Invalid\n}\n\n")
}

func main() {
	out := flag.String("o", "loops_gen.go", "output file")
	flag.Parse()
	var b bytes.Buffer
	b.WriteString(`// Code generated by gen_loops.go; DO NOT EDIT.

package kernels

import (
	"math"
	"math/cmplx"

	"github.com/cubego/cubego/zarr"
)

`)
	b.WriteString("// unaryOps lists the ops of Unary.\nvar unaryOps = []string{")
	for _, o := range unaryOps {
		fmt.Fprintf(&b, "%q, ", o.name)
	}
	b.WriteString("}\n\n// binaryOps lists the ops of Binary.\nvar binaryOps = []string{")
	for _, o := range binaryOps {
		fmt.Fprintf(&b, "%q, ", o.name)
	}
	b.WriteString("}\n\n")
	b.WriteString("// unaryLoop returns the loop of a unary op for input dtype dt and the dtype\n// of its result, or nil when op is not defined for dt.\n")
	genSwitch(&b, "unaryLoop", "unary", unaryOps)
	b.WriteString("// binaryLoop returns the loop of a binary op for input dtype dt and the\n// dtype of its result, or nil when op is not defined for dt.\n")
	genSwitch(&b, "binaryLoop", "binary", binaryOps)
	for _, o := range unaryOps {
		for _, im := range o.impls {
			genLoop(&b, o.name, im, 1)
		}
	}
	for _, o := range binaryOps {
		for _, im := range o.impls {
			genLoop(&b, o.name, im, 2)
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
