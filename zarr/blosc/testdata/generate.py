"""Write vectors.json: Blosc buffers written by numcodecs (c-blosc 1.21)
that blosc_test.go decodes.

Run from this directory with numcodecs and numpy installed (outside the
repository, e.g. python3 -m venv /tmp/zvenv && /tmp/zvenv/bin/pip install
zarr numcodecs numpy):

    /tmp/zvenv/bin/python generate.py

Each vector holds the compressor options, the Blosc buffer (base64) and
the SHA-256 and size of the data it decodes to, so the file stays small.
The cases cover every compressor c-blosc has (snappy is not built into
numcodecs) with every shuffle, split and unsplit blocks, a short last
block, element counts that are not a multiple of 8 (bitshuffle), sizes
that are not a multiple of the type size, and memcpyed buffers.
"""

import base64
import hashlib
import json

import numcodecs
import numpy as np
from numcodecs import Blosc


def data(rng, n, typesize, kind):
    if kind == "smooth":
        # Slowly varying integers: compressible, more so after shuffling.
        v = np.cumsum(rng.integers(-1, 2, n // typesize + 1) * (rng.random(n // typesize + 1) < 0.2))
        raw = v.astype(f"<i{typesize}" if typesize in (1, 2, 4, 8) else "<i8").tobytes()
        raw = (raw * (typesize // 8 + 1))[:n]
    elif kind == "runs":
        raw = np.repeat(rng.integers(0, 256, n // 37 + 1, dtype=np.uint8), 37)[:n].tobytes()
    elif kind == "mixed":
        half = rng.integers(0, 256, n // 2, dtype=np.uint8).tobytes()
        raw = half + bytes(n - len(half))
    else:
        raw = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
    return raw[:n]


def main():
    rng = np.random.default_rng(20261121)
    vectors = []
    cases = [
        # (nbytes, typesize, blocksize, kind)
        (4096, 4, 0, "smooth"),      # one block, split
        (5000, 8, 1024, "smooth"),   # several blocks, split, short last block
        (1001, 8, 0, "smooth"),      # not a multiple of the type size
        (812, 4, 0, "smooth"),       # 203 elements: bitshuffle leftover
        (812, 4, 256, "smooth"),     # unsplit blocks (64 elements each)
        (3000, 16, 0, "smooth"),     # type size 16
        (2000, 1, 0, "runs"),        # type size 1
        (3000, 2, 1024, "runs"),
        (100, 8, 0, "smooth"),       # below 128 bytes: memcpyed
        (600, 4, 0, "random"),       # incompressible: memcpyed
        (2000, 4, 512, "mixed"),    # raw streams beside compressed ones
        (40000, 8, 0, "smooth"),     # default block size at clevel 5 and 9
    ]
    for cname in ["blosclz", "lz4", "lz4hc", "zlib", "zstd"]:
        for shuffle in [0, 1, 2]:
            for nbytes, typesize, blocksize, kind in cases:
                if nbytes == 40000 and shuffle != 1:
                    continue
                for clevel in ([5, 9] if nbytes == 40000 else [5]):
                    raw = data(rng, nbytes, typesize, kind)
                    c = Blosc(cname=cname, clevel=clevel, shuffle=shuffle,
                              blocksize=blocksize, typesize=typesize)
                    enc = c.encode(raw)
                    assert c.decode(enc) == raw
                    vectors.append({
                        "cname": cname, "clevel": clevel, "shuffle": shuffle,
                        "typesize": typesize, "blocksize": blocksize,
                        "nbytes": nbytes, "sha256": hashlib.sha256(raw).hexdigest(),
                        "blosc": base64.b64encode(enc).decode(),
                    })
    with open("vectors.json", "w") as f:
        json.dump({"numcodecs": numcodecs.__version__,
                   "blosc": numcodecs.blosc.VERSION_STRING, "vectors": vectors}, f, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main()
