package zarr

import (
	"encoding/binary"
	"fmt"
)

// The "bytes" codec (Zarr v3 core) stores a chunk's elements in C order
// with a fixed byte order. Complex numbers are two floats, each swapped
// on its own.

func init() { registerCodec("bytes", newBytesCodec) }

type bytesCodec struct {
	endian string // "little", "big", or "" (allowed for 1-byte types)
	unit   int    // bytes swapped as one unit when big-endian: 1, 2, 4 or 8
}

func newBytesCodec(config map[string]any, spec chunkSpec) (codec, error) {
	if err := checkConfigKeys("bytes", config, "endian"); err != nil {
		return nil, err
	}
	endian, _, err := configString("bytes", config, "endian")
	if err != nil {
		return nil, err
	}
	unit := spec.dataType.Size()
	if spec.dataType == Complex64 || spec.dataType == Complex128 {
		unit /= 2
	}
	switch endian {
	case "little", "big":
	case "":
		if unit > 1 {
			return nil, fmt.Errorf("%w: codec \"bytes\": data type %s needs an endian", ErrInvalid, spec.dataType)
		}
	default:
		return nil, fmt.Errorf("%w: codec \"bytes\": endian %q (want \"little\" or \"big\")", ErrInvalid, endian)
	}
	return &bytesCodec{endian: endian, unit: unit}, nil
}

func (c *bytesCodec) metadata() Codec {
	if c.endian == "" {
		return Codec{Name: "bytes"}
	}
	return Codec{Name: "bytes", Configuration: map[string]any{"endian": c.endian}}
}

func (c *bytesCodec) encodedSize(decoded int) int { return decoded }

func (c *bytesCodec) passThrough() bool { return c.endian != "big" || c.unit == 1 }

func (c *bytesCodec) encode(dst, src []byte) ([]byte, error) {
	n := len(dst)
	dst = append(dst, src...)
	if !c.passThrough() {
		swapBytes(dst[n:], dst[n:], c.unit)
	}
	return dst, nil
}

func (c *bytesCodec) decode(dst, src []byte) error {
	if len(src) != len(dst) {
		return fmt.Errorf("bytes codec: chunk has %d bytes, want %d", len(src), len(dst))
	}
	if c.passThrough() {
		copy(dst, src)
	} else {
		swapBytes(dst, src, c.unit)
	}
	return nil
}

// swapBytes reverses the byte order of every unit-byte word of src into
// dst (which may be src); len(src) is a multiple of unit. As a simple
// loop: for each word w, dst[w+k] = src[w+unit-1-k].
func swapBytes(dst, src []byte, unit int) {
	switch unit {
	case 2:
		for i := 0; i+2 <= len(src); i += 2 {
			binary.LittleEndian.PutUint16(dst[i:], binary.BigEndian.Uint16(src[i:]))
		}
	case 4:
		for i := 0; i+4 <= len(src); i += 4 {
			binary.LittleEndian.PutUint32(dst[i:], binary.BigEndian.Uint32(src[i:]))
		}
	case 8:
		for i := 0; i+8 <= len(src); i += 8 {
			binary.LittleEndian.PutUint64(dst[i:], binary.BigEndian.Uint64(src[i:]))
		}
	default:
		copy(dst, src)
	}
}
