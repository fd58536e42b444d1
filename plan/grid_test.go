package plan

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/cubego/cubego/zarr"
)

func TestRegularChunks(t *testing.T) {
	cases := []struct {
		n, c int
		want []int
	}{
		{0, 3, []int{0}},
		{0, 0, []int{0}},
		{5, 2, []int{2, 2, 1}},
		{4, 2, []int{2, 2}},
		{3, 10, []int{3}},
		{7, 7, []int{7}},
		{math.MaxInt, math.MaxInt, []int{math.MaxInt}},
	}
	for _, c := range cases {
		got, err := RegularChunks(c.n, c.c)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("RegularChunks(%d, %d) = %v, %v; want %v", c.n, c.c, got, err, c.want)
		}
	}
	// Refused before anything is allocated: 2**35 blocks would be 256 GiB.
	for _, c := range [][2]int{{1 << 35, 1}, {math.MaxInt, 1}, {MaxBlocks + 1, 1}, {5, 0}, {5, -1}, {-1, 1}} {
		got, err := RegularChunks(c[0], c[1])
		if !errors.Is(err, ErrValue) || got != nil {
			t.Errorf("RegularChunks(%d, %d) = %d blocks, %v; want an ErrValue", c[0], c[1], len(got), err)
		}
	}
	if got, err := RegularChunks(MaxBlocks, 1); err != nil || len(got) != MaxBlocks {
		t.Errorf("RegularChunks(MaxBlocks, 1): %d blocks, %v", len(got), err)
	}
}

func TestBlockCount(t *testing.T) {
	for _, c := range [][3]int{{0, 5, 1}, {5, 5, 1}, {5, 2, 3}, {6, 2, 3}, {math.MaxInt, 1, math.MaxInt}, {math.MaxInt, 2, 1 << 62}} {
		if got := BlockCount(c[0], c[1]); got != c[2] {
			t.Errorf("BlockCount(%d, %d) = %d, want %d", c[0], c[1], got, c[2])
		}
	}
}

func TestProdChecked(t *testing.T) {
	cases := []struct {
		xs   []int
		want int64
		ok   bool
	}{
		{nil, 1, true},
		{[]int{2, 3}, 6, true},
		{[]int{1 << 62, 100}, 0, false},
		{[]int{1 << 62, 0, 100}, 0, true},
		{[]int{1 << 31, 1 << 31}, 1 << 62, true},
		{[]int{1 << 31, 1 << 31, 2}, 0, false},
		{[]int{1 << 32, 1 << 31}, 0, false},
		{[]int{math.MaxInt64}, math.MaxInt64, true},
		{[]int{-1}, 0, false},
	}
	for _, c := range cases {
		got, ok := ProdChecked(c.xs)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("ProdChecked(%v) = %d, %v; want %d, %v", c.xs, got, ok, c.want, c.ok)
		}
	}
	if MulSat(1<<40, 1<<40) != math.MaxInt64 || MulSat(3, 4) != 12 || MulSat(0, math.MaxInt64) != 0 {
		t.Error("MulSat")
	}
}

func TestCheckShape(t *testing.T) {
	for _, c := range []struct {
		shape []int
		item  int
		want  string // "" for no error
	}{
		{[]int{2, 3}, 8, ""},
		{[]int{}, 8, ""},
		{[]int{1 << 62, 100}, 8, "the number of elements overflows int64"},
		{[]int{1<<63 - 1}, 8, "the size in bytes overflows int64"},
		{[]int{1<<63 - 1}, 1, ""},
		{[]int{1 << 62, 0}, 8, ""},
		{[]int{3, -1}, 8, "negative dimensions"},
	} {
		err := CheckShape(c.shape, c.item)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("CheckShape(%v, %d): %v", c.shape, c.item, err)
		case c.want != "" && (!errors.Is(err, ErrValue) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("CheckShape(%v, %d) = %v, want an ErrValue saying %q", c.shape, c.item, err, c.want)
		}
	}
}

