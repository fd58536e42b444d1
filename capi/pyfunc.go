package main

/*
#include <stdint.h>
#include <stdlib.h>

// The Python callback of docs/capi.md ("Python functions").
typedef int32_t (*cg_python_callback)(const char *key, const uint8_t *payload, int64_t payload_len,
	const int64_t *task, int64_t task_len, const char *names,
	int64_t n_inputs, void **in_ptrs, const int64_t *in_nbytes,
	void *out_ptr, int64_t out_nbytes, char *err_buf, int64_t err_cap);

// Go cannot call a C function pointer: this trampoline does.
static inline int32_t cg_call_python(void *fn, const char *key, const uint8_t *payload, int64_t payload_len,
	const int64_t *task, int64_t task_len, const char *names,
	int64_t n_inputs, void **in_ptrs, const int64_t *in_nbytes,
	void *out_ptr, int64_t out_nbytes, char *err_buf, int64_t err_cap) {
	return ((cg_python_callback)fn)(key, payload, payload_len, task, task_len, names, n_inputs, in_ptrs,
		in_nbytes, out_ptr, out_nbytes, err_buf, err_cap);
}
*/
import "C"

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
)

// pythonErrCap is the size of the buffer a failing Python callback writes
// its message into (longer messages are cut; Python keeps the exception).
const pythonErrCap = 4096

// pyCallback holds the C function pointer Python registered.
type pyCallback struct{ fn unsafe.Pointer }

var (
	pythonCallback atomic.Pointer[pyCallback]
	// pythonCalls counts the calls into Python under way.
	pythonCalls atomic.Int64
	// The calls into Python so far and the time they took (cg_python_stats).
	pythonCallsDone, pythonNanos atomic.Int64
)

// pythonDrainTimeout bounds how long unregistering the callback waits for
// the calls under way (a Python function may block forever).
const pythonDrainTimeout = 10 * time.Second

func init() { ops.PythonCallback = callPython }

// cg_set_python_callback registers the Python callback, or with NULL
// unregisters it and waits for the calls under way to return, so that an
// interpreter shutting down is not called into afterwards. Python calls it
// through ctypes.CDLL, which releases the GIL, so those calls can finish.
//
//export cg_set_python_callback
func cg_set_python_callback(fn unsafe.Pointer) (status C.int32_t) {
	defer guard(&status, nil)
	if fn != nil {
		pythonCallback.Store(&pyCallback{fn: fn})
		return statusOK
	}
	pythonCallback.Store(nil)
	deadline := time.Now().Add(pythonDrainTimeout)
	for pythonCalls.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	return statusOK
}

// cg_python_stats reports the calls into Python so far and the time they
// took in all (from the call to its return: entering Python, waiting for
// the GIL, the function itself and copying its result).
//
//export cg_python_stats
func cg_python_stats(calls *C.int64_t, nanos *C.int64_t) (status C.int32_t) {
	defer guard(&status, nil)
	*calls = C.int64_t(pythonCallsDone.Load())
	*nanos = C.int64_t(pythonNanos.Load())
	return statusOK
}

// dtypeCodes number the data types in the task description (docs/capi.md).
var dtypeCodes = map[ops.DType]int64{}

func init() {
	for i, name := range []string{"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
		"uint64", "float32", "float64", "complex64", "complex128"} {
		dt, err := ops.ParseDType(name)
		if err != nil {
			panic(err)
		}
		dtypeCodes[dt] = int64(i)
	}
}

// taskDescription encodes a task for the callback as int64s:
//
//	first, ndim, nstep, block[ndim], start[ndim], shape[ndim], dtype, step[nstep],
//	then per input: ndim, dtype, start[ndim], shape[ndim]
//
// (the output's block coordinates and region, then each input region's).
func taskDescription(task ops.TaskInfo, ins []ops.Block, out ops.Block) []C.int64_t {
	n := len(out.Shape)
	size := 4 + 3*n + len(task.Step)
	for _, b := range ins {
		size += 2 + 2*len(b.Shape)
	}
	d := make([]C.int64_t, 0, size)
	first := 0
	if task.First {
		first = 1
	}
	d = append(d, C.int64_t(first), C.int64_t(n), C.int64_t(len(task.Step)))
	d = appendInts(d, task.Block)
	d = appendInts(d, task.OutputStart)
	d = appendInts(d, out.Shape)
	d = append(d, C.int64_t(dtypeCodes[out.DType]))
	d = appendInts(d, task.Step)
	for i, b := range ins {
		d = append(d, C.int64_t(len(b.Shape)), C.int64_t(dtypeCodes[b.DType]))
		d = appendInts(d, task.InputStarts[i])
		d = appendInts(d, b.Shape)
	}
	return d
}

