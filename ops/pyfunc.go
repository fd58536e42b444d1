package ops

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cubego/cubego/plan"
)

// Python functions as chunk kernels
//
// An op whose kernel core is "python" computes its blocks by calling a
// Python function (map_blocks, blockwise, map_overlap, apply_gufunc,
// reduction rounds, lazy array sources). The engine reads each input's
// region exactly as for any other op; the kernel then hands the regions
// and the output block, together with a TaskInfo, to PythonCallback, which
// the C ABI connects to the Python interpreter that loaded the library.
// Go never interprets the function: plan.Kernel.PyFunc is opaque bytes
// that only Python unpickles.

// ErrPythonFunction marks a task that failed because its Python function
// raised (or returned a block of the wrong shape or dtype). Running the
// function again would fail again, so such failures are not retried.
var ErrPythonFunction = errors.New("ops: Python function raised")

// PythonCallback runs the Python function of a "python" kernel for one
// iteration step of one task: ins are the input regions (in each input's
// own dimension order) and out the output block, whose Data the function
// fills (for iterating kernels, out holds the result of the previous steps
// unless task.First). It is set once, before any computation, by the C
// ABI; it may be called from many goroutines at once.
var PythonCallback func(k *plan.Kernel, task TaskInfo, ins []Block, out Block) error

// TaskInfo tells a Python function which task it is computing.
type TaskInfo struct {
	Op    string // the op's name, e.g. "op-004"
	Func  string // what the user called, e.g. "map_blocks"
	Array string // the output array's name
	Block []int  // the output block's coordinates
	// Step is the iteration step (nil when the op does not iterate) and
	// First whether it is the task's first step.
	Step  []int
	First bool
	// InputStarts are, per input, the position of the region's first
	// element in the input array (ins[i].Shape is its extent); OutputStart
	// is the position of the output block's first element.
	InputStarts [][]int
	OutputStart []int
}

// PythonFunc is a Python function as a "python" kernel carries it.
type PythonFunc struct {
	// Payload is the function serialised by Python (cloudpickle).
	Payload []byte
	// Meta is a JSON object describing the function for people (may be
	// empty).
	Meta string
}

// PythonBlockwise returns the array of the given shape, dtype and explicit
// chunks whose blocks the Python function f computes from the regions of
// inputs. spec applies when there are no inputs (a source such as a lazy
// array-like); otherwise the inputs' common spec does. extraMem is what f
// allocates per task beyond its result, added to the op's projected
// memory.
func PythonBlockwise(fn string, inputs []plan.Input, shape []int, dt DType, chunks [][]int, spec *plan.Spec,
	f PythonFunc, extraMem int64) (*plan.Array, error) {
	if err := checkShape(shape); err != nil {
		return nil, err
	}
	if len(f.Payload) == 0 {
		return nil, plan.Errorf(plan.ErrValue, "%s: the Python function is missing", fn)
	}
	if f.Meta != "" && !json.Valid([]byte(f.Meta)) {
		return nil, plan.Errorf(plan.ErrValue, "%s: the Python function's description is not JSON", fn)
	}
	if extraMem < 0 {
		return nil, plan.Errorf(plan.ErrValue, "%s: extra_projected_mem must not be negative, got %d", fn, extraMem)
	}
	if len(inputs) > 0 {
		arrays := make([]*plan.Array, len(inputs))
		for i, in := range inputs {
			arrays[i] = in.Array
		}
		var err error
		if spec, err = plan.CommonSpec(arrays...); err != nil {
			return nil, err
		}
	} else if spec == nil {
		spec = plan.DefaultSpec()
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if len(chunks) != len(shape) {
		return nil, plan.Errorf(plan.ErrValue, "%s: chunks %v do not match shape %s", fn, chunks, FormatShape(shape))
	}
	c, err := plan.NormalizeChunks(chunks, shape, dt.Size(), 0)
	if err != nil {
		return nil, err
	}
	out := plan.NewArray(shape, dt, c, spec)
	k := plan.Kernel{Core: "python", PyFunc: f.Payload, PyKey: plan.PyKeyOf(f.Payload), PyMeta: f.Meta}
	op := plan.NewOp(fn, "blockwise", inputs, out, k)
	op.ExtraMem = extraMem
	if err := op.Check(); err != nil {
		return nil, plan.Errorf(plan.ErrValue, "%v", err)
	}
	return out, nil
}

// checkPython checks a "python" kernel before its tasks run.
func checkPython(op *plan.Op) error {
	k := op.Kernel
	if len(k.PyFunc) == 0 || k.PyKey != plan.PyKeyOf(k.PyFunc) {
		return fmt.Errorf("ops: python kernel of %s has no function or a wrong key", op)
	}
	return nil
}

// pythonStep runs one iteration step of a "python" kernel.
func (t *TaskKernel) pythonStep(out Block, ins []Block, first bool) error {
	cb := PythonCallback
	if cb == nil {
		return fmt.Errorf("ops: %s calls a Python function, but no Python interpreter is attached; compute it from Python", t.op)
	}
	lo, _ := t.op.OutputRange(t.block)
	task := TaskInfo{Op: t.op.Name, Func: t.op.Func, Array: t.op.Output.Name, Block: t.block, Step: t.step,
		First: first, InputStarts: make([][]int, len(ins)), OutputStart: lo}
	for i := range ins {
		task.InputStarts[i] = t.op.InputRegion(i, t.block, t.step).Start
	}
	return cb(&t.op.Kernel, task, ins, out)
}
