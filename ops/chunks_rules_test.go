package ops

import (
	"errors"
	"reflect"
	"testing"

	"github.com/cubego/cubego/plan"
)

// Result chunks that follow Cubed's rules (issue #18).

func TestStridedSliceChunks(t *testing.T) {
	spec := plan.DefaultSpec()
	x, err := Arange(0, 20, 1, Int64, []any{5}, spec)
	if err != nil {
		t.Fatal(err)
	}
	n := func(v int) *int { return &v }
	cases := []struct {
		start, stop, step *int
		want              []int
	}{
		{n(3), n(14), n(2), []int{4, 2}},    // Cubed: arange(20, chunks=5)[3:14:2]
		{nil, nil, n(7), []int{3}},          // a step over the chunk size: blocks of the chunk size
		{n(1), nil, n(3), []int{3, 3, 1}},   // 5 - 5 % 3
		{nil, nil, n(-2), []int{4, 4, 2}},   // negative steps by |step|
		{n(3), nil, nil, []int{2, 5, 5, 5}}, // step 1 keeps the pieces of the input's blocks
	}
	for _, c := range cases {
		y, err := GetItem(x, []Index{{Kind: IndexSlice, Start: c.start, Stop: c.stop, Step: c.step}})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(y.Chunks[0], c.want) {
			t.Errorf("slice %v:%v:%v: chunks %v, want %v", c.start, c.stop, c.step, y.Chunks[0], c.want)
		}
	}
}

func TestBroadcastToChunks(t *testing.T) {
	spec := plan.DefaultSpec()
	x, _ := Full([]int{5, 1, 6}, Float64, plan.Scalar{Kind: 'i'}, []any{2, 1, 4}, spec)
	y, err := BroadcastToChunks(x, []int{5, 4, 6}, []any{[]any{2, 2, 1}, []any{1, 1, 1, 1}, []any{4, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]int{{2, 2, 1}, {1, 1, 1, 1}, {4, 2}}; !reflect.DeepEqual(y.Chunks, want) {
		t.Errorf("chunks %v, want %v", y.Chunks, want)
	}
	if same, _ := BroadcastToChunks(x, []int{5, 1, 6}, []any{2, 1, 4}); same != x {
		t.Error("broadcasting to the array's own shape and chunks must return it")
	}
	if _, err := BroadcastToChunks(x, []int{5, 4, 6}, []any{2, 0, 4}); !errors.Is(err, plan.ErrValue) {
		t.Errorf("zero chunks of a non-empty axis: %v", err)
	}
	if _, err := BroadcastToChunks(x, []int{5, 4, 7}, nil); !errors.Is(err, plan.ErrValue) {
		t.Errorf("an impossible broadcast: %v", err)
	}
}

func TestConcatChunks(t *testing.T) {
	spec := plan.DefaultSpec()
	a, _ := Full([]int{5}, Float64, plan.Scalar{Kind: 'i'}, []any{2}, spec)
	b, _ := Full([]int{7}, Float32, plan.Scalar{Kind: 'i'}, []any{3}, spec)
	kept, err := Concat([]*plan.Array{a, b}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]int{{2, 2, 1, 3, 3, 1}}; !reflect.DeepEqual(kept.Chunks, want) {
		t.Errorf("default chunks %v, want %v", kept.Chunks, want)
	}
	given, err := ConcatChunks([]*plan.Array{a, b}, 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]int{{4, 4, 4}}; !reflect.DeepEqual(given.Chunks, want) || given.DType != Float64 {
		t.Errorf("given chunks %v (%s), want %v float64", given.Chunks, given.DType, want)
	}
	if _, err := ConcatChunks([]*plan.Array{a, b}, 0, []any{[]any{5, 5}}); !errors.Is(err, plan.ErrValue) {
		t.Errorf("chunks not summing to the length: %v", err)
	}
}

func TestZeroChunkOfAZeroLengthAxis(t *testing.T) {
	spec := plan.DefaultSpec()
	x, err := Full([]int{0, 2}, Float64, plan.Scalar{Kind: 'i'}, []any{0, 2}, spec)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]int{{0}, {2}}; !reflect.DeepEqual(x.Chunks, want) {
		t.Errorf("chunks %v, want %v", x.Chunks, want)
	}
	if _, err := Full([]int{3, 2}, Float64, plan.Scalar{Kind: 'i'}, []any{0, 2}, spec); !errors.Is(err, plan.ErrValue) {
		t.Errorf("a zero chunk of a non-empty axis: %v", err)
	}
}
