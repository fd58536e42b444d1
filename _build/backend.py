"""In-tree PEP 517 build backend for cubego (standard library only).

``pip install .`` and ``pip wheel .`` call :func:`build_wheel`, which compiles the
Go C ABI package (``./capi``) with ``go build -buildmode=c-shared`` into a staging
directory and zips it together with the Python package and the header cgo
writes (``cubego/include/libcubego.h``, for C and C++ programs) into a
``py3-none-<platform>`` wheel: the library does not link libpython, so one wheel
serves every Python 3. The platform tag is read from the built library
(``wheel_tag.py``): ``manylinux_2_X_<arch>`` where 2.X is the newest glibc symbol
version it needs, so PyPI accepts the wheel and pip installs it on every Linux
with that glibc or newer; see docs/capi.md ("Wheels and the glibc they need").

``build_sdist`` packs the files git knows (less ``sdist-exclude``), which include
go.mod, go.sum and every Go source: with Go installed, ``pip install
cubego-*.tar.gz`` builds the same wheel.

``pip install -e .`` calls :func:`build_editable`, which builds the library into
the source tree (``python/cubego/libcubego.so``) and emits a wheel holding only a
``.pth`` file that puts ``<repo>/python`` on ``sys.path``. After editing Go code,
run ``make lib`` to rebuild the library in place.

Environment:

``GO``
    The ``go`` command to use (default: ``go`` on ``PATH``, then ``/usr/local/go/bin/go``).
``GOEXPERIMENT``
    Passed on with ``simd`` added, which compiles the SIMD kernels.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
import tomllib
import zipfile
from pathlib import Path

from wheel_tag import platform_tags

ROOT = Path.cwd()

_EXCLUDED_DIRS = {
    ".git",
    ".venv",
    "__pycache__",
    ".pytest_cache",
    ".hypothesis",
    ".ruff_cache",
    "build",
    "dist",
    "tmp",
}
_EXCLUDED_SUFFIXES = (".so", ".pyc", ".whl", ".egg-info")
_EXCLUDED_FILES = {"libcubego.h"}


# ----------------------------------------------------------------------------- project data


def _pyproject() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def _settings() -> dict:
    tool = _pyproject().get("tool", {}).get("cubego", {}).get("build", {})
    return {
        "python-source": tool.get("python-source", "python"),
        "package": tool.get("package", "cubego"),
        "go-package": tool.get("go-package", "./capi"),
        "library": tool.get("library", "libcubego.so"),
        "header-dir": tool.get("header-dir", "include"),
        "sdist-exclude": tool.get("sdist-exclude", []),
    }


def _name_version() -> tuple[str, str]:
    project = _pyproject()["project"]
    return project["name"], project["version"]


def _dist_name() -> str:
    name, version = _name_version()
    return f"{name.replace('-', '_')}-{version}"


def _metadata() -> str:
    project = _pyproject()["project"]
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
    ]
    if "description" in project:
        lines.append(f"Summary: {project['description']}")
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    license_ = project.get("license", {})
    if isinstance(license_, dict) and "text" in license_:
        lines.append(f"License: {license_['text']}")
    for classifier in project.get("classifiers", []):
        lines.append(f"Classifier: {classifier}")
    for requirement in project.get("dependencies", []):
        lines.append(f"Requires-Dist: {requirement}")
    for extra, requirements in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        for requirement in requirements:
            lines.append(f'Requires-Dist: {requirement}; extra == "{extra}"')
    body = ""
    readme = project.get("readme")
    if isinstance(readme, str) and (ROOT / readme).exists():
        lines.append("Description-Content-Type: text/markdown")
        body = (ROOT / readme).read_text(encoding="utf-8")
    return "\n".join(lines) + "\n\n" + body


def _entry_points() -> str:
    """entry_points.txt: the ``[project.entry-points]`` and ``[project.scripts]`` tables."""
    project = _pyproject()["project"]
    groups = dict(project.get("entry-points", {}))
    if project.get("scripts"):
        groups["console_scripts"] = project["scripts"]
    sections = []
    for group, entries in groups.items():
        body = "".join(f"{name} = {target}\n" for name, target in entries.items())
        sections.append(f"[{group}]\n{body}")
    return "\n".join(sections)


def _platform_tag() -> str:
    """The build machine's own platform tag (``linux_x86_64``): the fallback."""
    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _wheel_tag(library: Path) -> str:
    """The wheel's compressed tag set, e.g. ``py3-none-manylinux_2_34_x86_64``.

    ``py3-none``: the library is reached through ctypes and does not link
    libpython, so one wheel serves every Python 3. The platform part comes from
    the library itself (wheel_tag.py).
    """
    return "py3-none-" + ".".join(platform_tags(library, _platform_tag()))


