package main

/*
#include <stdint.h>
*/
import "C"

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/cubego/cubego/engine"
	"github.com/cubego/cubego/plan"
)

// remoteRunner is the engine.Runner of a computation whose batches Python
// hands to a distributed engine (docs/capi.md "Distributed execution"):
// RunBatch queues a call and waits for its result; Python takes queued
// calls with cg_job_poll_batches and reports each with cg_job_batch_done.
// Nothing calls into Python from a goroutine.
type remoteRunner struct {
	mu      sync.Mutex
	queued  []*remoteCall
	waiting map[int64]*remoteCall // queued or handed out, not yet reported
	ready   chan struct{}         // signalled when a call is queued
}

type remoteCall struct {
	batch engine.Batch
	done  chan remoteResult
}

type remoteResult struct {
	stats []engine.TaskStat
	err   error
}

func newRemoteRunner() *remoteRunner {
	return &remoteRunner{waiting: map[int64]*remoteCall{}, ready: make(chan struct{}, 1)}
}

func (r *remoteRunner) RunBatch(ctx context.Context, b engine.Batch) ([]engine.TaskStat, error) {
	c := &remoteCall{batch: b, done: make(chan remoteResult, 1)}
	r.mu.Lock()
	r.queued = append(r.queued, c)
	r.waiting[b.ID] = c
	r.mu.Unlock()
	select {
	case r.ready <- struct{}{}:
	default:
	}
	select {
	case res := <-c.done:
		return res.stats, res.err
	case <-ctx.Done():
		r.mu.Lock()
		delete(r.waiting, b.ID)
		r.mu.Unlock()
		return nil, ctx.Err()
	}
}

// poll returns the calls queued since the last poll, waiting up to timeout
// for the first one.
func (r *remoteRunner) poll(timeout time.Duration, stop <-chan struct{}) []engine.Batch {
	take := func() []engine.Batch {
		r.mu.Lock()
		defer r.mu.Unlock()
		var out []engine.Batch
		for _, c := range r.queued {
			if _, live := r.waiting[c.batch.ID]; live {
				out = append(out, c.batch)
			}
		}
		r.queued = nil
		return out
	}
	if out := take(); len(out) > 0 || timeout <= 0 {
		return out
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-r.ready:
	case <-t.C:
	case <-stop:
	}
	return take()
}

// report delivers a call's result; a call that is no longer awaited (the
// computation gave up on it, or another copy won) is ignored.
func (r *remoteRunner) report(id int64, res remoteResult) {
	r.mu.Lock()
	c, ok := r.waiting[id]
	delete(r.waiting, id)
	r.mu.Unlock()
	if ok {
		c.done <- res
	}
}

func runnerOf(h C.uint64_t) (*job, *remoteRunner, error) {
	j, err := jobOf(h)
	if err != nil {
		return nil, nil, err
	}
	if j.runner == nil {
		return nil, nil, plan.Errorf(plan.ErrValue, "the computation was not started with \"runner\": \"remote\"")
	}
	return j, j.runner, nil
}

//export cg_job_poll_batches
func cg_job_poll_batches(h C.uint64_t, timeoutMS C.int64_t, out **C.char, errOut **C.char) (status C.int32_t) {
	defer guard(&status, errOut)
	err := func() error {
		j, r, err := runnerOf(h)
		if err != nil {
			return err
		}
		batches := r.poll(time.Duration(timeoutMS)*time.Millisecond, j.done)
		if batches == nil {
			batches = []engine.Batch{}
		}
		return setJSON(batches, out)
	}()
	return setError(err, errOut)
}

// batchResult is the result_json of cg_job_batch_done.
type batchResult struct {
	Stats     []engine.TaskStat `json:"stats"`
	Error     *string           `json:"error"`
	Permanent bool              `json:"permanent"`
}

//export cg_job_batch_done
func cg_job_batch_done(h C.uint64_t, id C.int64_t, resultJSON *C.char, errOut **C.char) (status C.int32_t) {
	defer guard(&status, errOut)
	err := func() error {
		_, r, err := runnerOf(h)
		if err != nil {
			return err
		}
		var res batchResult
		if err := json.Unmarshal([]byte(C.GoString(resultJSON)), &res); err != nil {
			return plan.Errorf(plan.ErrValue, "cg_job_batch_done: invalid result JSON: %v", err)
		}
		if res.Error != nil {
			r.report(int64(id), remoteResult{err: &engine.BatchError{Message: *res.Error, Permanent: res.Permanent}})
			return nil
		}
		r.report(int64(id), remoteResult{stats: res.Stats})
		return nil
	}()
	return setError(err, errOut)
}

