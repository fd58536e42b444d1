package kernels

import (
	"math"

	"github.com/cubego/cubego/zarr"
)

// Arange sets element i of dst to start + (offset+i)*step converted to dt,
// for as many whole elements as dst holds: the block of numpy's arange that
// starts at element offset. When start and step are integral and dt is an
// integer type the values are computed exactly in int64 (wrapping to dt);
// otherwise in float64 and converted as Cast does.
func Arange(dst []byte, dt zarr.DataType, start, step float64, offset int) {
	clearUpper()
	size := dt.Size()
	if size == 0 {
		return
	}
	n := len(dst) / size
	integral := isIntegerType(dt) && isInt64(start) && isInt64(step)
	from := zarr.Float64
	if integral {
		from = zarr.Int64
	}
	k := castKernel(from, dt)
	var tmp [blockLen]uint64
	for lo := 0; lo < n; lo += blockLen {
		cnt := min(blockLen, n-lo)
		b := bytesOfSlice(tmp[:cnt])
		if integral {
			v := as[int64](b)
			a, s := int64(start), int64(step)
			for i := range v {
				v[i] = a + int64(offset+lo+i)*s
			}
		} else {
			v := as[float64](b)
			for i := range v {
				v[i] = start + float64(offset+lo+i)*step
			}
		}
		k(dst[lo*size:(lo+cnt)*size], b, nil, nil)
	}
}

func isIntegerType(dt zarr.DataType) bool {
	switch dt {
	case zarr.Int8, zarr.Int16, zarr.Int32, zarr.Int64, zarr.Uint8, zarr.Uint16, zarr.Uint32, zarr.Uint64:
		return true
	}
	return false
}

func isInt64(f float64) bool { return f == math.Trunc(f) && f >= -0x1p63 && f < 0x1p63 }
