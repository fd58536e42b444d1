"""Spec: sizes, defaults, the max_mem alias, equality and the JSON sent to the library."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import cubego
from cubego.core.config import default_spec
from cubego.core.spec import parse_size


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, 0),
        (100_000, 100_000),
        (2.0e9, 2_000_000_000),
        ("123", 123),
        ("10B", 10),
        ("500kB", 500_000),
        ("100MB", 100_000_000),
        ("100 MB", 100_000_000),
        ("2GB", 2_000_000_000),
        ("1.5GB", 1_500_000_000),
        ("0.5TB", 500_000_000_000),
        ("1PB", 10**15),
        ("1KiB", 1024),
        ("4MiB", 4 * 2**20),
        ("1GiB", 2**30),
        ("1.5GiB", 3 * 2**29),
        ("2TiB", 2 * 2**40),
        ("1e3B", 1000),
        ("0.1kB", 100),
        ("100_000", 100_000),
        ("1.2 MB", 1_200_000),
    ],
)
def test_parse_size(value, expected):
    assert parse_size(value, "allowed_mem") == expected
    assert cubego.Spec(allowed_mem=value).allowed_mem == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("2XB", "ending with an SI prefix"),
        ("1EB", "ending with an SI prefix"),
        ("1kb", "ending with an SI prefix"),
        ("500KB", "ending with an SI prefix"),
        ("2gb", "ending with an SI prefix"),
        ("GB", "ending with an SI prefix"),
        ("", "ending with an SI prefix"),
        ("two GB", "ending with an SI prefix"),
        ("-1GB", "Must be a positive value"),
        ("1.5B", "non-integer number of bytes"),
        ("inf", "non-integer number of bytes"),
        (-5, "Must be a positive value"),
        (1.5, "non-integer number of bytes"),
        (True, "Expected a number of bytes"),
        ([1], "Expected a number of bytes"),
    ],
)
def test_parse_size_invalid(value, message):
    """Cubed's rules (cubed.utils.convert_to_bytes), and its "Invalid value" phrasing."""
    with pytest.raises(ValueError, match="^Invalid value.*allowed_mem") as info:
        cubego.Spec(allowed_mem=value)
    assert message in str(info.value)


def test_chunk_sizes_keep_dask_units():
    """Chunk sizes (``chunks="100mb"``) follow Dask's case-insensitive units, not Spec's."""
    assert parse_size("2gb", "chunks") == 2_000_000_000
    assert parse_size("500KB", "chunks") == 500_000


def test_reserved_mem_invalid():
    with pytest.raises(ValueError, match="Invalid value: '3 bananas' for reserved_mem"):
        cubego.Spec(reserved_mem="3 bananas")


def test_defaults():
    spec = cubego.Spec()
    assert spec.work_dir is None
    assert spec.allowed_mem == 2_000_000_000
    assert spec.reserved_mem == 0
    assert spec.executor is None
    assert spec.executor_name is None
    assert spec.executor_options == {}
    assert spec.storage_options == {}
    assert spec.zarr_compressor is None


def test_default_spec_of_arrays_without_spec():
    spec = default_spec()
    assert spec.allowed_mem == 2_000_000_000
    assert spec.reserved_mem == 100_000_000
    assert default_spec() is spec


def test_fields(tmp_path):
    spec = cubego.Spec(
        work_dir=tmp_path,
        allowed_mem="1GB",
        reserved_mem="50MB",
        executor_name="single-threaded",
        executor_options={"max_workers": 3, "retries": 1},
        storage_options={"anon": True},
        zarr_compressor="zstd",
    )
    assert spec.work_dir == str(tmp_path)
    assert spec.allowed_mem == 1_000_000_000
    assert spec.reserved_mem == 50_000_000
    assert spec.executor_name == "single-threaded"
    assert spec.executor_options == {"max_workers": 3, "retries": 1}
    assert spec.storage_options == {"anon": True}
    assert spec.zarr_compressor == "zstd"
    # the options are copies: mutating them does not change the spec
    spec.executor_options["max_workers"] = 99
    assert spec.executor_options["max_workers"] == 3


