package plan

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// AutoChunkBytes is the largest chunk "auto" chunking aims for, as in Cubed.
const AutoChunkBytes = 128 << 20

// NormalizeChunks turns a user's chunk specification into explicit block
// sizes per axis, with Dask's semantics. spec is decoded JSON:
//
//   - nil, -1: one chunk spanning each axis
//   - an int n: blocks of n along every axis (the last may be smaller)
//   - "auto" or a byte size such as "100MB": blocks of about that many bytes
//     (128 MiB for "auto", capped by limit when limit > 0)
//   - a list with one entry per axis, each nil, -1, an int, "auto", or a list
//     of explicit block sizes that sum to the axis length
//
// A zero-length axis has the single block size 0 (a chunk size of 0 is
// accepted for it). It refuses a shape whose number of elements or bytes
// overflows int64, and a chunking of more than MaxBlocks blocks, before
// allocating any list of block sizes.
func NormalizeChunks(spec any, shape []int, itemSize int, limit int64) ([][]int, error) {
	ndim := len(shape)
	perAxis := make([]any, ndim)
	switch s := spec.(type) {
	case []any:
		if len(s) != ndim {
			return nil, Errorf(ErrValue, "chunks %s has %d entries but the array has %d dimensions", jsonText(spec), len(s), ndim)
		}
		copy(perAxis, s)
	case []int:
		if len(s) != ndim {
			return nil, Errorf(ErrValue, "chunks %v has %d entries but the array has %d dimensions", s, len(s), ndim)
		}
		for i, v := range s {
			perAxis[i] = v
		}
	case [][]int:
		if len(s) != ndim {
			return nil, Errorf(ErrValue, "chunks %v has %d entries but the array has %d dimensions", s, len(s), ndim)
		}
		for i, v := range s {
			perAxis[i] = v
		}
	default:
		for i := range perAxis {
			perAxis[i] = spec
		}
	}
	if err := CheckShape(shape, itemSize); err != nil {
		return nil, err
	}
	// First the block size of each regular axis (or the explicit sizes), so
	// that the number of blocks is checked before any list is allocated.
	chunks := make([][]int, ndim)
	regular := make([]int, ndim)
	var autoAxes []int
	target := int64(AutoChunkBytes)
	if limit > 0 && limit < target {
		target = limit
	}
	for i, a := range perAxis {
		n := shape[i]
		switch v := a.(type) {
		case nil:
			regular[i] = max(n, 1)
		case string:
			if v != "auto" {
				b, err := ParseBytes(v)
				if err != nil {
					return nil, Errorf(ErrValue, "invalid chunks %q: %v", v, err)
				}
				target = b
			}
			autoAxes = append(autoAxes, i)
		case []any, []int:
			sizes, err := intList(v)
			if err != nil {
				return nil, Errorf(ErrValue, "invalid chunks for axis %d: %v", i, err)
			}
			sum := 0
			for _, c := range sizes {
				if c < 0 || (c == 0 && n != 0) {
					return nil, Errorf(ErrValue, "chunk sizes must be positive, got %v for axis %d", sizes, i)
				}
				if c > n-sum {
					return nil, Errorf(ErrValue, "chunks %v for axis %d sum to more than the axis length %d", sizes, i, n)
				}
				sum += c
			}
			if sum != n {
				return nil, Errorf(ErrValue, "chunks %v for axis %d sum to %d, not the axis length %d", sizes, i, sum, n)
			}
			if len(sizes) == 0 {
				sizes = []int{0}
			}
			chunks[i] = sizes
		default:
			c, err := toInt(v)
			if err != nil {
				return nil, Errorf(ErrValue, "invalid chunks %s for axis %d: %v", jsonText(a), i, err)
			}
			switch {
			case c == -1:
				regular[i] = max(n, 1)
			case c == 0 && n == 0:
				// A zero-length axis in blocks of 0 (Dask and Cubed accept it).
				regular[i] = 1
			case c <= 0:
				return nil, Errorf(ErrValue, "chunk size must be positive (or -1 for the whole axis), got %d for axis %d", c, i)
			default:
				regular[i] = c
			}
		}
	}
	if len(autoAxes) > 0 {
		fixed := int64(max(itemSize, 1))
		for i := range chunks {
			switch {
			case chunks[i] != nil:
				fixed = MulSat(fixed, int64(MaxChunk(chunks[i])))
			case regular[i] > 0:
				fixed = MulSat(fixed, int64(min(regular[i], shape[i])))
			}
		}
		per := float64(target) / float64(max(fixed, 1))
		size := math.Floor(math.Pow(per, 1/float64(len(autoAxes))))
		for _, i := range autoAxes {
			regular[i] = int(max(min(size, float64(max(shape[i], 1))), 1))
		}
	}
	total := int64(0)
	for i := range chunks {
		if chunks[i] != nil {
			total += int64(len(chunks[i]))
		} else {
			total += int64(BlockCount(shape[i], regular[i]))
		}
	}
	if total > MaxBlocks {
		spec := make([]int, ndim)
		for i := range spec {
			spec[i] = regular[i]
			if chunks[i] != nil {
				spec[i] = MaxChunk(chunks[i])
			}
		}
		return nil, Errorf(ErrValue, "shape %s with chunks %s has %d blocks along its axes together, more than the %d an array may have; choose larger chunks",
			shapeText(shape), shapeText(spec), total, MaxBlocks)
	}
	for i := range chunks {
		if chunks[i] == nil {
			c, err := RegularChunks(shape[i], regular[i])
			if err != nil {
				return nil, err
			}
			chunks[i] = c
		}
	}
	if err := CheckGrid(shape, chunks, itemSize); err != nil {
		return nil, err
	}
	return chunks, nil
}

