package ops

import (
	"testing"

	"github.com/cubego/cubego/ops/internal/kernels"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// The projection (plan.FoldsCast) and the kernels (kernels.Widens) agree on
// which cast operands a reduction folds without a buffer.
func TestFoldsCastAgreesWithKernels(t *testing.T) {
	for from := zarr.Bool; from <= zarr.Complex128; from++ {
		for to := zarr.Bool; to <= zarr.Complex128; to++ {
			e := castExpr(plan.InputExpr(0, from), to)
			for _, op := range []string{"sum", "prod", "min", "max", "nansum", "nanprod", "nanmin", "nanmax", "any", "all"} {
				if got, want := plan.FoldsCast(op, e), from != to && kernels.Widens(op, from, to); got != want {
					t.Errorf("%s %s -> %s: plan.FoldsCast %v, kernels.Widens %v", op, from, to, got, want)
				}
			}
		}
	}
}
