"""Shared fixtures."""

from __future__ import annotations

import pytest

import cubego


@pytest.fixture
def spec(tmp_path):
    """A spec with intermediates under the test's temporary directory."""
    return cubego.Spec(work_dir=tmp_path, allowed_mem="100MB")
