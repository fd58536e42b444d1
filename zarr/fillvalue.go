package zarr

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// The fill value is one element in the engine's layout: little-endian
// bytes. In zarr.json it is a JSON value whose form depends on the data
// type (Zarr v3 core spec, "fill_value"):
//
//	bool        true / false
//	integers    a JSON integer (the full int64 and uint64 ranges)
//	floats      a JSON number, "NaN", "Infinity", "-Infinity", or the bit
//	            pattern as a hex string of exactly 2×size digits
//	            ("0x7fc00000" for a float32)
//	complex     [re, im], each part as for the float of half the size

// parseFillValue converts a fill value decoded from JSON (with UseNumber,
// so numbers arrive as json.Number) into one little-endian element.
func parseFillValue(dt DataType, v any) ([]byte, error) {
	out := make([]byte, dt.Size())
	switch dt {
	case Bool:
		b, ok := v.(bool)
		if !ok {
			return nil, fillErr(dt, v, "want true or false")
		}
		if b {
			out[0] = 1
		}
	case Int8, Int16, Int32, Int64:
		i, err := parseIntFill(v, 8*dt.Size())
		if err != nil {
			return nil, fillErr(dt, v, err.Error())
		}
		putUint(out, uint64(i))
	case Uint8, Uint16, Uint32, Uint64:
		u, err := parseUintFill(v, 8*dt.Size())
		if err != nil {
			return nil, fillErr(dt, v, err.Error())
		}
		putUint(out, u)
	case Float16, Float32, Float64:
		bits, err := parseFloatFill(v, dt.Size())
		if err != nil {
			return nil, fillErr(dt, v, err.Error())
		}
		putUint(out, bits)
	case Complex64, Complex128:
		parts, ok := v.([]any)
		if !ok || len(parts) != 2 {
			return nil, fillErr(dt, v, "want a [real, imaginary] pair")
		}
		half := dt.Size() / 2
		for i, p := range parts {
			bits, err := parseFloatFill(p, half)
			if err != nil {
				return nil, fillErr(dt, v, err.Error())
			}
			putUint(out[i*half:(i+1)*half], bits)
		}
	default:
		return nil, fmt.Errorf("%w: fill value for data type %s", ErrNotImplemented, dt)
	}
	return out, nil
}

func fillErr(dt DataType, v any, why string) error {
	j, _ := json.Marshal(v)
	if len(j) > 64 {
		j = append(j[:61], "..."...)
	}
	return fmt.Errorf("%w: fill value %s for data type %s: %s", ErrInvalid, j, dt, why)
}

// putUint stores the low len(b) bytes of u in b, little-endian.
func putUint(b []byte, u uint64) {
	for i := range b {
		b[i] = byte(u >> (8 * i))
	}
}

// getUint reads a little-endian unsigned integer of len(b) ≤ 8 bytes.
func getUint(b []byte) uint64 {
	var u uint64
	for i := range b {
		u |= uint64(b[i]) << (8 * i)
	}
	return u
}

// parseIntegral parses a JSON number that must be an integer, allowing
// forms such as 1.0 or 1e3; the result is exact.
func parseIntegral(v any) (*big.Int, error) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, fmt.Errorf("want an integer")
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return big.NewInt(i), nil
	}
	// Bound the magnitude before exact parsing so "1e999999999" cannot
	// make big.Rat build an enormous number.
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.Abs(f) > 1<<65 {
		return nil, fmt.Errorf("out of range")
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok || !r.IsInt() {
		return nil, fmt.Errorf("want an integer")
	}
	return r.Num(), nil
}

func parseIntFill(v any, bits int) (int64, error) {
	i, err := parseIntegral(v)
	if err != nil {
		return 0, err
	}
	lo := new(big.Int).Lsh(big.NewInt(-1), uint(bits-1))
	hi := new(big.Int).Sub(new(big.Int).Neg(lo), big.NewInt(1))
	if i.Cmp(lo) < 0 || i.Cmp(hi) > 0 {
		return 0, fmt.Errorf("out of range")
	}
	return i.Int64(), nil
}

func parseUintFill(v any, bits int) (uint64, error) {
	i, err := parseIntegral(v)
	if err != nil {
		return 0, err
	}
	hi := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(bits)), big.NewInt(1))
	if i.Sign() < 0 || i.Cmp(hi) > 0 {
		return 0, fmt.Errorf("out of range")
	}
	return i.Uint64(), nil
}