// MaxChunk returns the largest block size of one axis.
func MaxChunk(sizes []int) int {
	m := 0
	for _, c := range sizes {
		m = max(m, c)
	}
	return m
}

// IsRegular reports whether every block of every axis has the size of the
// first, except the last, which may be smaller: the chunkings a Zarr regular
// chunk grid can store.
func IsRegular(chunks [][]int) bool {
	for _, c := range chunks {
		for i := 1; i < len(c); i++ {
			if c[i] > c[0] || (c[i] != c[0] && i != len(c)-1) {
				return false
			}
		}
	}
	return true
}

// Offsets returns the start of each block of one axis, plus the axis length.
func Offsets(sizes []int) []int {
	off := make([]int, len(sizes)+1)
	for i, c := range sizes {
		off[i+1] = off[i] + c
	}
	return off
}

// ParseBytes parses a byte size such as 100, "100", "2GB", "1.5 GB", "1GiB",
// "500kB" (decimal SI units and binary IEC units).
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := len(t)
	for i > 0 && (unicode.IsLetter(rune(t[i-1]))) {
		i--
	}
	num, unit := strings.TrimSpace(t[:i]), strings.ToLower(t[i:])
	mult := map[string]float64{
		"": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "pb": 1e15,
		"k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12,
		"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40, "pib": 1 << 50,
	}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("unknown unit %q in byte size %q", t[i:], s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) {
		return 0, fmt.Errorf("invalid byte size %q", s)
	}
	return int64(f * mult), nil
}

func toInt(v any) (int, error) {
	switch x := v.(type) {
	case int:
		return x, nil
	case int64:
		return int(x), nil
	case float64:
		if x != math.Trunc(x) {
			return 0, fmt.Errorf("%v is not an integer", x)
		}
		if math.Abs(x) >= math.MaxInt64 {
			return 0, fmt.Errorf("%v overflows int64", x)
		}
		return int(x), nil
	case json.Number:
		n, err := x.Int64()
		if err != nil {
			if !strings.ContainsAny(x.String(), ".eE") {
				return 0, fmt.Errorf("%s overflows int64", x)
			}
			return 0, fmt.Errorf("%s is not an integer", x)
		}
		return int(n), nil
	case bool:
		return 0, fmt.Errorf("%v is not an integer", x)
	}
	return 0, fmt.Errorf("%v (%T) is not an integer", v, v)
}

func intList(v any) ([]int, error) {
	switch x := v.(type) {
	case []int:
		return x, nil
	case []any:
		out := make([]int, len(x))
		for i, e := range x {
			n, err := toInt(e)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	}
	return nil, fmt.Errorf("%v is not a list of integers", v)
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