// workerPlans caches the plans a worker process rebuilt, by the digest of
// their graph and options: a worker gets the same plan for every batch of a
// computation.
var workerPlans struct {
	sync.Mutex
	keys  []string
	plans map[string]*plan.Plan
}

const workerPlanCache = 4

// workerKeys are the keys of cg_job_worker_options and of cg_run_tasks's
// options_json.
var workerKeys = []string{"optimize_graph", "max_total_source_arrays", "max_total_num_input_blocks", "single_input_fusion", "stored"}

// workerOptions are the options a worker rebuilds a job's plan with.
func workerOptions(a args, stored []string) map[string]any {
	out := map[string]any{"stored": append([]string{}, stored...)}
	for _, k := range workerKeys[:len(workerKeys)-1] {
		if v, ok := a[k]; ok {
			out[k] = v
		}
	}
	return out
}

//export cg_job_worker_options
func cg_job_worker_options(h C.uint64_t, out **C.char, errOut **C.char) (status C.int32_t) {
	defer guard(&status, errOut)
	err := func() error {
		j, _, err := runnerOf(h)
		if err != nil {
			return err
		}
		return setJSON(j.workerOptions, out)
	}()
	return setError(err, errOut)
}

func workerPlan(graph, opts string) (*plan.Plan, error) {
	sum := sha256.Sum256([]byte(opts + "\x00" + graph))
	key := string(sum[:])
	workerPlans.Lock()
	p, ok := workerPlans.plans[key]
	workerPlans.Unlock()
	if ok {
		return p, nil
	}
	a, err := parseArgs(opts)
	if err != nil {
		return nil, err
	}
	if err := checkKeys(a, "worker", workerKeys); err != nil {
		return nil, err
	}
	var stored []string
	if v, ok := a["stored"]; ok {
		list, _ := v.([]any)
		stored = []string{}
		for _, k := range list {
			if s, ok := k.(string); ok {
				stored = append(stored, s)
			}
		}
	}
	outs, err := plan.Unmarshal([]byte(graph))
	if err != nil {
		return nil, err
	}
	if p, _, err = buildPlanStored(outs, a, stored); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	workerPlans.Lock()
	defer workerPlans.Unlock()
	if workerPlans.plans == nil {
		workerPlans.plans = map[string]*plan.Plan{}
	}
	workerPlans.plans[key] = p
	workerPlans.keys = append(workerPlans.keys, key)
	if len(workerPlans.keys) > workerPlanCache {
		delete(workerPlans.plans, workerPlans.keys[0])
		workerPlans.keys = workerPlans.keys[1:]
	}
	return p, nil
}

//export cg_run_tasks
func cg_run_tasks(graphJSON, optsJSON, batchJSON *C.char, out **C.char, errOut **C.char) (status C.int32_t) {
	defer guard(&status, errOut)
	err := func() error {
		p, err := workerPlan(C.GoString(graphJSON), C.GoString(optsJSON))
		if err != nil {
			return err
		}
		var b engine.Batch
		if err := json.Unmarshal([]byte(C.GoString(batchJSON)), &b); err != nil {
			return plan.Errorf(plan.ErrValue, "cg_run_tasks: invalid batch JSON: %v", err)
		}
		stats, err := engine.RunTasks(callContext(), p, b)
		if err != nil {
			return err
		}
		return setJSON(stats, out)
	}()
	return setError(err, errOut)
}

// Go copies the process environment when it starts: variables Python sets
// later (credentials, AWS_ENDPOINT_URL, ...) reach the stores only through
// these.

//export cg_setenv
func cg_setenv(name, value *C.char, errOut **C.char) (status C.int32_t) {
	defer guard(&status, errOut)
	n := C.GoString(name)
	if n == "" || strings.ContainsAny(n, "=\x00") {
		return setError(plan.Errorf(plan.ErrValue, "invalid environment variable name %q", n), errOut)
	}
	return setError(os.Setenv(n, C.GoString(value)), errOut)
}

//export cg_unsetenv
func cg_unsetenv(name *C.char, errOut **C.char) (status C.int32_t) {
	defer guard(&status, errOut)
	return setError(os.Unsetenv(C.GoString(name)), errOut)
}