def _wheel_file(tag: str) -> str:
    """The WHEEL file: one ``Tag`` line per tag of the compressed set (PEP 425)."""
    python, abi, platforms = tag.split("-")
    lines = "".join(f"Tag: {python}-{abi}-{p}\n" for p in platforms.split("."))
    return f"Wheel-Version: 1.0\nGenerator: cubego-backend\nRoot-Is-Purelib: false\n{lines}"


# ----------------------------------------------------------------------------- Go build


def _go() -> str:
    explicit = os.environ.get("GO")
    if explicit:
        return explicit
    found = shutil.which("go")
    if found:
        return found
    if os.path.exists("/usr/local/go/bin/go"):
        return "/usr/local/go/bin/go"
    raise RuntimeError(
        "cubego: the Go toolchain (go >= 1.26) is needed to build the library, "
        "but `go` is not on PATH; install Go or set GO=/path/to/go"
    )


def _build_library(output: Path) -> None:
    """Compile the C ABI package into the shared library at *output*."""
    settings = _settings()
    output.parent.mkdir(parents=True, exist_ok=True)
    cmd = [
        _go(),
        "build",
        "-buildmode=c-shared",
        "-trimpath",
        "-ldflags=-s -w",
        # CUBEGO_GO_TAGS: optional build tags, comma-separated, as the Makefile's TAGS
        # (openblas: docs/api_status.md; purezstd: docs/zarr.md).
        *(["-tags=" + os.environ["CUBEGO_GO_TAGS"]] if os.environ.get("CUBEGO_GO_TAGS") else []),
        "-o",
        str(output),
        settings["go-package"],
    ]
    # GOEXPERIMENT=simd compiles the SIMD kernels (simd/archsimd on amd64).
    experiments = [e for e in os.environ.get("GOEXPERIMENT", "").split(",") if e]
    env = dict(os.environ, CGO_ENABLED="1", GOEXPERIMENT=",".join([*experiments, "simd"]))
    print("cubego: " + " ".join(cmd), file=sys.stderr, flush=True)
    result = subprocess.run(cmd, cwd=ROOT, env=env)
    if result.returncode != 0:
        raise RuntimeError(f"cubego: `{' '.join(cmd)}` failed with exit status {result.returncode}")


# ----------------------------------------------------------------------------- wheel writing


def _zip_date() -> tuple[int, int, int, int, int, int]:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch:
        return time.gmtime(max(int(epoch), 315532800))[:6]
    return (1980, 1, 1, 0, 0, 0)


class _WheelWriter:
    def __init__(self, path: Path, dist_info: str):
        self._zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self._dist_info = dist_info
        self._records: list[str] = []
        self._date = _zip_date()

    def add_bytes(self, arcname: str, data: bytes, executable: bool = False) -> None:
        info = zipfile.ZipInfo(arcname, date_time=self._date)
        info.external_attr = (0o755 if executable else 0o644) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self._zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self._records.append(f"{arcname},sha256={digest},{len(data)}")

    def add_file(self, arcname: str, path: Path) -> None:
        self.add_bytes(arcname, path.read_bytes(), executable=os.access(path, os.X_OK))

    def close(self) -> None:
        record = f"{self._dist_info}/RECORD"
        self._records.append(f"{record},,")
        info = zipfile.ZipInfo(record, date_time=self._date)
        info.external_attr = 0o644 << 16
        self._zip.writestr(info, "\n".join(self._records) + "\n")
        self._zip.close()


def _write_dist_info(writer: _WheelWriter, dist_info: str, tag: str) -> None:
    writer.add_bytes(f"{dist_info}/METADATA", _metadata().encode())
    writer.add_bytes(f"{dist_info}/WHEEL", _wheel_file(tag).encode())
    writer.add_bytes(f"{dist_info}/top_level.txt", (_settings()["package"] + "\n").encode())
    entry_points = _entry_points()
    if entry_points:
        writer.add_bytes(f"{dist_info}/entry_points.txt", entry_points.encode())


