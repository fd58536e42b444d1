"""The platform tag of a wheel carrying libcubego, read from the library itself.

Standard library only (the build backend needs nothing from the package index).

A wheel tagged ``manylinux_X_Y_<arch>`` (PEP 600) promises that it runs on any
Linux with glibc >= X.Y. That holds for a shared library when

* every library it loads (its ``DT_NEEDED`` entries) is part of glibc itself,
  which every such system has, and
* every versioned symbol it takes from them is at most ``GLIBC_X.Y``: the
  dynamic linker refuses to load a library that needs a symbol version the
  system's glibc lacks, which is exactly the failure the tag must rule out.

So :func:`platform_tags` reads the ELF ``.dynamic`` section (the ``NEEDED``
entries) and ``.gnu.version_r`` (the symbol versions required from each
library), and picks the lowest manylinux tag they allow. It is the judgement
``auditwheel show`` makes, narrowed to what a Go ``c-shared`` library needs;
anything outside that (a library outside glibc, such as ``libopenblas`` with
the ``openblas`` build tag, a ``GLIBCXX_``/``GCC_`` symbol version, musl) gets
the plain ``linux_<arch>`` tag, with the reason on stderr: pip installs such a
wheel on the machine that built it, PyPI refuses it, and ``auditwheel repair``
turns it into a manylinux wheel by copying the extra libraries in. The backend
never claims a tag it has not checked.

Why not link against auditwheel: it needs pyelftools and the policy files,
i.e. packages from the index, and ``pip install .`` must work offline. The
test suite checks this module's answer against ``auditwheel show``.
"""

from __future__ import annotations

import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

# The libraries of glibc itself (auditwheel's manylinux policies whitelist all
# of them from manylinux1 on) and the dynamic loaders, which auditwheel ignores.
GLIBC_LIBRARIES = frozenset(
    {
        "libc.so.6",
        "libm.so.6",
        "libdl.so.2",
        "librt.so.1",
        "libpthread.so.0",
        "libanl.so.1",
        "libnsl.so.1",
        "libutil.so.1",
        "libresolv.so.2",
    }
)
LOADERS = ("ld-linux", "ld64.so.")

# The glibc minors for which auditwheel has a policy (manylinux_2_5,
# manylinux_2_12, ...). A library needing GLIBC_2.29 gets manylinux_2_31, as
# auditwheel would say: the policies follow the glibc of real distributions.
# Past the newest listed, the exact version (PEP 600 allows any).
POLICY_MINORS = (5, 12, 17, 24, 26, 27, 28, 31, 34, 35, 36, 37, 38, 39, 40, 41)
# The oldest manylinux per architecture: manylinux1 (glibc 2.5) was x86 only;
# pip's tag list starts at 2.17 elsewhere (manylinux2014).
OLDEST_MINOR = {"x86_64": 5, "i686": 5}
DEFAULT_OLDEST_MINOR = 17
# The PEP 513/571/599 names, for pip < 20.3 (auditwheel writes both too).
LEGACY_ALIASES = {5: "manylinux1", 12: "manylinux2010", 17: "manylinux2014"}

# e_machine -> the architecture's name in wheel tags (EM_PPC64 depends on byte order)
_MACHINES = {
    3: "i686",
    62: "x86_64",
    183: "aarch64",
    22: "s390x",
    243: "riscv64",
    258: "loongarch64",
}
_EM_PPC64 = 21
_SHT_DYNAMIC = 6
_SHT_GNU_VERNEED = 0x6FFFFFFE
_DT_NULL, _DT_NEEDED = 0, 1


class ELFError(ValueError):
    """The file is not an ELF shared library this module can read."""


@dataclass
class ELFInfo:
    """What a dynamic library asks of the system that loads it."""

    machine: str
    needed: list[str] = field(default_factory=list)
    # library -> the symbol versions required from it (e.g. "GLIBC_2.34")
    versions: dict[str, set[str]] = field(default_factory=dict)


