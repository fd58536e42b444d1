package plan

import (
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/cubego/cubego/zarr"
)

var arrayCounter, opCounter atomic.Int64

// Array is a node of the plan: a lazily defined N-dimensional array with a
// shape, a data type and a chunking. Its data comes from exactly one of:
// an Op (computed and stored as Zarr), a Generator (virtual: computed on the
// fly wherever it is read, never stored) or a Source (an existing Zarr array).
type Array struct {
	ID     int64
	Name   string
	Shape  []int
	DType  zarr.DataType
	Chunks [][]int
	Spec   *Spec

	Op        *Op
	Generator *Generator
	Source    *ZarrRef

	// PartialReads is set on a Source whose chunks are stored raw in a
	// store that reads byte ranges (zarr.Array.ReadsBoxes): reading part
	// of one of its chunks reads only that part, which lets a rechunk read
	// its source directly instead of through intermediates.
	PartialReads bool

	// Target, when set, is where the computed array is written (to_zarr).
	// Otherwise the engine writes it to an intermediate under the work dir.
	Target *ZarrRef

	// offsets caches ChunkOffsets: tasks look up their blocks' element
	// offsets, and summing the chunk sizes before a block on every lookup
	// made a plan's cost grow with the square of its blocks (issue #19).
	offsets atomic.Pointer[[][]int]
}

// ZarrRef names a Zarr array in a store, and for arrays the engine creates
// (targets and intermediates) how to create it.
type ZarrRef struct {
	Store string `json:"store"` // local path or URL
	Path  string `json:"path"`
	// StorageOptions configure object stores (endpoint_url, region, key,
	// secret, anon, ...), as fsspec's storage_options.
	StorageOptions map[string]any `json:"storage_options,omitempty"`
	// ZarrFormat is 2 or 3 (0 means 3) for arrays the engine creates.
	ZarrFormat int `json:"zarr_format,omitempty"`
	// Compressors are the bytes-to-bytes codecs (Zarr v3 names and
	// configurations) of arrays the engine creates; none means
	// uncompressed.
	Compressors []zarr.Codec `json:"compressors,omitempty"`
	// InnerChunks, when set, makes a created array sharded: its chunks (the
	// array's blocks) are shards of inner chunks of this shape.
	InnerChunks []int `json:"inner_chunks,omitempty"`
	// ByInnerChunks, on a source, reads a sharded array by its inner
	// chunks (zarr.Array.ByInnerChunks): the array's grid is the inner
	// chunks', as zarr-python's Array.chunks is, so a block reads only its
	// inner chunks, not their whole shard.
	ByInnerChunks bool `json:"by_inner_chunks,omitempty"`
	// Overwrite allows replacing an existing array at a target.
	Overwrite bool `json:"overwrite,omitempty"`
	// Existing targets an array that exists already: the computed array is
	// written into it, its first element at Region (element offsets, on
	// chunk boundaries), and nothing else of it changes.
	Existing bool  `json:"existing,omitempty"`
	Region   []int `json:"region,omitempty"`
}

// NewArray returns an array node with a fresh name. Chunks must be
// normalised already.
func NewArray(shape []int, dt zarr.DataType, chunks [][]int, spec *Spec) *Array {
	id := arrayCounter.Add(1)
	if spec == nil {
		spec = DefaultSpec()
	}
	return &Array{
		ID: id, Name: fmt.Sprintf("array-%03d", id),
		Shape: append([]int{}, shape...), DType: dt, Chunks: chunks, Spec: spec,
	}
}

// ChunkOffsets returns the element offset of each block along dimension d
// followed by the extent, Offsets(a.Chunks[d]), computed once per array.
// Chunks must not change once it has been called; the result is shared and
// must not be modified.
func (a *Array) ChunkOffsets(d int) []int {
	if all := a.offsets.Load(); all != nil && len((*all)[d]) == len(a.Chunks[d])+1 {
		return (*all)[d]
	}
	all := make([][]int, len(a.Chunks))
	for i, c := range a.Chunks {
		all[i] = Offsets(c)
	}
	a.offsets.Store(&all)
	return all[d]
}

// BlockOf returns the block along dimension d that holds element index i
// (0 <= i < Shape[d]).
func (a *Array) BlockOf(d, i int) int {
	off := a.ChunkOffsets(d)
	b, found := slices.BinarySearch(off, i)
	if !found {
		b--
	}
	return min(b, len(a.Chunks[d])-1)
}

// NDim returns the number of dimensions.
func (a *Array) NDim() int { return len(a.Shape) }

// Size returns the number of elements.
func (a *Array) Size() int64 { return Prod(a.Shape) }

// NBytes returns the number of bytes of the whole array.
func (a *Array) NBytes() int64 { return a.Size() * int64(a.DType.Size()) }

// NumBlocks returns the number of blocks along each axis.
func (a *Array) NumBlocks() []int {
	nb := make([]int, len(a.Chunks))
	for i, c := range a.Chunks {
		nb[i] = len(c)
	}
	return nb
}

// NumTasks returns the number of blocks of the array.
func (a *Array) NumTasks() int64 { return Prod(a.NumBlocks()) }

// ChunkShape returns the largest block size along each axis.
func (a *Array) ChunkShape() []int {
	cs := make([]int, len(a.Chunks))
	for i, c := range a.Chunks {
		cs[i] = MaxChunk(c)
	}
	return cs
}

// ChunkBytes returns the bytes of the largest block.
func (a *Array) ChunkBytes() int64 { return Prod(a.ChunkShape()) * int64(a.DType.Size()) }

// BlockShape returns the shape of the block at the given block coordinates.
func (a *Array) BlockShape(coords []int) []int {
	s := make([]int, len(coords))
	for i, c := range coords {
		s[i] = a.Chunks[i][c]
	}
	return s
}

// Virtual reports whether the array is computed wherever it is read.
func (a *Array) Virtual() bool { return a.Generator != nil }

func (a *Array) String() string {
	return fmt.Sprintf("%s<shape=%v, dtype=%s, chunks=%v>", a.Name, a.Shape, a.DType, a.Chunks)
}

// Generator describes a virtual array: one whose values are a pure function
// of the element index, so any region can be produced where it is read.
type Generator struct {
	Kind  string  `json:"kind"` // "full", "arange", "random", "literal"
	Value Scalar  `json:"value,omitempty"`
	Start float64 `json:"start,omitempty"`
	Step  float64 `json:"step,omitempty"`
	Seed  uint64  `json:"seed,omitempty"`
	// Data holds a literal array's bytes (C order, little-endian).
	Data []byte `json:"data,omitempty"`
}

// Scalar is a Python-like scalar value: Kind is 'b' (bool), 'i' (int64),
// 'u' (uint64), 'f' (float64) or 'c' (complex128).
type Scalar struct {
	Kind byte       `json:"kind"`
	B    bool       `json:"b,omitempty"`
	I    int64      `json:"i,omitempty"`
	U    uint64     `json:"u,omitempty"`
	F    float64    `json:"f,omitempty"`
	C    complex128 `json:"-"`
}

// Prod returns the product of ints as int64 (1 for none).
func Prod(xs []int) int64 {
	p := int64(1)
	for _, x := range xs {
		p *= int64(x)
	}
	return p
}
