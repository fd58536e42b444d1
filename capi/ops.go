package main

/*
#include <stdint.h>
*/
import "C"

import (
	"encoding/json"
	"strconv"
	"unsafe"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
)

// opFunc builds arrays from decoded arguments and input arrays.
type opFunc func(a args, in []*plan.Array) (*plan.Array, error)

// opTable maps cg_op names to the ops functions they marshal for.
var opTable = map[string]struct {
	nin int // -1: any number
	fn  opFunc
}{
	"full":      {0, opFull},
	"empty":     {0, opEmpty},
	"arange":    {0, opArange},
	"random":    {0, opRandom},
	"from_zarr": {0, opFromZarr},
	"elemwise":  {-1, opElemwise},
	"astype":    {1, opAsType},
	"reduce":    {1, opReduce},
	"matmul":    {2, func(_ args, in []*plan.Array) (*plan.Array, error) { return ops.Matmul(in[0], in[1]) }},
	"getitem":   {1, opGetItem},
	"rechunk":   {1, opRechunk},
	"permute_dims": {1, func(a args, in []*plan.Array) (*plan.Array, error) {
		axes, err := a.ints("axes")
		if err != nil {
			return nil, err
		}
		return ops.PermuteDims(in[0], axes)
	}},
	"to_zarr":    {1, opToZarr},
	"store_into": {1, opStoreInto},

	"broadcast_to": {1, func(a args, in []*plan.Array) (*plan.Array, error) {
		shape, err := a.shape()
		if err != nil {
			return nil, err
		}
		return ops.BroadcastToChunks(in[0], shape, a["chunks"])
	}},
	"reshape": {1, func(a args, in []*plan.Array) (*plan.Array, error) {
		shape, err := a.ints("shape")
		if err != nil {
			return nil, err
		}
		return ops.Reshape(in[0], shape)
	}},
	"concat": {-1, func(a args, in []*plan.Array) (*plan.Array, error) {
		axis, err := a.integer("axis", 0)
		if err != nil {
			return nil, err
		}
		return ops.ConcatChunks(in, axis, a["chunks"])
	}},
	"stack": {-1, func(a args, in []*plan.Array) (*plan.Array, error) {
		axis, err := a.integer("axis", 0)
		if err != nil {
			return nil, err
		}
		return ops.Stack(in, axis)
	}},
	"pad_constant": {1, opPadConstant},
	"where":        {-1, opWhere},
	"cumulative": {1, func(a args, in []*plan.Array) (*plan.Array, error) {
		fn, err := a.str("func", "cumsum")
		if err != nil {
			return nil, err
		}
		axis, err := a.integer("axis", 0)
		if err != nil {
			return nil, err
		}
		dt, err := optionalDType(a)
		if err != nil {
			return nil, err
		}
		initial, err := a.boolean("include_initial", false)
		if err != nil {
			return nil, err
		}
		return ops.Cumulative(fn, in[0], axis, dt, initial)
	}},
	"sort": {1, func(a args, in []*plan.Array) (*plan.Array, error) {
		axis, desc, err := sortArgs(a)
		if err != nil {
			return nil, err
		}
		return ops.Sort(in[0], axis, desc)
	}},
	"argsort": {1, func(a args, in []*plan.Array) (*plan.Array, error) {
		axis, desc, err := sortArgs(a)
		if err != nil {
			return nil, err
		}
		return ops.Argsort(in[0], axis, desc)
	}},
	"take": {1, func(a args, in []*plan.Array) (*plan.Array, error) {
		idx, err := a.ints("indices")
		if err != nil {
			return nil, err
		}
		axis, err := a.integer("axis", 0)
		if err != nil {
			return nil, err
		}
		ix := make([]int64, len(idx))
		for i, v := range idx {
			ix[i] = int64(v)
		}
		return ops.Take(in[0], ix, axis)
	}},
	"searchsorted": {2, func(a args, in []*plan.Array) (*plan.Array, error) {
		side, err := a.str("side", "left")
		if err != nil {
			return nil, err
		}
		return ops.SearchSorted(in[0], in[1], side)
	}},
	"isin": {2, func(a args, in []*plan.Array) (*plan.Array, error) {
		invert, err := a.boolean("invert", false)
		if err != nil {
			return nil, err
		}
		return ops.IsIn(in[0], in[1], invert)
	}},
	"argreduce": {1, func(a args, in []*plan.Array) (*plan.Array, error) {
		fn, err := a.str("func", "argmax")
		if err != nil {
			return nil, err
		}
		var axis *int
		if a.has("axis") {
			v, err := a.integer("axis", 0)
			if err != nil {
				return nil, err
			}
			axis = &v
		}
		keep, err := a.boolean("keepdims", false)
		if err != nil {
			return nil, err
		}
		split, err := splitArg(a)
		if err != nil {
			return nil, err
		}
		return ops.ArgReduceSplit(fn, in[0], axis, keep, split)
	}},
	"var": {1, func(a args, in []*plan.Array) (*plan.Array, error) {
		fn, axes, keep, dt, err := reductionArgs(a, "var")
		if err != nil {
			return nil, err
		}
		corr, err := a.float("correction", 0)
		if err != nil {
			return nil, err
		}
		split, err := splitArg(a)
		if err != nil {
			return nil, err
		}
		return ops.Moments(fn, in[0], axes, keep, corr, dt, split)
	}},
	"squeeze": {1, func(a args, in []*plan.Array) (*plan.Array, error) {
		axes, err := a.ints("axis")
		if err != nil {
			return nil, err
		}
		if axes == nil {
			axes = []int{}
		}
		return ops.Squeeze(in[0], axes)
	}},
}

