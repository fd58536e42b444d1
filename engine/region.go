package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
	"golang.org/x/sync/errgroup"
)

// readRegion fills dst[:region bytes] (C order, the region's shape) with
// region r of array a. Virtual arrays generate the region; stored arrays
// assemble it from the chunks it overlaps, one chunk at a time. When the
// region is exactly one block and cap(dst) holds a whole stored chunk, the
// chunk is read straight into dst and compacted in place.
func (j *job) readRegion(ctx context.Context, alloc ops.Allocator, a *plan.Array, r plan.Region, dst []byte) error {
	if r.Size() == 0 {
		return nil
	}
	if a.Virtual() {
		return ops.GenerateRegion(a, r, dst[:int(r.Size())*a.DType.Size()])
	}
	z, err := j.storage.array(ctx, a)
	if err != nil {
		return err
	}
	elem := a.DType.Size()
	chunkShape := z.ChunkShape()
	chunkBytes := z.ChunkBytes()
	chunkStrides := ops.CStrides(chunkShape)
	n := len(r.Count)

	pieces, offs, ok := regionPieces(a, r)
	if !ok {
		return fmt.Errorf("engine: region %v of %s lies outside the array", r, a)
	}
	single := true
	for d := range n {
		p := pieces[d]
		single = single && len(p) == 1 && r.Step[d] == 1 && p[0].lo == 0 && p[0].hi == r.Count[d]-1 &&
			r.Start[d] == offs[d][p[0].block] && r.Count[d] == a.Chunks[d][p[0].block]
	}
	coords := make([]int, n)
	if single && cap(dst) >= chunkBytes {
		for d := range n {
			coords[d] = pieces[d][0].block
		}
		buf := dst[:chunkBytes]
		if err := j.readChunk(ctx, z, a, coords, buf); err != nil {
			return err
		}
		// Compact the block to the region's C order. Every destination
		// index is at most its source index, so copying forward is safe.
		ops.StridedCopy(elem, r.Count, buf, 0, ops.CStrides(r.Count), buf, 0, chunkStrides)
		return nil
	}
	// scratch is where box reads put the gaps they read through (any length
	// serves, zarr.BoxReadGap bytes read each gap whole) and where a chunk
	// read whole goes before its part is copied out: it grows to a chunk
	// the first time one is.
	var scratch []byte
	scratchOf := func(n int) []byte {
		if len(scratch) < n {
			alloc.Free(scratch)
			scratch = alloc.Allocate(n)
		}
		return scratch
	}
	defer func() { alloc.Free(scratch) }()
	dstStrides := ops.CStrides(r.Count)
	idx := make([]int, n)
	count := make([]int, n)
	srcStrides := make([]int, n)
	unitSteps := true
	for d := range n {
		srcStrides[d] = r.Step[d] * chunkStrides[d]
		unitSteps = unitSteps && r.Step[d] == 1
	}
	boxAt := make([]int, n)
	// Whole chunks read directly (j.direct) go straight into their slab of
	// dst, concurrently with the other reads of the region.
	var direct errgroup.Group
	for {
		srcOff, dstOff := 0, 0
		for d := range n {
			p := pieces[d][idx[d]]
			coords[d] = p.block
			count[d] = p.hi - p.lo + 1
			first := r.Start[d] + r.Step[d]*p.lo
			srcOff += (first - offs[d][p.block]) * chunkStrides[d]
			dstOff += p.lo * dstStrides[d]
		}
		read := false
		if j.readsDirect(ctx, a) && unitSteps && wholeChunk(pieces, idx, chunkShape) && slabOf(count, r.Count) {
			slab := dst[dstOff*elem : dstOff*elem+chunkBytes]
			c := slices.Clone(coords)
			direct.Go(func() error { return j.readChunk(ctx, z, a, c, slab) })
			read = true
		}
		// A piece that is not the whole chunk reads just its bytes when the
		// chunk is stored raw (W6's a[1:, 1:]: three of the four chunks
		// under a block give it one row, one column, one element).
		if !read && unitSteps && !wholeChunk(pieces, idx, chunkShape) {
			var err error
			read, err = z.ReadChunkBox(ctx, coords, boxStart(r, pieces, idx, offs, boxAt), count, dst, dstOff, dstStrides,
				scratchOf(min(chunkBytes, zarr.BoxReadGap)))
			if err != nil {
				_ = direct.Wait() // nothing may still write into dst
				return err
			}
		}
		if !read {
			if err := z.ReadChunk(ctx, coords, scratchOf(chunkBytes)); err != nil {
				_ = direct.Wait() // nothing may still write into dst
				return err
			}
			ops.StridedCopy(elem, count, dst, dstOff, dstStrides, scratch, srcOff, srcStrides)
		}
		d := n - 1
		for ; d >= 0; d-- {
			idx[d]++
			if idx[d] < len(pieces[d]) {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return direct.Wait()
		}
	}
}

// slabOf reports whether a block of extents count is one contiguous run
// of a C-ordered region of extents region: it spans the region along
// every dimension but the first.
func slabOf(count, region []int) bool {
	for d := 1; d < len(count); d++ {
		if count[d] != region[d] {
			return false
		}
	}
	return true
}

// readChunk reads the stored chunk at coords of a (opened as z) into dst,
// ChunkBytes bytes: directly, bypassing the page cache, when a is read so
// (j.direct) and the store can (zarr.Array.ReadChunkDirect), else as
// usual.
func (j *job) readChunk(ctx context.Context, z *zarr.Array, a *plan.Array, coords []int, dst []byte) error {
	if j.readsDirect(ctx, a) {
		if ok, err := z.ReadChunkDirect(ctx, coords, dst); ok || err != nil {
			if directHook != nil && ok {
				directHook(a)
			}
			return err
		}
	}
	return z.ReadChunk(ctx, coords, dst)
}

// directHook, when set (by tests), is called with the array of each chunk
// read directly, from the reading goroutines.
var directHook func(a *plan.Array)

// minMapBytes is the smallest chunk mapRegion maps: below it, copying the
// chunk out of the page cache costs less than mapping it (a mapping, its
// page tables and its unmapping cost a few microseconds; 256 KiB copy in
// about 25).
var minMapBytes = 256 << 10

// mapRegion returns region r of stored array a as a read-only mapping of
// the one stored chunk holding it (zarr.Array.MapChunk), registered with
// ta, whose Free or freeAll unmaps it, instead of reading it: no copy out
// of the page cache. It declines (ok false: read the region) unless r is
// exactly one block of a, unit steps, that lies at the start of its chunk
// in C order (every dimension but the first whole: an edge block short
// along the first dimension is a prefix of its chunk, others need
// compacting), and the chunk can be mapped (raw, on a local file, present
// and whole). The returned slice is the whole chunk; the region is its
// first r.Size() elements.
func (j *job) mapRegion(ctx context.Context, ta *taskAllocator, a *plan.Array, r plan.Region) ([]byte, bool) {
	if r.Size() == 0 || a.Virtual() || j.readsDirect(ctx, a) {
		return nil, false
	}
	z, err := j.storage.array(ctx, a)
	if err != nil || z.ChunkBytes() < minMapBytes {
		return nil, false
	}
	chunkShape := z.ChunkShape()
	n := len(r.Count)
	if len(chunkShape) != n {
		return nil, false
	}
	for d := 1; d < n; d++ {
		if r.Count[d] != chunkShape[d] {
			return nil, false
		}
	}
	pieces, offs, ok := regionPieces(a, r)
	if !ok {
		return nil, false
	}
	coords := make([]int, n)
	for d := range n {
		p := pieces[d]
		if len(p) != 1 || r.Step[d] != 1 || p[0].lo != 0 || p[0].hi != r.Count[d]-1 ||
			r.Start[d] != offs[d][p[0].block] || r.Count[d] != a.Chunks[d][p[0].block] {
			return nil, false
		}
		coords[d] = p[0].block
	}
	b, unmap, ok := z.MapChunk(ctx, coords)
	if !ok {
		return nil, false
	}
	ta.adopt(b, unmap)
	if mapHook != nil {
		mapHook(a)
	}
	return b, true
}

// mapHook, when set (by tests), is called with the array of each chunk
// mapRegion maps, from the tasks' goroutines.
var mapHook func(a *plan.Array)

// piece is the part of a region inside one block along one dimension: the
// block and the range [lo, hi] of region indices in it.
type piece struct{ block, lo, hi int }

// regionPieces returns, per dimension, the blocks of a that region r
// touches, each with the range of region indices inside it, and the
// blocks' element offsets; ok is false when r has no element in a along
// some dimension. Only the blocks between the region's first and last
// index can hold any of it; the others are not looked at.
func regionPieces(a *plan.Array, r plan.Region) (pieces [][]piece, offs [][]int, ok bool) {
	n := len(r.Count)
	pieces = make([][]piece, n)
	offs = make([][]int, n)
	for d := range n {
		off := a.ChunkOffsets(d)
		offs[d] = off
		first, last := r.Start[d], r.Start[d]+r.Step[d]*(r.Count[d]-1)
		first, last = max(min(first, last), 0), min(max(first, last), off[len(off)-1]-1)
		if first > last {
			return nil, nil, false
		}
		for b := a.BlockOf(d, first); b <= a.BlockOf(d, last); b++ {
			if lo, hi := indexRange(r.Start[d], r.Step[d], r.Count[d], off[b], off[b+1]); lo <= hi {
				pieces[d] = append(pieces[d], piece{b, lo, hi})
			}
		}
		if len(pieces[d]) == 0 {
			return nil, nil, false
		}
	}
	return pieces, offs, true
}

// wholeChunk reports whether the pieces at idx (one per dimension, unit
// steps) cover their whole chunk.
func wholeChunk(pieces [][]piece, idx, chunkShape []int) bool {
	for d, p := range pieces {
		if p[idx[d]].hi-p[idx[d]].lo+1 != chunkShape[d] {
			return false
		}
	}
	return true
}

// boxStart returns, in at, the first element of the pieces at idx within
// their chunk (unit steps).
func boxStart(r plan.Region, pieces [][]piece, idx []int, offs [][]int, at []int) []int {
	for d, p := range pieces {
		q := p[idx[d]]
		at[d] = r.Start[d] + q.lo - offs[d][q.block]
	}
	return at
}

// prefetchRegion asks the store of a local stored array to read the
// chunks region r of a overlaps into the page cache (zarr.Prefetcher), so
// that readRegion finds them there. It holds no memory of the process's;
// on a store that cannot prefetch it does nothing. Errors are dropped: the
// read reports them.
func (j *job) prefetchRegion(ctx context.Context, a *plan.Array, r plan.Region) {
	if r.Size() == 0 || a.Virtual() || j.readsDirect(ctx, a) {
		return
	}
	z, err := j.storage.array(ctx, a)
	if err != nil {
		return
	}
	if _, ok := z.Store().(zarr.Prefetcher); !ok {
		return
	}
	pieces, offs, ok := regionPieces(a, r)
	if !ok {
		return
	}
	n := len(r.Count)
	unitSteps := true
	for d := range n {
		unitSteps = unitSteps && r.Step[d] == 1
	}
	idx := make([]int, n)
	coords := make([]int, n)
	count := make([]int, n)
	at := make([]int, n)
	for {
		if ctx.Err() != nil {
			return
		}
		for d := range n {
			p := pieces[d][idx[d]]
			coords[d], count[d] = p.block, p.hi-p.lo+1
		}
		// The part of the chunk the read will take (readRegion reads just
		// that of a raw chunk), else the whole chunk.
		if unitSteps {
			z.PrefetchChunkBox(ctx, coords, boxStart(r, pieces, idx, offs, at), count)
		} else {
			z.PrefetchChunk(ctx, coords)
		}
		d := n - 1
		for ; d >= 0; d-- {
			idx[d]++
			if idx[d] < len(pieces[d]) {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// indexRange returns the range [lo, hi] of i < count with start+step*i in
// [bs, be) (lo > hi when there is none).
func indexRange(start, step, count, bs, be int) (int, int) {
	var lo, hi int
	if step > 0 {
		lo = ceilDiv(bs-start, step)
		hi = floorDiv(be-1-start, step)
	} else {
		t := -step
		lo = ceilDiv(start-(be-1), t)
		hi = floorDiv(start-bs, t)
	}
	return max(lo, 0), min(hi, count-1)
}

func floorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func ceilDiv(a, b int) int { return -floorDiv(-a, b) }

// foldPartsMinBytes is the smallest step region a reduce task folds in
// parts (foldParts) rather than reads whole: a smaller one stays in cache
// between its read and its fold.
var foldPartsMinBytes int64 = 8 << 20

// foldPartBytes is the most bytes of one part cut by rows (partial reads):
// it stays in a core's caches (512 KiB of L2 and its share of L3 here)
// between the read that brings it there and the fold that reads it.
// Measured on W4's swap-axes sum of warm data: 1 MiB parts took 1.40 s,
// 512 KiB parts 1.48 s (twice the reads), 2 and 4 MiB the same as 1.
var foldPartBytes int64 = 1 << 20

// foldPartsHook, when set (by tests), is called from each task of a reduce
// op that may fold in parts, with the number of parts it folds (0: its
// steps whole).
var foldPartsHook func(op *plan.Op, parts int)

// foldParts cuts region r of stored array a, which a reduce task folds
// along the dimensions marked in folded (ops.TaskKernel.FoldedDims), into
// parts folded one after another instead of reading r whole: r cut at a's
// chunk boundaries along folded dimensions, so each part lies in one chunk
// along them, and, when a's chunks are read in part (plan.Array.
// PartialReads), each part of more than foldPartBytes cut into bands of
// rows along its outermost folded dimensions. Each part is then read
// straight from the page cache into a buffer that stays in cache for the
// fold (or mapped, a whole raw chunk), instead of copied into a block of
// the whole region that the fold reads back from memory: W4's swap-axes
// sum, whose step regions are 128 MiB bands gathered from 128 chunks,
// reads each (362, 362) piece into L2 and sums it there. It returns nil
// when r is folded whole: too small, not unit steps, or one part.
func foldParts(a *plan.Array, r plan.Region, folded []bool) []plan.Region {
	elem := int64(a.DType.Size())
	n := len(r.Count)
	if a.Virtual() || len(folded) != n || r.Size()*elem < foldPartsMinBytes {
		return nil
	}
	cuts := make([][][2]int, n) // per dimension, the [start, end) ranges
	for d := range n {
		if r.Step[d] != 1 {
			return nil
		}
		lo, hi := r.Start[d], r.Start[d]+r.Count[d]
		if !folded[d] {
			cuts[d] = [][2]int{{lo, hi}}
			continue
		}
		off := a.ChunkOffsets(d)
		if lo < 0 || hi > off[len(off)-1] {
			return nil
		}
		for b := a.BlockOf(d, lo); b < len(off)-1 && off[b] < hi; b++ {
			cuts[d] = append(cuts[d], [2]int{max(lo, off[b]), min(hi, off[b+1])})
		}
	}
	var parts []plan.Region
	idx, ncuts := make([]int, n), make([]int, n)
	for d := range n {
		ncuts[d] = len(cuts[d])
	}
	for more := true; more; more = advance(idx, ncuts) {
		p := plan.Region{Start: make([]int, n), Step: make([]int, n), Count: make([]int, n)}
		for d := range n {
			c := cuts[d][idx[d]]
			p.Start[d], p.Step[d], p.Count[d] = c[0], 1, c[1]-c[0]
		}
		if a.PartialReads {
			parts = appendBands(parts, p, folded, 0, elem)
		} else {
			parts = append(parts, p)
		}
	}
	if len(parts) < 2 {
		return nil
	}
	return parts
}

// appendBands appends part p cut into bands of rows along its folded
// dimensions from from on, outermost first, so that each band holds at
// most foldPartBytes (or one row of a dimension whose row alone is more,
// cut again along the next folded dimension).
func appendBands(parts []plan.Region, p plan.Region, folded []bool, from int, elem int64) []plan.Region {
	if p.Size()*elem <= foldPartBytes {
		return append(parts, p)
	}
	d := from
	for d < len(folded) && (!folded[d] || p.Count[d] == 1) {
		d++
	}
	if d == len(folded) {
		return append(parts, p)
	}
	row := p.Size() / int64(p.Count[d]) * elem
	rows := int(max(1, foldPartBytes/row))
	for lo := 0; lo < p.Count[d]; lo += rows {
		b := plan.Region{Start: slices.Clone(p.Start), Step: slices.Clone(p.Step), Count: slices.Clone(p.Count)}
		b.Start[d] += lo
		b.Count[d] = min(rows, p.Count[d]-lo)
		parts = appendBands(parts, b, folded, d+1, elem)
	}
	return parts
}
