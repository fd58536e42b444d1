"""Configuration, as in Cubed: a donfig ``Config("cubego")``.

Arrays created without ``spec=`` use the Spec built from the configuration's
``spec`` section at the time they are created; the defaults are
``allowed_mem="2GB"`` and ``reserved_mem="100MB"``. Set values

* in a YAML file named by ``CUBEGO_CONFIG`` (or in donfig's search paths, e.g.
  ``~/.config/cubego/``)::

      spec:
        work_dir: /scratch/cubego
        allowed_mem: 4GB
        executor_options:
          max_workers: 8

* in environment variables, ``__`` separating nesting levels:
  ``CUBEGO_SPEC__ALLOWED_MEM=4GB``, ``CUBEGO_SPEC__EXECUTOR_NAME=single-threaded``,
  ``CUBEGO_SPEC__EXECUTOR_OPTIONS__USE_BACKUPS=True``;
* from Python, globally or for a block::

      with cubego.config.set({"spec.allowed_mem": "4GB"}):
          x = cubego.ones((1000, 1000))

The top-level key ``executor_name`` selects the executor of every computation
(before the spec's). Files and environment variables are read when cubego is
imported (``cubego.config.refresh()`` reads them again). ``$VARS`` in values are
expanded when the Spec is built.
"""

from __future__ import annotations

import functools
from typing import Any

from donfig import Config
from donfig.config_obj import deserialize, expand_environment_variables

from cubego.core.spec import Spec

__all__ = ["config", "default_spec", "resolve", "spec_from_config"]

config = Config("cubego", defaults=[{"spec": {"allowed_mem": "2GB", "reserved_mem": "100MB"}}])


def spec_from_config(cfg: Config | None = None) -> Spec:
    """The Spec that the configuration describes (equal configurations give the same Spec)."""
    cfg = config if cfg is None else cfg
    return _spec_from_serialized(cfg.serialize())


@functools.lru_cache(maxsize=16)
def _spec_from_serialized(serialized: str) -> Spec:
    values: dict[str, Any] = expand_environment_variables(deserialize(serialized))
    spec = dict(values.get("spec") or {})
    try:
        return Spec(**spec)
    except TypeError as e:
        raise ValueError(f"cubego configuration: invalid 'spec' section {spec!r}: {e}") from e


def default_spec() -> Spec:
    """The spec of arrays created without ``spec=``: built from ``cubego.config``.

    By default ``allowed_mem="2GB"``, ``reserved_mem="100MB"`` (see :mod:`cubego.core.config`).
    """
    return spec_from_config()


def resolve(spec: Spec | None) -> Spec:
    if spec is None:
        return default_spec()._as_implicit()
    if not isinstance(spec, Spec):
        raise TypeError(f"spec must be a cubego.Spec, got {type(spec).__name__}")
    return spec
