"""Packaging: the sdist builds, the wheel built from it is one PyPI accepts.

One sdist and one wheel built from it (module-scoped fixtures: a Go link is the
expensive step, and the Go build cache makes the compile itself cheap after
`make`), then checks on both:

* the sdist holds go.mod, go.sum and every file the Go build of ./capi reads;
* ``pip wheel`` builds a wheel from it with nothing from the package index;
* ``auditwheel show`` finds the wheel consistent with its manylinux tag;
* the wheel holds the library and the header, and a C program compiled
  against them runs (docs/capi.md, "Using the library from C").
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import os
import platform
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODULE = "github.com/cubego/cubego"
BUILD_TIMEOUT = 900  # seconds; a cold Go build on a busy 2-core machine takes minutes


def _load_wheel_tag():
    spec = importlib.util.spec_from_file_location("wheel_tag", ROOT / "_build" / "wheel_tag.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["wheel_tag"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


wheel_tag = _load_wheel_tag()


def _env() -> dict[str, str]:
    # The default build: an optional tag (openblas) links libraries manylinux refuses.
    env = {k: v for k, v in os.environ.items() if k != "CUBEGO_GO_TAGS"}
    env["GOEXPERIMENT"] = "simd"  # as the backend builds: `go list` must see the same files
    return env


def _run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(
        cmd, capture_output=True, text=True, env=_env(), timeout=BUILD_TIMEOUT, **kwargs
    )
    if result.returncode != 0:
        pytest.fail(
            f"{' '.join(map(str, cmd))} exited {result.returncode}\n"
            f"--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"
        )
    return result


@pytest.fixture(scope="module")
def sdist(tmp_path_factory) -> Path:
    """The sdist, built by calling the backend's hook as a PEP 517 frontend does."""
    out = tmp_path_factory.mktemp("sdist")
    hook = (
        "import sys; sys.path.insert(0, '_build'); import backend; "
        "print(backend.build_sdist(sys.argv[1]))"
    )
    name = _run([sys.executable, "-c", hook, str(out)], cwd=ROOT).stdout.strip().splitlines()[-1]
    return out / name


@pytest.fixture(scope="module")
def wheel(sdist, tmp_path_factory) -> Path:
    """The wheel pip builds from the sdist: isolated build, no index (nothing to download)."""
    out = tmp_path_factory.mktemp("wheel")
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-index", "--no-cache-dir"]
    _run([*pip, "-w", str(out), str(sdist)])
    (built,) = out.glob("*.whl")
    return built


