package plan

import (
	"slices"
	"strings"
)

// BufferCopies are the extra copies of a chunk that reading or writing it
// through Zarr may hold at once (the encoded bytes beside the decoded
// block), as in Cubed's memory model.
type BufferCopies struct{ Read, Write int64 }

// CopiesFor returns the buffer copies for a work dir: one each on local
// disk, two each on object stores (whose clients buffer requests).
func CopiesFor(workDir string) BufferCopies {
	if IsObjectStore(workDir) {
		return BufferCopies{Read: 2, Write: 2}
	}
	return BufferCopies{Read: 1, Write: 1}
}

// IsObjectStore reports whether a work_dir URL names an object store (S3,
// GCS, Azure) rather than a local path.
func IsObjectStore(workDir string) bool {
	for _, p := range []string{"s3://", "gs://", "gcs://", "azblob://", "az://"} {
		if strings.HasPrefix(workDir, p) {
			return true
		}
	}
	return false
}

// LocalStore reports whether a store URL names a directory on the local
// file system (a plain path or a file:// URL), whose reads the kernel's
// page cache backs; object stores and mem:// stores are not local.
func LocalStore(url string) bool {
	return strings.HasPrefix(url, "file://") || !strings.Contains(url, "://")
}

// StoreURL returns the store a stored array is read from: its source's,
// its target's, or for an intermediate its spec's work dir (under which
// the engine writes it, or keeps it in memory).
func (a *Array) StoreURL() string {
	switch {
	case a.Source != nil:
		return a.Source.Store
	case a.Target != nil:
		return a.Target.Store
	case a.Spec != nil:
		return a.Spec.WorkDir
	}
	return ""
}

// PageCached reports whether reads of a stored array go through the
// kernel's page cache (its store is local), so that it can be prefetched
// there (PrefetchDepth) instead of read ahead into buffers.
func (a *Array) PageCached() bool { return !a.Virtual() && LocalStore(a.StoreURL()) }

// StripElems is the most elements an element-wise expression's
// temporaries hold: a kernel evaluates an expression with temporaries over
// a larger block strip by strip (ops' evalInto), each temporary one strip
// of at most MaxElemBytes-wide elements (a step split into p pieces uses
// strips of StripElems/p). Over contiguous inputs it goes tile by tile
// instead (ops' TileElems, fewer elements), within the same charge. 64 Ki elements keep the strips of a chain in
// the L2 cache and are long enough for the kernels' per-call cost not to
// show (ops' BenchmarkChainStrips: W1.chain's expression runs faster in
// strips than whole).
const StripElems = 1 << 16

// MaxElemBytes is the widest element (complex128), the size temporaries
// are costed at.
const MaxElemBytes = 16

// ProjectedMem returns the most memory one task of op can use:
//
//	reserved_mem + Σ inputs + kernel temporaries + extra + output × (1 + write copies)
//
// where an input term is, per input and for the largest region a task
// reads at one step:
//
//   - virtual input: the region (generated in place);
//   - stored input read whole blocks at a time ("aligned"): the stored chunk
//     × (1 + read copies) — the region is read into a chunk-sized buffer and
//     compacted in place;
//   - stored input read at other positions: the region plus one stored chunk
//     × (1 + read copies), since the region is assembled one chunk at a time.
//
// The output block is allocated at its stored chunk size and written from
// there, with write-copies extra for the encoded bytes. Kernel temporaries
// are the intermediate results of an expression (map core: at most one
// strip of StripElems elements each) or of the operand expressions
// (reduce and matmul cores), each the size of the largest output block or
// input region.
//
// A task that folds several steps reads the next steps' inputs while it
// computes the current one (see ReadAheadDepth) when an input is on an
// object store and the op's projection with one more input buffer per
// input and step read ahead still fits allowed_mem; the projection then
// includes those buffers. Inputs on local disk are prefetched into the
// kernel's page cache instead (PrefetchDepth), which the projection does
// not count: it is not the process's memory.
func ProjectedMem(op *Op) int64 {
	return projectedBase(op) + readAheadMem(op, op.ReadAheadDepth())
}