func TestCheckGrid(t *testing.T) {
	ok := []struct {
		shape  []int
		chunks [][]int
	}{
		{[]int{5, 4}, [][]int{{2, 2, 1}, {4}}},
		{[]int{0}, [][]int{{0}}},
		{[]int{}, [][]int{}},
	}
	for _, c := range ok {
		if err := CheckGrid(c.shape, c.chunks, 8); err != nil {
			t.Errorf("CheckGrid(%v, %v): %v", c.shape, c.chunks, err)
		}
	}
	big := make([]int, MaxBlocks/2+1)
	for i := range big {
		big[i] = 1
	}
	bad := []struct {
		shape  []int
		chunks [][]int
		want   string
	}{
		{[]int{5}, [][]int{{2, 2}}, "sum to 4"},
		{[]int{5}, [][]int{{2, 4}}, "do not cover"},
		{[]int{5}, [][]int{{5, 0}}, "do not cover"},
		{[]int{5}, [][]int{{6, -1}}, "do not cover"},
		{[]int{5}, [][]int{{}}, "are empty"},
		{[]int{5}, [][]int{{5}, {1}}, "2 axes"},
		{[]int{1 << 62, 4}, [][]int{{1 << 62}, {4}}, "the number of elements overflows int64"},
		{[]int{len(big), len(big)}, [][]int{big, big}, "blocks along its axes together"},
		{manyAxes(0), manyChunks(0), "the number of blocks overflows int64"},
	}
	for _, c := range bad {
		err := CheckGrid(c.shape, c.chunks, 1)
		if !errors.Is(err, ErrValue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckGrid(%v, ...) = %v, want an ErrValue saying %q", c.shape, err, c.want)
		}
	}
}

// manyAxes is a shape of 17 axes, the first of length first and 16 of
// length 16: with blocks of 1, 16**16 blocks (more than int64 counts)
// listed in 257 sizes, although with first = 0 it has no element.
func manyAxes(first int) []int {
	s := []int{first}
	for range 16 {
		s = append(s, 16)
	}
	return s
}

func manyChunks(first int) [][]int {
	c := [][]int{{first}}
	for range 16 {
		c = append(c, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
	}
	return c
}

// TestNormalizeChunksHostile: chunkings too large to list, and shapes whose
// size overflows int64, are errors before anything is allocated (these
// once ran the process out of memory: issue #17 finding 1).
func TestNormalizeChunksHostile(t *testing.T) {
	cases := []struct {
		spec  any
		shape []int
		want  string
	}{
		{1, []int{1 << 35}, "shape (34359738368,) with chunks (1,) has 34359738368 blocks"},
		{1, []int{1 << 40}, "has 1099511627776 blocks"},
		{1, []int{1 << 33}, "more than the 4194304 an array may have"},
		{[]any{1 << 30, 1 << 30}, []int{1 << 62, 1 << 62}, "the number of elements overflows int64"},
		{"auto", []int{1 << 62, 100}, "the number of elements overflows int64"},
		{"auto", []int{1<<63 - 1}, "the size in bytes overflows int64"},
		{"auto", []int{1 << 50}, "blocks along its axes together"},
		{[]any{1, 1}, []int{MaxBlocks / 2, MaxBlocks/2 + 1}, "4194305 blocks"},
		{[]any{[]any{1 << 59, 1 << 59}}, []int{1 << 59}, "sum to more than"},
		{1, manyAxes(0), "the number of blocks overflows int64"},
	}
	for _, c := range cases {
		got, err := NormalizeChunks(c.spec, c.shape, 8, 0)
		if !errors.Is(err, ErrValue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NormalizeChunks(%v, %v) = %d axes, %v; want an ErrValue saying %q", c.spec, c.shape, len(got), err, c.want)
		}
	}
	// A grid of 10**12 blocks lists only 2*10**6 sizes: it is described.
	got, err := NormalizeChunks(1, []int{1_000_000, 1_000_000}, 1, 0)
	if err != nil || len(got[0]) != 1_000_000 || len(got[1]) != 1_000_000 {
		t.Errorf("a 10**6 x 10**6 grid: %v", err)
	}
	a := NewArray([]int{1_000_000, 1_000_000}, zarr.Uint8, got, nil)
	if a.NumTasks() != 1_000_000_000_000 {
		t.Errorf("NumTasks = %d", a.NumTasks())
	}
}