def _package_files(package_dir: Path, library: str) -> list[Path]:
    files = []
    for path in sorted(package_dir.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(package_dir)
        if any(part in _EXCLUDED_DIRS for part in rel.parts):
            continue
        if path.name in (library, Path(library).with_suffix(".h").name):
            continue
        if path.suffix in (".pyc", ".pyo"):
            continue
        files.append(path)
    return files


# ----------------------------------------------------------------------------- PEP 517 hooks


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    # No WHEEL file: its tag depends on the library, which is not built yet
    # (PEP 517 asks for METADATA only; frontends take the tag from the wheel).
    dist_info = f"{_dist_name()}.dist-info"
    target = Path(metadata_directory) / dist_info
    target.mkdir(parents=True, exist_ok=True)
    (target / "METADATA").write_text(_metadata(), encoding="utf-8")
    entry_points = _entry_points()
    if entry_points:
        (target / "entry_points.txt").write_text(entry_points, encoding="utf-8")
    return dist_info


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    settings = _settings()
    package = settings["package"]
    library = settings["library"]
    dist = _dist_name()
    dist_info = f"{dist}.dist-info"

    with tempfile.TemporaryDirectory(prefix="cubego-build-") as staging:
        built = Path(staging) / package / library
        _build_library(built)
        # cgo writes the header of the exports beside the library.
        header = built.with_suffix(".h")
        tag = _wheel_tag(built)
        wheel_name = f"{dist}-{tag}.whl"
        out = Path(wheel_directory) / wheel_name
        writer = _WheelWriter(out, dist_info)
        package_dir = ROOT / settings["python-source"] / package
        for path in _package_files(package_dir, library):
            writer.add_file(f"{package}/{path.relative_to(package_dir).as_posix()}", path)
        writer.add_bytes(f"{package}/{library}", built.read_bytes(), executable=True)
        # The header goes to <package>/include/, not beside the library: an
        # include directory that holds headers only, as numpy and pyarrow do, so
        # `-I` adds nothing else to a C program's search path (docs/capi.md).
        header_dir = settings["header-dir"].strip("/")
        writer.add_bytes(f"{package}/{header_dir}/{header.name}", header.read_bytes())
        _write_dist_info(writer, dist_info, tag)
        writer.close()
    return wheel_name


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    settings = _settings()
    source = (ROOT / settings["python-source"]).resolve()
    built = source / settings["package"] / settings["library"]
    _build_library(built)

    tag = _wheel_tag(built)
    dist = _dist_name()
    dist_info = f"{dist}.dist-info"
    wheel_name = f"{dist}-{tag}.whl"
    writer = _WheelWriter(Path(wheel_directory) / wheel_name, dist_info)
    writer.add_bytes(f"__editable__.{dist}.pth", (str(source) + "\n").encode())
    _write_dist_info(writer, dist_info, tag)
    writer.close()
    return wheel_name


def _sdist_excluded(path: Path) -> bool:
    """*path* is, or is under, an entry of ``sdist-exclude`` (repository-relative)."""
    rel = path.relative_to(ROOT).parts
    for entry in _settings()["sdist-exclude"]:
        parts = Path(entry.strip("/")).parts
        if rel[: len(parts)] == parts:
            return True
    return False


def _sdist_files() -> list[Path]:
    """Every file the wheel build needs, less ``sdist-exclude``."""
    return [p for p in _source_files() if not _sdist_excluded(p)]


def _source_files() -> list[Path]:
    """The git-visible files, else (in an unpacked sdist) a filtered walk."""
    if (ROOT / ".git").exists():
        try:
            out = subprocess.run(
                ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                cwd=ROOT,
                check=True,
                capture_output=True,
            ).stdout
            paths = [ROOT / p for p in out.decode().split("\0") if p]
            return sorted(p for p in paths if p.is_file())
        except (OSError, subprocess.CalledProcessError):
            pass
    files = []
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = sorted(
            d for d in dirnames if d not in _EXCLUDED_DIRS and not d.endswith(".egg-info")
        )
        for filename in sorted(filenames):
            if not filename.endswith(_EXCLUDED_SUFFIXES) and filename not in _EXCLUDED_FILES:
                files.append(Path(dirpath) / filename)
    return files


def build_sdist(sdist_directory, config_settings=None):
    dist = _dist_name()
    name = f"{dist}.tar.gz"
    mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))

    def _add(tar: tarfile.TarFile, arcname: str, data: bytes, mode: int = 0o644) -> None:
        info = tarfile.TarInfo(arcname)
        info.size = len(data)
        info.mtime = mtime
        info.mode = mode
        tar.addfile(info, io.BytesIO(data))

    with tarfile.open(Path(sdist_directory) / name, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for path in _sdist_files():
            rel = path.relative_to(ROOT).as_posix()
            mode = 0o755 if os.access(path, os.X_OK) else 0o644
            _add(tar, f"{dist}/{rel}", path.read_bytes(), mode)
        _add(tar, f"{dist}/PKG-INFO", _metadata().encode())
    return name
