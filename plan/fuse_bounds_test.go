package plan

import "testing"

func TestBlocksOverlapped(t *testing.T) {
	off := Offsets([]int{9, 10, 10, 10}) // element offsets 0 9 19 29 39
	for _, c := range []struct{ start, step, count, want int }{
		{0, 1, 9, 1},   // the first block exactly
		{0, 1, 10, 2},  // one element into the second
		{9, 1, 10, 1},  // the second block exactly
		{8, 1, 12, 3},  // last of the first to first of the third
		{30, -1, 5, 2}, // backwards across a boundary
		{-3, 1, 5, 1},  // clipped below
		{35, 1, 10, 1}, // clipped above
		{40, 1, 3, 0},  // outside
		{0, 1, 0, 0},   // empty
	} {
		if got := blocksOverlapped(off, c.start, c.step, c.count); got != c.want {
			t.Errorf("blocksOverlapped(start %d, step %d, count %d) = %d, want %d", c.start, c.step, c.count, got, c.want)
		}
	}
}