// MaxReadAhead is the most steps a task reads ahead: two reads in flight
// per task keep a cold disk busier than one (with two workers, four
// requests in flight read about a fifth faster than two). A task reads a
// second step ahead only when one step's buffers take at most
// ReadAheadSecondMax bytes: one large read already keeps the disk busy for
// long, and the memory is better left unused (peak RSS). A task whose
// step takes more than ReadAheadMaxBytes does not read ahead at all: a
// read that large keeps the disk busy on its own, and an extra step of
// such buffers per worker would raise peak RSS by hundreds of MB (W2 at
// L: 1.2 GB to 1.9 GB) for no measured gain on warm data.
const (
	MaxReadAhead       = 2
	ReadAheadSecondMax = 64 << 20
	ReadAheadMaxBytes  = 128 << 20
)

// ReadAheadDepth returns how many steps ahead of the one it computes a
// task of op reads its inputs, each step on its own goroutine: 0 unless
// the op folds more than one step per task (a reduction's streamed
// blocks, matmul's contracted blocks) and at least one input is stored
// on a store the page cache does not back (an object store: reading
// overlaps computing; local inputs are prefetched, see PrefetchDepth);
// else the most, up to MaxReadAhead and one
// less than the first task's steps, whose buffers fit allowed_mem
// (ProjectedMem counts them). Each step ahead holds one buffer per input,
// the size it takes at one step: a stored chunk for an aligned input, the
// region for the others (whose assembly scratch chunk and encoded copy
// are counted with the read).
func (op *Op) ReadAheadDepth() int {
	buf, _ := readAheadBytes(op)
	if buf == 0 || buf > ReadAheadMaxBytes {
		return 0
	}
	depth := min(MaxReadAhead, int(Prod(op.IterShape(make([]int, len(op.TaskGrid())))))-1)
	if buf > ReadAheadSecondMax {
		depth = min(depth, 1)
	}
	base, allowed := projectedBase(op), op.Output.Spec.AllowedMem
	for depth > 0 && base+readAheadMem(op, depth) > allowed {
		depth--
	}
	return depth
}

// ReadsAhead reports whether a task of op reads ahead (ReadAheadDepth > 0).
func (op *Op) ReadsAhead() bool { return op.ReadAheadDepth() > 0 }

// readAheadBytes returns the memory read-ahead adds to a task of op per
// step read ahead: buf, the inputs' buffers of one step, and reads, the
// scratch chunks and encoded copies of one step's reads in flight (the
// first step ahead's are counted with the current step's read, since the
// two are never in flight together); both 0 when read-ahead does not apply
// (no input is stored off the page cache).
func readAheadBytes(op *Op) (buf, reads int64) {
	if op.CopiesInput() || !op.foldsSteps() {
		return 0, 0
	}
	copies := CopiesFor(op.Output.Spec.WorkDir)
	stored := false
	for i, in := range op.Inputs {
		region := op.MaxInputRegionBytes(i)
		switch {
		case in.Array.Virtual():
			buf += region
		case op.InputAligned(i):
			stored = stored || !in.Array.PageCached()
			buf += max(region, in.Array.ChunkBytes())
			reads += in.Array.ChunkBytes() * copies.Read
		default:
			stored = stored || !in.Array.PageCached()
			buf += region
			reads += in.Array.ChunkBytes() * (1 + copies.Read)
		}
	}
	if !stored {
		return 0, 0
	}
	return buf, reads
}

// MaxPrefetch is the most steps ahead a task prefetches its local inputs
// into the page cache, and PrefetchMaxBytes the most stored bytes it
// prefetches ahead (fewer steps when steps are larger, at least one):
// prefetched data is not the process's memory, but it takes page cache
// that other data may need, and a few steps in flight keep the disk's
// queue full.
const (
	MaxPrefetch      = 4
	PrefetchMaxBytes = 256 << 20
)

