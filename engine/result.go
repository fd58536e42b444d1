package engine

import (
	"context"
	"fmt"
	"iter"
	"unsafe"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
)

// Read copies output i of the computation (C order, little-endian) into
// dst, which must hold exactly the array's bytes. [ReadAs] returns the
// elements as Go values and [ReadBlocks] reads one block at a time.
func (r *Result) Read(ctx context.Context, i int, dst []byte) error {
	a, err := r.output(i)
	if err != nil {
		return err
	}
	if int64(len(dst)) != a.NBytes() {
		return plan.Errorf(plan.ErrValue, "buffer of %d bytes cannot hold %s (%d bytes)", len(dst), a.Name, a.NBytes())
	}
	return r.readRegion(ctx, a, wholeRegion(a.Shape), dst[:len(dst):len(dst)])
}

// output returns output i, or an index error.
func (r *Result) output(i int) (*plan.Array, error) {
	outs := r.job.plan.Outputs
	if i < 0 || i >= len(outs) {
		return nil, plan.Errorf(plan.ErrIndex, "result %d out of range: the computation has %d outputs", i, len(outs))
	}
	return outs[i], nil
}

// readRegion fills dst with region reg of a, taking scratch chunks from the
// computation's allocator. When cap(dst) holds a whole stored chunk and reg
// is one block, the chunk is read straight into dst.
func (r *Result) readRegion(ctx context.Context, a *plan.Array, reg plan.Region, dst []byte) error {
	defer func() {
		if p := recover(); p != nil {
			panic(fmt.Sprintf("engine: reading %s: %v", a.Name, p))
		}
	}()
	ta := &taskAllocator{parent: r.job.alloc}
	defer ta.freeAll()
	return r.job.readRegion(ctx, ta, a, reg, dst)
}

// wholeRegion is the region of every element of an array of shape.
func wholeRegion(shape []int) plan.Region {
	n := len(shape)
	reg := plan.Region{Start: make([]int, n), Step: make([]int, n), Count: append([]int{}, shape...)}
	for d := range reg.Step {
		reg.Step[d] = 1
	}
	return reg
}

// ReadAs returns output i of the computation r as a slice of its elements
// in C order. T must be the Go type of the output's data type
// ([ops.DTypeOf]: float64 for float64, bool for bool, ...); another T is an
// error wrapping [plan.ErrType]. The whole array is read into memory; read
// outputs larger than memory with [ReadBlocks].
func ReadAs[T ops.Element](ctx context.Context, r *Result, i int) ([]T, error) {
	a, err := r.output(i)
	if err != nil {
		return nil, err
	}
	if err := checkElement[T](i, a); err != nil {
		return nil, err
	}
	out := make([]T, a.Size())
	b := elementBytes(out)
	if err := r.readRegion(ctx, a, wholeRegion(a.Shape), b[:len(b):len(b)]); err != nil {
		return nil, err
	}
	normalizeBools(a.DType, b)
	return out, nil
}

// Block is one block of a computed array: a chunk of the array's chunking
// (plan.Array.Chunks), with its place in the array and its elements.
type Block[T ops.Element] struct {
	// Coords are the block's coordinates in the grid of blocks.
	Coords []int
	// Start is the index of the block's first element in the array.
	Start []int
	// Shape is the block's shape: the chunk sizes at Coords (edge blocks
	// may be smaller than the others).
	Shape []int
	// Data are the block's elements in C order. The next iteration
	// overwrites them: copy them (slices.Clone) to keep them.
	Data []T
}

