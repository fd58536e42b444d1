package ops

import (
	"errors"
	"testing"

	"github.com/cubego/cubego/plan"
)

func TestResultType(t *testing.T) {
	cases := []struct{ a, b, want DType }{
		{Int8, Int16, Int16}, {Uint8, Uint32, Uint32}, {Int8, Uint8, Int16}, {Int16, Uint16, Int32},
		{Int32, Uint32, Int64}, {Int64, Uint32, Int64}, {Int64, Uint64, Float64}, {Int8, Uint64, Float64},
		{Float32, Float64, Float64}, {Complex64, Complex128, Complex128}, {Float32, Complex64, Complex64},
		{Float64, Complex64, Complex128}, {Bool, Int8, Int8}, {Bool, Float32, Float32},
		{Int16, Float32, Float32}, {Int32, Float32, Float64}, {Uint8, Complex64, Complex64}, {Int64, Complex64, Complex128},
		{Bool, Bool, Bool},
	}
	for _, c := range cases {
		if got := ResultType(c.a, c.b); got != c.want {
			t.Errorf("ResultType(%s, %s) = %s, want %s", c.a, c.b, got, c.want)
		}
		if got := ResultType(c.b, c.a); got != c.want {
			t.Errorf("ResultType(%s, %s) = %s, want %s", c.b, c.a, got, c.want)
		}
	}
}

func TestScalarResultType(t *testing.T) {
	i := plan.Scalar{Kind: 'i', I: 3}
	f := plan.Scalar{Kind: 'f', F: 1.5}
	c := plan.Scalar{Kind: 'c'}
	cases := []struct {
		d    DType
		s    plan.Scalar
		want DType
	}{
		{Int8, i, Int8}, {Bool, i, Int64}, {Int8, f, Float64}, {Float32, f, Float32},
		{Float32, c, Complex64}, {Float64, c, Complex128}, {Int32, c, Complex128}, {Uint8, plan.Scalar{Kind: 'b'}, Uint8},
	}
	for _, k := range cases {
		if got := ScalarResultType(k.d, k.s); got != k.want {
			t.Errorf("ScalarResultType(%s, %c) = %s, want %s", k.d, k.s.Kind, got, k.want)
		}
	}
}

func TestElemwiseErrors(t *testing.T) {
	spec := plan.DefaultSpec()
	a, _ := Full([]int{2, 3}, Float64, plan.Scalar{Kind: 'i'}, nil, spec)
	b, _ := Full([]int{4}, Float64, plan.Scalar{Kind: 'i'}, nil, spec)
	bits, _ := Full([]int{3}, Float64, plan.Scalar{Kind: 'i'}, nil, spec)
	u8, _ := Full([]int{3}, Uint8, plan.Scalar{Kind: 'i'}, nil, spec)
	if _, err := Elemwise("add", Operand{Array: a}, Operand{Array: b}); !errors.Is(err, plan.ErrValue) {
		t.Errorf("mismatched shapes: %v", err)
	}
	if _, err := Elemwise("bitwise_and", Operand{Array: bits}, Operand{Array: bits}); !errors.Is(err, plan.ErrType) {
		t.Errorf("bitwise on floats: %v", err)
	}
	if _, err := Elemwise("add", Operand{Array: u8}, Operand{Scalar: &plan.Scalar{Kind: 'i', I: 300}}); !errors.Is(err, plan.ErrValue) {
		t.Errorf("300 + uint8: %v", err)
	}
	if _, err := Elemwise("no_such_function", Operand{Array: a}); !errors.Is(err, plan.ErrNotImplemented) {
		t.Errorf("unknown function: %v", err)
	}
	if _, err := Matmul(a, b); !errors.Is(err, plan.ErrValue) {
		t.Errorf("matmul (2,3)@(4,): %v", err)
	}
	if _, err := GetItem(b, []Index{{Kind: IndexInt, Int: 4}}); !errors.Is(err, plan.ErrIndex) {
		t.Errorf("index 4 of 4: %v", err)
	}
	if _, err := Reduce("sum", a, []int{2}, false, nil, 0); !errors.Is(err, plan.ErrValue) {
		t.Errorf("axis 2 of 2-d: %v", err)
	}
	empty, _ := Full([]int{0, 3}, Float64, plan.Scalar{Kind: 'i'}, nil, spec)
	if _, err := Reduce("max", empty, []int{0}, false, nil, 0); !errors.Is(err, plan.ErrValue) {
		t.Errorf("max of an empty axis: %v", err)
	}
}

func TestGetItemShapes(t *testing.T) {
	spec := plan.DefaultSpec()
	x, _ := Full([]int{10, 6, 4}, Float64, plan.Scalar{Kind: 'i'}, []any{3, 4, 4}, spec)
	n := func(v int) *int { return &v }
	cases := []struct {
		key  []Index
		want []int
	}{
		{[]Index{{Kind: IndexInt, Int: -1}}, []int{6, 4}},
		{[]Index{{Kind: IndexEllipsis}, {Kind: IndexInt, Int: 0}}, []int{10, 6}},
		{[]Index{{Kind: IndexSlice, Start: n(1), Stop: n(-1), Step: n(3)}}, []int{3, 6, 4}},
		{[]Index{{Kind: IndexSlice, Step: n(-2)}, {Kind: IndexNewAxis}}, []int{5, 1, 6, 4}},
		{[]Index{{Kind: IndexSlice, Start: n(8), Stop: n(2)}}, []int{0, 6, 4}},
		{[]Index{{Kind: IndexSlice, Start: n(-100), Stop: n(100)}}, []int{10, 6, 4}},
	}
	for _, c := range cases {
		y, err := GetItem(x, c.key)
		if err != nil {
			t.Errorf("%+v: %v", c.key, err)
			continue
		}
		if FormatShape(y.Shape) != FormatShape(c.want) {
			t.Errorf("%+v: shape %v, want %v", c.key, y.Shape, c.want)
		}
	}
}