func optionalDType(a args) (*ops.DType, error) {
	dt, ok, err := a.dtype("dtype")
	if err != nil || !ok {
		return nil, err
	}
	return &dt, nil
}

func sortArgs(a args) (int, bool, error) {
	axis, err := a.integer("axis", -1)
	if err != nil {
		return 0, false, err
	}
	desc, err := a.boolean("descending", false)
	return axis, desc, err
}

func opPadConstant(a args, in []*plan.Array) (*plan.Array, error) {
	list, ok := a["pad_width"].([]any)
	if !ok {
		return nil, plan.Errorf(plan.ErrValue, "pad needs pad_width: a list of [before, after] per axis")
	}
	widths := make([][2]int, len(list))
	for i, w := range list {
		pair, ok := w.([]any)
		if !ok || len(pair) != 2 {
			return nil, plan.Errorf(plan.ErrValue, "pad width %v for axis %d is not a (before, after) pair", w, i)
		}
		for j := range 2 {
			n, err := toInt("pad_width", pair[j])
			if err != nil {
				return nil, err
			}
			widths[i][j] = n
		}
	}
	value := plan.Scalar{Kind: 'i'}
	if m, ok := a["constant_value"].(map[string]any); ok {
		v, err := parseScalar(m)
		if err != nil {
			return nil, err
		}
		value = v
	}
	return ops.PadConstant(in[0], widths, value)
}

// opWhere takes the condition as input 0 and x, y as operands like elemwise.
func opWhere(a args, in []*plan.Array) (*plan.Array, error) {
	if len(in) < 1 {
		return nil, plan.Errorf(plan.ErrValue, "where needs a condition array")
	}
	operands, err := parseOperands(a, in, 1)
	if err != nil {
		return nil, err
	}
	if len(operands) != 2 {
		return nil, plan.Errorf(plan.ErrValue, "where needs two operands besides the condition, got %d", len(operands))
	}
	return ops.Where(in[0], operands[0], operands[1])
}

//export cg_op
func cg_op(name *C.char, argsJSON *C.char, inputs *C.uint64_t, n C.int64_t, result **C.char, errOut **C.char) (status C.int32_t) {
	defer guard(&status, errOut)
	err := func() error {
		info, err := runOp(C.GoString(name), C.GoString(argsJSON), handleSlice(inputs, n))
		if err != nil {
			return err
		}
		return setJSON(map[string]any{"arrays": []arrayInfo{info}}, result)
	}()
	return setError(err, errOut)
}

