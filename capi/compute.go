package main

/*
#include <stdint.h>
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"runtime/cgo"
	"runtime/debug"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/cubego/cubego/engine"
	"github.com/cubego/cubego/plan"
)

// job is a computation running in the background.
type job struct {
	cancel context.CancelFunc
	done   chan struct{}
	result *engine.Result
	err    error
	plan   *plan.Plan
	events *engine.EventBuffer
	// runner hands batches to Python when the computation was started
	// with "runner": "remote" (capi/runner.go).
	runner *remoteRunner
	// workerOptions rebuild, from the same array graph, the plan this job
	// runs (cg_job_worker_options).
	workerOptions map[string]any
}

// The option keys of cg_compute_start and cg_plan (docs/capi.md).
var (
	computeKeys = []string{"executor", "max_workers", "retries", "process_budget", "batch_size",
		"compute_arrays_in_parallel", "use_backups", "optimize_graph", "resume", "intermediate_mem",
		"max_total_source_arrays", "max_total_num_input_blocks", "single_input_fusion", "runner", "tasks_per_batch"}
	planKeys = []string{"optimize_graph", "dot", "counts", "max_total_source_arrays", "max_total_num_input_blocks", "single_input_fusion"}
)

// checkKeys refuses option keys outside known, naming them all.
func checkKeys(a args, what string, known []string) error {
	var unknown []string
	for k := range a {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return plan.Errorf(plan.ErrValue, "unknown %s option(s): %s (known: %s)", what,
		strings.Join(unknown, ", "), strings.Join(known, ", "))
}

// buildPlan finalises the plan of arrays, fused unless the options say
// "optimize_graph": false, within the bounds "max_total_source_arrays" and
// "max_total_num_input_blocks" (Cubed's names; 0 for no bound), and only
// along single-input chains with "single_input_fusion" (Cubed's
// simple_optimize_dag).
func buildPlan(arrays []*plan.Array, a args) (*plan.Plan, error) {
	p, _, err := buildPlanStored(arrays, a, nil)
	return p, err
}

// buildPlanStored is buildPlan that, for a resumed computation
// ("resume": true), reads the intermediates an earlier computation left
// complete instead of fusing their ops in; stored names them by key
// instead (a worker rebuilding the coordinator's plan). It returns the keys
// of the intermediates read that way.
func buildPlanStored(arrays []*plan.Array, a args, stored []string) (*plan.Plan, []string, error) {
	optimize, err := a.boolean("optimize_graph", true)
	if err != nil {
		return nil, nil, err
	}
	bounds := plan.DefaultFuseOptions
	if bounds.MaxSourceArrays, err = a.integer("max_total_source_arrays", bounds.MaxSourceArrays); err != nil {
		return nil, nil, err
	}
	if bounds.MaxInputBlocks, err = a.integer("max_total_num_input_blocks", bounds.MaxInputBlocks); err != nil {
		return nil, nil, err
	}
	if bounds.SingleInput, err = a.boolean("single_input_fusion", false); err != nil {
		return nil, nil, err
	}
	if bounds.MaxSourceArrays < 0 || bounds.MaxInputBlocks < 0 {
		return nil, nil, plan.Errorf(plan.ErrValue, "max_total_source_arrays and max_total_num_input_blocks must be ≥ 0 (0: no bound), got %d and %d",
			bounds.MaxSourceArrays, bounds.MaxInputBlocks)
	}
	p, err := plan.Build(arrays)
	if err != nil {
		return nil, nil, err
	}
	resume, err := a.boolean("resume", false)
	if err != nil {
		return nil, nil, err
	}
	var keys []string
	switch {
	case stored != nil:
		want := map[string]bool{}
		for _, k := range stored {
			want[k] = true
		}
		bounds.Stored = map[*plan.Array]bool{}
		for _, o := range p.Ops {
			if k, err := plan.Key(o.Op.Output); err == nil && want[k] {
				bounds.Stored[o.Op.Output] = true
			}
		}
		keys = stored
	case resume && optimize:
		if bounds.Stored, keys, err = engine.StoredIntermediates(callContext(), p); err != nil {
			return nil, nil, err
		}
	}
	if optimize {
		p.FuseWith(bounds)
	}
	return p, keys, nil
}

func computeOptions(a args) (engine.Options, error) {
	var o engine.Options
	if err := checkKeys(a, "compute", computeKeys); err != nil {
		return o, err
	}
	var err error
	if o.Executor, err = a.str("executor", ""); err != nil {
		return o, err
	}
	if o.MaxWorkers, err = a.atLeast("max_workers", 0, 1); err != nil {
		return o, err
	}
	if o.Retries, err = a.atLeast("retries", -1, 0); err != nil {
		return o, err
	}
	if o.ProcessBudget, err = a.int64("process_budget", 0); err != nil {
		return o, err
	}
	if o.BatchSize, err = a.atLeast("batch_size", 0, 1); err != nil {
		return o, err
	}
	if o.ComputeArraysInParallel, err = a.boolean("compute_arrays_in_parallel", true); err != nil {
		return o, err
	}
	if o.UseBackups, err = a.boolean("use_backups", false); err != nil {
		return o, err
	}
	if o.Resume, err = a.boolean("resume", false); err != nil {
		return o, err
	}
	if o.IntermediateMem, err = a.int64("intermediate_mem", engine.DefaultIntermediateMem); err != nil {
		return o, err
	}
	if o.TasksPerBatch, err = a.atLeast("tasks_per_batch", 0, 1); err != nil {
		return o, err
	}
	switch runner, err := a.str("runner", ""); {
	case err != nil:
		return o, err
	case runner == "remote":
		o.Runner = newRemoteRunner()
	case runner != "":
		return o, plan.Errorf(plan.ErrValue, "unknown runner %q: use \"remote\" (or leave it out to run in this process)", runner)
	}
	return o, nil
}

//export cg_compute_start
func cg_compute_start(arrays *C.uint64_t, n C.int64_t, optsJSON *C.char, jobOut *C.uint64_t, errOut **C.char) (status C.int32_t) {
	defer guard(&status, errOut)
	err := func() error {
		outs, err := arraysOf(arrays, n)
		if err != nil {
			return err
		}
		a, err := parseArgs(C.GoString(optsJSON))
		if err != nil {
			return err
		}
		opts, err := computeOptions(a)
		if err != nil {
			return err
		}
		p, stored, err := buildPlanStored(outs, a, nil)
		if err != nil {
			return err
		}
		if err := p.Validate(); err != nil {
			return err
		}
		ctx, cancel := context.WithCancel(context.Background())
		j := &job{cancel: cancel, done: make(chan struct{}), plan: p, events: engine.NewEventBuffer(0)}
		if rr, ok := opts.Runner.(*remoteRunner); ok {
			j.runner = rr
			j.workerOptions = workerOptions(a, stored)
		}
		go func() {
			defer close(j.done)
			defer func() {
				if r := recover(); r != nil {
					panics.Add(1)
					j.err = fmt.Errorf("%w: panic in libcubego: %v\n%s", errInternal, r, debug.Stack())
				}
			}()
			j.result, j.err = engine.Execute(ctx, p, opts, j.events.Add)
		}()
		*jobOut = C.uint64_t(cgo.NewHandle(j))
		return nil
	}()
	return setError(err, errOut)
}

func jobOf(h C.uint64_t) (*job, error) {
	v, err := handleValue(uint64(h), "job")
	if err != nil {
		return nil, err
	}
	j, ok := v.(*job)
	if !ok {
		return nil, plan.Errorf(plan.ErrValue, "handle %d is not a job", uint64(h))
	}
	return j, nil
}

//export cg_job_wait
func cg_job_wait(h C.uint64_t, timeoutMS C.int64_t, done *C.int32_t, errOut **C.char) (status C.int32_t) {
	defer guard(&status, errOut)
	j, err := jobOf(h)
	if err != nil {
		return setError(err, errOut)
	}
	t := time.NewTimer(time.Duration(timeoutMS) * time.Millisecond)
	defer t.Stop()
	select {
	case <-j.done:
		*done = 1
		return setError(j.err, errOut)
	case <-t.C:
		*done = 0
		return statusOK
	}
}

//export cg_job_cancel
func cg_job_cancel(h C.uint64_t) (status C.int32_t) {
	defer guard(&status, nil)
	j, err := jobOf(h)
	if err != nil {
		return setError(err, nil)
	}
	j.cancel()
	return statusOK
}

func finished(j *job) (*engine.Result, error) {
	select {
	case <-j.done:
	default:
		return nil, plan.Errorf(plan.ErrValue, "the computation has not finished")
	}
	if j.err != nil {
		return nil, j.err
	}
	if j.result == nil {
		return nil, errors.New("the computation has no result")
	}
	return j.result, nil
}

//export cg_job_read
func cg_job_read(h C.uint64_t, index C.int64_t, buf unsafe.Pointer, nbytes C.int64_t, errOut **C.char) (status C.int32_t) {
	defer guard(&status, errOut)
	err := func() error {
		j, err := jobOf(h)
		if err != nil {
			return err
		}
		r, err := finished(j)
		if err != nil {
			return err
		}
		return r.Read(callContext(), int(index), goBytes(buf, nbytes))
	}()
	return setError(err, errOut)
}

//export cg_job_stats
func cg_job_stats(h C.uint64_t, out **C.char, errOut **C.char) (status C.int32_t) {
	defer guard(&status, errOut)
	err := func() error {
		j, err := jobOf(h)
		if err != nil {
			return err
		}
		r, err := finished(j)
		if err != nil {
			return err
		}
		return setJSON(r.Stats, out)
	}()
	return setError(err, errOut)
}

//export cg_job_release
func cg_job_release(h C.uint64_t) (status C.int32_t) {
	defer guard(&status, nil)
	j, err := jobOf(h)
	if err != nil {
		return setError(err, nil)
	}
	j.cancel()
	<-j.done
	if j.result != nil {
		_ = j.result.Close()
	}
	cgo.Handle(h).Delete()
	return statusOK
}

//export cg_job_events
func cg_job_events(h C.uint64_t, out **C.char, errOut **C.char) (status C.int32_t) {
	defer guard(&status, errOut)
	err := func() error {
		j, err := jobOf(h)
		if err != nil {
			return err
		}
		evs := j.events.Drain()
		list := make([]eventJSON, len(evs))
		for i, ev := range evs {
			list[i] = newEventJSON(ev)
		}
		return setJSON(list, out)
	}()
	return setError(err, errOut)
}

// planInfo is what cg_plan reports: the plan's statistics and, when asked
// for, its Graphviz rendering.
type planInfo struct {
	plan.Stats
	DOT string `json:"dot,omitempty"`
	// counts, asked for with "counts", replaces the whole answer: a
	// notebook repr needs only these, and the full statistics take
	// longer to make and parse than the rest of the repr.
	counts *planCounts
}

// planCounts is cg_plan's answer with "counts": true.
type planCounts struct {
	NumOps    int   `json:"num_ops"`
	NumTasks  int64 `json:"num_tasks"`
	NumArrays int   `json:"num_arrays"`
}

//export cg_plan
func cg_plan(arrays *C.uint64_t, n C.int64_t, optsJSON *C.char, out **C.char, errOut **C.char) (status C.int32_t) {
	defer guard(&status, errOut)
	err := func() error {
		info, err := planOf(handleSlice(arrays, n), C.GoString(optsJSON))
		if err != nil {
			return err
		}
		if info.counts != nil {
			return setJSON(info.counts, out)
		}
		return setJSON(info, out)
	}()
	return setError(err, errOut)
}

// planOf is cg_plan in Go terms: the statistics (and, asked for, the
// Graphviz rendering) of the plan computing the arrays behind handles.
func planOf(handles []uint64, optsJSON string) (planInfo, error) {
	outs, err := lookupArrays(handles)
	if err != nil {
		return planInfo{}, err
	}
	a, err := parseArgs(optsJSON)
	if err != nil {
		return planInfo{}, err
	}
	if err := checkKeys(a, "plan", planKeys); err != nil {
		return planInfo{}, err
	}
	dot, err := a.boolean("dot", false)
	if err != nil {
		return planInfo{}, err
	}
	counts, err := a.boolean("counts", false)
	if err != nil {
		return planInfo{}, err
	}
	p, err := buildPlan(outs, a)
	if err != nil {
		return planInfo{}, err
	}
	if counts {
		arrays := map[*plan.Array]bool{}
		for _, o := range p.Ops {
			arrays[o.Op.Output] = true
			for _, in := range o.Op.InputArrays() {
				arrays[in] = true
			}
		}
		for _, o := range p.Outputs {
			arrays[o] = true
		}
		return planInfo{counts: &planCounts{NumOps: len(p.Ops), NumTasks: p.NumTasks(), NumArrays: len(arrays)}}, nil
	}
	info := planInfo{Stats: p.Stats()}
	if dot {
		info.DOT = info.Stats.DOT()
	}
	return info, nil
}