def test_to_json(tmp_path):
    spec = cubego.Spec(work_dir=tmp_path, allowed_mem="2GB", reserved_mem="100MB")
    assert spec._to_json() == {
        "work_dir": str(tmp_path),
        "allowed_mem": 2_000_000_000,
        "reserved_mem": 100_000_000,
        "zarr_compressor": None,
        "storage_options": None,
        "implicit": False,
    }
    assert cubego.Spec(zarr_compressor="auto")._to_json()["zarr_compressor"] == "zstd"


def test_array_without_spec_takes_the_explicit_spec():
    # xarray turns scalars into arrays with asarray() and no spec: such arrays
    # combine with arrays of any explicit spec, and the result keeps that spec.
    spec = cubego.Spec(allowed_mem="300MB")
    x = cubego.asarray(np.arange(6.0), chunks=2, spec=spec)
    fill = cubego.asarray(0.0)
    for y in (cubego.where(x > 2, x, fill), fill + x, x * fill):
        assert y.spec == spec
        assert y.plan().allowed_mem == spec.allowed_mem
    np.testing.assert_array_equal(cubego.where(x > 2, x, fill).compute(), [0, 0, 0, 3, 4, 5])
    other = cubego.asarray(np.ones(6), chunks=2, spec=cubego.Spec(allowed_mem="400MB"))
    with pytest.raises(ValueError, match="different specs"):
        x + other
    opts = {"endpoint_url": "http://127.0.0.1:9000", "anon": True}
    assert cubego.Spec(storage_options=opts)._to_json()["storage_options"] == opts


def test_zarr_compressor_invalid():
    with pytest.raises(ValueError, match="zarr_compressor"):
        cubego.Spec(zarr_compressor="lz5")


def test_max_mem_is_a_deprecated_alias():
    with pytest.warns(DeprecationWarning, match="max_mem"):
        spec = cubego.Spec(work_dir="tmp", max_mem=100_000)
    assert spec.allowed_mem == 100_000
    assert spec.max_mem == 100_000
    with pytest.warns(DeprecationWarning):
        assert cubego.Spec(max_mem="1GB") == cubego.Spec(allowed_mem="1GB")


def test_max_mem_and_allowed_mem_conflict():
    with pytest.raises(ValueError, match="not both"):
        cubego.Spec(allowed_mem="1GB", max_mem="1GB")


def test_equality_and_hash(tmp_path):
    a = cubego.Spec(work_dir=tmp_path, allowed_mem="1GB", executor_options={"max_workers": 2})
    b = cubego.Spec(
        work_dir=str(tmp_path), allowed_mem=1_000_000_000, executor_options={"max_workers": 2}
    )
    c = cubego.Spec(work_dir=tmp_path, allowed_mem="2GB")
    d = cubego.Spec(work_dir=tmp_path, allowed_mem="1GB", executor_options={"max_workers": 3})
    assert a == b and hash(a) == hash(b)
    assert a != c
    assert a != d
    assert a != "spec"
    assert len({a, b, c}) == 2


def test_repr():
    text = repr(cubego.Spec(work_dir="/data", allowed_mem="2GB", executor_name="threads"))
    assert text.startswith("cubego.Spec(")
    assert "work_dir='/data'" in text
    assert "allowed_mem=2000000000" in text
    assert "executor_name='threads'" in text


def test_invalid_types():
    with pytest.raises(TypeError, match="executor_options"):
        cubego.Spec(executor_options=[("max_workers", 2)])
    with pytest.raises(TypeError, match="executor_name"):
        cubego.Spec(executor_name=3)


def test_pickle_round_trip():
    spec = cubego.Spec(work_dir="/w", allowed_mem="1GB", executor_options={"retries": 1})
    assert pickle.loads(pickle.dumps(spec)) == spec