func appendInts(d []C.int64_t, xs []int) []C.int64_t {
	for _, x := range xs {
		d = append(d, C.int64_t(x))
	}
	return d
}

// errBufs recycles the buffers failing callbacks write their message into.
var errBufs = sync.Pool{New: func() any { return new([pythonErrCap]byte) }}

// callPython is ops.PythonCallback: it calls the registered C function
// pointer with the task's description and views of its buffers.
func callPython(k *plan.Kernel, task ops.TaskInfo, ins []ops.Block, out ops.Block) error {
	pythonCalls.Add(1) // before loading the callback: see cg_set_python_callback
	defer pythonCalls.Add(-1)
	cb := pythonCallback.Load()
	if cb == nil {
		return errors.New("capi: no Python callback is registered (Python functions run only in a Python process that loaded cubego)")
	}
	desc := taskDescription(task, ins, out)
	key := append([]byte(k.PyKey), 0)
	names := []byte(task.Op + "\n" + task.Func + "\n" + task.Array + "\x00")

	// The buffers are C memory from the engine's allocator; pinning makes
	// passing them legal whatever memory they are.
	var pin runtime.Pinner
	defer pin.Unpin()
	n := len(ins)
	ptrs := make([]unsafe.Pointer, max(n, 1))
	sizes := make([]C.int64_t, max(n, 1))
	for i, b := range ins {
		if len(b.Data) > 0 {
			pin.Pin(&b.Data[0])
			ptrs[i] = unsafe.Pointer(&b.Data[0])
			sizes[i] = C.int64_t(len(b.Data))
		}
	}
	var outPtr unsafe.Pointer
	if len(out.Data) > 0 {
		pin.Pin(&out.Data[0])
		outPtr = unsafe.Pointer(&out.Data[0])
	}
	errBuf := errBufs.Get().(*[pythonErrCap]byte)
	defer errBufs.Put(errBuf)
	errBuf[0] = 0
	start := time.Now()
	st := C.cg_call_python(cb.fn, (*C.char)(unsafe.Pointer(&key[0])),
		(*C.uint8_t)(unsafe.Pointer(&k.PyFunc[0])), C.int64_t(len(k.PyFunc)),
		&desc[0], C.int64_t(len(desc)), (*C.char)(unsafe.Pointer(&names[0])),
		C.int64_t(n), &ptrs[0], &sizes[0],
		outPtr, C.int64_t(len(out.Data)), (*C.char)(unsafe.Pointer(&errBuf[0])), C.int64_t(pythonErrCap))
	pythonNanos.Add(int64(time.Since(start)))
	pythonCallsDone.Add(1)
	if st == 0 {
		return nil
	}
	msg := errBuf[:]
	if i := bytes.IndexByte(msg, 0); i >= 0 {
		msg = msg[:i]
	}
	if len(msg) == 0 {
		return fmt.Errorf("%w: the Python callback failed with status %d", ops.ErrPythonFunction, int32(st))
	}
	return fmt.Errorf("%w: %s", ops.ErrPythonFunction, msg)
}

func nonNilInts(x []int) []int {
	if x == nil {
		return []int{}
	}
	return x
}

// pythonOpArgs are the arguments of cg_python_op (docs/capi.md).
type pythonOpArgs struct {
	Func  string `json:"func"`
	Shape []int  `json:"shape"`
	DType string `json:"dtype"`
	// Chunks has per axis a list of block sizes or, for a regular axis,
	// one block size (the last block may be smaller): a million blocks of
	// one size need not cross the ABI as a million numbers.
	Chunks   []any           `json:"chunks"`
	Spec     json.RawMessage `json:"spec"`
	Maps     [][]dimMapJSON  `json:"maps"`
	Meta     json.RawMessage `json:"meta"`
	ExtraMem int64           `json:"extra_mem"`
	// ChunkRuns: describe the result's chunks as runs (docs/capi.md).
	ChunkRuns bool `json:"chunk_runs"`
}

// dimMapJSON is one input dimension's map.
type dimMapJSON struct {
	Kind     string   `json:"kind"`
	OutDim   *int     `json:"out_dim"`
	Start    int      `json:"start"`
	Step     int      `json:"step"`
	Index    int      `json:"index"`
	Factor   int      `json:"factor"`
	IterAxis int      `json:"iter_axis"`
	Ranges   [][2]int `json:"ranges"`
}

