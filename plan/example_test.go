package plan_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
)

// Each op of a plan has a task count and a projected memory per task,
// known before anything runs.
func ExamplePlan_Stats() {
	// Building and inspecting a plan does no I/O. An empty WorkDir is the
	// system temporary directory.
	spec := &plan.Spec{AllowedMem: 100_000_000, ReservedMem: 10_000_000}
	// 2000×2000 float64 in 500×500 blocks of 2 MB each.
	x, err := ops.Random([]int{2000, 2000}, ops.Float64, 1, []int{500, 500}, spec)
	if err != nil {
		log.Fatal(err)
	}
	y, err := ops.Elemwise("negative", ops.Operand{Array: x})
	if err != nil {
		log.Fatal(err)
	}
	m, err := ops.Reduce("mean", y, []int{0}, false, nil, 0)
	if err != nil {
		log.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{m})
	if err != nil {
		log.Fatal(err)
	}
	st := p.Stats()
	for _, o := range st.Ops {
		fmt.Printf("%-8s %2d tasks, %s per task\n", o.Func, o.NumTasks, plan.FormatBytes(o.ProjectedMem))
	}
	fmt.Println("max", plan.FormatBytes(st.MaxProjectedMem), "of", plan.FormatBytes(st.AllowedMem), "allowed")
	// Output:
	// negative 16 tasks, 16.0 MB per task
	// mean      4 tasks, 18.0 MB per task
	// max 18.0 MB of 100.0 MB allowed
}

// Validate refuses a plan with an op projected over allowed_mem, naming
// the projection, the budget and what to change; smaller chunks fix it.
func ExamplePlan_Validate() {
	spec := &plan.Spec{AllowedMem: 20_000_000} // 20 MB per task
	for _, chunks := range [][]int{{2000, 2000}, {500, 500}} {
		x, err := ops.Random([]int{2000, 2000}, ops.Float64, 1, chunks, spec)
		if err != nil {
			log.Fatal(err)
		}
		y, err := ops.Elemwise("sqrt", ops.Operand{Array: x})
		if err != nil {
			log.Fatal(err)
		}
		p, err := plan.Build([]*plan.Array{y})
		if err != nil {
			log.Fatal(err)
		}
		err = p.Validate()
		var mem *plan.MemoryExceededError
		if errors.As(err, &mem) {
			fmt.Println(chunks, "refused:", plan.FormatBytes(mem.Projected), ">", plan.FormatBytes(mem.Allowed))
			fmt.Println(mem.Hint)
		} else {
			fmt.Println(chunks, "fits:", plan.FormatBytes(p.MaxProjectedMem()), "per task", err)
		}
	}
	// Output:
	// [2000 2000] refused: 96.0 MB > 20.0 MB
	// use smaller chunks (its largest chunk is 32.0 MB) or increase allowed_mem
	// [500 500] fits: 6.0 MB per task <nil>
}

// Fuse merges chains of blockwise ops into one op that evaluates the whole
// expression per block, within allowed_mem; engine.Execute runs the plan
// as given, so call Fuse first.
func ExamplePlan_Fuse() {
	spec := &plan.Spec{AllowedMem: 100_000_000}
	x, err := ops.Random([]int{1000}, ops.Float64, 1, 100, spec)
	if err != nil {
		log.Fatal(err)
	}
	y, err := ops.Elemwise("exp", ops.Operand{Array: x})
	if err != nil {
		log.Fatal(err)
	}
	y, err = ops.Elemwise("log1p", ops.Operand{Array: y})
	if err != nil {
		log.Fatal(err)
	}
	y, err = ops.Elemwise("multiply", ops.Operand{Array: y}, ops.Operand{Array: x})
	if err != nil {
		log.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{y})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("ops:", len(p.Ops), "intermediates:", p.Stats().NumIntermediateArrays)
	p.Fuse()
	fmt.Println("ops:", len(p.Ops), "intermediates:", p.Stats().NumIntermediateArrays)
	// Output:
	// ops: 3 intermediates: 2
	// ops: 1 intermediates: 0
}
