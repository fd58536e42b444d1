package main

import (
	"encoding/json"
	"slices"
	"testing"
)

// expandRuns is chunkRuns' inverse, written as the plain loop.
func expandRuns(runs [][][2]int) [][]int {
	out := make([][]int, len(runs))
	for i, axis := range runs {
		out[i] = []int{}
		for _, r := range axis {
			for range r[1] {
				out[i] = append(out[i], r[0])
			}
		}
	}
	return out
}

func TestChunkRuns(t *testing.T) {
	cases := []struct {
		chunks [][]int
		want   string
	}{
		{[][]int{}, `[]`},                                            // 0-d
		{[][]int{{0}}, `[[[0,1]]]`},                                  // zero-length axis
		{[][]int{{5}}, `[[[5,1]]]`},                                  // one block
		{[][]int{{4, 4, 4, 1}, {3}}, `[[[4,3],[1,1]],[[3,1]]]`},      // regular, short last block
		{[][]int{{2, 4, 4, 1, 1, 4}}, `[[[2,1],[4,2],[1,2],[4,1]]]`}, // irregular
		{[][]int{{}}, `[[]]`},                                        // an axis with no blocks
	}
	for _, c := range cases {
		runs := chunkRuns(c.chunks)
		b, err := json.Marshal(runs)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("chunkRuns(%v) = %s, want %s", c.chunks, b, c.want)
		}
		back := expandRuns(runs)
		if len(back) != len(c.chunks) {
			t.Fatalf("expand(chunkRuns(%v)) has %d axes", c.chunks, len(back))
		}
		for i := range back {
			if !slices.Equal(back[i], c.chunks[i]) && !(len(back[i]) == 0 && len(c.chunks[i]) == 0) {
				t.Errorf("expand(chunkRuns(%v))[%d] = %v", c.chunks, i, back[i])
			}
		}
	}
}

// TestOpChunkRuns: cg_op's optional "chunk_runs" argument describes the
// result's chunks as runs instead of lists, and only when asked for.
func TestOpChunkRuns(t *testing.T) {
	const args = `{"shape": [1000000, 10], "dtype": "float64", "chunks": [1, 3], "fill_value": {"scalar": 1, "kind": "float"}`
	for _, tc := range []struct {
		extra   string
		runs    bool
		wantErr bool
	}{
		{``, false, false},
		{`, "chunk_runs": false`, false, false},
		{`, "chunk_runs": true`, true, false},
		{`, "chunk_runs": 1`, false, true},
	} {
		info, err := runOp("full", args+tc.extra+`}`, nil)
		if tc.wantErr {
			if err == nil {
				t.Errorf("%s: no error", tc.extra)
				releaseArray(info.Handle)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.extra, err)
		}
		b, err := json.Marshal(info)
		releaseArray(info.Handle)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		_, hasChunks := m["chunks"]
		runs, hasRuns := m["chunk_runs"]
		if hasChunks == tc.runs || hasRuns != tc.runs {
			t.Errorf("%s: keys %v", tc.extra, m)
		}
		if tc.runs && string(runs) != `[[[1,1000000]],[[3,3],[1,1]]]` {
			t.Errorf("%s: chunk_runs %s", tc.extra, runs)
		}
		if !tc.runs && len(b) < 2_000_000 {
			t.Errorf("%s: the explicit chunks take only %d bytes", tc.extra, len(b))
		}
	}
}

// A 0-d array keeps "chunks": [] when runs are not asked for, and has
// "chunk_runs": [] when they are.
func TestOpChunkRunsScalar(t *testing.T) {
	for _, extra := range []string{``, `, "chunk_runs": true`} {
		info, err := runOp("full", `{"shape": [], "dtype": "int32", "fill_value": {"scalar": 1, "kind": "int"}`+extra+`}`, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(info)
		releaseArray(info.Handle)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		key := "chunks"
		if extra != "" {
			key = "chunk_runs"
		}
		if string(m[key]) != `[]` {
			t.Errorf("%q: %s = %s in %s", extra, key, m[key], b)
		}
	}
}

// cg_python_op's chunks take, per axis, a list of block sizes or one block
// size; anything else is an error naming the axis.
func TestPythonOpChunks(t *testing.T) {
	n := func(s string) json.Number { return json.Number(s) }
	got, err := pythonOpChunks([]any{n("3"), []any{n("5"), n("5"), n("2")}}, []int{10, 12}, 8)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]int{{3, 3, 3, 1}, {5, 5, 2}}; !slices.EqualFunc(got, want, slices.Equal[[]int]) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got, err := pythonOpChunks([]any{[]any{n("0")}}, []int{0}, 8); err != nil || len(got) != 1 || !slices.Equal(got[0], []int{0}) {
		t.Errorf("zero-length axis: %v, %v", got, err)
	}
	if got, err := pythonOpChunks([]any{}, []int{}, 8); err != nil || len(got) != 0 {
		t.Errorf("0-d: %v, %v", got, err)
	}
	for _, bad := range [][]any{
		{n("3")},                // one axis short
		{"auto", n("5")},        // not a size
		{nil, n("5")},           // not a size
		{n("3"), []any{n("5")}}, // does not sum to the axis
		{n("1.5"), n("5")},      // not an integer
		{n("0"), n("5")},        // zero for a non-empty axis
	} {
		if _, err := pythonOpChunks(bad, []int{10, 12}, 8); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
