package plan

import (
	"errors"
	"testing"
)

func TestCommonSpecPrefersExplicit(t *testing.T) {
	implicit := DefaultSpec()
	implicit.Implicit = true
	explicit := &Spec{AllowedMem: 200_000_000}
	other := &Spec{AllowedMem: 300_000_000}
	arr := func(s *Spec) *Array { return &Array{Spec: s} }

	got, err := CommonSpec(arr(implicit), arr(explicit), arr(implicit))
	if err != nil || got != explicit {
		t.Fatalf("implicit, explicit, implicit: got %v, %v; want the explicit spec", got, err)
	}
	got, err = CommonSpec(arr(implicit), arr(implicit))
	if err != nil || got != implicit {
		t.Fatalf("two implicit: got %v, %v; want the implicit spec", got, err)
	}
	if _, err := CommonSpec(arr(explicit), arr(implicit), arr(other)); !errors.Is(err, ErrValue) {
		t.Fatalf("two different explicit specs: got %v, want ErrValue", err)
	}
	changed := &Spec{AllowedMem: 300_000_000, Implicit: true}
	if _, err := CommonSpec(arr(implicit), arr(changed)); !errors.Is(err, ErrValue) {
		t.Fatalf("two different implicit specs: got %v, want ErrValue", err)
	}
	same := *explicit
	same.Implicit = true
	if !explicit.Equal(&same) {
		t.Fatal("Equal must ignore Implicit")
	}
}