// runOp is cg_op in Go terms: it builds the array of operation name from
// JSON arguments and input array handles, and returns its description
// with a new handle.
func runOp(name, argsJSON string, handles []uint64) (arrayInfo, error) {
	entry, ok := opTable[name]
	if !ok {
		return arrayInfo{}, plan.Errorf(plan.ErrNotImplemented, "unknown operation %q", name)
	}
	a, err := parseArgs(argsJSON)
	if err != nil {
		return arrayInfo{}, err
	}
	in, err := lookupArrays(handles)
	if err != nil {
		return arrayInfo{}, err
	}
	if entry.nin >= 0 && len(in) != entry.nin {
		return arrayInfo{}, plan.Errorf(plan.ErrValue, "%s takes %d arrays, got %d", name, entry.nin, len(in))
	}
	opts, err := infoOptionsOf(a)
	if err != nil {
		return arrayInfo{}, err
	}
	out, err := entry.fn(a, in)
	if err != nil {
		return arrayInfo{}, err
	}
	// Every array handed out has a chunking cubego can represent (and a
	// size that fits int64), whichever op made it.
	if err := plan.CheckGrid(out.Shape, out.Chunks, out.DType.Size()); err != nil {
		return arrayInfo{}, err
	}
	return newArrayInfo(out, opts), nil
}

//export cg_from_buffer
func cg_from_buffer(argsJSON *C.char, data unsafe.Pointer, nbytes C.int64_t, result **C.char, errOut **C.char) (status C.int32_t) {
	defer guard(&status, errOut)
	err := func() error {
		a, err := parseArgs(C.GoString(argsJSON))
		if err != nil {
			return err
		}
		shape, err := a.shape()
		if err != nil {
			return err
		}
		dt, ok, err := a.dtype("dtype")
		if err != nil {
			return err
		}
		if !ok {
			return plan.Errorf(plan.ErrValue, "from_buffer needs a dtype")
		}
		spec, err := a.spec()
		if err != nil {
			return err
		}
		opts, err := infoOptionsOf(a)
		if err != nil {
			return err
		}
		out, err := ops.FromBuffer(shape, dt, goBytes(data, nbytes), a["chunks"], spec)
		if err != nil {
			return err
		}
		return setJSON(map[string]any{"arrays": []arrayInfo{newArrayInfo(out, opts)}}, result)
	}()
	return setError(err, errOut)
}

func creation(a args) ([]int, ops.DType, *plan.Spec, error) {
	shape, err := a.shape()
	if err != nil {
		return nil, 0, nil, err
	}
	dt, ok, err := a.dtype("dtype")
	if err != nil {
		return nil, 0, nil, err
	}
	if !ok {
		dt = ops.DefaultFloat
	}
	spec, err := a.spec()
	return shape, dt, spec, err
}

func opFull(a args, _ []*plan.Array) (*plan.Array, error) {
	shape, dt, spec, err := creation(a)
	if err != nil {
		return nil, err
	}
	m, ok := a["fill_value"].(map[string]any)
	if !ok {
		return nil, plan.Errorf(plan.ErrType, "full needs a scalar fill_value")
	}
	v, err := parseScalar(m)
	if err != nil {
		return nil, err
	}
	return ops.Full(shape, dt, v, a["chunks"], spec)
}

func opEmpty(a args, _ []*plan.Array) (*plan.Array, error) {
	shape, dt, spec, err := creation(a)
	if err != nil {
		return nil, err
	}
	return ops.Empty(shape, dt, a["chunks"], spec)
}

func opArange(a args, _ []*plan.Array) (*plan.Array, error) {
	start, err := a.float("start", 0)
	if err != nil {
		return nil, err
	}
	stop, err := a.float("stop", 0)
	if err != nil {
		return nil, err
	}
	step, err := a.float("step", 1)
	if err != nil {
		return nil, err
	}
	dt, ok, err := a.dtype("dtype")
	if err != nil {
		return nil, err
	}
	if !ok {
		dt = ops.DefaultFloat
		if isIntegral(a["start"]) && (!a.has("stop") || isIntegral(a["stop"])) && (!a.has("step") || isIntegral(a["step"])) {
			dt = ops.DefaultInt
		}
	}
	spec, err := a.spec()
	if err != nil {
		return nil, err
	}
	return ops.Arange(start, stop, step, dt, a["chunks"], spec)
}

func opRandom(a args, _ []*plan.Array) (*plan.Array, error) {
	shape, dt, spec, err := creation(a)
	if err != nil {
		return nil, err
	}
	seed := ops.RandomSeed()
	if a.has("seed") {
		n, ok := a["seed"].(json.Number)
		if !ok {
			return nil, plan.Errorf(plan.ErrType, "seed must be an integer")
		}
		var u uint64
		if err := json.Unmarshal([]byte(n.String()), &u); err != nil {
			return nil, plan.Errorf(plan.ErrValue, "seed must be a non-negative 64-bit integer, got %s", n)
		}
		seed = u
	}
	return ops.Random(shape, dt, seed, a["chunks"], spec)
}

