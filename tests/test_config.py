"""cubego.config: defaults, config.set, environment variables and YAML files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import cubego
from cubego.core import compute as _compute
from cubego.core.config import spec_from_config

PYTHON_DIR = str(Path(cubego.__file__).resolve().parent.parent)

REPORT = """
    import json
    import cubego
    x = cubego.ones((4,), chunks=2)
    spec = x.spec
    options = cubego.core.compute.options((x,), None, True, {})
    print(json.dumps({
        "allowed_mem": spec.allowed_mem,
        "reserved_mem": spec.reserved_mem,
        "work_dir": spec.work_dir,
        "executor_name": spec.executor_name,
        "executor_options": spec.executor_options,
        "options": options,
        "result": (x + 1).compute().tolist(),
    }))
"""


def run_report(env: dict, cwd) -> dict:
    """Run REPORT in a fresh interpreter whose environment is set before it starts."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("CUBEGO_") or k == "CUBEGO_LIB"}
    full.update(env)
    full["PYTHONPATH"] = os.pathsep.join(filter(None, [PYTHON_DIR, full.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(REPORT)],
        env=full,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_defaults():
    spec = spec_from_config()
    assert spec.allowed_mem == 2_000_000_000
    assert spec.reserved_mem == 100_000_000
    assert cubego.config.get("spec.allowed_mem") == "2GB"
    assert spec_from_config() is spec


def test_arrays_without_spec_use_the_config_at_creation():
    with cubego.config.set({"spec.allowed_mem": "4GB", "spec.reserved_mem": "1GB"}):
        x = cubego.ones((3,))
        assert x.spec.allowed_mem == 4_000_000_000
        assert x.spec.reserved_mem == 1_000_000_000
    y = cubego.ones((3,))
    assert y.spec.allowed_mem == 2_000_000_000
    assert x.spec.allowed_mem == 4_000_000_000  # fixed when x was created
    # an explicit Spec keeps Cubed's semantics: reserved_mem 0 unless given
    assert cubego.Spec(allowed_mem="1GB").reserved_mem == 0


def test_config_set_globally_and_env_expansion(tmp_path, monkeypatch):
    monkeypatch.setenv("CUBEGO_TEST_WORK_DIR", str(tmp_path))
    # config.set applies at once, for the whole process; leaving the returned
    # object as a context manager restores the previous values
    setting = cubego.config.set({"spec.work_dir": "$CUBEGO_TEST_WORK_DIR/work"})
    try:
        assert cubego.ones((2,)).spec.work_dir == f"{tmp_path}/work"
    finally:
        setting.__exit__(None, None, None)
    assert cubego.ones((2,)).spec.work_dir is None


def test_executor_name_in_config(spec):
    x = cubego.ones((2,), spec=spec)
    with cubego.config.set({"executor_name": "single-threaded"}):
        assert _compute.options((x,), None, True, {})["executor"] == "single-threaded"
        assert _compute.options((x,), "threads", True, {})["executor"] == "threads"
        assert x.compute().tolist() == [1.0, 1.0]


def test_invalid_spec_section():
    with cubego.config.set({"spec.no_such_field": 1}):
        with pytest.raises(ValueError, match="no_such_field"):
            cubego.ones((2,))


def test_environment_variables(tmp_path):
    report = run_report(
        {
            "CUBEGO_SPEC__ALLOWED_MEM": "4GB",
            "CUBEGO_SPEC__RESERVED_MEM": "200MB",
            "CUBEGO_SPEC__WORK_DIR": str(tmp_path),
            "CUBEGO_SPEC__EXECUTOR_NAME": "single-threaded",
            "CUBEGO_SPEC__EXECUTOR_OPTIONS__RETRIES": "1",
        },
        tmp_path,
    )
    assert report["allowed_mem"] == 4_000_000_000
    assert report["reserved_mem"] == 200_000_000
    assert report["work_dir"] == str(tmp_path)
    assert report["executor_name"] == "single-threaded"
    assert report["executor_options"] == {"retries": 1}
    assert report["options"]["executor"] == "single-threaded"
    assert report["result"] == [2.0, 2.0, 2.0, 2.0]


def test_yaml_file(tmp_path):
    config_file = tmp_path / "cubego.yaml"
    config_file.write_text(
        textwrap.dedent(
            f"""
            spec:
              work_dir: {tmp_path}
              allowed_mem: 3GB
              executor_options:
                max_workers: 2
                use_backups: true
            """
        )
    )
    report = run_report({"CUBEGO_CONFIG": str(config_file)}, tmp_path)
    assert report["allowed_mem"] == 3_000_000_000
    assert report["reserved_mem"] == 100_000_000  # the default stays
    assert report["work_dir"] == str(tmp_path)
    assert report["options"]["max_workers"] == 2
    assert report["options"]["use_backups"] is True
    assert report["result"] == [2.0, 2.0, 2.0, 2.0]
    # environment variables win over the file
    report = run_report(
        {"CUBEGO_CONFIG": str(config_file), "CUBEGO_SPEC__ALLOWED_MEM": "5GB"}, tmp_path
    )
    assert report["allowed_mem"] == 5_000_000_000
