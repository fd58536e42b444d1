package main

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// args is a decoded JSON argument object.
type args map[string]any

func parseArgs(s string) (args, error) {
	if strings.TrimSpace(s) == "" {
		return args{}, nil
	}
	d := json.NewDecoder(bytes.NewReader([]byte(s)))
	d.UseNumber()
	var a args
	if err := d.Decode(&a); err != nil {
		return nil, plan.Errorf(plan.ErrValue, "invalid JSON arguments: %v", err)
	}
	if a == nil {
		a = args{}
	}
	return a, nil
}

func (a args) has(k string) bool { v, ok := a[k]; return ok && v != nil }

func (a args) str(k, def string) (string, error) {
	v, ok := a[k]
	if !ok || v == nil {
		return def, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", plan.Errorf(plan.ErrType, "%s must be a string, got %v", k, v)
	}
	return s, nil
}

func (a args) boolean(k string, def bool) (bool, error) {
	v, ok := a[k]
	if !ok || v == nil {
		return def, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, plan.Errorf(plan.ErrType, "%s must be a bool, got %v", k, v)
	}
	return b, nil
}

func toInt(k string, v any) (int, error) {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		if err != nil {
			if isIntegral(x) {
				return 0, plan.Errorf(plan.ErrValue, "%s: the integer %s overflows int64", k, x)
			}
			return 0, plan.Errorf(plan.ErrType, "%s must be an integer, got %s", k, x)
		}
		return int(n), nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < math.MaxInt64 {
			return int(x), nil
		}
	}
	return 0, plan.Errorf(plan.ErrType, "%s must be an integer, got %v", k, v)
}

func (a args) integer(k string, def int) (int, error) {
	v, ok := a[k]
	if !ok || v == nil {
		return def, nil
	}
	return toInt(k, v)
}

// atLeast is integer for an option that, when given, must be at least
// least (max_workers=0 or retries=-1 were once accepted silently).
func (a args) atLeast(k string, def, least int) (int, error) {
	v, ok := a[k]
	if !ok || v == nil {
		return def, nil
	}
	n, err := toInt(k, v)
	if err == nil && n < least {
		err = plan.Errorf(plan.ErrValue, "Invalid value for %s: %d (it must be at least %d)", k, n, least)
	}
	return n, err
}

func (a args) int64(k string, def int64) (int64, error) {
	v, ok := a[k]
	if !ok || v == nil {
		return def, nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return 0, plan.Errorf(plan.ErrType, "%s must be an integer, got %v", k, v)
	}
	i, err := n.Int64()
	if err != nil {
		if isIntegral(n) {
			return 0, plan.Errorf(plan.ErrValue, "%s: the integer %s overflows int64", k, n)
		}
		return 0, plan.Errorf(plan.ErrValue, "%s must be an integer, got %s", k, n)
	}
	return i, nil
}

func (a args) float(k string, def float64) (float64, error) {
	v, ok := a[k]
	if !ok || v == nil {
		return def, nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return 0, plan.Errorf(plan.ErrType, "%s must be a number, got %v", k, v)
	}
	return numberFloat(k, n)
}

// numberFloat returns n as a float64; a number beyond float64's range
// (Python's 10**400, or 1e700 written out) is a ValueError naming what it
// was given for, not an internal error.
func numberFloat(what string, n json.Number) (float64, error) {
	f, err := n.Float64()
	if err != nil {
		return 0, plan.Errorf(plan.ErrValue, "%s: %s is out of the range of a float64", what, n)
	}
	return f, nil
}