func opFromZarr(a args, _ []*plan.Array) (*plan.Array, error) {
	store, err := a.str("store", "")
	if err != nil {
		return nil, err
	}
	if store == "" {
		return nil, plan.Errorf(plan.ErrValue, "from_zarr needs a store")
	}
	path, err := a.str("path", "")
	if err != nil {
		return nil, err
	}
	spec, err := a.spec()
	if err != nil {
		return nil, err
	}
	opts, err := a.object("storage_options")
	if err != nil {
		return nil, err
	}
	return ops.FromZarr(callContext(), store, path, a["chunks"], spec, opts)
}

func opElemwise(a args, in []*plan.Array) (*plan.Array, error) {
	fn, err := a.str("func", "")
	if err != nil {
		return nil, err
	}
	operands, err := parseOperands(a, in, 0)
	if err != nil {
		return nil, err
	}
	return ops.Elemwise(fn, operands...)
}

func opAsType(a args, in []*plan.Array) (*plan.Array, error) {
	dt, ok, err := a.dtype("dtype")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, plan.Errorf(plan.ErrValue, "astype needs a dtype")
	}
	return ops.AsType(in[0], dt)
}

func opReduce(a args, in []*plan.Array) (*plan.Array, error) {
	fn, axes, keep, dtype, err := reductionArgs(a, "")
	if err != nil {
		return nil, err
	}
	split, err := splitArg(a)
	if err != nil {
		return nil, err
	}
	return ops.ReduceSplit(fn, in[0], axes, keep, dtype, split)
}

// splitArg reads a reduction's split_every: absent or null (cubego
// chooses), a positive integer, or an object of integers per axis.
func splitArg(a args) (ops.Split, error) {
	v, ok := a["split_every"]
	if !ok || v == nil {
		return ops.Split{}, nil
	}
	if m, ok := v.(map[string]any); ok {
		per := make(map[int]int, len(m))
		for k, n := range m {
			axis, err := strconv.Atoi(k)
			if err != nil {
				return ops.Split{}, plan.Errorf(plan.ErrType, "split_every: axis %q is not an integer", k)
			}
			if per[axis], err = toInt("split_every", n); err != nil {
				return ops.Split{}, err
			}
		}
		return ops.Split{PerAxis: per}, nil
	}
	n, err := toInt("split_every", v)
	if err != nil {
		return ops.Split{}, err
	}
	if n < 1 {
		return ops.Split{}, plan.Errorf(plan.ErrValue, "split_every must be positive, got %d", n)
	}
	return ops.Split{Every: n}, nil
}

func opGetItem(a args, in []*plan.Array) (*plan.Array, error) {
	list, ok := a["key"].([]any)
	if !ok {
		return nil, plan.Errorf(plan.ErrValue, "getitem needs a key list")
	}
	key := make([]ops.Index, len(list))
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, plan.Errorf(plan.ErrIndex, "invalid index item %v", item)
		}
		switch {
		case m["int"] != nil:
			n, err := toInt("index", m["int"])
			if err != nil {
				return nil, plan.Errorf(plan.ErrIndex, "invalid integer index %v", m["int"])
			}
			key[i] = ops.Index{Kind: ops.IndexInt, Int: n}
		case m["slice"] != nil:
			parts, ok := m["slice"].([]any)
			if !ok || len(parts) != 3 {
				return nil, plan.Errorf(plan.ErrIndex, "invalid slice %v", m["slice"])
			}
			var p [3]*int
			for j, v := range parts {
				if v == nil {
					continue
				}
				n, err := toInt("slice", v)
				if err != nil {
					return nil, plan.Errorf(plan.ErrIndex, "slice indices must be integers or None, got %v", v)
				}
				p[j] = &n
			}
			key[i] = ops.Index{Kind: ops.IndexSlice, Start: p[0], Stop: p[1], Step: p[2]}
		case m["newaxis"] != nil:
			key[i] = ops.Index{Kind: ops.IndexNewAxis}
		case m["ellipsis"] != nil:
			key[i] = ops.Index{Kind: ops.IndexEllipsis}
		default:
			return nil, plan.Errorf(plan.ErrIndex, "invalid index item %v", item)
		}
	}
	return ops.GetItem(in[0], key)
}

