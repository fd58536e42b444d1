package engine

import (
	"sync"
	"time"

	"github.com/cubego/cubego/plan"
)

// EventType names what an [Event] reports, with Cubed's callback names.
type EventType string

// Event types, in the order a computation emits them: one compute start,
// then per op an operation start, its task ends and an operation end, and
// last a compute end. A failed computation ends without the end events of
// the failed op and of the computation.
const (
	ComputeStart   EventType = "compute_start"
	OperationStart EventType = "operation_start"
	TaskEnd        EventType = "task_end"
	OperationEnd   EventType = "operation_end"
	ComputeEnd     EventType = "compute_end"
)

// Event reports progress of a computation. Which fields are set depends on
// Type; zero values are unset.
type Event struct {
	Type      EventType
	ComputeID string
	// Time is when the event happened (compute and operation events).
	Time time.Time

	// Compute start: the plan being run and the executor's settings.
	Plan          *plan.Stats
	MaxWorkers    int
	ProcessBudget int64

	// Operation and task events: the op's name and function.
	Op   string
	Func string
	// NumTasks is the op's number of tasks for an operation start, and the
	// number of tasks a task end stands for otherwise: 1, or more for a
	// Dropped summary.
	NumTasks int64

	// Task end.
	Block []int
	// TaskCreate is when the task was submitted, FunctionStart and
	// FunctionEnd bracket the attempt that produced its result (after
	// admission), TaskResult is when the executor took the result.
	TaskCreate, FunctionStart, FunctionEnd, TaskResult time.Time
	ProjectedMem                                       int64
	// PeakAllocated is the most bytes the task held at once from the
	// engine's chunk-buffer allocator.
	PeakAllocated int64
	// PeakMeasuredMemStart and PeakMeasuredMemEnd are the process's peak
	// resident set size since the computation started, sampled before and
	// after the task (Linux VmHWM; 0 where unknown).
	PeakMeasuredMemStart, PeakMeasuredMemEnd int64
	Attempts                                 int
	// Backup is set when the result came from a backup copy of the task.
	Backup bool
	// Dropped marks a summary of NumTasks task ends that an EventBuffer
	// dropped because nobody took them in time; it has no timings.
	Dropped bool
}

// DefaultEventLimit is the number of task events an EventBuffer holds.
const DefaultEventLimit = 10_000

// EventBuffer collects events until they are taken with Drain, holding at
// most a fixed number of task ends: when more arrive, the oldest task ends
// are replaced by one Dropped summary per op, placed where that op's first
// dropped event was, so counts per op stay exact and summaries stay
// between their op's start and end. Compute and operation events are never
// dropped (there are two per op). It is safe for concurrent use.
type EventBuffer struct {
	mu      sync.Mutex
	events  []Event
	tasks   int // task ends held, not counting summaries
	limit   int
	dropped int64
}

// NewEventBuffer returns a buffer holding at most limit task ends
// (DefaultEventLimit when limit ≤ 0).
func NewEventBuffer(limit int) *EventBuffer {
	if limit <= 0 {
		limit = DefaultEventLimit
	}
	return &EventBuffer{limit: limit}
}

// Add records an event.
func (b *EventBuffer) Add(ev Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.events = append(b.events, ev)
	if ev.Type == TaskEnd && !ev.Dropped {
		b.tasks++
		if b.tasks > b.limit {
			b.compact(b.tasks - b.limit/2)
		}
	}
}

// compact replaces the n oldest task ends by per-op summaries.
func (b *EventBuffer) compact(n int) {
	kept := b.events[:0]
	summary := map[string]int{} // op -> index in kept of its summary
	for _, ev := range b.events {
		switch {
		case ev.Type == TaskEnd && ev.Dropped:
			summary[ev.Op] = len(kept)
			kept = append(kept, ev)
		case ev.Type == TaskEnd && n > 0:
			n--
			b.tasks--
			b.dropped++
			if i, ok := summary[ev.Op]; ok {
				kept[i].NumTasks += max(ev.NumTasks, 1)
				continue
			}
			summary[ev.Op] = len(kept)
			kept = append(kept, Event{Type: TaskEnd, ComputeID: ev.ComputeID, Op: ev.Op, Func: ev.Func,
				NumTasks: max(ev.NumTasks, 1), Dropped: true})
		default:
			kept = append(kept, ev)
		}
	}
	clear(b.events[len(kept):])
	b.events = kept
}

// Drain returns the events recorded since the last Drain, oldest first.
func (b *EventBuffer) Drain() []Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.events
	b.events = nil
	b.tasks = 0
	return out
}

// Dropped returns how many task ends were folded into summaries so far.
func (b *EventBuffer) Dropped() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dropped
}