def read_elf(path: str | Path) -> ELFInfo:
    """Parse the ``NEEDED`` entries and required symbol versions of an ELF file."""
    data = Path(path).read_bytes()
    if data[:4] != b"\x7fELF" or len(data) < 64:
        raise ELFError(f"{path}: not an ELF file")
    bits = {1: 32, 2: 64}.get(data[4])
    order = {1: "<", 2: ">"}.get(data[5])
    if bits is None or order is None:
        raise ELFError(f"{path}: unknown ELF class or byte order")
    if bits == 64:
        header, section, dyn = "HHIQQQIHHHHHH", "IIQQQQIIQQ", "qQ"
    else:
        header, section, dyn = "HHIIIIIHHHHHH", "IIIIIIIIII", "iI"
    header, section, dyn = (struct.Struct(order + f) for f in (header, section, dyn))
    verneed, vernaux = struct.Struct(order + "HHIII"), struct.Struct(order + "IHHII")

    (_, e_machine, _, _, _, e_shoff, _, _, _, _, e_shentsize, e_shnum, e_shstrndx) = (
        header.unpack_from(data, 16)
    )
    if e_shoff == 0:
        raise ELFError(f"{path}: no section headers")

    def sect(i: int) -> tuple:
        # (name, type, flags, addr, offset, size, link, info, addralign, entsize)
        return section.unpack_from(data, e_shoff + i * e_shentsize)

    if e_shnum == 0:  # extended numbering: the count is in section 0
        e_shnum = sect(0)[5]
    sections = [sect(i) for i in range(e_shnum)]

    def string(table: tuple, offset: int) -> str:
        start = table[4] + offset
        return data[start : data.index(b"\0", start)].decode()

    machine = _MACHINES.get(e_machine)
    if e_machine == _EM_PPC64:
        machine = "ppc64le" if order == "<" else "ppc64"
    info = ELFInfo(machine=machine or f"elf-machine-{e_machine}")

    for sh in sections:
        if sh[1] == _SHT_DYNAMIC:
            strtab = sections[sh[6]]
            for off in range(sh[4], sh[4] + sh[5], dyn.size):
                tag, val = dyn.unpack_from(data, off)
                if tag == _DT_NULL:
                    break
                if tag == _DT_NEEDED:
                    info.needed.append(string(strtab, val))
        elif sh[1] == _SHT_GNU_VERNEED:
            strtab = sections[sh[6]]
            off, count = sh[4], sh[7]  # sh_info: the number of Verneed entries
            for _ in range(count):
                _, vn_cnt, vn_file, vn_aux, vn_next = verneed.unpack_from(data, off)
                names = info.versions.setdefault(string(strtab, vn_file), set())
                aux = off + vn_aux
                for _ in range(vn_cnt):
                    _, _, _, vna_name, vna_next = vernaux.unpack_from(data, aux)
                    names.add(string(strtab, vna_name))
                    aux += vna_next
                if vn_next == 0:
                    break
                off += vn_next
    return info


def _glibc_version(name: str) -> tuple[int, int] | None:
    """``GLIBC_2.34`` -> (2, 34); None for anything else (``GLIBC_PRIVATE``, ``GCC_3.0``)."""
    prefix, _, number = name.partition("_")
    parts = number.split(".")
    if prefix != "GLIBC" or len(parts) < 2 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1])


def manylinux_tags(info: ELFInfo) -> tuple[list[str], str | None]:
    """The manylinux tags *info* satisfies, lowest glibc first, and why not if none.

    Returns ``(tags, None)``, where tags is e.g. ``["manylinux_2_17_x86_64",
    "manylinux2014_x86_64"]`` (the PEP 600 name and its legacy alias), or
    ``([], reason)``.
    """
    arch = info.machine
    if arch.startswith("elf-machine-"):
        return [], f"the library's architecture ({arch}) has no manylinux tag"
    if not any(lib == "libc.so.6" for lib in info.needed):
        return [], f"the library does not link glibc (NEEDED: {', '.join(info.needed)})"
    outside = [
        lib for lib in info.needed if lib not in GLIBC_LIBRARIES and not lib.startswith(LOADERS)
    ]
    if outside:
        return [], (
            f"the library links {', '.join(outside)}, which manylinux does not allow "
            "(only glibc's libraries); `auditwheel repair` can bundle them"
        )
    newest = (2, 0)
    for lib, names in sorted(info.versions.items()):
        for name in sorted(names):
            version = _glibc_version(name)
            if version is None:
                return [], f"the library needs symbol version {name} from {lib}"
            newest = max(newest, version)
    major, minor = newest
    if major != 2:
        return [], f"the library needs glibc {major}.{minor}"
    oldest = OLDEST_MINOR.get(arch, DEFAULT_OLDEST_MINOR)
    minor = max(minor, oldest)
    minor = next((m for m in POLICY_MINORS if m >= minor), minor)
    tags = [f"manylinux_2_{minor}_{arch}"]
    if minor in LEGACY_ALIASES:
        tags.append(f"{LEGACY_ALIASES[minor]}_{arch}")
    return tags, None


def platform_tags(library: str | Path, fallback: str) -> list[str]:
    """The platform tags for a wheel whose only binary is *library*.

    The manylinux tags when the library qualifies, else ``[fallback]`` (the
    build machine's own tag, e.g. ``linux_x86_64``) with the reason printed.
    Libraries that are not ELF (macOS) get *fallback* silently.
    """
    try:
        info = read_elf(library)
    except ELFError:
        return [fallback]
    tags, reason = manylinux_tags(info)
    if tags:
        return tags
    plain = f"linux_{info.machine}" if fallback.startswith("linux_") else fallback
    print(f"cubego: the wheel is tagged {plain}, not manylinux: {reason}", file=sys.stderr)
    return [plain]


if __name__ == "__main__":  # python _build/wheel_tag.py libcubego.so
    for arg in sys.argv[1:]:
        elf = read_elf(arg)
        print(arg, elf.machine, elf.needed, {k: sorted(v) for k, v in elf.versions.items()})
        print("  ->", ".".join(platform_tags(arg, "linux_" + elf.machine)))
