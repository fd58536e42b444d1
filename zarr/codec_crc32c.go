package zarr

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// The "crc32c" codec (zarr-specs codecs/crc32c) appends the CRC-32C
// (Castagnoli) checksum of the bytes, little-endian, and checks it when
// decoding.

func init() { registerCodec("crc32c", newCrc32cCodec) }

// Crc32cCodec returns the "crc32c" bytes→bytes codec.
func Crc32cCodec() Codec { return Codec{Name: "crc32c"} }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type crc32cCodec struct{}

func newCrc32cCodec(config map[string]any, _ chunkSpec) (codec, error) {
	if err := checkConfigKeys("crc32c", config); err != nil {
		return nil, err
	}
	return crc32cCodec{}, nil
}

func (crc32cCodec) metadata() Codec { return Crc32cCodec() }

func (crc32cCodec) encodedSizeBound(n int) int { return n + 4 }

func (crc32cCodec) exactEncodedSize(n int) int { return n + 4 }

func (crc32cCodec) encode(dst, src []byte) ([]byte, error) {
	dst = append(dst, src...)
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(src, castagnoli)), nil
}

func (crc32cCodec) decode(dst, src []byte) (int, error) {
	if len(src) < 4 {
		return 0, fmt.Errorf("crc32c: %d bytes, shorter than the checksum", len(src))
	}
	data := src[:len(src)-4]
	if len(data) > len(dst) {
		return 0, fmt.Errorf("crc32c: decoded data exceeds %d bytes", len(dst))
	}
	want := binary.LittleEndian.Uint32(src[len(src)-4:])
	if got := crc32.Checksum(data, castagnoli); got != want {
		return 0, fmt.Errorf("crc32c: checksum %08x, stored %08x", got, want)
	}
	return copy(dst, data), nil
}
