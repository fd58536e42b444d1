package ops

import (
	"slices"

	"github.com/cubego/cubego/plan"
)

// Squeeze removes the given axes, each of length 1.
func Squeeze(x *plan.Array, axes []int) (*plan.Array, error) {
	axes, err := NormalizeAxes(axes, x.NDim(), "squeeze")
	if err != nil {
		return nil, err
	}
	key := make([]Index, x.NDim())
	for d := range key {
		key[d] = Index{Kind: IndexSlice}
		if slices.Contains(axes, d) {
			if x.Shape[d] != 1 {
				return nil, plan.Errorf(plan.ErrValue, "squeeze: cannot remove axis %d of length %d", d, x.Shape[d])
			}
			key[d] = Index{Kind: IndexInt}
		}
	}
	return GetItem(x, key)
}
