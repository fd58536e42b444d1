package plan_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cubego/cubego/plan"
)

// TestUnmarshalRefusesInconsistentGraphs: graphs a hostile or corrupt
// pickle could carry are plan.ErrValue errors naming the problem, not
// panics later (issue #17).
func TestUnmarshalRefusesInconsistentGraphs(t *testing.T) {
	array := func(fields string) string {
		return `{"version": 1, "arrays": [{"name": "a", "spec": {"allowed_mem": 1000000}, "op": -1, ` + fields + `}], "ops": [], "outputs": [0]}`
	}
	withOp := func(op string) string {
		return `{"version": 1, "arrays": [
			{"name": "a", "shape": [4], "dtype": "float64", "chunks": [[2, 2]], "spec": {"allowed_mem": 1000000}, "op": -1,
			 "generator": {"kind": "full", "value": {"kind": "f", "f": 1}}},
			{"name": "b", "shape": [4], "dtype": "float64", "chunks": [[2, 2]], "spec": {"allowed_mem": 1000000}, "op": 0}],
			"ops": [` + op + `], "outputs": [1]}`
	}
	cases := []struct{ graph, want string }{
		{array(`"shape": [34359738368], "dtype": "uint8", "chunks": [[1]]`), "sum to 1"},
		{array(`"shape": [4], "dtype": "uint8", "chunks": [[2, 3]]`), "do not cover"},
		{array(`"shape": [4611686018427387904, 100], "dtype": "uint8", "chunks": [[4611686018427387904], [100]]`), "overflows int64"},
		{array(`"shape": [2, 2], "dtype": "int64", "chunks": [[2], [2]], "generator": {"kind": "arange"}`), "arange generator"},
		{array(`"shape": [2], "dtype": "int64", "chunks": [[2]], "generator": {"kind": "literal", "data": "AAAA"}`), "a literal of 3 bytes"},
		{array(`"shape": [2], "dtype": "int64", "chunks": [[2]], "generator": {"kind": "random"}`), "random generator"},
		{array(`"shape": [2], "dtype": "int64", "chunks": [[2]], "generator": {"kind": "nonsense"}`), "unknown generator"},
		{withOp(`{"name": "op", "func": "f", "kind": "blockwise", "inputs": [{"array": 0, "dims": [{"kind": 0, "out_dim": 0, "step": 1}]}],
			"kernel": {"core": "map", "exprs": [null]}}`), "a null expression"},
		{withOp(`{"name": "op", "func": "f", "kind": "blockwise", "inputs": [{"array": 0, "dims": [{"kind": 0, "out_dim": 0, "step": 1}]}],
			"kernel": {"core": "map", "exprs": [{"op": "input", "dtype": "float64"}]}, "task_blocks": [0]}`), "task blocks"},
	}
	for _, c := range cases {
		_, err := plan.Unmarshal([]byte(c.graph))
		if !errors.Is(err, plan.ErrValue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Unmarshal: %v; want a plan.ErrValue saying %q\n%s", err, c.want, c.graph)
		}
	}
}
