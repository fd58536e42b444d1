package kernels

import (
	"math"
	"testing"

	"github.com/cubego/cubego/zarr"
)

// chunkRegions splits shape into regions of at most chunk per dimension,
// in C order of the chunk grid.
func chunkRegions(shape, chunk []int) (starts, shapes [][]int) {
	idx := make([]int, len(shape))
	for {
		st := make([]int, len(shape))
		sh := make([]int, len(shape))
		for d := range shape {
			st[d] = idx[d] * chunk[d]
			sh[d] = min(chunk[d], shape[d]-st[d])
		}
		starts, shapes = append(starts, st), append(shapes, sh)
		d := len(shape) - 1
		for ; d >= 0; d-- {
			idx[d]++
			if idx[d]*chunk[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// assembleRegions generates every region of shape with gen and writes it
// into a C-ordered buffer of the whole array.
func assembleRegions(dt zarr.DataType, shape, chunk []int, gen func(dst []byte, start, rshape []int)) []byte {
	n := 1
	for _, e := range shape {
		n *= e
	}
	size := dt.Size()
	whole := make([]byte, n*size)
	cs := cStrides(shape)
	starts, shapes := chunkRegions(shape, chunk)
	for i := range starts {
		m := 1
		for _, e := range shapes[i] {
			m *= e
		}
		block := make([]byte, m*size)
		gen(block, starts[i], shapes[i])
		idx := make([]int, len(shape))
		for j := range m {
			flat := 0
			for d := range shape {
				flat += (starts[i][d] + idx[d]) * cs[d]
			}
			copy(whole[flat*size:], block[j*size:(j+1)*size])
			for d := len(idx) - 1; d >= 0; d-- {
				idx[d]++
				if idx[d] < shapes[i][d] {
					break
				}
				idx[d] = 0
			}
		}
	}
	return whole
}

func TestRandomChunkingInvariant(t *testing.T) {
	shape := []int{7, 13, 5}
	for _, dt := range []zarr.DataType{zarr.Float16, zarr.Float32, zarr.Float64, zarr.Int8, zarr.Uint64} {
		gen := func(dst []byte, start, rshape []int) {
			if dt == zarr.Float16 || dt == zarr.Float32 || dt == zarr.Float64 {
				RandomUniform(dst, dt, 42, shape, start, rshape)
			} else {
				RandomIntegers(dst, dt, 42, -3, 1000, shape, start, rshape)
			}
		}
		whole := assembleRegions(dt, shape, shape, gen)
		for _, chunk := range [][]int{{1, 1, 1}, {3, 4, 2}, {7, 1, 5}, {2, 13, 5}} {
			if got := assembleRegions(dt, shape, chunk, gen); string(got) != string(whole) {
				t.Errorf("%s: chunks %v give other values than one region", dt, chunk)
			}
		}
	}
}

func TestRandomUniformDistribution(t *testing.T) {
	const n = 200000
	for _, dt := range []zarr.DataType{zarr.Float32, zarr.Float64} {
		dst := make([]byte, n*dt.Size())
		RandomUniform(dst, dt, 7, []int{n}, []int{0}, []int{n})
		var sum, sq float64
		var lowHalf int
		for i := range n {
			v := floatElem(dt, dst[i*dt.Size():])
			if !(v >= 0 && v < 1) {
				t.Fatalf("%s: value %v outside [0, 1)", dt, v)
			}
			sum += v
			sq += v * v
			if v < 0.5 {
				lowHalf++
			}
		}
		mean, variance := sum/n, sq/n-(sum/n)*(sum/n)
		if math.Abs(mean-0.5) > 0.005 || math.Abs(variance-1.0/12) > 0.002 || math.Abs(float64(lowHalf)/n-0.5) > 0.005 {
			t.Errorf("%s: mean %v variance %v below half %v", dt, mean, variance, float64(lowHalf)/n)
		}
		other := make([]byte, len(dst))
		RandomUniform(other, dt, 8, []int{n}, []int{0}, []int{n})
		same := 0
		for i := range n {
			if floatElem(dt, dst[i*dt.Size():]) == floatElem(dt, other[i*dt.Size():]) {
				same++
			}
		}
		if same > n/1000 {
			t.Errorf("%s: seeds 7 and 8 agree on %d of %d values", dt, same, n)
		}
	}
}

func TestRandomIntegers(t *testing.T) {
	const n = 30000
	counts := make([]int, 3)
	dst := make([]byte, n*8)
	RandomIntegers(dst, zarr.Int64, 1, -1, 2, []int{n}, []int{0}, []int{n})
	for _, v := range dec[int64](dst) {
		if v < -1 || v > 1 {
			t.Fatalf("value %d outside [-1, 2)", v)
		}
		counts[v+1]++
	}
	for _, c := range counts {
		if math.Abs(float64(c)/n-1.0/3) > 0.01 {
			t.Errorf("counts %v not uniform", counts)
		}
	}
	// The full int64 range and an empty range.
	RandomIntegers(dst, zarr.Int64, 1, math.MinInt64, math.MaxInt64, []int{n}, []int{0}, []int{n})
	neg := 0
	for _, v := range dec[int64](dst) {
		if v < 0 {
			neg++
		}
	}
	if math.Abs(float64(neg)/n-0.5) > 0.02 {
		t.Errorf("full range: %d of %d negative", neg, n)
	}
	RandomIntegers(dst[:16], zarr.Int64, 1, 5, 5, []int{2}, []int{0}, []int{2})
	if v := dec[int64](dst[:16]); v[0] != 5 || v[1] != 5 {
		t.Errorf("empty range gives %v, want low", v)
	}
	// Narrow dtypes wrap like a cast from int64.
	b := make([]byte, 100)
	RandomIntegers(b, zarr.Uint8, 3, 250, 262, []int{100}, []int{0}, []int{100})
	for _, v := range b {
		if v >= 6 && v < 250 {
			t.Fatalf("uint8 value %d not in [250, 262) mod 256", v)
		}
	}
}

func TestRandomInvalidRegion(t *testing.T) {
	dst := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	for _, c := range []struct{ shape, start, rshape []int }{
		{[]int{4}, []int{3}, []int{2}},
		{[]int{4}, []int{-1}, []int{1}},
		{[]int{4, 4}, []int{0}, []int{1}},
	} {
		RandomUniform(dst, zarr.Float64, 1, c.shape, c.start, c.rshape)
		if dst[0] != 1 {
			t.Errorf("region %v+%v of %v written", c.start, c.rshape, c.shape)
		}
	}
	RandomUniform(dst, zarr.Int32, 1, []int{2}, []int{0}, []int{2})
	if dst[0] != 1 {
		t.Error("int32 RandomUniform wrote")
	}
	// dst shorter than the region: only whole elements that fit.
	short := make([]byte, 12)
	RandomUniform(short, zarr.Float64, 1, []int{4}, []int{0}, []int{4})
	if short[8] != 0 {
		t.Error("partial element written")
	}
	// 0-d array.
	RandomUniform(short[:8], zarr.Float64, 1, []int{}, []int{}, []int{})
}

func TestArange(t *testing.T) {
	// Integral start and step are exact in int64 beyond float64's 2^53.
	dst := make([]byte, 3*8)
	Arange(dst, zarr.Int64, 1<<60, 3, 2)
	if v := dec[int64](dst); v[0] != 1<<60+6 || v[1] != 1<<60+9 || v[2] != 1<<60+12 {
		t.Errorf("int64 arange = %v", v)
	}
	f := make([]byte, 4*8)
	Arange(f, zarr.Float64, 0.5, 0.25, 1)
	if v := dec[float64](f); v[0] != 0.75 || v[3] != 1.5 {
		t.Errorf("float64 arange = %v", v)
	}
	u := make([]byte, 4)
	Arange(u, zarr.Uint8, 254, 1, 0)
	if string(u) != string([]byte{254, 255, 0, 1}) {
		t.Errorf("uint8 arange = %v", u)
	}
	i := make([]byte, 3*2)
	Arange(i, zarr.Int16, 0, -1.5, 0) // non-integral step: float64 then truncation
	if v := dec[int16](i); v[0] != 0 || v[1] != -1 || v[2] != -3 {
		t.Errorf("int16 arange = %v", v)
	}
	h := make([]byte, 3*2)
	Arange(h, zarr.Float16, 1, 1, 0)
	if v := dec[uint16](h); v[0] != 0x3c00 || v[1] != 0x4000 || v[2] != 0x4200 {
		t.Errorf("float16 arange bits = %x", v)
	}
	c := make([]byte, 2*16)
	Arange(c, zarr.Complex128, -1, 2, 0)
	if v := dec[complex128](c); v[0] != -1 || v[1] != 1 {
		t.Errorf("complex arange = %v", v)
	}
	b := make([]byte, 3)
	Arange(b, zarr.Bool, -1, 1, 0)
	if string(b) != string([]byte{1, 0, 1}) {
		t.Errorf("bool arange = %v", b)
	}
	// Blocks beyond the scratch size.
	long := make([]byte, 5000*4)
	Arange(long, zarr.Float32, 0, 1, 0)
	if v := dec[float32](long); v[4999] != 4999 {
		t.Errorf("long arange ends with %v", v[4999])
	}
}
