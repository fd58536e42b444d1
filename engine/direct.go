package engine

import (
	"context"
	"os"

	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// directSetting is CUBEGO_DIRECT_READS as the process started with it:
// "0" reads nothing directly, "1" reads every array that one op reads in
// whole chunks directly whatever the sizes, anything else (or unset)
// decides by size as directReads says.
var directSetting = os.Getenv("CUBEGO_DIRECT_READS")

// directWriteSetting is CUBEGO_DIRECT_WRITES as the process started with
// it: "0" writes nothing directly, "1" writes every target no op of the
// plan reads directly whatever its size, anything else (or unset) decides
// by size as directWrites says.
var directWriteSetting = os.Getenv("CUBEGO_DIRECT_WRITES")

// planDirectReads sets the job's direct reads: the arrays read directly
// throughout (directReads) and the inputs of last passes (lastPassReads),
// less those whose chunks cannot be read directly (compressed, or on a
// store without direct reads), which keep the page cache's prefetch,
// mapping and folds in parts; and its direct writes (directWrites).
func (j *job) planDirectReads(ctx context.Context) {
	readable := func(a *plan.Array) bool {
		z, err := j.storage.array(ctx, a)
		return err == nil && z.CanReadDirect()
	}
	j.direct = directReads(j.plan, func(a *plan.Array) bool { return readable(a) && j.cold(ctx, a) })
	for a := range j.direct {
		if !readable(a) {
			delete(j.direct, a)
		}
	}
	// Targets are created when their op runs: writeChunk finds then
	// whether their chunks can be written directly.
	j.directOut = directWrites(j.plan)
	j.lastPass = lastPassReads(j.plan)
	for op, ins := range j.lastPass {
		for i := range ins {
			if !readable(op.Inputs[i].Array) {
				delete(ins, i)
			}
		}
		if len(ins) == 0 {
			delete(j.lastPass, op)
		}
	}
	j.firstPass = firstPassReads(j.plan, j.lastPass, j.reverse, cacheBytes(j.opts.ProcessBudget))
	j.fill = newFillMeters(j.firstPass)
}

// directReads returns the stored source arrays of p whose whole chunks are
// read with direct I/O (zarr.Array.ReadChunkDirect) instead of through the
// page cache: those that one op reads, in whole chunks
// (plan.Op.ReadsWholeChunks), so once in all, when
//
//   - the stored arrays p reads add up to more than the machine's memory:
//     caching them only evicts other pages, and never pays back, since a
//     later scan of data larger than the cache finds its start evicted by
//     its end; or
//   - the array is a large scan (coldScan: at least a quarter of the
//     machine's memory) whose chunks are mostly out of the page cache
//     (cold, sampled by the caller: job.cold). Filling the cache with it
//     would cost more CPU than the arithmetic of a reduction and evict a
//     quarter of the cache or more for a later computation that may never
//     come; one that does reads it from the disk again, at the disk's
//     speed. Databases decide so too: PostgreSQL scans a table larger
//     than a quarter of its buffers through a small ring of them, Oracle
//     reads a large table that is not mostly cached past its cache.
//
// Reading them directly saves the copy out of the page cache and the work
// of filling and reclaiming it, which on a cold read costs more CPU than
// the arithmetic of a reduction (docs/execution.md, "Direct reads"). Such
// arrays are neither mapped, prefetched into the page cache, nor read in
// parts. Nil when nothing qualifies (CUBEGO_DIRECT_READS=1: every array
// read once in whole chunks; =0: none).
func directReads(p *plan.Plan, cold func(*plan.Array) bool) map[*plan.Array]bool {
	if directSetting == "0" {
		return nil
	}
	readers, total := storedReaders(p)
	all := exceedsMemory(total)
	mem := physicalMemory()
	var out map[*plan.Array]bool
	for a, rs := range readers {
		if len(rs) != 1 || !rs[0].op.ReadsWholeChunks(rs[0].in) {
			continue
		}
		if !all && !(mem > 0 && a.NBytes() >= mem/coldScan && cold != nil && cold(a)) {
			continue
		}
		if out == nil {
			out = map[*plan.Array]bool{}
		}
		out[a] = true
	}
	return out
}

// coldScan is the share of the machine's memory (1/coldScan) from which
// directReads reads an array read once directly when it is cold.
const coldScan = 4

// coldSamples is how many chunks, spread evenly over its chunk grid,
// job.cold looks at.
const coldSamples = 8

// cold reports whether the stored array a has its chunks mostly out of the
// page cache: on average less than half of each of coldSamples chunks
// spread over its grid (zarr.Array.ChunkResident, which reads nothing).
// False on a store that cannot tell.
func (j *job) cold(ctx context.Context, a *plan.Array) bool {
	z, err := j.storage.array(ctx, a)
	if err != nil {
		return false
	}
	n := plan.Prod(z.GridShape())
	if n == 0 {
		return false
	}
	k := min(int64(coldSamples), n)
	f, ok := meanResident(ctx, z, (n/k)/2, n, int(k))
	return ok && f < uncachedMax
}

// directWrites returns the stored arrays of p whose chunks are written
// with direct I/O (zarr.Array.WriteChunkDirect) instead of through the
// page cache: outputs written to a target (to_zarr, store) that no op of
// p reads, of more bytes than the kernel lets wait in the page cache
// before it paces writers to the disk's speed (dirtyFreerun).
// Intermediates, which a later op or the caller reads back, keep the page
// cache. A buffered writer of such an output is held to the disk's speed
// anyway, after paying to copy every byte into the cache and to fill and
// reclaim it; on a VM whose balloon reports free memory to the host, a
// write into a page that was free also faults to the host
// (docs/execution.md, "Direct writes": 8.6 GB took 19-20 s with 35-38 s
// of system time through the cache, 6.0-6.7 s with 1.3 s directly).
// Nil when nothing qualifies (CUBEGO_DIRECT_WRITES=1: whatever the size;
// =0: never).
func directWrites(p *plan.Plan) map[*plan.Array]bool {
	if directWriteSetting == "0" {
		return nil
	}
	limit := dirtyFreerun()
	if directWriteSetting != "1" && limit <= 0 {
		return nil
	}
	read := map[*plan.Array]bool{}
	for _, o := range p.Ops {
		for _, in := range o.Op.Inputs {
			read[in.Array] = true
		}
	}
	var out map[*plan.Array]bool
	for _, o := range p.Ops {
		a := o.Op.Output
		if a == nil || a.Target == nil || read[a] || a.Virtual() || directWriteSetting != "1" && a.NBytes() <= limit {
			continue
		}
		if out == nil {
			out = map[*plan.Array]bool{}
		}
		out[a] = true
	}
	return out
}

// writeChunk writes buf as the chunk at coords of z, the stored array of
// a: directly when a is written so (j.directOut) and z can, else through
// the page cache.
func (j *job) writeChunk(ctx context.Context, z *zarr.Array, a *plan.Array, coords []int, buf []byte) error {
	if j.directOut[a] {
		ok, err := z.WriteChunkDirect(ctx, coords, buf)
		if directWriteHook != nil && ok && err == nil {
			directWriteHook(a)
		}
		if ok || err != nil {
			return err
		}
	}
	return z.WriteChunk(ctx, coords, buf)
}

// freerun returns the bytes of written data the kernel lets wait in the
// page cache before it starts to pace writers, on a machine of mem bytes
// with the given vm.dirty_bytes, vm.dirty_ratio,
// vm.dirty_background_bytes and vm.dirty_background_ratio (a byte setting
// of 0 defers to its ratio): the midpoint of the background writeback
// threshold and the dirty limit, below which balance_dirty_pages
// (mm/page-writeback.c, dirty_freerun_ceiling) lets a writer run free and
// above which it throttles the writer toward the rate the disk writes
// back. The ratios are taken of all memory, an upper bound: the kernel
// takes them of free and reclaimable memory only. 0 if unknown.
func freerun(mem, limitBytes, limitRatio, bgBytes, bgRatio int64) int64 {
	limit, bg := limitBytes, bgBytes
	if limit <= 0 {
		limit = mem * limitRatio / 100
	}
	if bg <= 0 {
		bg = mem * bgRatio / 100
	}
	if limit <= 0 {
		return 0
	}
	// The kernel holds the background threshold to half the limit when
	// it is set at or above the limit.
	if bg >= limit {
		bg = limit / 2
	}
	return (limit + bg) / 2
}

// directWriteHook, when set (by tests), is called with the array of each
// chunk written directly, from the writing goroutines.
var directWriteHook func(a *plan.Array)

// reader is an input of an op: the op and the input's index.
type reader struct {
	op *plan.Op
	in int
}

// storedReaders returns the readers of each stored source array of p, in
// the plan's order, and the bytes those arrays add up to.
func storedReaders(p *plan.Plan) (map[*plan.Array][]reader, int64) {
	readers := map[*plan.Array][]reader{}
	var total int64
	for _, o := range p.Ops {
		for i, in := range o.Op.Inputs {
			a := in.Array
			if a.Op != nil || a.Source == nil || a.Virtual() {
				continue
			}
			if len(readers[a]) == 0 {
				total += a.NBytes()
			}
			readers[a] = append(readers[a], reader{o.Op, i})
		}
	}
	return readers, total
}

// beyondMemory returns storedReaders(p) when those arrays add up to more
// than the machine's memory (CUBEGO_DIRECT_READS=1: whatever they add up
// to; =0: never), and nil otherwise: the plans whose inputs the page
// cache cannot hold.
func beyondMemory(p *plan.Plan) map[*plan.Array][]reader {
	if directSetting == "0" {
		return nil
	}
	readers, total := storedReaders(p)
	if !exceedsMemory(total) {
		return nil
	}
	return readers
}

// exceedsMemory reports whether stored inputs of total bytes are more
// than the machine's memory (CUBEGO_DIRECT_READS=1: always).
func exceedsMemory(total int64) bool {
	mem := physicalMemory()
	return directSetting == "1" || mem > 0 && total > mem
}

// lastPassReads returns, per op, the inputs it reads in the last pass over
// a stored array read several times, in a plan whose stored inputs add up
// to more than the machine's memory (as directReads; CUBEGO_DIRECT_READS
// likewise): arrays that more than one op reads, such as x in
// sum(x - mean(x, axis=0)), where one reader reads whole chunks
// (plan.Op.ReadsWholeChunks) and depends on every other reader, so runs
// after them all. Nothing reads the array after that op: a chunk of it
// not in the page cache when a step of that op reads it is read directly
// (see uncachedStep), since filling the cache with it would only cost
// CPU and evict the chunks the same pass still finds there. The first
// passes read through the cache, which keeps what they read last for the
// last pass. Nil when nothing qualifies.
func lastPassReads(p *plan.Plan) map[*plan.Op]map[int]bool {
	var out map[*plan.Op]map[int]bool
	for _, rs := range beyondMemory(p) {
		last := rs[len(rs)-1].op
		deps := dependencies(last)
		several := false
		for _, r := range rs {
			if r.op != last {
				several = true
				if !deps[r.op] {
					last = nil
					break
				}
			}
		}
		if !several || last == nil {
			continue
		}
		for _, r := range rs {
			if r.op == last && last.ReadsWholeChunks(r.in) {
				if out == nil {
					out = map[*plan.Op]map[int]bool{}
				}
				if out[last] == nil {
					out[last] = map[int]bool{}
				}
				out[last][r.in] = true
			}
		}
	}
	return out
}

// dependencies returns the ops whose outputs op reads, directly or
// through other ops.
func dependencies(op *plan.Op) map[*plan.Op]bool {
	deps := map[*plan.Op]bool{}
	var visit func(o *plan.Op)
	visit = func(o *plan.Op) {
		for _, in := range o.Inputs {
			if p := in.Array.Op; p != nil && !deps[p] {
				deps[p] = true
				visit(p)
			}
		}
	}
	visit(op)
	return deps
}

// span is a part of a stored array's chunks: those whose position in C
// order over the chunk grid, as a fraction of the number of chunks, lies
// in [lo, hi).
type span struct{ lo, hi float64 }

// holds reports whether the chunk at coords of a lies in s.
func (s span) holds(a *plan.Array, coords []int) bool {
	var pos, total int64 = 0, 1
	for d, c := range coords {
		nb := int64(len(a.Chunks[d]))
		pos = pos*nb + int64(c)
		total *= nb
	}
	f := float64(pos) / float64(total)
	return f >= s.lo && f < s.hi
}

// firstPassReads returns, per op, the inputs through which it makes the
// first of two passes over a stored array whose last pass is in last
// (lastPassReads: x in sum(x - mean(x, axis=0)), larger than memory),
// reading whole chunks, with the part of the array that pass reads
// directly: the chunks it reads first, all but the last cache bytes of the
// array in its direction (reverse). The page cache keeps what the first
// pass reads last, for the last pass, which runs the other way and reads
// the rest directly; what the first pass reads first would be evicted
// before the last pass came back to it, so reading it through the cache
// would cost the CPU of filling and reclaiming the cache for nothing
// (docs/execution.md, "Direct reads"). A step reads its chunks directly
// when they all lie in that part and are out of the page cache
// (uncachedStep). Nil when nothing qualifies.
func firstPassReads(p *plan.Plan, last map[*plan.Op]map[int]bool, reverse map[*plan.OpInfo]bool, cache int64) map[*plan.Op]map[int]span {
	if len(last) == 0 {
		return nil
	}
	info := map[*plan.Op]*plan.OpInfo{}
	for _, o := range p.Ops {
		info[o.Op] = o
	}
	readers, _ := storedReaders(p)
	var out map[*plan.Op]map[int]span
	for op, ins := range last {
		for i := range ins {
			a := op.Inputs[i].Array
			var first []reader
			for _, r := range readers[a] {
				if r.op != op {
					first = append(first, r)
				}
			}
			n := a.NBytes()
			if len(first) != 1 || !first[0].op.ReadsWholeChunks(first[0].in) || n <= cache || n <= 0 {
				continue
			}
			f := float64(n-max(cache, 0)) / float64(n)
			s := span{0, f}
			if reverse[info[first[0].op]] {
				s = span{1 - f, 1}
			}
			if out == nil {
				out = map[*plan.Op]map[int]span{}
			}
			if out[first[0].op] == nil {
				out[first[0].op] = map[int]span{}
			}
			out[first[0].op][first[0].in] = s
		}
	}
	return out
}

// cacheBytes estimates the page cache a computation leaves for its data:
// the machine's memory less the process's budget for tasks and a tenth of
// the memory for everything else (the interpreter, the kernel, other
// processes).
var cacheBytes = func(budget int64) int64 {
	mem := physicalMemory()
	return mem - budget - mem/10
}

// uncachedMax is the share of a step's chunks in the page cache below
// which uncachedStep reads them directly.
const uncachedMax = 0.5

// uncachedStep reports whether input i of op, read in its last pass
// (j.lastPass) or in the part of its first pass read directly
// (j.firstPass; all of it once filling the cache tripped the array's
// fillMeter), has the chunks under region r mostly out of the page cache
// (zarr.Array.ChunkResident), and in that part for a first pass, so the
// step reads them directly.
func (j *job) uncachedStep(ctx context.Context, op *plan.Op, i int, r plan.Region) bool {
	a := op.Inputs[i].Array
	early, first := j.firstPass[op][i]
	if !j.lastPass[op][i] && !first {
		return false
	}
	z, err := j.storage.array(ctx, a)
	if err != nil {
		return false
	}
	pieces, _, ok := regionPieces(a, r)
	if !ok {
		return false
	}
	n := len(pieces)
	idx, coords, counts := make([]int, n), make([]int, n), make([]int, n)
	for d := range n {
		counts[d] = len(pieces[d])
	}
	total, k := 0.0, 0
	for more := true; more; more = advance(idx, counts) {
		for d := range n {
			coords[d] = pieces[d][idx[d]].block
		}
		if first && !early.holds(a, coords) && !j.fill[a].tripped() {
			return false
		}
		f, ok := z.ChunkResident(ctx, coords)
		if !ok {
			return false
		}
		total += f
		k++
	}
	return total < uncachedMax*float64(k)
}

// directKey marks a context whose reads of whole chunks of the array it
// holds go directly (a step uncachedStep chose).
type directKey struct{}

// withDirect returns ctx under which readRegion reads a's whole chunks
// directly (ctx itself for a nil a).
func withDirect(ctx context.Context, a *plan.Array) context.Context {
	if a == nil {
		return ctx
	}
	return context.WithValue(ctx, directKey{}, a)
}

// readsDirect reports whether reads of a under ctx go directly: a is read
// so throughout (j.direct) or in this step (withDirect).
func (j *job) readsDirect(ctx context.Context, a *plan.Array) bool {
	if j.direct[a] {
		return true
	}
	b, _ := ctx.Value(directKey{}).(*plan.Array)
	return b == a
}

// passInputs returns the inputs of op that a step may read directly
// (uncachedStep): those of its first or last pass over an array.
func (j *job) passInputs(op *plan.Op) []int {
	var out []int
	for i := range op.Inputs {
		if _, first := j.firstPass[op][i]; first || j.lastPass[op][i] {
			out = append(out, i)
		}
	}
	return out
}
