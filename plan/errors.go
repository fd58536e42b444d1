package plan

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error the plan and ops packages return wraps one of
// these (or a zarr sentinel), so the C ABI can map it to the right Python
// exception with errors.Is.
var (
	// ErrValue is a bad value: mismatched shapes, invalid chunks, a bad axis.
	ErrValue = errors.New("plan: invalid value")
	// ErrType is a bad type: an unsupported dtype or dtype combination.
	ErrType = errors.New("plan: invalid type")
	// ErrIndex is an index out of bounds.
	ErrIndex = errors.New("plan: index out of bounds")
	// ErrNotImplemented is valid input that cubego does not support yet.
	ErrNotImplemented = errors.New("plan: not implemented")
)

// Errorf wraps a sentinel with a formatted message that starts with the
// sentinel's package prefix replaced by the message itself, so that users
// read "matmul: shapes (2, 3) and (4,) do not align" rather than the
// sentinel's text.
func Errorf(sentinel error, format string, args ...any) error {
	return &wrapped{msg: fmt.Sprintf(format, args...), sentinel: sentinel}
}

type wrapped struct {
	msg      string
	sentinel error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.sentinel }

// MemoryExceededError reports an op whose projected per-task memory is over
// the allowed memory of its spec.
type MemoryExceededError struct {
	Op        string // op name, e.g. "op-004 (matmul)"
	Projected int64
	Allowed   int64
	Reserved  int64
	Hint      string
}

func (e *MemoryExceededError) Error() string {
	return fmt.Sprintf("projected memory of %s is %s, which exceeds allowed_mem of %s (including reserved_mem of %s); %s",
		e.Op, FormatBytes(e.Projected), FormatBytes(e.Allowed), FormatBytes(e.Reserved), e.Hint)
}

// FormatBytes renders a byte count in decimal units, e.g. "1.2 GB".
func FormatBytes(n int64) string {
	units := []string{"bytes", "kB", "MB", "GB", "TB", "PB"}
	f := float64(n)
	i := 0
	for f >= 1000 && i < len(units)-1 {
		f /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}