// PrefetchDepth returns how many steps ahead of the one it computes a task
// of op prefetches its local stored inputs' chunks into the kernel's page
// cache (Array.PageCached): 0 unless the op folds more than one step per
// task and an input is local and stored; else up to MaxPrefetch, one less
// than the first task's steps, and the steps whose stored chunks fit
// PrefetchMaxBytes (at least one). It costs no process memory, so the
// projection does not count it.
func (op *Op) PrefetchDepth() int {
	if op.CopiesInput() || !op.foldsSteps() {
		return 0
	}
	step := op.PrefetchStepBytes()
	if step == 0 {
		return 0
	}
	depth := min(MaxPrefetch, int(Prod(op.IterShape(make([]int, len(op.TaskGrid())))))-1)
	return max(1, min(depth, int(PrefetchMaxBytes/step)))
}

// PrefetchStepBytes returns the stored bytes of one step's local inputs
// (Array.PageCached) that prefetching a step asks the page cache for: per
// input, its largest region or, when larger, its chunk.
func (op *Op) PrefetchStepBytes() int64 {
	var n int64
	for i, in := range op.Inputs {
		if in.Array.PageCached() {
			n += max(op.MaxInputRegionBytes(i), in.Array.ChunkBytes())
		}
	}
	return n
}

// readAheadMem is the memory reading depth steps ahead adds to a task.
func readAheadMem(op *Op, depth int) int64 {
	if depth <= 0 {
		return 0
	}
	buf, reads := readAheadBytes(op)
	return int64(depth)*buf + int64(depth-1)*reads
}

// foldsSteps reports whether a task of op (its first) takes more than one
// iteration step.
func (op *Op) foldsSteps() bool {
	if op.NumTasks() == 0 {
		return false
	}
	iter := op.IterShape(make([]int, len(op.TaskGrid())))
	return Prod(iter) > 1
}

// projectedBase is ProjectedMem without read-ahead.
func projectedBase(op *Op) int64 {
	spec := op.Output.Spec
	copies := CopiesFor(spec.WorkDir)
	total := spec.ReservedMem + op.ExtraMem
	var maxRegion int64
	copiesInput := op.CopiesInput()
	for i, in := range op.Inputs {
		region := op.MaxInputRegionBytes(i)
		maxRegion = max(maxRegion, region)
		switch {
		case copiesInput && in.Array.Virtual():
			// Generated straight into the output buffer.
		case copiesInput:
			// Read into the output buffer one stored chunk at a time.
			total += in.Array.ChunkBytes() * (1 + copies.Read)
		case in.Array.Virtual():
			total += region
		case op.InputAligned(i):
			total += in.Array.ChunkBytes() * (1 + copies.Read)
		default:
			total += region + in.Array.ChunkBytes()*(1+copies.Read)
		}
	}
	outBytes := op.Output.ChunkBytes()
	total += outBytes * (1 + copies.Write)
	if op.Mirror {
		total += outBytes // the transposed block, written to the mirrored chunk
	}
	// The elements a task computes at once: one block, or with TaskBlocks
	// several, computed together in one buffer and written one chunk at a
	// time from a chunk-sized copy.
	taskElems := outBytes / int64(max(op.Output.DType.Size(), 1))
	if op.TaskBlocks != nil {
		taskElems = 1
		for d := range op.Output.NDim() {
			taskElems *= int64(op.maxOutExtent(d))
		}
		total += taskElems * int64(op.Output.DType.Size())
	}
	elem := int64(MaxElemBytes) // temporaries are costed at the widest element size
	switch op.Kernel.Core {
	case "map":
		// Evaluated a strip at a time (at most StripElems elements of
		// temporaries per temporary, whether or not the step is split).
		for _, e := range op.Kernel.Exprs {
			total += int64(e.Temporaries()) * min(taskElems, StripElems) * elem
		}
	default:
		// A stacked reduction evaluates its operands one after another:
		// the largest counts, as one operand would.
		operands := max(op.Kernel.Stack, 1)
		var most int64
		for i, e := range op.Kernel.Exprs {
			if e.Op != "input" && !(i < operands && op.Kernel.Core == "reduce" && FoldsCast(op.Kernel.Reduce, e)) {
				cost := int64(1+e.Temporaries()) * maxRegion / int64(minInputSize(op)) * elem
				if i < operands {
					most = max(most, cost)
				} else {
					total += cost
				}
			}
		}
		total += most
		// The reduction of one step before it is combined into the output.
		total += outBytes
	}
	return total
}

