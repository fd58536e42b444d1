"""compute(resume=True) finishes only what an earlier failed try left undone."""

import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import cubego


def test_resume_in_a_new_process(tmp_path):
    spec = cubego.Spec(work_dir=str(tmp_path / "work"), allowed_mem="100MB")
    x = cubego.asarray(np.arange(96.0).reshape(12, 8), chunks=(5, 3), spec=spec)
    # Two ops whose outputs are stored: the negation evaluated by the first
    # rechunk copy, then a second rechunk (a rechunk fuses into a reader only
    # when the reader reads it block for block); the third copy computes
    # y * 2 and writes the target.
    y = (-x).rechunk((12, 2)).rechunk((3, 8)).rechunk((6, 4))
    target = tmp_path / "out.zarr"
    target.write_text("a file where the array should go: the final write fails")
    with pytest.raises(Exception, match="out.zarr"):
        cubego.to_zarr(y * 2, str(target), resume=True)
    os.remove(target)

    stored = cubego.to_zarr(y * 2, str(target), compute=False)
    code = (
        "import json, pickle, sys, cubego\n"
        "a = pickle.loads(sys.stdin.buffer.read())\n"
        "cubego.compute(a, resume=True)\n"
        "print(json.dumps(cubego._last_stats()['ops']))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        input=pickle.dumps(stored),
        capture_output=True,
        env=os.environ,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    import json

    op_stats = json.loads(out.stdout)
    assert [o["func"] for o in op_stats if o.get("skipped")] == ["negative+rechunk", "rechunk"]
    import zarr

    np.testing.assert_array_equal(
        zarr.open_array(str(target))[...], -np.arange(96.0).reshape(12, 8) * 2
    )