func opRechunk(a args, in []*plan.Array) (*plan.Array, error) {
	if _, ok := a["chunks"]; !ok {
		return nil, plan.Errorf(plan.ErrValue, "rechunk needs chunks")
	}
	minMem, err := a.int64("min_mem", 0)
	if err != nil {
		return nil, err
	}
	return ops.RechunkMinMem(in[0], a["chunks"], minMem)
}

func opToZarr(a args, in []*plan.Array) (*plan.Array, error) {
	var ref plan.ZarrRef
	var err error
	if ref.Store, err = a.str("store", ""); err != nil {
		return nil, err
	}
	if ref.Store == "" {
		return nil, plan.Errorf(plan.ErrValue, "to_zarr needs a store")
	}
	if ref.Path, err = a.str("path", ""); err != nil {
		return nil, err
	}
	if ref.Overwrite, err = a.boolean("overwrite", false); err != nil {
		return nil, err
	}
	if ref.ZarrFormat, err = a.integer("zarr_format", 3); err != nil {
		return nil, err
	}
	if ref.ZarrFormat != 2 && ref.ZarrFormat != 3 {
		return nil, plan.Errorf(plan.ErrValue, "zarr_format must be 2 or 3, got %d", ref.ZarrFormat)
	}
	if ref.StorageOptions, err = a.object("storage_options"); err != nil {
		return nil, err
	}
	if ref.Compressors, err = a.compressors("compressors"); err != nil {
		return nil, err
	}
	shards, err := a.ints("shards")
	if err != nil {
		return nil, err
	}
	return ops.ToZarr(in[0], ref, shards)
}

// parseOperands decodes "operands": each {"input": i} (an index into in,
// at least first) or a scalar.
func parseOperands(a args, in []*plan.Array, first int) ([]ops.Operand, error) {
	list, ok := a["operands"].([]any)
	if !ok {
		return nil, plan.Errorf(plan.ErrValue, "missing the list of operands")
	}
	operands := make([]ops.Operand, len(list))
	for i, o := range list {
		m, ok := o.(map[string]any)
		if !ok {
			return nil, plan.Errorf(plan.ErrType, "invalid operand %v", o)
		}
		if v, ok := m["input"]; ok {
			k, err := toInt("input", v)
			if err != nil {
				return nil, err
			}
			if k < first || k >= len(in) {
				return nil, plan.Errorf(plan.ErrValue, "operand refers to input %d of %d", k, len(in))
			}
			operands[i] = ops.Operand{Array: in[k]}
			continue
		}
		s, err := parseScalar(m)
		if err != nil {
			return nil, err
		}
		operands[i] = ops.Operand{Scalar: &s}
	}
	return operands, nil
}

func opStoreInto(a args, in []*plan.Array) (*plan.Array, error) {
	var ref plan.ZarrRef
	var err error
	if ref.Store, err = a.str("store", ""); err != nil {
		return nil, err
	}
	if ref.Store == "" {
		return nil, plan.Errorf(plan.ErrValue, "store needs a target store")
	}
	if ref.Path, err = a.str("path", ""); err != nil {
		return nil, err
	}
	if ref.StorageOptions, err = a.object("storage_options"); err != nil {
		return nil, err
	}
	var region [][2]int
	if list, ok := a["region"].([]any); ok {
		region = make([][2]int, len(list))
		for i, r := range list {
			pair, ok := r.([]any)
			if !ok || len(pair) != 2 {
				return nil, plan.Errorf(plan.ErrValue, "region entry %v is not a (start, stop) pair", r)
			}
			for j := range 2 {
				if region[i][j], err = toInt("region", pair[j]); err != nil {
					return nil, err
				}
			}
		}
	}
	return ops.StoreInto(callContext(), in[0], ref, region)
}

// reductionArgs decodes the arguments reductions share: func, axis (a list
// or null), keepdims and dtype (or null).
func reductionArgs(a args, defFunc string) (fn string, axes []int, keep bool, dtype *ops.DType, err error) {
	if fn, err = a.str("func", defFunc); err != nil {
		return
	}
	if axes, err = a.ints("axis"); err != nil {
		return
	}
	if keep, err = a.boolean("keepdims", false); err != nil {
		return
	}
	dtype, err = optionalDType(a)
	return
}
