package zarr

import (
	"context"
	"errors"
	"fmt"
)

// RangesReaderInto is implemented by stores that read several byte ranges
// of one value into buffers the caller provides, opening the value once
// (a local file: one positioned read per range).
type RangesReaderInto interface {
	// GetRangesInto fills dsts[i] with the bytes of the value under key
	// starting at offsets[i]. A range past the end of the value is an
	// error wrapping ErrCorrupt; a missing key wraps ErrNotFound.
	GetRangesInto(ctx context.Context, key string, offsets []int64, dsts [][]byte) error
}

// CachedRangesReaderInto is implemented by stores that can read byte
// ranges on the condition that none waits for a device (a local file whose
// pages are in the page cache). A box of short runs far apart (the one
// column of a chunk that a shifted slice needs) then costs a read call per
// run instead of a read of every byte between them, which is what a box
// must cost when its bytes come from a disk.
type CachedRangesReaderInto interface {
	// GetCachedRangesInto is GetRangesInto when every range is at hand,
	// and reports true; it reports false, with dsts partly filled, when
	// one is not (or the store cannot tell).
	GetCachedRangesInto(ctx context.Context, key string, offsets []int64, dsts [][]byte) (bool, error)
}

// BoxReadGap is the gap, in bytes, between two runs of a box below which
// ReadChunkBox reads the runs and the bytes between them with one read
// rather than two. A read of data the disk must fetch costs about 0.1 ms
// on an SSD, the time of reading some 175 kB in sequence, so gaps under
// 256 KiB are read through: a box is never slower to read than its whole
// chunk when the data is cold, and when it is in the page cache, where a
// read call costs a microsecond, reading through small gaps costs little.
const BoxReadGap = 256 << 10

// maxBoxReads bounds the reads of one box; a box needing more (a sparse
// box of many short runs) is read as a whole chunk.
const maxBoxReads = 1 << 14

// sparseGapBytes is the gap per run, in bytes, from which the runs of a
// read across gaps are read one by one when they are all in the page cache
// (CachedRangesReaderInto): a read call costs about what copying 8–16 KiB
// from the page cache does.
const sparseGapBytes = 16 << 10

// ReadsBoxes reports whether ReadChunkBox reads parts of this array's
// chunks (raw chunks in a store that reads byte ranges) rather than
// declining, so that reading part of a chunk costs only that part.
func (a *Array) ReadsBoxes() bool {
	_, ok := a.store.(RangesReaderInto)
	return ok && a.pipe.passThrough
}

// PrefetchChunkBox is PrefetchChunk for the part of the chunk that
// ReadChunkBox of the same box reads: the bytes from the box's first
// element to its last, when the array reads boxes and the store prefetches
// ranges; else the whole chunk. A task that reads a band of rows from each
// of many chunks (a swap-axes rechunk) then prefetches those bands, not
// the chunks.
func (a *Array) PrefetchChunkBox(ctx context.Context, coords, start, count []int) bool {
	rp, ok := a.store.(RangePrefetcher)
	cs := a.meta.ChunkShape
	if !ok || !a.ReadsBoxes() || len(start) != len(cs) || len(count) != len(cs) || len(coords) != len(a.grid) {
		return a.PrefetchChunk(ctx, coords)
	}
	var first, last, stride int64 = 0, 0, 1
	for d := len(cs) - 1; d >= 0; d-- {
		if start[d] < 0 || count[d] < 1 || start[d]+count[d] > cs[d] {
			return a.PrefetchChunk(ctx, coords)
		}
		first += int64(start[d]) * stride
		last += int64(start[d]+count[d]-1) * stride
		stride *= int64(cs[d])
	}
	for i, c := range coords {
		if c < 0 || c >= a.grid[i] {
			return false
		}
	}
	elem := int64(a.meta.DataType.Size())
	_ = rp.PrefetchRange(ctx, a.ChunkKey(coords), first*elem, (last-first+1)*elem)
	return true
}

