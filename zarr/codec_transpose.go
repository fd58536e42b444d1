package zarr

import (
	"fmt"
	"slices"
	"unsafe"
)

// The "transpose" codec (zarr-specs codecs/transpose) permutes the
// dimensions of a chunk: dimension i of the encoded chunk is dimension
// order[i] of the decoded one. Zarr v2's order "F" is the transpose with
// the dimensions reversed.

func init() { registerCodec("transpose", newTransposeCodec) }

// TransposeCodec returns the "transpose" array→array codec with a
// permutation of the dimensions: dimension i of the stored chunk is
// dimension order[i] of the array's chunk.
func TransposeCodec(order []int) Codec {
	return Codec{Name: "transpose", Configuration: map[string]any{"order": slices.Clone(order)}}
}

type transposeCodec struct {
	order   []int
	inverse []int
	in, out chunkSpec
}

func newTransposeCodec(config map[string]any, spec chunkSpec) (codec, error) {
	if err := checkConfigKeys("transpose", config, "order"); err != nil {
		return nil, err
	}
	n := len(spec.shape)
	var order []int
	switch s := config["order"].(type) {
	case string:
		// Early drafts of the spec (and zarr-python 3's first releases)
		// allowed "C" and "F".
		switch s {
		case "C":
			order = identityOrder(n)
		case "F":
			order = reversedOrder(n)
		default:
			return nil, fmt.Errorf("%w: codec \"transpose\": order %q", ErrInvalid, s)
		}
	default:
		var ok bool
		var err error
		if order, ok, err = configInts("transpose", config, "order"); err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%w: codec \"transpose\": no order", ErrInvalid)
		}
	}
	return newTranspose(order, spec)
}

func identityOrder(n int) []int {
	o := make([]int, n)
	for i := range o {
		o[i] = i
	}
	return o
}

func reversedOrder(n int) []int {
	o := make([]int, n)
	for i := range o {
		o[i] = n - 1 - i
	}
	return o
}

func newTranspose(order []int, spec chunkSpec) (*transposeCodec, error) {
	n := len(spec.shape)
	if len(order) != n {
		return nil, fmt.Errorf("%w: codec \"transpose\": order %v for a %d-d chunk", ErrInvalid, order, n)
	}
	inv := make([]int, n)
	seen := make([]bool, n)
	for i, o := range order {
		if o < 0 || o >= n || seen[o] {
			return nil, fmt.Errorf("%w: codec \"transpose\": order %v is not a permutation of 0..%d", ErrInvalid, order, n-1)
		}
		seen[o] = true
		inv[o] = i
	}
	c := &transposeCodec{order: slices.Clone(order), inverse: inv, in: spec, out: spec}
	c.out.shape = make([]int, n)
	for i, o := range order {
		c.out.shape[i] = spec.shape[o]
	}
	return c, nil
}

func (c *transposeCodec) metadata() Codec { return TransposeCodec(c.order) }

func (c *transposeCodec) outSpec() chunkSpec { return c.out }

func (c *transposeCodec) encode(dst, src []byte) error {
	if len(src) != c.in.byteSize() || len(dst) != len(src) {
		return fmt.Errorf("transpose codec: chunk has %d bytes, want %d", len(src), c.in.byteSize())
	}
	transpose(dst, src, c.in.shape, c.order, c.in.dataType.Size())
	return nil
}

func (c *transposeCodec) decode(dst, src []byte) error {
	if len(src) != c.out.byteSize() || len(dst) != len(src) {
		return fmt.Errorf("transpose codec: chunk has %d bytes, want %d", len(src), c.out.byteSize())
	}
	transpose(dst, src, c.out.shape, c.inverse, c.in.dataType.Size())
	return nil
}

// transpose writes into dst the array src of shape srcShape with its
// dimensions permuted: dst has shape srcShape[perm[i]] in dimension i.
// Elements are elem bytes. As a simple loop over every dst index j:
//
//	dst[j] = src[Σ j[i]·srcStride[perm[i]]]
func transpose(dst, src []byte, srcShape, perm []int, elem int) {
	if len(src) == 0 {
		return
	}
	switch elem {
	case 1:
		transposeOf(dst, src, srcShape, perm)
	case 2:
		transposeOf(asElems[uint16](dst), asElems[uint16](src), srcShape, perm)
	case 4:
		transposeOf(asElems[uint32](dst), asElems[uint32](src), srcShape, perm)
	case 8:
		transposeOf(asElems[uint64](dst), asElems[uint64](src), srcShape, perm)
	default:
		transposeOf(asElems[[2]uint64](dst), asElems[[2]uint64](src), srcShape, perm)
	}
}

// asElems views b as a slice of T (b's length is a multiple of T's size).
// Unaligned access is fine on the platforms Go supports for this.
func asElems[T any](b []byte) []T {
	var zero T
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(zero)))
}

func transposeOf[T any](dst, src []T, srcShape, perm []int) {
	n := len(srcShape)
	if n == 0 {
		dst[0] = src[0]
		return
	}
	srcStride := make([]int, n)
	s := 1
	for i := n - 1; i >= 0; i-- {
		srcStride[i] = s
		s *= srcShape[i]
	}
	shape := make([]int, n)  // dst shape
	stride := make([]int, n) // src stride of each dst dimension
	for i, p := range perm {
		shape[i] = srcShape[p]
		stride[i] = srcStride[p]
	}
	inner, innerStride := shape[n-1], stride[n-1]
	idx := make([]int, n)
	off, o := 0, 0
	for {
		for k := range inner {
			dst[o+k] = src[off+k*innerStride]
		}
		o += inner
		d := n - 2
		for ; d >= 0; d-- {
			idx[d]++
			off += stride[d]
			if idx[d] < shape[d] {
				break
			}
			off -= idx[d] * stride[d]
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}