// ReadBlocks returns an iterator over the blocks of output i of the
// computation r, in C order of their coordinates, reading one block at a
// time: a loop over it holds one block's elements (plus one stored chunk
// while a block is assembled) however large the array is. T must be the Go
// type of the output's data type, as for [ReadAs].
//
// An error (a wrong T, a failed read, a cancelled ctx) is yielded once,
// with a zero Block, and ends the iteration:
//
//	for b, err := range engine.ReadBlocks[float64](ctx, res, 0) {
//		if err != nil {
//			return err
//		}
//		use(b.Coords, b.Data)
//	}
func ReadBlocks[T ops.Element](ctx context.Context, r *Result, i int) iter.Seq2[Block[T], error] {
	return func(yield func(Block[T], error) bool) {
		a, err := r.output(i)
		if err == nil {
			err = checkElement[T](i, a)
		}
		if err != nil {
			yield(Block[T]{}, err)
			return
		}
		if a.Size() == 0 {
			return
		}
		grid := a.NumBlocks()
		largest := int64(1)
		for _, c := range a.Chunks {
			largest *= int64(plan.MaxChunk(c))
		}
		buf := make([]T, largest)
		offsets := make([][]int, len(grid))
		for d, c := range a.Chunks {
			offsets[d] = plan.Offsets(c)
		}
		coords := make([]int, len(grid))
		for {
			if err := ctx.Err(); err != nil {
				yield(Block[T]{}, err)
				return
			}
			b := Block[T]{Coords: append([]int{}, coords...), Start: make([]int, len(grid)), Shape: a.BlockShape(coords)}
			reg := wholeRegion(b.Shape)
			for d, c := range coords {
				b.Start[d] = offsets[d][c]
				reg.Start[d] = b.Start[d]
			}
			b.Data = buf[:reg.Size()]
			// The whole buffer as capacity lets a stored chunk, edge chunks
			// included, be read straight into it.
			all := elementBytes(buf)
			dst := all[:len(b.Data)*a.DType.Size()]
			if err := r.readRegion(ctx, a, reg, dst); err != nil {
				yield(Block[T]{}, fmt.Errorf("engine: reading block %v of %s: %w", coords, a.Name, err))
				return
			}
			normalizeBools(a.DType, dst)
			if !yield(b, nil) {
				return
			}
			// The next coordinates in C order.
			d := len(coords) - 1
			for ; d >= 0; d-- {
				coords[d]++
				if coords[d] < grid[d] {
					break
				}
				coords[d] = 0
			}
			if d < 0 {
				return
			}
		}
	}
}

// checkElement returns a type error when T does not hold the elements of
// output i, array a.
func checkElement[T ops.Element](i int, a *plan.Array) error {
	// The data types' names are their Go types' names.
	if want := ops.DTypeOf[T](); a.DType != want {
		return plan.Errorf(plan.ErrType, "engine: output %d (%s) has dtype %s, not %s: read it as []%s, or cast it first with ops.AsType",
			i, a.Name, a.DType, want, a.DType)
	}
	return nil
}

// elementBytes views the elements of s as their bytes, without copying.
func elementBytes[T ops.Element](s []T) []byte {
	if len(s) == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(s[0])))
}

// normalizeBools makes every element of a bool chunk 0 or 1 before it is
// seen as Go bools (a Zarr array written elsewhere may hold other non-zero
// bytes, which Go's bool does not allow).
func normalizeBools(dt ops.DType, b []byte) {
	if dt != ops.Bool {
		return
	}
	for i, v := range b {
		if v > 1 {
			b[i] = 1
		}
	}
}

// Outputs returns the arrays the computation produced.
func (r *Result) Outputs() []*plan.Array { return r.job.plan.Outputs }

// Close removes the computation's intermediates. Targets written with
// to_zarr stay, and so do, in a resumable computation, the stored arrays it
// was asked for: a later resumed computation reading them (d = -c after c)
// finds them complete.
func (r *Result) Close() error {
	s := r.job.storage
	s.close()
	if !s.keyed {
		return removeLocal(r.job.dir)
	}
	keep := map[string]bool{}
	if s.resume {
		for _, a := range r.job.plan.Outputs {
			if k, err := plan.Key(a); err == nil {
				keep[k] = true
			}
		}
	}
	return s.releaseUsed(func(p string) bool { return keep[p] })
}
