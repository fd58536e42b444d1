package kernels

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cubego/cubego/zarr"
)

const benchN = 1 << 20 // elements of the 1-D benchmark chunks (8 MiB of float64)

// reportElems reports the throughput in millions of output elements per
// second.
func reportElems(b *testing.B, n int) {
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Melem/s")
}

func benchData(dt zarr.DataType, n int) []byte {
	r := rand.New(rand.NewPCG(1, 1))
	if dt == zarr.Float32 || dt == zarr.Float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = r.Float64() + 0.5
		}
		return floatBytes(dt, v)
	}
	return randomBytes(r, dt, n)
}

func BenchmarkBinary(b *testing.B) {
	const side = 1024
	f64 := func(shape []int, strides []int) Operand {
		return Operand{DType: zarr.Float64, Data: benchData(zarr.Float64, side*side), Shape: shape, Strides: strides}
	}
	sq := []int{side, side}
	cases := []struct {
		name string
		op   string
		out  zarr.DataType
		x, y Operand
	}{
		{"add/float64/contiguous", "add", zarr.Float64, f64(sq, nil), f64(sq, nil)},
		{"add/float64/row-broadcast", "add", zarr.Float64, f64(sq, nil), f64(sq, []int{0, 1})},
		{"add/float64/column-broadcast", "add", zarr.Float64, f64(sq, nil), f64(sq, []int{1, 0})},
		{"add/float64/scalar", "add", zarr.Float64, f64(sq, nil), f64(sq, []int{0, 0})},
		{"add/float64/transposed", "add", zarr.Float64, f64(sq, nil), f64(sq, []int{1, side})},
		{"add/int32/contiguous", "add", zarr.Int32,
			Contiguous(zarr.Int32, benchData(zarr.Int32, benchN), sq), Contiguous(zarr.Int32, benchData(zarr.Int32, benchN), sq)},
		{"multiply/float32/contiguous", "multiply", zarr.Float32,
			Contiguous(zarr.Float32, benchData(zarr.Float32, benchN), sq), Contiguous(zarr.Float32, benchData(zarr.Float32, benchN), sq)},
		{"add/float32/contiguous", "add", zarr.Float32,
			Contiguous(zarr.Float32, benchData(zarr.Float32, benchN), sq), Contiguous(zarr.Float32, benchData(zarr.Float32, benchN), sq)},
		{"less/float64/contiguous", "less", zarr.Bool, f64(sq, nil), f64(sq, nil)},
		{"less/float32/contiguous", "less", zarr.Bool,
			Contiguous(zarr.Float32, benchData(zarr.Float32, benchN), sq), Contiguous(zarr.Float32, benchData(zarr.Float32, benchN), sq)},
		{"less/int32/contiguous", "less", zarr.Bool,
			Contiguous(zarr.Int32, benchData(zarr.Int32, benchN), sq), Contiguous(zarr.Int32, benchData(zarr.Int32, benchN), sq)},
		{"maximum/float64/contiguous", "maximum", zarr.Float64, f64(sq, nil), f64(sq, nil)},
		{"minimum/float64/contiguous", "minimum", zarr.Float64, f64(sq, nil), f64(sq, nil)},
		{"maximum/float32/contiguous", "maximum", zarr.Float32,
			Contiguous(zarr.Float32, benchData(zarr.Float32, benchN), sq), Contiguous(zarr.Float32, benchData(zarr.Float32, benchN), sq)},
		{"minimum/float32/contiguous", "minimum", zarr.Float32,
			Contiguous(zarr.Float32, benchData(zarr.Float32, benchN), sq), Contiguous(zarr.Float32, benchData(zarr.Float32, benchN), sq)},
		{"maximum/int32/contiguous", "maximum", zarr.Int32,
			Contiguous(zarr.Int32, benchData(zarr.Int32, benchN), sq), Contiguous(zarr.Int32, benchData(zarr.Int32, benchN), sq)},
		{"minimum/int32/contiguous", "minimum", zarr.Int32,
			Contiguous(zarr.Int32, benchData(zarr.Int32, benchN), sq), Contiguous(zarr.Int32, benchData(zarr.Int32, benchN), sq)},
		{"floor_divide/int64/contiguous", "floor_divide", zarr.Int64,
			Contiguous(zarr.Int64, benchData(zarr.Int64, benchN), sq), Contiguous(zarr.Int64, benchData(zarr.Int64, benchN), sq)},
		{"pow/float64/contiguous", "pow", zarr.Float64, f64(sq, nil), f64(sq, nil)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			dst := Contiguous(c.out, make([]byte, benchN*c.out.Size()), sq)
			for b.Loop() {
				if err := Binary(c.op, dst, c.x, c.y); err != nil {
					b.Fatal(err)
				}
			}
			reportElems(b, benchN)
		})
	}
}

