package engine

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
)

// recordData is a 9 × 10 matrix with ties (values 0..3) and NaNs, but no
// row or column of only NaNs.
func recordData() []float64 {
	v := make([]float64, 90)
	for i := range v {
		v[i] = float64((i * 7) % 4)
		if i%11 == 3 || i%13 == 5 {
			v[i] = math.NaN()
		}
	}
	return v
}

// lanes returns the values of each lane of a 9 × 10 matrix reduced over
// axis (-1: all), in index order.
func lanes(v []float64, axis int) [][]float64 {
	switch axis {
	case 0:
		out := make([][]float64, 10)
		for c := range 10 {
			for r := range 9 {
				out[c] = append(out[c], v[r*10+c])
			}
		}
		return out
	case 1:
		out := make([][]float64, 9)
		for r := range 9 {
			out[r] = v[r*10 : r*10+10]
		}
		return out
	}
	return [][]float64{v}
}

func argOf(op string, vals []float64) float64 {
	best := -1
	for i, v := range vals {
		nan := v != v
		switch {
		case nan && (op == "argmax" || op == "argmin"):
			return float64(i)
		case nan:
		case best < 0,
			(op == "argmax" || op == "nanargmax") && v > vals[best],
			(op == "argmin" || op == "nanargmin") && v < vals[best]:
			best = i
		}
	}
	return float64(best)
}

func momentsOf(kind string, vals []float64) float64 {
	var kept []float64
	for _, v := range vals {
		if v == v || kind == "var" {
			kept = append(kept, v)
		}
	}
	s := 0.0
	for _, v := range kept {
		s += v
	}
	m := s / float64(len(kept))
	if kind == "nanmean" {
		return m
	}
	ss := 0.0
	for _, v := range kept {
		ss += (v - m) * (v - m)
	}
	return ss / float64(len(kept)-1)
}

func TestRecordReductionsExecute(t *testing.T) {
	spec := testSpec(t)
	data := recordData()
	x := literal(t, spec, []int{9, 10}, []any{2, 3}, data)
	// A producer fused into the first round.
	y, err := ops.Elemwise("multiply", ops.Operand{Array: x}, ops.Operand{Scalar: &plan.Scalar{Kind: 'f', F: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, split := range []int{0, 2, 3} {
		for _, axis := range []int{-1, 0, 1} {
			var outs []*plan.Array
			var want [][]float64
			for _, op := range []string{"argmax", "argmin", "nanargmax", "nanargmin"} {
				var ax *int
				if axis >= 0 {
					ax = &axis
				}
				a, err := ops.ArgReduceSplit(op, y, ax, false, ops.Split{Every: split})
				if err != nil {
					t.Fatal(err)
				}
				outs = append(outs, a)
				var w []float64
				for _, l := range lanes(data, axis) {
					w = append(w, argOf(op, l))
				}
				want = append(want, w)
			}
			axes := []int{axis}
			if axis < 0 {
				axes = nil
			}
			for _, fn := range []string{"nanmean", "nanvar"} {
				m, err := ops.Moments(fn, y, axes, false, 1, nil, ops.Split{Every: split})
				if err != nil {
					t.Fatal(err)
				}
				outs = append(outs, m)
				var w []float64
				for _, l := range lanes(data, axis) {
					w = append(w, momentsOf(fn, l))
				}
				want = append(want, w)
			}
			got, _ := computeFused(t, outs...)
			for i := range outs {
				for j := range want[i] {
					if g, w := got[i][j], want[i][j]; !near(g, w) {
						t.Errorf("split %d axis %d %s lane %d: %v, want %v", split, axis, outs[i].Op.Func, j, g, w)
					}
				}
			}
		}
	}
}

func TestNanArgOfAllNaNFails(t *testing.T) {
	spec := testSpec(t)
	x := literal(t, spec, []int{2, 3}, []any{1, 2}, []float64{1, math.NaN(), 2, math.NaN(), math.NaN(), math.NaN()})
	one := 1
	a, err := ops.ArgReduce("nanargmin", x, &one, false)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build([]*plan.Array{a})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Execute(context.Background(), p, Options{}, nil)
	if !errors.Is(err, plan.ErrValue) {
		t.Fatalf("error %v, want a value error", err)
	}
}

func TestBroadcastIsNotFusedIntoAFold(t *testing.T) {
	spec := testSpec(t)
	row := literal(t, spec, []int{1, 5}, []any{1, 2}, seq(5))
	b, err := ops.BroadcastTo(row, []int{4, 5})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ops.Reduce("sum", b, []int{0}, false, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, err := ops.ArgReduce("argmax", b, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	// Each alone, so that the broadcast has one consumer and could fuse.
	sum, _ := computeFused(t, s)
	for j := range 5 {
		if sum[0][j] != 4*float64(j) {
			t.Errorf("sum[%d] = %v, want %v", j, sum[0][j], 4*float64(j))
		}
	}
	if arg, _ := computeFused(t, a); arg[0][0] != 4 {
		t.Errorf("argmax = %v, want 4", arg[0][0])
	}
}
