package engine

import (
	"os"

	"github.com/cubego/cubego/plan"
)

// directSetting is CUBEGO_DIRECT_READS as the process started with it:
// "0" reads nothing directly, "1" reads directly whatever the sizes (as
// if the inputs exceeded the machine's memory), anything else (or unset)
// decides by size as directReads says.
var directSetting = os.Getenv("CUBEGO_DIRECT_READS")

// span is the part of a stored array's chunks read with direct I/O: the
// chunks whose position in C order over the chunk grid, as a fraction of
// the number of chunks, lies in [lo, hi).
type span struct{ lo, hi float64 }

// directReads returns, per stored source array of p, the chunks read with
// direct I/O (zarr.Array.ReadChunkDirect) instead of through the page
// cache. It reads directly only when the stored arrays p reads add up to
// more than the machine's memory: the cache cannot hold them then, and
// what it drops before it is read again only cost the copy out of the
// cache and the work of filling and reclaiming it, which on a cold read
// is more CPU than the arithmetic of a reduction (docs/execution.md,
// "Direct reads"). Of such plans:
//
//   - an array one op reads, in whole chunks (plan.Op.ReadsWholeChunks),
//     is read once: every chunk is read directly;
//   - an array two ops read so (x - mean(x)) is read twice: the second
//     pass finds in the cache what the first read last, up to cache
//     bytes, and nothing else. The chunks the first pass reads first, all
//     but the last cache bytes of it in its direction (reverse), are read
//     directly by both passes; the rest goes through the cache.
//
// Nil when nothing qualifies.
func directReads(p *plan.Plan, reverse map[*plan.OpInfo]bool, cache int64) map[*plan.Array]span {
	if directSetting == "0" {
		return nil
	}
	readers := map[*plan.Array][]*plan.OpInfo{}
	whole := map[*plan.Array]bool{}
	var total int64
	for _, o := range p.Ops {
		for i, in := range o.Op.Inputs {
			a := in.Array
			if a.Op != nil || a.Source == nil || a.Virtual() {
				continue
			}
			if len(readers[a]) == 0 {
				total += a.NBytes()
				whole[a] = true
			}
			whole[a] = whole[a] && o.Op.ReadsWholeChunks(i)
			readers[a] = append(readers[a], o)
		}
	}
	if mem := physicalMemory(); directSetting != "1" && (mem <= 0 || total <= mem) {
		return nil
	}
	var out map[*plan.Array]span
	for a, rs := range readers {
		if !whole[a] {
			continue
		}
		var s span
		switch n := a.NBytes(); {
		case len(rs) == 1:
			s = span{0, 1}
		case len(rs) == 2 && rs[0] != rs[1] && n > cache:
			f := float64(n-max(cache, 0)) / float64(n)
			s = span{0, f}
			if reverse[rs[0]] {
				s = span{1 - f, 1}
			}
		default:
			continue
		}
		if out == nil {
			out = map[*plan.Array]span{}
		}
		out[a] = s
	}
	return out
}

// cacheBytes estimates the page cache a computation leaves: the machine's
// memory less the process's budget for tasks and a tenth of the memory
// for everything else.
func cacheBytes(budget int64) int64 {
	mem := physicalMemory()
	return mem - budget - mem/10
}

// anyDirect reports whether some chunks of a are read with direct I/O: a
// reduction then folds its steps whole, read chunk by chunk into their
// places (readRegion), not in parts read out of the page cache.
func (j *job) anyDirect(a *plan.Array) bool {
	_, ok := j.direct[a]
	return ok
}

// readsDirect reports whether the chunk at coords of a is read with direct
// I/O (j.direct).
func (j *job) readsDirect(a *plan.Array, coords []int) bool {
	s, ok := j.direct[a]
	if !ok {
		return false
	}
	if s.lo <= 0 && s.hi >= 1 {
		return true
	}
	var pos, total int64 = 0, 1
	for d, c := range coords {
		nb := int64(len(a.Chunks[d]))
		pos = pos*nb + int64(c)
		total *= nb
	}
	f := float64(pos) / float64(total)
	return f >= s.lo && f < s.hi
}
