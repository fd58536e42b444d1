package engine

import (
	"context"
	"os"

	"github.com/cubego/cubego/plan"
)

// directSetting is CUBEGO_DIRECT_READS as the process started with it:
// "0" reads nothing directly, "1" reads every array that one op reads in
// whole chunks directly whatever the sizes, anything else (or unset)
// decides by size as directReads says.
var directSetting = os.Getenv("CUBEGO_DIRECT_READS")

// directReadable returns direct less the arrays whose chunks cannot be
// read directly (compressed, or on a store without direct reads): those
// keep the page cache's prefetch, mapping and folds in parts.
func (j *job) directReadable(ctx context.Context, direct map[*plan.Array]bool) map[*plan.Array]bool {
	for a := range direct {
		if z, err := j.storage.array(ctx, a); err != nil || !z.CanReadDirect() {
			delete(direct, a)
		}
	}
	return direct
}

// directReads returns the stored source arrays of p whose whole chunks are
// read with direct I/O (zarr.Array.ReadChunkDirect) instead of through the
// page cache: when the stored arrays p reads add up to more than the
// machine's memory, those of them that one op reads, in whole chunks
// (plan.Op.ReadsWholeChunks), are read once in all, so caching them
// only evicts other pages, and never pays back: a later scan of data larger
// than the cache finds its start evicted by its end. Reading them
// directly saves the copy out of the page cache and the work of filling
// and reclaiming it, which on a cold read costs more CPU than the
// arithmetic of a reduction (docs/execution.md, "Direct reads"). Such
// arrays are neither mapped, prefetched into the page cache, nor read in
// parts. Nil when nothing qualifies.
func directReads(p *plan.Plan) map[*plan.Array]bool {
	if directSetting == "0" {
		return nil
	}
	readers := map[*plan.Array]int{}
	whole := map[*plan.Array]bool{}
	var total int64
	for _, o := range p.Ops {
		for i, in := range o.Op.Inputs {
			a := in.Array
			if a.Op != nil || a.Source == nil || a.Virtual() {
				continue
			}
			if readers[a] == 0 {
				total += a.NBytes()
				whole[a] = o.Op.ReadsWholeChunks(i)
			}
			readers[a]++
		}
	}
	if mem := physicalMemory(); directSetting != "1" && (mem <= 0 || total <= mem) {
		return nil
	}
	var out map[*plan.Array]bool
	for a, n := range readers {
		if n == 1 && whole[a] {
			if out == nil {
				out = map[*plan.Array]bool{}
			}
			out[a] = true
		}
	}
	return out
}
