package zarr

import (
	"bytes"
	"errors"
	"testing"
)

func newTestCodec(t *testing.T, c Codec, dt DataType) codec {
	t.Helper()
	f := codecRegistry[c.Name]
	if f == nil {
		t.Fatalf("codec %q not registered", c.Name)
	}
	cd, err := f(c.Configuration, chunkSpec{shape: []int{4}, dataType: dt})
	if err != nil {
		t.Fatalf("codec %v for %s: %v", c, dt, err)
	}
	return cd
}

func TestBytesCodecConfig(t *testing.T) {
	for _, tc := range []struct {
		config map[string]any
		dt     DataType
		ok     bool
	}{
		{map[string]any{"endian": "little"}, Float64, true},
		{map[string]any{"endian": "big"}, Int16, true},
		{nil, Uint8, true},
		{map[string]any{"endian": nil}, Bool, true},
		{map[string]any{"endian": "big"}, Int8, true},
		{nil, Float32, false},
		{map[string]any{}, Complex64, false},
		{map[string]any{"endian": "BIG"}, Float32, false},
		{map[string]any{"endian": 1}, Float32, false},
		{map[string]any{"endian": "little", "extra": true}, Float32, false},
	} {
		_, err := newBytesCodec(tc.config, chunkSpec{shape: []int{2}, dataType: tc.dt})
		if tc.ok && err != nil {
			t.Errorf("bytes %v for %s: %v", tc.config, tc.dt, err)
		}
		if !tc.ok && !errors.Is(err, ErrInvalid) {
			t.Errorf("bytes %v for %s: error %v, want ErrInvalid", tc.config, tc.dt, err)
		}
	}
}

func TestBytesCodecRoundTrip(t *testing.T) {
	src := make([]byte, 64)
	for i := range src {
		src[i] = byte(i)
	}
	for _, dt := range []DataType{Bool, Int8, Int16, Int32, Int64, Uint64, Float16, Float32, Float64, Complex64, Complex128} {
		for _, endian := range []string{"little", "big"} {
			c := newTestCodec(t, Codec{Name: "bytes", Configuration: map[string]any{"endian": endian}}, dt).(arrayToBytesCodec)
			enc, err := c.encode(nil, src)
			if err != nil {
				t.Fatal(err)
			}
			// The stored form, element by element: little-endian as is,
			// big-endian with each (complex: each part's) bytes reversed.
			unit := dt.Size()
			if dt == Complex64 || dt == Complex128 {
				unit /= 2
			}
			want := bytes.Clone(src)
			if endian == "big" {
				for w := 0; w < len(want); w += unit {
					for k := 0; k < unit/2; k++ {
						want[w+k], want[w+unit-1-k] = want[w+unit-1-k], want[w+k]
					}
				}
			}
			if !bytes.Equal(enc, want) {
				t.Errorf("%s %s: encoded %x, want %x", dt, endian, enc, want)
			}
			if c.passThrough() != bytes.Equal(enc, src) {
				t.Errorf("%s %s: passThrough() = %v", dt, endian, c.passThrough())
			}
			dec := make([]byte, len(src))
			if err := c.decode(dec, enc); err != nil || !bytes.Equal(dec, src) {
				t.Errorf("%s %s: decoded %x, %v", dt, endian, dec, err)
			}
			if err := c.decode(dec, enc[:len(enc)-1]); err == nil {
				t.Errorf("%s %s: decoding a short chunk succeeded", dt, endian)
			}
			if got := c.metadata(); got.Name != "bytes" || got.Configuration["endian"] != endian {
				t.Errorf("metadata() = %v", got)
			}
		}
	}
}