@pytest.fixture(scope="module")
def unpacked(wheel, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("unpacked")
    with zipfile.ZipFile(wheel) as z:
        z.extractall(out)
    return out


def _abi_version() -> tuple[int, int]:
    """CG_ABI_VERSION_MAJOR and _MINOR as capi/version.go defines them."""
    text = (ROOT / "capi" / "version.go").read_text()
    major = re.search(r"#define CG_ABI_VERSION_MAJOR (\d+)", text)
    minor = re.search(r"#define CG_ABI_VERSION_MINOR (\d+)", text)
    return int(major.group(1)), int(minor.group(1))


# ----------------------------------------------------------------------------- sdist


def test_sdist_holds_every_file_the_go_build_reads(sdist):
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert {"pyproject.toml", "PKG-INFO", "README.md", "go.mod", "go.sum"} <= names
    assert {"_build/backend.py", "_build/wheel_tag.py", "python/cubego/__init__.py"} <= names

    # Every source file of every package of this module that ./capi imports.
    fmt = (
        '{{if and .Module (eq .Module.Path "' + MODULE + '")}}{{.Dir}}'
        "{{range .GoFiles}} {{.}}{{end}}{{range .CgoFiles}} {{.}}{{end}}"
        "{{range .CFiles}} {{.}}{{end}}{{range .HFiles}} {{.}}{{end}}"
        "{{range .SFiles}} {{.}}{{end}}{{range .EmbedFiles}} {{.}}{{end}}{{end}}"
    )
    listed = _run(["go", "list", "-deps", "-f", fmt, "./capi"], cwd=ROOT).stdout
    needed = set()
    for line in listed.splitlines():
        if line.strip():
            directory, *files = line.split(" ")
            rel = Path(directory).relative_to(ROOT)
            needed |= {(rel / f).as_posix() for f in files}
    assert "capi/version.go" in needed and len(needed) > 50
    assert sorted(needed - names) == []

    assert not [n for n in names if n.startswith(("benchmarks/", ".ci/", ".git/"))]
    assert sdist.stat().st_size < 3_000_000


# ----------------------------------------------------------------------------- wheel


def test_wheel_is_manylinux_by_auditwheels_judgement(wheel):
    platform_tag = wheel.name.removesuffix(".whl").split("-")[-1]
    arch = platform.machine()
    assert re.fullmatch(rf"manylinux_2_\d+_{arch}(\.manylinux\w+_{arch})?", platform_tag)

    shown = _run([sys.executable, "-m", "auditwheel", "show", str(wheel)]).stdout
    consistent = re.search(r'consistent with the\s+following platform tag:\s+"([^"]+)"', shown)
    assert consistent, shown
    # auditwheel names the most compatible tag the wheel satisfies: the wheel's own.
    assert consistent.group(1) == platform_tag.split(".")[0], shown


def test_wheel_holds_library_and_header(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        assert {"cubego/__init__.py", "cubego/libcubego.so", "cubego/include/libcubego.h"} <= names
        assert not [n for n in names if n.endswith(".pyc")]
        assert [n for n in names if n.endswith("libcubego.h")] == ["cubego/include/libcubego.h"]
        header = z.read("cubego/include/libcubego.h").decode()
        assert "cg_abi_version(void)" in header
        assert "#define CG_ABI_VERSION_MAJOR" in header

        dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/WHEEL"))
        wheel_file = z.read(f"{dist_info}/WHEEL").decode()
        python, abi, platforms = wheel.name.removesuffix(".whl").split("-")[-3:]
        tags = {f"{python}-{abi}-{p}" for p in platforms.split(".")}
        assert set(re.findall(r"^Tag: (\S+)$", wheel_file, re.M)) == tags
        assert "Root-Is-Purelib: false" in wheel_file

        # RECORD lists every file with its hash and size (pip checks them on install).
        record = z.read(f"{dist_info}/RECORD").decode().splitlines()
        recorded = {}
        for line in record:
            path, digest, size = line.rsplit(",", 2)
            recorded[path] = (digest, size)
        assert set(recorded) == names
        for path, (digest, size) in recorded.items():
            if path.endswith("/RECORD"):
                continue
            data = z.read(path)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert (digest, size) == (f"sha256={expected.decode()}", str(len(data))), path


def test_wheel_tag_reads_the_library_as_pyelftools_does(unpacked):
    """The backend's own ELF reader agrees with pyelftools (auditwheel's) on the library."""
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile
    from elftools.elf.gnuversions import GNUVerNeedSection

    library = unpacked / "cubego" / "libcubego.so"
    ours = wheel_tag.read_elf(library)
    needed, versions = [], {}
    with open(library, "rb") as f:
        elf = ELFFile(f)
        for section in elf.iter_sections():
            if isinstance(section, DynamicSection):
                needed += [t.needed for t in section.iter_tags() if t.entry.d_tag == "DT_NEEDED"]
            elif isinstance(section, GNUVerNeedSection):
                for verneed, auxes in section.iter_versions():
                    versions[verneed.name] = {aux.name for aux in auxes}
    assert ours.machine == platform.machine()
    assert ours.needed == needed
    assert ours.versions == versions
    assert "libc.so.6" in needed


def test_c_program_links_the_wheels_library(unpacked, tmp_path):
    package = unpacked / "cubego"
    program = tmp_path / "capi_example"
    _run(
        [
            os.environ.get("CC", "cc"),
            "-Wall",
            "-Werror",
            str(ROOT / "tests" / "capi_example.c"),
            f"-I{package / 'include'}",
            f"-L{package}",
            "-lcubego",
            f"-Wl,-rpath,{package}",
            "-o",
            str(program),
        ]
    )
    out = _run([str(program)], cwd=tmp_path).stdout.splitlines()
    major, minor = _abi_version()
    assert out[0] == f"abi {major}.{minor}"
    assert json.loads(out[1].removeprefix("version "))["version"]
    assert out[2] == "sum 45"


# ----------------------------------------------------------------------------- the tag policy


def _info(needed, versions, machine="x86_64"):
    return wheel_tag.ELFInfo(machine=machine, needed=needed, versions=versions)


@pytest.mark.parametrize(
    ("versions", "machine", "tags"),
    [
        # the newest GLIBC_ version decides; auditwheel has a policy for 2.34
        ({"GLIBC_2.2.5", "GLIBC_2.34"}, "x86_64", ["manylinux_2_34_x86_64"]),
        # no policy for 2.29: up to the next one, as auditwheel says
        ({"GLIBC_2.29"}, "x86_64", ["manylinux_2_31_x86_64"]),
        # the legacy names beside the PEP 600 ones, for pip < 20.3
        ({"GLIBC_2.14"}, "x86_64", ["manylinux_2_17_x86_64", "manylinux2014_x86_64"]),
        ({"GLIBC_2.2.5"}, "x86_64", ["manylinux_2_5_x86_64", "manylinux1_x86_64"]),
        # manylinux starts at glibc 2.17 outside x86
        ({"GLIBC_2.2.5"}, "aarch64", ["manylinux_2_17_aarch64", "manylinux2014_aarch64"]),
        # past the newest policy: the exact version
        ({"GLIBC_2.45"}, "x86_64", ["manylinux_2_45_x86_64"]),
    ],
)
def test_manylinux_tag_from_glibc_versions(versions, machine, tags):
    info = _info(["libc.so.6", "libpthread.so.0"], {"libc.so.6": versions}, machine)
    assert wheel_tag.manylinux_tags(info) == (tags, None)


@pytest.mark.parametrize(
    ("needed", "versions", "reason"),
    [
        (["libc.so.6", "libopenblas.so.0"], {}, "libopenblas.so.0"),
        (["libc.so.6", "libgcc_s.so.1"], {"libgcc_s.so.1": {"GCC_3.0"}}, "libgcc_s.so.1"),
        (["libc.so.6"], {"libc.so.6": {"GLIBC_PRIVATE"}}, "GLIBC_PRIVATE"),
        (["libc.musl-x86_64.so.1"], {}, "glibc"),
    ],
)
def test_no_manylinux_tag_outside_glibc(needed, versions, reason):
    tags, why = wheel_tag.manylinux_tags(_info(needed, versions))
    assert tags == [] and reason in why


def test_non_elf_library_keeps_the_fallback_tag(tmp_path):
    library = tmp_path / "libcubego.dylib"
    library.write_bytes(b"\xcf\xfa\xed\xfe" + bytes(60))
    assert wheel_tag.platform_tags(library, "macosx_11_0_arm64") == ["macosx_11_0_arm64"]
