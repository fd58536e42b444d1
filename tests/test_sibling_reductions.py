"""Sibling reductions over common inputs are folded by one stacked op.

``compute(mean(u*u, 0), mean(v*v, 0), mean(u*v, 0))`` reads u and v once
for all three (plan.Kernel.Stack); the results must equal each reduction
computed alone, bit for bit, and the merge must not happen where it would
read nothing less, exceed allowed_mem, or where fusion is off.
"""

import numpy as np
import zarr

import cubego


def _inputs(spec, chunks=(5, 1, 7, 9)):
    rng = np.random.default_rng(7)
    un, vn = rng.standard_normal((40, 1, 7, 9)), rng.standard_normal((40, 1, 7, 9))
    return un, vn, cubego.from_array(un, chunks=chunks, spec=spec), cubego.from_array(vn, chunks=chunks, spec=spec)


def _stacked(plan):
    return [op for op in plan.ops if "+" in op.name]


def test_quadratic_means_stack_and_equal_alone(tmp_path):
    spec = cubego.Spec(work_dir=str(tmp_path), allowed_mem="100MB")
    un, vn, u, v = _inputs(spec)
    means = [cubego.mean(u * u, axis=0, split_every=2), cubego.mean(v * v, axis=0, split_every=2),
             cubego.mean(u * v, axis=0, split_every=2)]
    stacked = _stacked(cubego.plan(*means))
    assert len(stacked) == 1 and set(stacked[0].inputs) == {u.name, v.name}
    got = cubego.compute(*means)
    for g, m in zip(got, means):
        np.testing.assert_array_equal(g, m.compute())  # alone: nothing to stack
    np.testing.assert_allclose(got[2], (un * vn).mean(axis=0), rtol=1e-13)


def test_one_round_reductions_are_copied_out_and_stored(tmp_path):
    spec = cubego.Spec(work_dir=str(tmp_path), allowed_mem="100MB")
    un, vn, u, v = _inputs(spec, chunks=(40, 1, 7, 9))
    sums = [cubego.sum(u * 2, axis=0), cubego.sum(u - v, axis=0), cubego.max(v * u, axis=0)]
    assert len(_stacked(cubego.plan(*sums[:2]))) == 1
    a, b, c = cubego.compute(*sums)
    np.testing.assert_array_equal(a, sums[0].compute())
    np.testing.assert_array_equal(b, sums[1].compute())
    np.testing.assert_array_equal(c, (vn * un).max(axis=0))
    # Stored results (to_zarr targets) come out of the stacked op too.
    paths = [str(tmp_path / f"s{i}.zarr") for i in range(2)]
    cubego.store(sums[:2], paths)
    for p, s in zip(paths, (a, b)):
        np.testing.assert_array_equal(zarr.open_array(p)[...], s)


def test_no_stacking_without_a_shared_input_or_fusion(tmp_path):
    spec = cubego.Spec(work_dir=str(tmp_path), allowed_mem="100MB")
    un, vn, u, v = _inputs(spec)
    assert not _stacked(cubego.plan(cubego.sum(u, axis=0), cubego.sum(v, axis=0)))
    means = [cubego.mean(u * u, axis=0), cubego.mean(u * v, axis=0)]
    assert _stacked(cubego.plan(*means))
    got = cubego.compute(*means, optimize_graph=False)
    np.testing.assert_allclose(got[0], (un * un).mean(axis=0), rtol=1e-13)


def test_no_stacking_over_allowed_mem(tmp_path):
    un, vn, u, v = _inputs(cubego.Spec(work_dir=str(tmp_path), allowed_mem="100MB"))
    alone = cubego.plan(cubego.mean(u * v, axis=0)).max_projected_mem
    spec = cubego.Spec(work_dir=str(tmp_path), allowed_mem=alone)
    u, v = cubego.from_array(un, chunks=u.chunksize, spec=spec), cubego.from_array(vn, chunks=v.chunksize, spec=spec)
    means = [cubego.mean(u * u, axis=0), cubego.mean(v * v, axis=0), cubego.mean(u * v, axis=0)]
    plan = cubego.plan(*means)
    assert not _stacked(plan) and not plan.exceeds_memory
    np.testing.assert_allclose(cubego.compute(*means)[1], (vn * vn).mean(axis=0), rtol=1e-13)