func (m dimMapJSON) dimMap() (plan.DimMap, error) {
	out := -1
	if m.OutDim != nil {
		out = *m.OutDim
	}
	needsOut := func() error {
		if m.OutDim == nil {
			return plan.Errorf(plan.ErrValue, "a %q dimension map needs out_dim", m.Kind)
		}
		return nil
	}
	switch m.Kind {
	case "affine":
		if m.Step != 0 {
			if err := needsOut(); err != nil {
				return plan.DimMap{}, err
			}
		}
		return plan.DimMap{Kind: plan.Affine, OutDim: out, Start: m.Start, Step: m.Step}, nil
	case "const":
		return plan.DimMap{Kind: plan.Const, Index: m.Index}, nil
	case "full":
		return plan.DimMap{Kind: plan.Full, OutDim: out}, nil
	case "blocks":
		return plan.DimMap{Kind: plan.Blocks, OutDim: out, Factor: m.Factor, IterAxis: m.IterAxis}, nil
	case "block_index":
		return plan.DimMap{Kind: plan.BlockIndex, OutDim: out}, needsOut()
	case "ranges":
		return plan.DimMap{Kind: plan.Ranges, OutDim: out, Ranges: m.Ranges}, needsOut()
	}
	return plan.DimMap{}, plan.Errorf(plan.ErrValue, "unknown dimension map kind %q", m.Kind)
}

//export cg_python_op
func cg_python_op(argsJSON *C.char, payload unsafe.Pointer, payloadLen C.int64_t, inputs *C.uint64_t, n C.int64_t,
	result **C.char, errOut **C.char) (status C.int32_t) {
	defer guard(&status, errOut)
	err := func() error {
		text := C.GoString(argsJSON)
		d := json.NewDecoder(bytes.NewReader([]byte(text)))
		d.DisallowUnknownFields()
		d.UseNumber()
		var a pythonOpArgs
		if err := d.Decode(&a); err != nil {
			return plan.Errorf(plan.ErrValue, "invalid python_op arguments: %v", err)
		}
		in, err := arraysOf(inputs, n)
		if err != nil {
			return err
		}
		if len(a.Maps) != len(in) {
			return plan.Errorf(plan.ErrValue, "python_op has %d inputs but %d lists of dimension maps", len(in), len(a.Maps))
		}
		bound := make([]plan.Input, len(in))
		for i, x := range in {
			dims := make([]plan.DimMap, len(a.Maps[i]))
			for j, m := range a.Maps[i] {
				if dims[j], err = m.dimMap(); err != nil {
					return err
				}
			}
			bound[i] = plan.Input{Array: x, Dims: dims}
		}
		dt, err := ops.ParseDType(a.DType)
		if err != nil {
			return err
		}
		var spec *plan.Spec
		if len(a.Spec) > 0 && string(a.Spec) != "null" {
			sa, err := parseArgs(`{"spec":` + string(a.Spec) + `}`)
			if err != nil {
				return err
			}
			if spec, err = sa.spec(); err != nil {
				return err
			}
		}
		meta := ""
		if len(a.Meta) > 0 && string(a.Meta) != "null" {
			meta = string(a.Meta)
		}
		f := ops.PythonFunc{Payload: append([]byte(nil), goBytes(payload, payloadLen)...), Meta: meta}
		name := a.Func
		if name == "" {
			name = "python"
		}
		chunks, err := pythonOpChunks(a.Chunks, nonNilInts(a.Shape), dt)
		if err != nil {
			return err
		}
		out, err := ops.PythonBlockwise(name, bound, nonNilInts(a.Shape), dt, chunks, spec, f, a.ExtraMem)
		if err != nil {
			return err
		}
		return setJSON(map[string]any{"arrays": []arrayInfo{newArrayInfo(out, infoOptions{ChunkRuns: a.ChunkRuns})}}, result)
	}()
	return setError(err, errOut)
}

// pythonOpChunks expands python_op's chunks: per axis a list of block sizes
// or one block size (docs/capi.md "Python functions").
func pythonOpChunks(chunks []any, shape []int, dt ops.DType) ([][]int, error) {
	if len(chunks) != len(shape) {
		return nil, plan.Errorf(plan.ErrValue, "python_op: chunks %v do not match shape %s", chunks, ops.FormatShape(shape))
	}
	for i, c := range chunks {
		switch c.(type) {
		case json.Number, []any:
		default:
			return nil, plan.Errorf(plan.ErrType, "python_op: chunks for axis %d must be a block size or a list of block sizes, got %v", i, c)
		}
	}
	return plan.NormalizeChunks(chunks, shape, dt.Size(), 0)
}
