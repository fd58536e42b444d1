package ops

import (
	"errors"
	"testing"
	"unsafe"

	"github.com/cubego/cubego/plan"
)

// dtypeOfCase checks DTypeOf[T] against want and T's size.
func dtypeOfCase[T Element](t *testing.T, want DType) {
	t.Helper()
	var z T
	got := DTypeOf[T]()
	if got != want {
		t.Errorf("DTypeOf[%T]() = %s, want %s", z, got, want)
	}
	if got.Size() != int(unsafe.Sizeof(z)) {
		t.Errorf("DTypeOf[%T]() = %s of %d bytes, but %T has %d", z, got, got.Size(), z, unsafe.Sizeof(z))
	}
}

func TestDTypeOf(t *testing.T) {
	dtypeOfCase[bool](t, Bool)
	dtypeOfCase[int8](t, Int8)
	dtypeOfCase[int16](t, Int16)
	dtypeOfCase[int32](t, Int32)
	dtypeOfCase[int64](t, Int64)
	dtypeOfCase[uint8](t, Uint8)
	dtypeOfCase[uint16](t, Uint16)
	dtypeOfCase[uint32](t, Uint32)
	dtypeOfCase[uint64](t, Uint64)
	dtypeOfCase[float32](t, Float32)
	dtypeOfCase[float64](t, Float64)
	dtypeOfCase[complex64](t, Complex64)
	dtypeOfCase[complex128](t, Complex128)
}

func TestFromSlice(t *testing.T) {
	data := []int16{1, -2, 3, -4, 5, -6}
	a, err := FromSlice([]int{2, 3}, data, []any{1, 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.DType != Int16 || a.NBytes() != 12 {
		t.Fatalf("FromSlice: dtype %s, %d bytes; want int16, 12", a.DType, a.NBytes())
	}
	data[0] = 100 // the array holds a copy
	got := make([]byte, 12)
	if err := GenerateRegion(a, plan.Region{Start: []int{0, 0}, Step: []int{1, 1}, Count: []int{2, 3}}, got); err != nil {
		t.Fatal(err)
	}
	want := []byte{1, 0, 0xfe, 0xff, 3, 0, 0xfc, 0xff, 5, 0, 0xfa, 0xff}
	if string(got) != string(want) {
		t.Errorf("FromSlice bytes = %v, want %v", got, want)
	}

	if _, err := FromSlice([]int{4}, []float64{1, 2, 3}, nil, nil); !errors.Is(err, plan.ErrValue) {
		t.Errorf("FromSlice with 3 elements for shape (4,): err = %v, want ErrValue", err)
	}
	if a, err := FromSlice([]int{0}, []bool(nil), nil, nil); err != nil || a.DType != Bool {
		t.Errorf("FromSlice of no bools: %v, %v", a, err)
	}
}
