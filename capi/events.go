package main

import (
	"time"

	"github.com/cubego/cubego/engine"
	"github.com/cubego/cubego/plan"
)

// eventJSON is an engine event as cg_job_events reports it (docs/capi.md):
// times as seconds since the Unix epoch, absent fields omitted.
type eventJSON struct {
	Type          string      `json:"type"`
	ComputeID     string      `json:"compute_id,omitempty"`
	Time          *float64    `json:"time,omitempty"`
	Plan          *plan.Stats `json:"plan,omitempty"`
	MaxWorkers    int         `json:"max_workers,omitempty"`
	ProcessBudget int64       `json:"process_budget,omitempty"`
	Name          string      `json:"name,omitempty"`
	Func          string      `json:"func,omitempty"`
	NumTasks      int64       `json:"num_tasks,omitempty"`

	Block                []int    `json:"block,omitempty"`
	TaskCreate           *float64 `json:"task_create_tstamp,omitempty"`
	FunctionStart        *float64 `json:"function_start_tstamp,omitempty"`
	FunctionEnd          *float64 `json:"function_end_tstamp,omitempty"`
	TaskResult           *float64 `json:"task_result_tstamp,omitempty"`
	ProjectedMem         int64    `json:"projected_mem,omitempty"`
	PeakAllocated        int64    `json:"peak_allocated,omitempty"`
	PeakMeasuredMemStart int64    `json:"peak_measured_mem_start,omitempty"`
	PeakMeasuredMemEnd   int64    `json:"peak_measured_mem_end,omitempty"`
	Attempts             int      `json:"attempts,omitempty"`
	Backup               bool     `json:"backup,omitempty"`
	Dropped              bool     `json:"dropped,omitempty"`
}

func unixSeconds(t time.Time) *float64 {
	if t.IsZero() {
		return nil
	}
	s := float64(t.UnixNano()) / 1e9
	return &s
}

func newEventJSON(ev engine.Event) eventJSON {
	return eventJSON{
		Type: string(ev.Type), ComputeID: ev.ComputeID, Time: unixSeconds(ev.Time), Plan: ev.Plan,
		MaxWorkers: ev.MaxWorkers, ProcessBudget: ev.ProcessBudget, Name: ev.Op, Func: ev.Func, NumTasks: ev.NumTasks,
		Block: ev.Block, TaskCreate: unixSeconds(ev.TaskCreate), FunctionStart: unixSeconds(ev.FunctionStart),
		FunctionEnd: unixSeconds(ev.FunctionEnd), TaskResult: unixSeconds(ev.TaskResult),
		ProjectedMem: ev.ProjectedMem, PeakAllocated: ev.PeakAllocated,
		PeakMeasuredMemStart: ev.PeakMeasuredMemStart, PeakMeasuredMemEnd: ev.PeakMeasuredMemEnd,
		Attempts: ev.Attempts, Backup: ev.Backup, Dropped: ev.Dropped,
	}
}
