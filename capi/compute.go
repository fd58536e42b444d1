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
}

// buildPlan finalises the plan of arrays, fused unless the options say
// "optimize_graph": false.
func buildPlan(arrays []*plan.Array, optsJSON string) (*plan.Plan, error) {
	a, err := parseArgs(optsJSON)
	if err != nil {
		return nil, err
	}
	optimize, err := a.boolean("optimize_graph", true)
	if err != nil {
		return nil, err
	}
	p, err := plan.Build(arrays)
	if err != nil {
		return nil, err
	}
	if optimize {
		p.Fuse()
	}
	return p, nil
}

func computeOptions(s string) (engine.Options, error) {
	a, err := parseArgs(s)
	if err != nil {
		return engine.Options{}, err
	}
	var o engine.Options
	if o.Executor, err = a.str("executor", ""); err != nil {
		return o, err
	}
	if o.MaxWorkers, err = a.integer("max_workers", 0); err != nil {
		return o, err
	}
	if o.Retries, err = a.integer("retries", -1); err != nil {
		return o, err
	}
	if o.ProcessBudget, err = a.int64("process_budget", 0); err != nil {
		return o, err
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
		opts, err := computeOptions(C.GoString(optsJSON))
		if err != nil {
			return err
		}
		p, err := buildPlan(outs, C.GoString(optsJSON))
		if err != nil {
			return err
		}
		if err := p.Validate(); err != nil {
			return err
		}
		ctx, cancel := context.WithCancel(context.Background())
		j := &job{cancel: cancel, done: make(chan struct{}), plan: p}
		go func() {
			defer close(j.done)
			defer func() {
				if r := recover(); r != nil {
					panics.Add(1)
					j.err = fmt.Errorf("%w: panic in libcubego: %v\n%s", errInternal, r, debug.Stack())
				}
			}()
			j.result, j.err = engine.Execute(ctx, p, opts, nil)
		}()
		*jobOut = C.uint64_t(cgo.NewHandle(j))
		return nil
	}()
	return setError(err, errOut)
}

func jobOf(h C.uint64_t) (*job, error) {
	if h == 0 {
		return nil, plan.Errorf(plan.ErrValue, "invalid job handle 0")
	}
	j, ok := cgo.Handle(h).Value().(*job)
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
		return r.Read(context.Background(), int(index), goBytes(buf, nbytes))
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

// planInfo is what cg_plan reports.
type planInfo struct {
	MaxProjectedMem int64            `json:"max_projected_mem"`
	AllowedMem      int64            `json:"allowed_mem"`
	ReservedMem     int64            `json:"reserved_mem"`
	NumOps          int              `json:"num_ops"`
	NumTasks        int64            `json:"num_tasks"`
	Ops             []engine.OpStats `json:"ops"`
	ExceedingMemory []string         `json:"ops_exceeding_memory"`
}

//export cg_plan
func cg_plan(arrays *C.uint64_t, n C.int64_t, optsJSON *C.char, out **C.char, errOut **C.char) (status C.int32_t) {
	defer guard(&status, errOut)
	err := func() error {
		outs, err := arraysOf(arrays, n)
		if err != nil {
			return err
		}
		p, err := buildPlan(outs, C.GoString(optsJSON))
		if err != nil {
			return err
		}
		info := planInfo{MaxProjectedMem: p.MaxProjectedMem(), AllowedMem: p.Spec.AllowedMem, ReservedMem: p.Spec.ReservedMem,
			NumOps: len(p.Ops), NumTasks: p.NumTasks(), Ops: []engine.OpStats{}, ExceedingMemory: []string{}}
		for _, o := range p.Ops {
			info.Ops = append(info.Ops, engine.OpStats{Name: o.Op.Name, Func: o.Op.Func, NumTasks: o.NumTasks, ProjectedMem: o.ProjectedMem})
		}
		for _, o := range p.OpsExceedingMemory() {
			info.ExceedingMemory = append(info.ExceedingMemory, o.Op.Name)
		}
		return setJSON(info, out)
	}()
	return setError(err, errOut)
}