// parseFloatFill returns the bit pattern of a float fill value of size
// bytes (2, 4 or 8).
func parseFloatFill(v any, size int) (uint64, error) {
	var f float64
	switch x := v.(type) {
	case json.Number:
		var err error
		bitSize := 64
		if size == 4 {
			bitSize = 32 // round the decimal straight to float32
		}
		f, err = strconv.ParseFloat(string(x), bitSize)
		if err != nil && !isRangeErr(err) { // beyond the range: ±Inf, as Python's json does
			return 0, fmt.Errorf("not a number")
		}
	case string:
		switch {
		case x == "NaN":
			return canonicalNaN[size], nil
		case x == "Infinity":
			f = math.Inf(1)
		case x == "-Infinity":
			f = math.Inf(-1)
		case strings.HasPrefix(x, "0x") || strings.HasPrefix(x, "0X"):
			digits := x[2:]
			if len(digits) != 2*size {
				return 0, fmt.Errorf("hex bit pattern needs %d digits", 2*size)
			}
			u, err := strconv.ParseUint(digits, 16, 64)
			if err != nil {
				return 0, fmt.Errorf("bad hex bit pattern")
			}
			return u, nil
		default:
			return 0, fmt.Errorf(`want a number, "NaN", "Infinity", "-Infinity" or a hex bit pattern`)
		}
	default:
		return 0, fmt.Errorf("want a number")
	}
	switch size {
	case 2:
		return uint64(float64ToFloat16(f)), nil
	case 4:
		return uint64(math.Float32bits(float32(f))), nil
	default:
		return math.Float64bits(f), nil
	}
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// encodeFillValue returns the JSON form of the little-endian element b.
// NaN with the default payload is written "NaN", any other NaN as its hex
// bit pattern, so every fill value survives a round trip bit for bit.
func encodeFillValue(dt DataType, b []byte) ([]byte, error) {
	if len(b) != dt.Size() {
		return nil, fmt.Errorf("%w: fill value has %d bytes, data type %s needs %d", ErrInvalid, len(b), dt, dt.Size())
	}
	switch dt {
	case Bool:
		switch b[0] {
		case 0:
			return []byte("false"), nil
		case 1:
			return []byte("true"), nil
		}
		return nil, fmt.Errorf("%w: bool fill value byte %d (want 0 or 1)", ErrInvalid, b[0])
	case Int8, Int16, Int32, Int64:
		u := getUint(b)
		shift := 64 - 8*len(b)
		return strconv.AppendInt(nil, int64(u<<shift)>>shift, 10), nil
	case Uint8, Uint16, Uint32, Uint64:
		return strconv.AppendUint(nil, getUint(b), 10), nil
	case Float16, Float32, Float64:
		return appendFloatFill(nil, b), nil
	case Complex64, Complex128:
		half := len(b) / 2
		out := append([]byte("["), appendFloatFill(nil, b[:half])...)
		out = append(out, ", "...)
		out = appendFloatFill(out, b[half:])
		return append(out, ']'), nil
	}
	return nil, fmt.Errorf("%w: fill value for data type %s", ErrNotImplemented, dt)
}

// canonicalNaN holds the bit pattern numpy gives float("nan") per size.
var canonicalNaN = map[int]uint64{2: 0x7e00, 4: 0x7fc00000, 8: 0x7ff8000000000000}

func appendFloatFill(dst, b []byte) []byte {
	u := getUint(b)
	var f float64
	switch len(b) {
	case 2:
		f = float16ToFloat64(uint16(u))
	case 4:
		f = float64(math.Float32frombits(uint32(u)))
	default:
		f = math.Float64frombits(u)
	}
	switch {
	case math.IsNaN(f):
		if u == canonicalNaN[len(b)] {
			return append(dst, `"NaN"`...)
		}
		return fmt.Appendf(dst, `"0x%0*x"`, 2*len(b), u)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	var s []byte
	switch len(b) {
	case 2:
		s = shortestFloat16(f, uint16(u))
	case 4:
		s = strconv.AppendFloat(nil, f, 'g', -1, 32)
	default:
		s = strconv.AppendFloat(nil, f, 'g', -1, 64)
	}
	// Keep a float looking like one, so readers that parse "0" and "-0"
	// as integers still see a float (and a negative zero keeps its sign).
	if !strings.ContainsAny(string(s), ".e") {
		s = append(s, ".0"...)
	}
	return append(dst, s...)
}

// shortestFloat16 returns the shortest decimal that parses back to the
// half-precision number h with value f (its exact value when that is as
// short, so 65504 stays 65504 rather than 6.55e+04).
func shortestFloat16(f float64, h uint16) []byte {
	exact := strconv.AppendFloat(nil, f, 'g', -1, 64)
	for prec := 1; prec < 17; prec++ {
		s := strconv.AppendFloat(nil, f, 'g', prec, 64)
		if len(s) >= len(exact) {
			break
		}
		g, err := strconv.ParseFloat(string(s), 64)
		if err == nil && float64ToFloat16(g) == h {
			return s
		}
	}
	return exact
}

// fillElementIsZero reports whether every byte of the element is zero.
func fillElementIsZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