// CopiesInput reports whether a task's output block is exactly its one
// input's region, laid out the same (reshape, rechunk, slicing, store), so
// the engine reads the region straight into the output buffer: no
// broadcast or transposed dimensions (dropped Const dimensions keep the
// layout), and output dimensions no input dimension runs along have
// extent 1 (newaxis).
func (op *Op) CopiesInput() bool {
	k := op.Kernel
	if k.Core == "reshape" {
		return true
	}
	if k.Core != "map" || len(k.Exprs) != 1 || k.Exprs[0].Op != "input" || len(op.Inputs) != 1 {
		return false
	}
	next := 0
	covered := make([]bool, op.Output.NDim())
	for _, m := range op.Inputs[0].Dims {
		switch m.Kind {
		case Affine:
			if m.Step == 0 || m.OutDim < next {
				return false
			}
			next = m.OutDim + 1
			covered[m.OutDim] = true
		case Const:
		default:
			return false
		}
	}
	for d, c := range covered {
		if !c && op.maxOutExtent(d) > 1 {
			return false
		}
	}
	return true
}

func minInputSize(op *Op) int {
	m := 16
	for _, in := range op.Inputs {
		m = min(m, in.Array.DType.Size())
	}
	return max(m, 1)
}

// InputAligned reports whether every region of input i that a task reads is
// exactly one block of the input array, so it can be read without
// assembling it from several chunks.
func (op *Op) InputAligned(i int) bool {
	in := op.Inputs[i]
	for d, m := range in.Dims {
		switch m.Kind {
		case Blocks:
			if m.Grid != nil && !gridOfChunks(m.Grid, in.Array.ChunkOffsets(d)) {
				return false
			}
		case Full:
			if len(in.Array.Chunks[d]) != 1 {
				return false
			}
		case Scaled, BlockIndex:
			return false
		case Ranges:
			if !rangesAreBlocks(m.Ranges, in.Array.Chunks[d]) {
				return false
			}
		case Const:
			if len(in.Array.Chunks[d]) != 1 || in.Array.Shape[d] != 1 {
				return false
			}
		case Affine:
			if m.Step == 0 {
				if in.Array.Shape[d] != 1 {
					return false
				}
				continue
			}
			if m.Step != 1 || m.Start != 0 || !equalInts(in.Array.Chunks[d], op.Output.Chunks[m.OutDim]) {
				return false
			}
		}
	}
	return true
}

// gridOfChunks reports whether each block of grid is one chunk of a
// dimension whose chunks start at off (plan.Array.ChunkOffsets, with the
// dimension's length last).
func gridOfChunks(grid, off []int) bool {
	k, found := slices.BinarySearch(off, grid[0])
	if !found {
		return false
	}
	for b := 1; b < len(grid); b++ {
		if k+b >= len(off) || off[k+b] != grid[b] {
			return false
		}
	}
	return true
}

// ReadsWholeChunks reports whether every region of input i that a task
// reads is made of whole chunks of the input array, each read once per
// task: folded blocks on a grid whose boundaries are chunk boundaries,
// whole dimensions, or the output's own chunks. A stored array read only
// this way, by one op, is read once in all.
func (op *Op) ReadsWholeChunks(i int) bool {
	in := op.Inputs[i]
	for d, m := range in.Dims {
		chunks := in.Array.Chunks[d]
		switch m.Kind {
		case Blocks:
			if m.Grid != nil {
				// A grid over part of the dimension (a slice) reads part of
				// the array: not "once in all", which the engine's choices
				// of direct reads and passes take this to mean.
				off := in.Array.ChunkOffsets(d)
				if m.Grid[0] != 0 || m.Grid[len(m.Grid)-1] != in.Array.Shape[d] {
					return false
				}
				for _, g := range m.Grid {
					if _, found := slices.BinarySearch(off, g); !found {
						return false
					}
				}
			}
		case Full:
		case Affine:
			if m.Step == 0 {
				if in.Array.Shape[d] != 1 {
					return false
				}
				continue
			}
			if m.Step != 1 || m.Start != 0 || !equalInts(chunks, op.Output.Chunks[m.OutDim]) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
