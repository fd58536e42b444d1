"""Hardening (issue #17 finding 1): no chunk grid or shape, however large, may
abort the process.

A valid zarr.json of a few bytes (shape [2**35], chunks [1]) and calls such as
``ones((2**40,), chunks=(1,))`` once made the library allocate a list of 2**35
block sizes and die ("fatal error: runtime: out of memory", SIGABRT). Each
case runs in a child process, so an abort fails the test instead of killing
pytest, and a hang is bounded by the timeout; the child reports the exception
type and message, which are checked here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

CHILD = r"""
import json, sys
import numpy as np
import cubego
ns = {"cubego": cubego, "np": np}
try:
    exec(sys.argv[1], ns)
    print(json.dumps({"ok": True, "result": repr(ns.get("result"))[:2000]}))
except BaseException as e:
    print(json.dumps({"ok": False, "type": type(e).__name__, "message": str(e)[:2000]}))
"""


def run_child(code: str, timeout: float = 180) -> dict:
    """Run *code* in a fresh interpreter; its outcome (never a crash or hang)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run(
        [sys.executable, "-c", CHILD, code],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    assert out.returncode == 0, f"the child died (exit {out.returncode}):\n{out.stderr[-3000:]}"
    return json.loads(out.stdout.strip().splitlines()[-1])


def expect_error(code: str, exc: str, *fragments: str) -> dict:
    got = run_child(code)
    assert not got["ok"], f"no error: {got}"
    assert got["type"] == exc, got
    for f in fragments:
        assert f in got["message"], (f, got["message"])
    return got


def zarr_json(shape, chunks, dtype="uint8", fill=0) -> str:
    return json.dumps(
        {
            "zarr_format": 3,
            "node_type": "array",
            "shape": shape,
            "data_type": dtype,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": fill,
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "attributes": {},
        }
    )


def zarray(shape, chunks, dtype="|u1", fill=0) -> str:
    return json.dumps(
        {
            "zarr_format": 2,
            "shape": shape,
            "chunks": chunks,
            "dtype": dtype,
            "compressor": None,
            "fill_value": fill,
            "order": "C",
            "filters": None,
        }
    )


def write_array(path, doc: str, v2: bool) -> str:
    path.mkdir()
    (path / (".zarray" if v2 else "zarr.json")).write_text(doc)
    return str(path)


@pytest.mark.parametrize("v2", [False, True], ids=["v3", "v2"])
def test_hand_written_metadata_with_2_35_chunks_is_a_value_error(tmp_path, v2):
    doc = zarray([2**35], [1]) if v2 else zarr_json([2**35], [1])
    assert len(doc) < 400
    path = write_array(tmp_path / "a.zarr", doc, v2)
    expect_error(
        f"cubego.from_zarr({path!r})",
        "ValueError",
        "shape (34359738368,)",
        "chunks (1,)",
        "more than the 4194304 blocks",
        "cannot open it",
    )


@pytest.mark.parametrize("v2", [False, True], ids=["v3", "v2"])
def test_metadata_whose_size_overflows_int64_is_a_value_error(tmp_path, v2):
    doc = (
        zarray([2**62, 100], [2**20, 100], "<i4")
        if v2
        else zarr_json([2**62, 100], [2**20, 100], "int32")
    )
    path = write_array(tmp_path / "a.zarr", doc, v2)
    expect_error(f"cubego.from_zarr({path!r})", "ValueError", "overflows int64")


@pytest.mark.parametrize("zarr_format", [3, 2])
def test_zarr_python_array_with_2_35_chunks_is_a_value_error(tmp_path, zarr_format):
    zarr = pytest.importorskip("zarr")
    path = str(tmp_path / "a.zarr")
    zarr.create_array(
        store=path, shape=(2**35,), chunks=(1,), dtype="u1", fill_value=0, zarr_format=zarr_format
    )
    expect_error(f"cubego.from_zarr({path!r})", "ValueError", "more than the 4194304 blocks")


@pytest.mark.parametrize("v2", [False, True], ids=["v3", "v2"])
def test_a_large_grid_opens_lazily_and_a_small_slice_computes(tmp_path, v2):
    # 2**30 elements in 2**20 chunks: described, never materialised chunk by chunk.
    doc = zarray([2**30], [2**10], "<i2", 7) if v2 else zarr_json([2**30], [2**10], "int16", 7)
    path = write_array(tmp_path / "a.zarr", doc, v2)
    got = run_child(
        f"x = cubego.from_zarr({path!r})\n"
        "assert x.shape == (2**30,) and x.nbytes == 2**31 and x.numblocks == (2**20,)\n"
        "assert 'cubego.Array' in repr(x)\n"
        "result = (x[5:9].compute().tolist(), x[-3:].compute().tolist())\n"
    )
    assert got == {"ok": True, "result": repr(([7] * 4, [7] * 3))}


@pytest.mark.parametrize(
    "code, fragments",
    [
        (
            "cubego.ones((2**40,), chunks=(1,))",
            ["shape (1099511627776,) with chunks (1,)", "1099511627776 blocks"],
        ),
        ("cubego.ones((2**33,), chunks=(1,))", ["8589934592 blocks", "choose larger chunks"]),
        ("cubego.ones((2**35,), chunks=1)", ["34359738368 blocks"]),
        (
            "cubego.ones((2**62, 2**62), chunks=(2**30, 2**30))",
            ["the number of elements overflows int64"],
        ),
        ("cubego.ones((2**62, 100))", ["shape (4611686018427387904, 100)", "overflows int64"]),
        ("cubego.ones((2**63 - 1,))", ["the size in bytes overflows int64"]),
        ("cubego.ones((2**70,))", ["overflows int64"]),
        ("cubego.arange(2**63 - 1)", ["overflows int64"]),
        ("cubego.arange(2**62)", ["the size in bytes overflows int64"]),
        ("cubego.ones((10,), chunks=1).rechunk(2**70)", ["overflows int64"]),
        ("cubego.zeros((2**40, 2), chunks=(1, 1))", ["blocks"]),
        ("cubego.ones((2**40,), chunks='auto')[::1].rechunk(1)", ["blocks"]),
        ("cubego.pad(cubego.ones((4,), chunks=2), 2**40)", ["blocks"]),
    ],
)
def test_hostile_sizes_are_value_errors(code, fragments):
    expect_error(code, "ValueError", *fragments)


def test_a_grid_of_10_12_blocks_is_described_and_refused_only_when_computed():
    got = run_child(
        "x = cubego.ones((10**6, 10**6), chunks=(1, 1), dtype='uint8')\n"
        "assert x.shape == (10**6, 10**6) and x.nbytes == 10**12 and x.npartitions == 10**12\n"
        "assert len(x.chunks[0]) == 10**6 and x.chunksize == (1, 1)\n"
        "assert x.dtype == np.uint8 and repr(x).startswith('cubego.Array<')\n"
        "assert int(cubego.sum(x[3:5, 7:9] + 1).compute()) == 8\n"
        "y = x + 1\n"
        "assert y.shape == x.shape\n"
        "try:\n"
        "    (y * 2).compute()\n"
        "    result = 'computed'\n"
        "except MemoryError as e:\n"
        "    result = str(e)\n"
    )
    assert got["ok"], got
    # A terabyte result cannot be allocated: refused before any task runs.
    assert "needs 1000000000000 bytes of memory" in got["result"], got


def test_a_huge_result_is_a_memory_error_before_anything_runs():
    got = expect_error(
        "cubego.ones((2**40,), dtype='float64').compute()",
        "MemoryError",
        "shape (1099511627776,)",
        "compute a part of it",
    )
    assert "8796093022208 bytes" in got["message"]


def test_python_normalize_chunks_refuses_a_huge_grid():
    from cubego.core.chunks import MAX_BLOCKS, normalize_chunks

    with pytest.raises(ValueError, match="more than the 4194304 an array may have"):
        normalize_chunks((1,), shape=(2**35,), dtype="u1")
    assert MAX_BLOCKS == 2**22
    assert normalize_chunks((3,), shape=(7,), dtype="u1") == ((3, 3, 1),)
    np.testing.assert_equal(
        len(normalize_chunks((1,), shape=(MAX_BLOCKS,), dtype="u1")[0]), MAX_BLOCKS
    )