func BenchmarkUnary(b *testing.B) {
	for _, c := range []struct {
		op     string
		in, to zarr.DataType
	}{
		{"negative", zarr.Float64, zarr.Float64},
		{"negative", zarr.Int8, zarr.Int8},
		{"sqrt", zarr.Float64, zarr.Float64},
		{"sqrt", zarr.Float32, zarr.Float32},
		{"exp", zarr.Float64, zarr.Float64},
		{"exp", zarr.Float32, zarr.Float32},
		{"log", zarr.Float64, zarr.Float64},
		{"log", zarr.Float32, zarr.Float32},
		{"isnan", zarr.Float64, zarr.Bool},
		{"abs", zarr.Complex128, zarr.Float64},
	} {
		b.Run(c.op+"/"+c.in.String(), func(b *testing.B) {
			x := Contiguous(c.in, benchData(c.in, benchN), []int{benchN})
			dst := Contiguous(c.to, make([]byte, benchN*c.to.Size()), []int{benchN})
			for b.Loop() {
				if err := Unary(c.op, dst, x); err != nil {
					b.Fatal(err)
				}
			}
			reportElems(b, benchN)
		})
	}
}

func BenchmarkWhere(b *testing.B) {
	c := Contiguous(zarr.Bool, benchData(zarr.Bool, benchN), []int{benchN})
	x := Contiguous(zarr.Float64, benchData(zarr.Float64, benchN), []int{benchN})
	y := Operand{DType: zarr.Float64, Data: enc(0.0), Shape: []int{benchN}, Strides: []int{0}}
	dst := Contiguous(zarr.Float64, make([]byte, benchN*8), []int{benchN})
	for b.Loop() {
		if err := Where(dst, c, x, y); err != nil {
			b.Fatal(err)
		}
	}
	reportElems(b, benchN)
}

func BenchmarkCast(b *testing.B) {
	for _, c := range [][2]zarr.DataType{
		{zarr.Float64, zarr.Float32}, {zarr.Float64, zarr.Int32}, {zarr.Int64, zarr.Float64}, {zarr.Float32, zarr.Float16},
	} {
		b.Run(c[0].String()+"-"+c[1].String(), func(b *testing.B) {
			x := Contiguous(c[0], benchData(c[0], benchN), []int{benchN})
			dst := Contiguous(c[1], make([]byte, benchN*c[1].Size()), []int{benchN})
			for b.Loop() {
				if err := Cast(dst, x); err != nil {
					b.Fatal(err)
				}
			}
			reportElems(b, benchN)
		})
	}
}

func BenchmarkReduce(b *testing.B) {
	const side = 1024
	for _, c := range []struct {
		name string
		op   string
		dt   zarr.DataType
		axes []int
	}{
		{"sum/float64/all", "sum", zarr.Float64, []int{0, 1}},
		{"sum/float64/axis0", "sum", zarr.Float64, []int{0}},
		{"sum/float64/axis1", "sum", zarr.Float64, []int{1}},
		{"sum/float32/all", "sum", zarr.Float32, []int{0, 1}},
		{"sum/int64/all", "sum", zarr.Int64, []int{0, 1}},
		{"max/float64/all", "max", zarr.Float64, []int{0, 1}},
		{"min/float64/all", "min", zarr.Float64, []int{0, 1}},
		{"max/float32/all", "max", zarr.Float32, []int{0, 1}},
		{"max/int32/all", "max", zarr.Int32, []int{0, 1}},
		{"min/float32/all", "min", zarr.Float32, []int{0, 1}},
		{"min/int32/all", "min", zarr.Int32, []int{0, 1}},
		{"max/float64/axis0", "max", zarr.Float64, []int{0}},
		{"min/float64/axis0", "min", zarr.Float64, []int{0}},
		{"max/float32/axis0", "max", zarr.Float32, []int{0}},
		{"min/float32/axis0", "min", zarr.Float32, []int{0}},
		{"max/int32/axis0", "max", zarr.Int32, []int{0}},
		{"min/int32/axis0", "min", zarr.Int32, []int{0}},
		{"max/float64/axis1", "max", zarr.Float64, []int{1}},
		{"nansum/float64/all", "nansum", zarr.Float64, []int{0, 1}},
		{"any/bool/all", "any", zarr.Bool, []int{0, 1}},
	} {
		b.Run(c.name, func(b *testing.B) {
			x := Contiguous(c.dt, benchData(c.dt, side*side), []int{side, side})
			if c.dt == zarr.Bool {
				clear(x.Data)
			}
			accShape := []int{side, side}
			for _, a := range c.axes {
				accShape[a] = 1
			}
			out := c.dt
			if c.op == "any" {
				out = zarr.Bool
			}
			acc := Contiguous(out, make([]byte, accShape[0]*accShape[1]*out.Size()), accShape)
			for b.Loop() {
				if err := Reduce(c.op, acc, x, c.axes, true); err != nil {
					b.Fatal(err)
				}
			}
			reportElems(b, side*side)
		})
	}
}