func (a args) ints(k string) ([]int, error) {
	v, ok := a[k]
	if !ok || v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, plan.Errorf(plan.ErrType, "%s must be a list of integers, got %v", k, v)
	}
	out := make([]int, len(l))
	for i, e := range l {
		n, err := toInt(k, e)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

func (a args) shape() ([]int, error) {
	s, err := a.ints("shape")
	if err != nil {
		return nil, err
	}
	for _, n := range s {
		if n < 0 {
			return nil, plan.Errorf(plan.ErrValue, "negative dimensions are not allowed: shape %s", ops.FormatShape(s))
		}
	}
	if s == nil {
		s = []int{}
	}
	return s, nil
}

func (a args) dtype(k string) (ops.DType, bool, error) {
	s, err := a.str(k, "")
	if err != nil || s == "" {
		return 0, false, err
	}
	d, err := ops.ParseDType(s)
	return d, err == nil, err
}

// spec decodes the "spec" argument (nil means the default spec).
func (a args) spec() (*plan.Spec, error) {
	v, ok := a["spec"]
	if !ok || v == nil {
		return plan.DefaultSpec(), nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, plan.Errorf(plan.ErrType, "spec must be an object, got %v", v)
	}
	sa := args(m)
	s := plan.DefaultSpec()
	var err error
	if s.WorkDir, err = sa.str("work_dir", ""); err != nil {
		return nil, err
	}
	if s.AllowedMem, err = sa.int64("allowed_mem", s.AllowedMem); err != nil {
		return nil, err
	}
	if s.ReservedMem, err = sa.int64("reserved_mem", s.ReservedMem); err != nil {
		return nil, err
	}
	if s.ZarrCompressor, err = sa.str("zarr_compressor", ""); err != nil {
		return nil, err
	}
	if implicit, ok := sa["implicit"].(bool); ok {
		s.Implicit = implicit
	}
	if opts, err := sa.object("storage_options"); err != nil {
		return nil, err
	} else if opts != nil {
		b, err := json.Marshal(opts)
		if err != nil {
			return nil, plan.Errorf(plan.ErrValue, "storage_options: %v", err)
		}
		s.StorageOptions = string(b)
	}
	return s, s.Validate()
}

// scalar decodes {"scalar": V, "kind": K}.
func parseScalar(m map[string]any) (plan.Scalar, error) {
	kind, _ := m["kind"].(string)
	v := m["scalar"]
	switch kind {
	case "bool":
		b, ok := v.(bool)
		if !ok {
			return plan.Scalar{}, plan.Errorf(plan.ErrType, "invalid bool scalar %v", v)
		}
		return plan.Scalar{Kind: 'b', B: b}, nil
	case "int":
		n, ok := v.(json.Number)
		if !ok {
			return plan.Scalar{}, plan.Errorf(plan.ErrType, "invalid int scalar %v", v)
		}
		if i, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
			return plan.Scalar{Kind: 'i', I: i}, nil
		}
		if u, err := strconv.ParseUint(n.String(), 10, 64); err == nil {
			return plan.Scalar{Kind: 'u', U: u}, nil
		}
		return plan.Scalar{}, plan.Errorf(plan.ErrValue, "Python integer %s is out of bounds for 64-bit integers", n)
	case "float":
		f, err := floatValue(v)
		return plan.Scalar{Kind: 'f', F: f}, err
	case "complex":
		l, ok := v.([]any)
		if !ok || len(l) != 2 {
			return plan.Scalar{}, plan.Errorf(plan.ErrType, "invalid complex scalar %v", v)
		}
		re, err := floatValue(l[0])
		if err != nil {
			return plan.Scalar{}, err
		}
		im, err := floatValue(l[1])
		return plan.Scalar{Kind: 'c', C: complex(re, im), F: re}, err
	}
	return plan.Scalar{}, plan.Errorf(plan.ErrType, "unknown scalar kind %q", kind)
}

func floatValue(v any) (float64, error) {
	switch x := v.(type) {
	case json.Number:
		return numberFloat("float scalar", x)
	case string:
		switch x {
		case "NaN":
			return math.NaN(), nil
		case "Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		}
	}
	return 0, plan.Errorf(plan.ErrType, "invalid float scalar %v", v)
}

// isIntegral reports whether a JSON number is written as an integer.
func isIntegral(v any) bool {
	n, ok := v.(json.Number)
	return ok && !strings.ContainsAny(n.String(), ".eE")
}

// object decodes an optional JSON object argument (nil when absent).
func (a args) object(k string) (map[string]any, error) {
	v, ok := a[k]
	if !ok || v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, plan.Errorf(plan.ErrType, "%s must be a dict, got %v", k, v)
	}
	return plainJSON(m).(map[string]any), nil
}

// plainJSON turns json.Numbers into int64 or float64 so decoded options
// read like Go values.
func plainJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = plainJSON(e)
		}
	case []any:
		for i, e := range x {
			x[i] = plainJSON(e)
		}
	}
	return v
}

// compressors decodes a compressors argument: null (none), a name
// ("zstd", "blosc", "gzip") or a list of Zarr v3 codec objects
// {"name": ..., "configuration": {...}}.
func (a args) compressors(k string) ([]zarr.Codec, error) {
	v, ok := a[k]
	if !ok || v == nil {
		return nil, nil
	}
	if name, ok := v.(string); ok {
		return plan.CompressorCodecs(name)
	}
	list, ok := v.([]any)
	if !ok {
		return nil, plan.Errorf(plan.ErrType, "%s must be None, a name or a list of codecs, got %v", k, v)
	}
	var out []zarr.Codec
	for _, e := range list {
		m, ok := plainJSON(e).(map[string]any)
		name, _ := m["name"].(string)
		if !ok || name == "" {
			return nil, plan.Errorf(plan.ErrValue, "invalid codec %v: want {\"name\": ..., \"configuration\": {...}}", e)
		}
		cfg, _ := m["configuration"].(map[string]any)
		out = append(out, zarr.Codec{Name: name, Configuration: cfg})
	}
	return out, nil
}
