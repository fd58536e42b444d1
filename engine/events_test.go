package engine

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
)

// eventLog collects a computation's events (like Cubed's TaskCounter).
type eventLog struct {
	mu     sync.Mutex
	events []Event
}

func (l *eventLog) add(ev Event) {
	l.mu.Lock()
	l.events = append(l.events, ev)
	l.mu.Unlock()
}

func (l *eventLog) tasks() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Event
	for _, ev := range l.events {
		if ev.Type == TaskEnd {
			out = append(out, ev)
		}
	}
	return out
}

func TestEventsPerOpAndTask(t *testing.T) {
	spec := testSpec(t)
	x := literal(t, spec, []int{9, 4}, []any{2, 3}, seq(36))
	y, _ := ops.Elemwise("negative", ops.Operand{Array: x})
	z, _ := ops.Reduce("sum", y, []int{0}, false, nil, 2)
	p, err := plan.Build([]*plan.Array{z})
	if err != nil {
		t.Fatal(err)
	}
	var log eventLog
	res, err := Execute(context.Background(), p, Options{MaxWorkers: 3}, log.add)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	evs := log.events
	if evs[0].Type != ComputeStart || evs[len(evs)-1].Type != ComputeEnd {
		t.Fatalf("first %s, last %s", evs[0].Type, evs[len(evs)-1].Type)
	}
	if evs[0].Plan == nil || evs[0].Plan.NumOps != len(p.Ops) || evs[0].ComputeID != res.Stats.ComputeID || evs[0].MaxWorkers != 3 {
		t.Errorf("compute start %+v", evs[0])
	}
	// Per op: one start, its tasks, one end, in that order.
	state := map[string]string{}
	counts := map[string]int64{}
	for _, ev := range evs[1 : len(evs)-1] {
		switch ev.Type {
		case OperationStart:
			if state[ev.Op] != "" {
				t.Errorf("%s started twice", ev.Op)
			}
			state[ev.Op] = "started"
		case TaskEnd:
			if state[ev.Op] != "started" {
				t.Errorf("task of %s outside its op (%q)", ev.Op, state[ev.Op])
			}
			counts[ev.Op] += ev.NumTasks
			ok := !ev.TaskCreate.After(ev.FunctionStart) && !ev.FunctionStart.After(ev.FunctionEnd) &&
				!ev.FunctionEnd.After(ev.TaskResult)
			if !ok || ev.Attempts != 1 || ev.PeakAllocated <= 0 || ev.PeakAllocated > ev.ProjectedMem || ev.Backup {
				t.Errorf("task event %+v", ev)
			}
			if ev.PeakMeasuredMemEnd < ev.PeakMeasuredMemStart || ev.PeakMeasuredMemStart <= 0 {
				t.Errorf("measured memory %d .. %d", ev.PeakMeasuredMemStart, ev.PeakMeasuredMemEnd)
			}
		case OperationEnd:
			state[ev.Op] = "ended"
		default:
			t.Errorf("unexpected %s", ev.Type)
		}
	}
	for _, o := range p.Ops {
		if state[o.Op.Name] != "ended" || counts[o.Op.Name] != o.NumTasks {
			t.Errorf("%s: state %q, %d task events for %d tasks", o.Op.Name, state[o.Op.Name], counts[o.Op.Name], o.NumTasks)
		}
	}
}

func TestEventsOfAFailedComputation(t *testing.T) {
	spec := testSpec(t)
	orig := openStore
	defer func() { openStore = orig }()
	openStore = flakyOpener(orig, 1000)
	x := literal(t, spec, []int{4}, []any{1}, seq(4))
	y, _ := ops.Elemwise("negative", ops.Operand{Array: x})
	p, _ := plan.Build([]*plan.Array{y})
	var log eventLog
	_, err := Execute(context.Background(), p, Options{MaxWorkers: 1, Retries: 1}, log.add)
	var te *TaskError
	if err == nil || !errors.As(err, &te) || te.Attempts != 2 || te.Array != y.Name {
		t.Fatalf("got %v", err)
	}
	for _, ev := range log.events {
		if ev.Type == OperationEnd || ev.Type == ComputeEnd {
			t.Errorf("a failed computation emitted %s", ev.Type)
		}
	}
}

func taskEvent(op string, i int) Event {
	return Event{Type: TaskEnd, Op: op, NumTasks: 1, Block: []int{i}}
}

func TestEventBufferDropsOldestTaskEnds(t *testing.T) {
	b := NewEventBuffer(4)
	b.Add(Event{Type: ComputeStart})
	b.Add(Event{Type: OperationStart, Op: "a"})
	for i := range 3 {
		b.Add(taskEvent("a", i))
	}
	b.Add(Event{Type: OperationEnd, Op: "a"})
	b.Add(Event{Type: OperationStart, Op: "b"})
	for i := range 20 {
		b.Add(taskEvent("b", i))
	}
	b.Add(Event{Type: OperationEnd, Op: "b"})
	evs := b.Drain()
	held := 0
	perOp := map[string]int64{}
	var order []string
	for _, ev := range evs {
		if ev.Type == TaskEnd {
			perOp[ev.Op] += ev.NumTasks
			if !ev.Dropped {
				held++
			}
			if ev.Dropped {
				order = append(order, "dropped-"+ev.Op)
			}
			continue
		}
		order = append(order, string(ev.Type)+"-"+ev.Op)
	}
	if held > 4 {
		t.Errorf("%d task events held, limit 4", held)
	}
	if perOp["a"] != 3 || perOp["b"] != 20 {
		t.Errorf("counts %v, want a:3 b:20", perOp)
	}
	want := []string{"compute_start-", "operation_start-a", "dropped-a", "operation_end-a", "operation_start-b", "dropped-b", "operation_end-b"}
	if len(order) != len(want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("order %v, want %v", order, want)
		}
	}
	if b.Dropped() != int64(23-held) {
		t.Errorf("dropped %d, want %d", b.Dropped(), 23-held)
	}
	if len(b.Drain()) != 0 {
		t.Error("a second drain returned events")
	}
}

func TestEventBufferInterleavedOpsStayBounded(t *testing.T) {
	b := NewEventBuffer(100)
	b.Add(Event{Type: OperationStart, Op: "a"})
	b.Add(Event{Type: OperationStart, Op: "b"})
	for i := range 100_000 {
		b.Add(taskEvent([]string{"a", "b"}[i%2], i))
	}
	b.mu.Lock()
	n := len(b.events)
	b.mu.Unlock()
	if n > 100+4 {
		t.Errorf("%d events held for a limit of 100 task events", n)
	}
	var total int64
	for _, ev := range b.Drain() {
		total += ev.NumTasks
	}
	if total != 100_000 {
		t.Errorf("%d tasks accounted for, want 100000", total)
	}
}

func TestComputeIDIsCubedStyle(t *testing.T) {
	id := newComputeID(time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC))
	if id != "compute-20260102T030405.000006" {
		t.Errorf("got %s", id)
	}
}
