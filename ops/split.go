package ops

import (
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/cubego/cubego/ops/internal/kernels"
)

// Helpers lends a task the cores of idle workers, so that an op with fewer
// runnable tasks than workers (the last rounds of a reduction, a one-task
// op) still uses the machine. Borrow asks for up to n more goroutines and
// returns how many the task may start (0 when every worker is busy);
// Return gives them back. It is safe for concurrent use.
type Helpers interface {
	Borrow(n int) int
	Return(n int)
}

// minSplitElems is the fewest elements a piece of a split kernel gets: a
// goroutine costs about a microsecond, a piece of this size some hundred.
const minSplitElems = 1 << 18

// WithHelpers returns the kernel whose element-wise and reduction steps
// split their work across goroutines that h lends (nil: never).
func (t *TaskKernel) WithHelpers(h Helpers) *TaskKernel {
	c := *t
	c.helpers = h
	return &c
}

// splitPieces decides how a step over shape (the output block of a map
// kernel, the accumulator of a reduction, whose leading extent-1 axes are
// skipped) is split: along the first axis d of extent > 1, so that each
// piece of the destination is contiguous, into 1 + borrowed pieces.
// Each piece computes its own destination elements from the same inputs
// in the same order as the whole step would, so the result does not depend
// on the split (nor on how many workers were idle). It returns d < 0 when
// the step runs whole.
func (t *TaskKernel) splitPieces(shape []int, work int64) (d, pieces int) {
	if t.helpers == nil || work < 2*minSplitElems {
		return -1, 1
	}
	d = -1
	for i, e := range shape {
		if e > 1 {
			d = i
			break
		}
	}
	if d < 0 {
		return -1, 1
	}
	want := int(min(int64(shape[d]), work/minSplitElems)) - 1
	if want < 1 {
		return -1, 1
	}
	got := t.helpers.Borrow(want)
	if got < 1 {
		return -1, 1
	}
	return d, 1 + got
}

// runPieces runs f(lo, hi) for pieces ranges covering [0, n) along the
// split axis, the first on this goroutine, and returns the helpers lent.
func (t *TaskKernel) runPieces(n, pieces int, f func(lo, hi int) error) error {
	defer t.helpers.Return(pieces - 1)
	errs := make([]error, pieces)
	var wg sync.WaitGroup
	for p := 1; p < pieces; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Inputs may be mapped chunks (MapsInputs): a fault on one is
			// a panic recovered below, not a crash.
			debug.SetPanicOnFault(true)
			defer func() {
				if r := recover(); r != nil {
					errs[p] = fmt.Errorf("ops: panic in a split kernel: %v\n%s", r, debug.Stack())
				}
			}()
			errs[p] = f(p*n/pieces, (p+1)*n/pieces)
		}()
	}
	errs[0] = f(0, n/pieces)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// sliceOperand views elements [lo, hi) of o along axis d.
func sliceOperand(o kernels.Operand, d, lo, hi int) kernels.Operand {
	strides := o.Strides
	if strides == nil {
		strides = CStrides(o.Shape)
	}
	shape := append([]int(nil), o.Shape...)
	shape[d] = hi - lo
	return kernels.Operand{DType: o.DType, Data: o.Data, Shape: shape, Strides: strides, Offset: o.Offset + lo*strides[d]}
}
