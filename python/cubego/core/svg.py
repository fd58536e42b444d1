"""The chunk picture of an array: an SVG grid of its blocks (``Array.to_svg``).

A 1-D array is drawn as a row of blocks, a 2-D array as a grid (axis 0 down,
axis 1 across) and a 3-D array as a box whose front face is the grid of axes
1 and 2 and whose depth is axis 0, drawn obliquely. Each side is proportional
to its axis length, except that very elongated arrays are drawn less elongated
(no side below a tenth of the longest) so every side stays visible. Block
boundaries are drawn as lines; when an axis has more blocks than fit one line
per two pixels, only its outline is drawn and the face is shaded.
"""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import accumulate

__all__ = ["chunks_svg"]

_MIN_FRACTION = 0.1
_FILL = 'fill="#ECB172" fill-opacity="0.8"'


def _lengths(shape: tuple[int, ...], size: float) -> list[float]:
    """Drawn side lengths: proportional to *shape*, the longest *size*, none below a tenth."""
    longest = max(shape)
    return [size * max(n / longest, _MIN_FRACTION) for n in shape]


def _cuts(chunks: tuple[int, ...], length: float) -> list[float] | None:
    """Positions of the block boundaries of one axis drawn *length* long, ends included;
    None when there are too many blocks to draw one line each."""
    if len(chunks) > length / 2:
        return None
    total = sum(chunks)
    return [length * edge / total for edge in accumulate(chunks, initial=0)]


def _fmt(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def _line(x1: float, y1: float, x2: float, y2: float, width: int = 1) -> str:
    return (
        f'<line x1="{_fmt(x1)}" y1="{_fmt(y1)}" x2="{_fmt(x2)}" y2="{_fmt(y2)}" '
        f'stroke="#333" stroke-width="{width}" />'
    )


def _polygon(points: list[tuple[float, float]]) -> str:
    text = " ".join(f"{_fmt(x)},{_fmt(y)}" for x, y in points)
    return f'<polygon points="{text}" {_FILL} />'


def _text(x: float, y: float, label: str, rotate: float = 0.0) -> str:
    transform = f' transform="rotate({_fmt(rotate)},{_fmt(x)},{_fmt(y)})"' if rotate else ""
    return (
        f'<text x="{_fmt(x)}" y="{_fmt(y)}" font-size="1.0rem" font-weight="100" '
        f'text-anchor="middle"{transform}>{label}</text>'
    )


def _face(
    origin: tuple[float, float],
    across: tuple[float, float],
    down: tuple[float, float],
    cuts_across: list[float] | None,
    cuts_down: list[float] | None,
    len_across: float,
    len_down: float,
) -> list[str]:
    """One face of blocks: a parallelogram from *origin* spanned by the unit vectors
    *across* and *down*, with a line at every block boundary."""
    ox, oy = origin

    def at(a: float, d: float) -> tuple[float, float]:
        return (ox + a * across[0] + d * down[0], oy + a * across[1] + d * down[1])

    parts = [_polygon([at(0, 0), at(len_across, 0), at(len_across, len_down), at(0, len_down)])]
    for a in cuts_across or (0.0, len_across):
        width = 2 if a in (0.0, len_across) else 1
        parts.append(_line(*at(a, 0), *at(a, len_down), width))
    for d in cuts_down or (0.0, len_down):
        width = 2 if d in (0.0, len_down) else 1
        parts.append(_line(*at(0, d), *at(len_across, d), width))
    return parts


@lru_cache(maxsize=64)
def chunks_svg(chunks: tuple[tuple[int, ...], ...], size: int = 500) -> str:
    """An SVG picture of an array with *chunks* (its shape is their sums).

    Cached by chunks and size: a notebook shows the same arrays' reprs again
    and again (issue #19), and the picture depends on nothing else.

    Raises ``NotImplementedError`` for 0-d arrays, arrays with a zero-length
    axis and arrays of more than 3 dimensions, which have no picture.
    """
    shape = tuple(sum(c) for c in chunks)
    if not shape:
        raise NotImplementedError("no chunk picture for a 0-dimensional array")
    if 0 in shape:
        raise NotImplementedError(f"no chunk picture for an empty array (shape {shape})")
    if len(shape) > 3:
        raise NotImplementedError(
            f"no chunk picture for an array of {len(shape)} dimensions (at most 3)"
        )
    if size <= 0:
        raise ValueError(f"to_svg: size must be positive, got {size}")
    if len(shape) == 1:
        # A row: one block high, as long as the array.
        chunks = ((1,), chunks[0])
        lengths = [size * _MIN_FRACTION, float(size)]
        labels = ["", str(shape[0])]
    else:
        lengths = _lengths(shape, size)
        labels = [str(n) for n in shape]
    margin = 40.0
    parts: list[str] = []
    if len(chunks) == 2:
        down, across = lengths
        cuts_d, cuts_a = (_cuts(c, n) for c, n in zip(chunks, lengths))
        origin = (10.0, 10.0)
        parts += _face(origin, (1, 0), (0, 1), cuts_a, cuts_d, across, down)
        parts.append(_text(origin[0] + across / 2, origin[1] + down + 25, labels[1]))
        if labels[0]:
            x, y = origin[0] + across + 20, origin[1] + down / 2
            parts.append(_text(x, y, labels[0], rotate=-90))
        width, height = across + margin + 10, down + margin + 10
    else:
        depth, down, across = lengths
        cuts_z, cuts_d, cuts_a = (_cuts(c, n) for c, n in zip(chunks, lengths))
        slant = (math.cos(math.pi / 4) * 0.6, -math.sin(math.pi / 4) * 0.6)  # per unit of depth
        dz = (depth * slant[0], depth * slant[1])
        front = (10.0, 10.0 - dz[1])
        back = (front[0] + dz[0], front[1] + dz[1])
        # top face (depth x across) and side face (depth x down), then the front grid.
        parts += _face(front, (1, 0), slant, cuts_a, cuts_z, across, depth)
        side = (front[0] + across, front[1])
        parts += _face(side, slant, (0, 1), cuts_z, cuts_d, depth, down)
        parts += _face(front, (1, 0), (0, 1), cuts_a, cuts_d, across, down)
        parts.append(_text(front[0] + across / 2, front[1] + down + 25, labels[2]))
        x = side[0] + dz[0] + 20
        parts.append(_text(x, back[1] + down / 2, labels[1], rotate=-90))
        parts.append(_text(front[0] + dz[0] / 2 - 12, front[1] + dz[1] / 2 - 4, labels[0], -45))
        width = across + dz[0] + margin + 10
        height = down - dz[1] + margin + 10
    header = (
        f'<svg width="{_fmt(width)}" height="{_fmt(height)}" style="stroke:rgb(0,0,0);'
        'stroke-width:1" xmlns="http://www.w3.org/2000/svg">'
    )
    return "\n".join([header, *parts, "</svg>"])