// ReadChunkBox reads the elements [start[d], start[d]+count[d]) of the
// chunk at coords, reading only the stored bytes the box needs (and the
// gaps under BoxReadGap between them). Box element i (an index vector)
// goes to element dstOff + Σ i[d]·dstStrides[d] of dst (offsets and strides
// in elements; dstStrides[last] must be 1). Runs of the box separated by
// small gaps are read with them in one request, the runs straight into dst
// and the gaps into scratch, which they overwrite in turn: any length
// serves, BoxReadGap bytes read each gap whole, and an empty scratch reads
// every run on its own. When the gaps are long (sparseGapBytes per run)
// and the store can read only cached ranges (CachedRangesReaderInto), the
// runs are read on their own if they are all cached.
//
// It reads anything only when the chunk is stored as the raw elements (no
// compression, no transposition) in a store that reads byte ranges
// (RangesReaderInto), and returns false otherwise, as it does for a
// missing chunk (ReadChunk then gives the fill value or the error) and for
// a box of more than maxBoxReads separate reads: the caller then reads the
// whole chunk with ReadChunk.
func (a *Array) ReadChunkBox(ctx context.Context, coords, start, count []int, dst []byte, dstOff int, dstStrides []int, scratch []byte) (bool, error) {
	if !a.ReadsBoxes() {
		return false, nil
	}
	rr := a.store.(RangesReaderInto)
	if err := a.checkChunk(coords, a.chunkBytes, "buffer"); err != nil {
		return false, err
	}
	cs := a.meta.ChunkShape
	n := len(cs)
	if len(start) != n || len(count) != n || len(dstStrides) != n {
		return false, fmt.Errorf("%w: box of %d, %d and %d dimensions for chunks of %d", ErrInvalid, len(start), len(count), len(dstStrides), n)
	}
	if n == 0 {
		return false, nil
	}
	for d := range n {
		if start[d] < 0 || count[d] < 1 || start[d]+count[d] > cs[d] {
			return false, fmt.Errorf("%w: box [%d, %d) outside chunk dimension %d of %d", ErrInvalid, start[d], start[d]+count[d], d, cs[d])
		}
	}
	if dstStrides[n-1] != 1 {
		return false, nil
	}
	elem := int64(a.meta.DataType.Size())
	// The box's runs along the last dimension, merged where both the
	// stored and the destination elements continue, then grouped into
	// reads across gaps under BoxReadGap.
	var runs []boxRun
	var reads []boxRead
	cstride := make([]int64, n)
	cstride[n-1] = 1
	for d := n - 2; d >= 0; d-- {
		cstride[d] = cstride[d+1] * int64(cs[d+1])
	}
	// Dimensions from inner on are walked as one run: those the box spans
	// whole, with dst's rows contiguous too, after the last one (W4's
	// (362, 362) band of a (46341, 362) chunk is a single run, not 362).
	inner, runLen := n-1, int64(count[n-1])
	for inner > 0 && count[inner] == cs[inner] && int64(dstStrides[inner-1]) == runLen {
		inner--
		runLen *= int64(count[inner])
	}
	idx := make([]int, n-1)
	for {
		src, off := int64(start[n-1]), int64(dstOff)
		for d := range n - 1 {
			src += int64(start[d]+idx[d]) * cstride[d]
			off += int64(idx[d]) * int64(dstStrides[d])
		}
		r := boxRun{src, off, runLen}
		switch last := len(runs) - 1; {
		case last >= 0 && runs[last].src+runs[last].n == r.src && runs[last].dst+runs[last].n == r.dst:
			runs[last].n += r.n
		case last >= 0 && runs[last].src+runs[last].n == r.src:
			// Next in the store, elsewhere in dst: the same read, straight
			// into dst (one vectored read of the store's bytes).
			runs = append(runs, r)
			reads[len(reads)-1].last = len(runs) - 1
		case last >= 0 && (r.src-runs[last].src-runs[last].n)*elem < BoxReadGap && len(scratch) > 0:
			runs = append(runs, r)
			reads[len(reads)-1].last = len(runs) - 1
			reads[len(reads)-1].gaps = true
		default:
			if len(reads) == maxBoxReads {
				return false, nil
			}
			runs = append(runs, r)
			reads = append(reads, boxRead{first: len(runs) - 1, last: len(runs) - 1})
		}
		d := inner - 1
		for ; d >= 0; d-- {
			idx[d]++
			if idx[d] < count[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			break
		}
	}
	err := a.readBox(ctx, rr, a.ChunkKey(coords), runs, reads, dst, scratch, elem)
	if errors.Is(err, errBoxMissing) {
		return false, nil
	}
	return err == nil, err
}

// boxRun is a run of box elements contiguous both where they are stored
// and in the destination: element offsets src and dst, and length n.
type boxRun struct{ src, dst, n int64 }

// boxRead is one read of a box: the runs [first, last], in store order,
// with the bytes between them when gaps.
type boxRead struct {
	first, last int
	gaps        bool
}

// readBox performs a box's reads as one request to the store (a file reads
// ranges that follow each other with one vectored read): each run goes
// straight to dst and each gap of a read across gaps to sink, in pieces of
// at most len(sink) bytes. A read across gaps long enough
// (sparseGapBytes) is first tried run by run from cached bytes.
func (a *Array) readBox(ctx context.Context, rr RangesReaderInto, key string, runs []boxRun, reads []boxRead, dst, sink []byte, elem int64) error {
	var offsets []int64
	var bufs [][]byte
	cr, _ := rr.(CachedRangesReaderInto)
	for _, g := range reads {
		rs := runs[g.first : g.last+1]
		if g.gaps && cr != nil && sparse(rs, elem) {
			offs, bs := make([]int64, len(rs)), make([][]byte, len(rs))
			for i, r := range rs {
				offs[i], bs[i] = r.src*elem, dst[r.dst*elem:(r.dst+r.n)*elem]
			}
			ok, err := cr.GetCachedRangesInto(ctx, key, offs, bs)
			if err != nil {
				return a.boxErr(key, err)
			}
			if ok {
				continue
			}
		}
		for i, r := range rs {
			if i > 0 {
				end := (rs[i-1].src + rs[i-1].n) * elem
				for gap := r.src*elem - end; gap > 0; {
					k := min(gap, int64(len(sink)))
					offsets, bufs = append(offsets, end), append(bufs, sink[:k])
					end, gap = end+k, gap-k
				}
			}
			offsets, bufs = append(offsets, r.src*elem), append(bufs, dst[r.dst*elem:(r.dst+r.n)*elem])
		}
	}
	if len(offsets) == 0 {
		return nil
	}
	return a.boxErr(key, rr.GetRangesInto(ctx, key, offsets, bufs))
}

// sparse reports whether the gaps between runs (store order) average at
// least sparseGapBytes.
func sparse(runs []boxRun, elem int64) bool {
	first, last := runs[0], runs[len(runs)-1]
	var data int64
	for _, r := range runs {
		data += r.n
	}
	return ((last.src+last.n-first.src)-data)*elem >= sparseGapBytes*int64(len(runs)-1)
}

// errBoxMissing marks a missing chunk found by ReadChunkBox.
var errBoxMissing = errors.New("zarr: chunk missing")

// boxErr maps a store's error for a box read: a missing chunk to
// errBoxMissing, a short one to a corrupt chunk.
func (a *Array) boxErr(key string, err error) error {
	switch {
	case errors.Is(err, ErrNotFound):
		return errBoxMissing
	case errors.Is(err, ErrCorrupt):
		return fmt.Errorf("%w: chunk %s: shorter than %d bytes", ErrCorrupt, key, a.chunkBytes)
	}
	return err
}
