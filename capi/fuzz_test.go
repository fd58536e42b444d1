package main

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

// The C ABI fuzz target drives the Go functions behind the exports
// (runOp for cg_op, releaseArray for cg_array_release, arraysToJSON and
// arraysFromJSON for the pickling calls, planOf for cg_plan,
// computeOptions for cg_compute_start's options) with a random sequence
// of calls, arguments and handles: live ones, released ones, 0 and
// numbers that never were handles. Every call returns normally (an export
// would turn a panic into CG_INTERNAL: here it fails the target) and
// every error maps to a status other than CG_INTERNAL, so Python raises a
// documented exception type.

// fuzzOps are the operations the target calls: all of cg_op's but the
// ones that touch storage (from_zarr, to_zarr, store_into).
func fuzzOps() []string {
	var names []string
	for name := range opTable {
		switch name {
		case "from_zarr", "to_zarr", "store_into":
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// fuzzArgs are seed arguments: valid ones for the common operations and
// hostile sizes (issue #17).
var fuzzArgs = []string{
	`{"shape": [10, 6], "dtype": "float64", "chunks": 4, "fill_value": {"scalar": 1.5, "kind": "float"}}`,
	`{"shape": [8], "dtype": "int32", "chunks": [3], "fill_value": {"scalar": 7, "kind": "int"}}`,
	`{"start": 0, "stop": 12, "step": 1, "chunks": 5}`,
	`{"shape": [10, 6], "dtype": "float64", "chunks": [[3, 3, 4], 2], "chunk_runs": true, "fill_value": {"scalar": 0, "kind": "float"}}`,
	`{"start": 0, "stop": 12, "step": 1, "chunks": 5, "chunk_runs": "yes"}`,
	`{"shape": [4, 4], "dtype": "float32", "seed": 3, "chunks": "auto"}`,
	`{"func": "add", "operands": [{"array": 0}, {"array": 1}]}`,
	`{"func": "sum", "axis": [0], "keepdims": false}`,
	`{"key": [{"slice": [1, null, 2]}, {"int": 0}]}`,
	`{"chunks": [2, -1]}`,
	`{"axes": [1, 0]}`,
	`{"shape": [2, 10, 6]}`,
	`{"axis": 0}`,
	`{"shape": [1099511627776], "dtype": "float64", "chunks": [1], "fill_value": {"scalar": 1, "kind": "float"}}`,
	`{"shape": [4611686018427387904, 4611686018427387904], "dtype": "float64", "chunks": [1073741824, 1073741824], "fill_value": {"scalar": 1, "kind": "float"}}`,
	`{"shape": [4611686018427387904, 100], "dtype": "float64", "chunks": "auto", "fill_value": {"scalar": 1, "kind": "float"}}`,
	`{"start": 0, "stop": 9223372036854775807, "step": 1, "chunks": "auto"}`,
	`{"shape": [1180591620717411303424], "dtype": "float64"}`,
	`{"optimize_graph": false, "dot": true}`,
	`{"executor": "threads", "max_workers": 2, "retries": 1, "resume": true, "runner": "remote"}`,
	`{"max_workers": 0, "retries": -1, "batch_size": "x"}`,
}

func FuzzCABI(f *testing.F) {
	for i, a := range fuzzArgs {
		b := fuzzArgs[(i+1)%len(fuzzArgs)]
		f.Add([]byte{0, byte(i), 0, 1, byte(i), 0, 5, 0, 3, 0, 2, 0, 4}, a, b)
		f.Add([]byte{1, byte(i), 1, 0, 2, 2, 2, 7, 6}, a, b)
	}
	names := fuzzOps()
	f.Fuzz(func(t *testing.T, script []byte, argsA, argsB string) {
		var live, dead []uint64
		defer func() {
			for _, h := range live {
				if err := releaseArray(h); err != nil {
					t.Errorf("releasing live handle %d: %v", h, err)
				}
			}
		}()
		next := func() byte {
			if len(script) == 0 {
				return 0
			}
			b := script[0]
			script = script[1:]
			return b
		}
		// handle picks a live handle, a released one, 0 or a number.
		handle := func() uint64 {
			switch k := next(); {
			case k < 160 && len(live) > 0:
				return live[int(k)%len(live)]
			case k < 200 && len(dead) > 0:
				return dead[int(k)%len(dead)]
			case k < 220:
				return 0
			default:
				var b [8]byte
				for i := range b {
					b[i] = next()
				}
				return binary.LittleEndian.Uint64(b[:])
			}
		}
		handles := func() []uint64 {
			n := int(next() % 4)
			hs := make([]uint64, n)
			for i := range hs {
				hs[i] = handle()
			}
			return hs
		}
		check := func(call string, err error) {
			t.Helper()
			if err != nil && statusOf(err) == statusInternal {
				t.Fatalf("%s: an error Python would see as an internal error: %v", call, err)
			}
		}
		for step := 0; step < 12 && len(script) > 0; step++ {
			args := argsA
			if next()%2 == 1 {
				args = argsB
			}
			switch next() % 7 {
			case 0:
				name := names[int(next())%len(names)]
				info, err := runOp(name, args, handles())
				check("cg_op "+name, err)
				if err == nil {
					live = append(live, info.Handle)
				}
			case 1:
				h := handle()
				wasLive := slices.Contains(live, h)
				err := releaseArray(h)
				check("cg_array_release", err)
				if wasLive != (err == nil) && h != 0 {
					t.Fatalf("releasing handle %d (live: %v): %v", h, wasLive, err)
				}
				if err == nil && wasLive {
					live = slices.DeleteFunc(live, func(x uint64) bool { return x == h })
					dead = append(dead, h)
				}
			case 2:
				b, err := arraysToJSON(handles())
				check("cg_arrays_to_json", err)
				if err == nil {
					infos, err := arraysFromJSON(b)
					if err != nil {
						t.Fatalf("cg_arrays_from_json of cg_arrays_to_json's graph: %v", err)
					}
					for _, info := range infos {
						live = append(live, info.Handle)
					}
				}
			case 3:
				infos, err := arraysFromJSON([]byte(args))
				check("cg_arrays_from_json", err)
				for _, info := range infos {
					live = append(live, info.Handle)
				}
			case 4:
				_, err := planOf(handles(), args)
				check("cg_plan", err)
			case 5:
				a, err := parseArgs(args)
				check("parseArgs", err)
				if err == nil {
					_, err = computeOptions(a)
					check("compute options", err)
				}
			case 6:
				_, err := lookupArray(handle())
				check("array handle", err)
			}
		}
		for _, h := range live {
			if _, err := lookupArray(h); err != nil {
				t.Fatalf("live handle %d: %v", h, err)
			}
		}
	})
}

// TestHostileSizes: the sizes of issue #17 finding 1 through cg_op are
// value errors naming the problem, never a panic or an out-of-memory
// abort.
func TestHostileSizes(t *testing.T) {
	full := func(shape string, chunks string) string {
		return `{"shape": ` + shape + `, "dtype": "float64", "chunks": ` + chunks + `, "fill_value": {"scalar": 1, "kind": "float"}}`
	}
	cases := []struct {
		op, args, want string
	}{
		{"full", full("[1099511627776]", "[1]"), "blocks"},
		{"full", full("[8589934592]", "[1]"), "blocks"},
		{"full", full("[34359738368]", "[1]"), "blocks"},
		{"full", full("[4611686018427387904, 4611686018427387904]", "[1073741824, 1073741824]"), "overflows int64"},
		{"full", full("[4611686018427387904, 100]", `"auto"`), "overflows int64"},
		{"full", full("[1180591620717411303424]", `"auto"`), "overflows int64"},
		{"arange", `{"start": 0, "stop": 9223372036854775807, "chunks": "auto"}`, "overflows int64"},
		{"arange", `{"start": 0, "stop": 4611686018427387904, "chunks": "auto"}`, "overflows int64"},
	}
	for _, c := range cases {
		_, err := runOp(c.op, c.args, nil)
		if err == nil || statusOf(err) != statusValue || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v (status %d), want a value error saying %q", c.op, c.args, err, statusOf(err), c.want)
		}
	}
	// A grid of 10**12 blocks is described (its lists have 2*10**6 sizes).
	info, err := runOp("full", full("[1000000, 1000000]", "[1, 1]"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseArray(info.Handle)
	p, err := planOf([]uint64{info.Handle}, "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(p)
	if len(b) == 0 {
		t.Fatal("empty plan")
	}
}

func TestBadHandles(t *testing.T) {
	info, err := runOp("full", `{"shape": [3], "dtype": "int64", "fill_value": {"scalar": 1, "kind": "int"}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := info.Handle
	for _, bad := range []uint64{0, math.MaxUint64, h + 1_000_000} {
		if _, err := lookupArray(bad); statusOf(err) != statusValue {
			t.Errorf("lookupArray(%d): %v", bad, err)
		}
		if _, err := runOp("astype", `{"dtype": "float64"}`, []uint64{bad}); statusOf(err) != statusValue {
			t.Errorf("cg_op with handle %d: %v", bad, err)
		}
	}
	if err := releaseArray(h); err != nil {
		t.Fatal(err)
	}
	// Released: an error, twice, not cgo's panic.
	for range 2 {
		if err := releaseArray(h); statusOf(err) != statusValue || !strings.Contains(err.Error(), "invalid array handle") {
			t.Errorf("releasing a released handle: %v", err)
		}
	}
	if err := releaseArray(0); err != nil {
		t.Errorf("releasing handle 0: %v", err)
	}
}