// BenchmarkMatmul measures one 256×256 (and a 1024×1024 float64) product;
// `go test -tags openblas -bench Matmul` measures OpenBLAS's instead.
func BenchmarkMatmul(b *testing.B) {
	for _, c := range []struct {
		dt zarr.DataType
		n  int
	}{{zarr.Float64, 256}, {zarr.Float32, 256}, {zarr.Complex128, 256}, {zarr.Int64, 256}, {zarr.Float64, 1024}} {
		dt, n := c.dt, c.n
		b.Run(fmt.Sprintf("%s/%d", dt, n), func(b *testing.B) {
			x := Contiguous(dt, benchData(dt, n*n), []int{n, n})
			y := Contiguous(dt, benchData(dt, n*n), []int{n, n})
			acc := Contiguous(dt, make([]byte, n*n*dt.Size()), []int{n, n})
			for b.Loop() {
				if err := Matmul(acc, x, y, true); err != nil {
					b.Fatal(err)
				}
			}
			flops := 2.0 * float64(n) * float64(n) * float64(n)
			if dt == zarr.Complex128 {
				flops *= 4
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

func BenchmarkCopyStrided(b *testing.B) {
	const side = 1024
	for _, c := range []struct {
		name    string
		strides []int
	}{
		{"transpose/float64", []int{1, side}},
		{"broadcast-row/float64", []int{0, 1}},
	} {
		b.Run(c.name, func(b *testing.B) {
			src := Operand{DType: zarr.Float64, Data: benchData(zarr.Float64, side*side), Shape: []int{side, side}, Strides: c.strides}
			dst := Contiguous(zarr.Float64, make([]byte, side*side*8), []int{side, side})
			for b.Loop() {
				if err := CopyStrided(dst, src); err != nil {
					b.Fatal(err)
				}
			}
			reportElems(b, side*side)
		})
	}
}

func BenchmarkRandomUniform(b *testing.B) {
	dst := make([]byte, benchN*8)
	for b.Loop() {
		RandomUniform(dst, zarr.Float64, 1, []int{4 * benchN}, []int{benchN}, []int{benchN})
	}
	reportElems(b, benchN)
}

func BenchmarkArange(b *testing.B) {
	dst := make([]byte, benchN*8)
	for b.Loop() {
		Arange(dst, zarr.Int64, 0, 1, 5)
	}
	reportElems(b, benchN)
}

// BenchmarkVectorLoops measures each vector loop (vector.go) beside the
// generated loop it replaces, on the same 1M-element contiguous operands in
// one run: sub-benchmarks op/dtype/loop and op/dtype/vector. Without the
// SIMD build there is nothing to measure.
func BenchmarkVectorLoops(b *testing.B) {
	type run struct {
		name         string
		loop, vector func()
	}
	var runs []run
	for key, vk := range vectorUnary {
		k, out := unaryLoop(key.op, key.dt)
		x := benchData(key.dt, benchN)
		d := make([]byte, benchN*out.Size())
		runs = append(runs, run{key.op + "/" + key.dt.String(), func() { k(d, x, nil, nil) }, func() { vk(d, x, nil, nil) }})
	}
	for key, vk := range vectorBinary {
		k, out := binaryLoop(key.op, key.dt)
		x, y := benchData(key.dt, benchN), benchData(key.dt, benchN)
		d := make([]byte, benchN*out.Size())
		runs = append(runs, run{key.op + "/" + key.dt.String(), func() { k(d, x, y, nil) }, func() { vk(d, x, y, nil) }})
	}
	for key, wrap := range vectorRows {
		x := benchData(key.dt, benchN)
		acc := make([]byte, key.dt.Size())
		r, _ := newReduction(key.op, key.dt, acc, x)
		v := wrap(acc, x, r)
		runs = append(runs, run{key.op + "/" + key.dt.String(), func() { r.row(0, 0, 1, benchN) }, func() { v.row(0, 0, 1, benchN) }})
	}
	slices.SortFunc(runs, func(a, c run) int { return strings.Compare(a.name, c.name) })
	for _, r := range runs {
		for _, side := range []struct {
			name string
			f    func()
		}{{"loop", r.loop}, {"vector", r.vector}} {
			b.Run(r.name+"/"+side.name, func(b *testing.B) {
				clearUpper()
				for b.Loop() {
					side.f()
				}
				reportElems(b, benchN)
			})
		}
	}
}
