"""What a chart drawn by pipeline/pages/charts.py shows, read back from its SVG and compared with the
data it was drawn from.

matplotlib writes each bar as a `patch_N` path filled with a series colour (charts.COLOURS) and
each data line as a `line2d_N` path stroked with one; the legend's samples (inside `legend_N`)
are left out. The comparison knows nothing of how charts.py lays a chart out: a bar's length must
be proportional to its median, every bar starting at zero, in the order of the variants, each
variant's label beside its own bars; a line must have one vertex per measured x, placed by one
linear scale (the x axis may be logarithmic) shared by every line.
"""
from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

from pipeline.pages.charts import COLOURS

SVG = "{http://www.w3.org/2000/svg}"
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
SERIES = {c.lower() for c in COLOURS}


def _style(element) -> dict[str, str]:
    pairs = (p.split(":", 1) for p in (element.get("style") or "").split(";") if ":" in p)
    return {k.strip(): v.strip().lower() for k, v in pairs}


def _paths(svg: str, prefix: str, prop: str) -> list[list[tuple[float, float]]]:
    """The vertices of the paths in groups `prefix*` painted (`prop`: fill or stroke) with a
    series colour, outside the legend."""
    root = ET.fromstring(svg)
    legend = {id(e) for g in root.iter(f"{SVG}g") if (g.get("id") or "").startswith("legend")
              for e in g.iter()}
    found = []
    for g in root.iter(f"{SVG}g"):
        if not (g.get("id") or "").startswith(prefix) or id(g) in legend:
            continue
        for path in g.findall(f"{SVG}path"):
            if _style(path).get(prop) in SERIES:
                nums = [float(n) for n in NUMBER.findall(path.get("d") or "")]
                found.append(list(zip(nums[::2], nums[1::2])))
    return found


def bars(svg: str) -> list[tuple[float, float, float, float]]:
    """(left, top, right, bottom) of every bar, in SVG coordinates (y grows downwards)."""
    boxes = []
    for points in _paths(svg, "patch_", "fill"):
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        boxes.append((min(xs), min(ys), max(xs), max(ys)))
    return boxes


def lines(svg: str) -> list[list[tuple[float, float]]]:
    """The data lines' points: their markers (one <use> a measured point, never simplified
    away as a path's vertices can be), or the path's vertices where a line has no marker."""
    root = ET.fromstring(svg)
    legend = {id(e) for g in root.iter(f"{SVG}g") if (g.get("id") or "").startswith("legend")
              for e in g.iter()}
    found = []
    for g in root.iter(f"{SVG}g"):
        if not (g.get("id") or "").startswith("line2d_") or id(g) in legend:
            continue
        drawn = [p for p in g.findall(f"{SVG}path") if _style(p).get("stroke") in SERIES]
        if not drawn:
            continue  # error bar caps: markers only
        marks = [(float(u.get("x")), float(u.get("y"))) for u in g.iter(f"{SVG}use")]
        nums = [float(n) for n in NUMBER.findall(drawn[0].get("d") or "")]
        found.append(marks or list(zip(nums[::2], nums[1::2])))
    return found


def _labels(svg: str) -> dict[str, list[tuple[float, float]]]:
    root = ET.fromstring(svg)
    out: dict[str, list[tuple[float, float]]] = {}
    for t in root.iter(f"{SVG}text"):
        if t.get("x") is not None:
            out.setdefault("".join(t.itertext()).strip(), []).append(
                (float(t.get("x")), float(t.get("y"))))
    return out


def _close(a: float, b: float, rel: float = 2e-3) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=0.05)


def assert_bars_show(svg: str, sets: list[dict]) -> None:
    """Horizontal bars (vertical ones are read the same way) proportional to the medians, in
    variant order (top to bottom, or left to right), the machines of each variant together."""
    variants = list(dict.fromkeys(r["variant"] for d in sets for r in d["results"]))
    expected = [(v, r["median"]) for v in variants for d in sets
                for r in d["results"] if r["variant"] == v]
    boxes = bars(svg)
    assert len(boxes) == len(expected), (len(boxes), expected)
    horizontal = len({round(b[0], 2) for b in boxes}) == 1  # every bar starts at the same x
    if horizontal:
        boxes.sort(key=lambda b: b[1])
        lengths = [b[2] - b[0] for b in boxes]
        centre = [(b[1] + b[3]) / 2 for b in boxes]
        axis = 1
    else:
        assert len({round(b[3], 2) for b in boxes}) == 1, "bars start neither at one x nor one y"
        boxes.sort(key=lambda b: b[0])
        lengths = [b[3] - b[1] for b in boxes]
        centre = [(b[0] + b[2]) / 2 for b in boxes]
        axis = 0
    scale = lengths[0] / expected[0][1]
    for length, (variant, median) in zip(lengths, expected):
        assert _close(length, scale * median), (variant, median, length, scale)
    # Each variant's label sits beside its own bars, nearer to them than to any other's.
    labels = _labels(svg)
    middle = {v: sum(c for c, (w, _) in zip(centre, expected) if w == v) /
              sum(1 for w, _ in expected if w == v) for v in variants}
    for v in variants:
        assert v in labels, f"no label {v!r}"
        spot = min(labels[v], key=lambda p: min(abs(p[axis] - m) for m in middle.values()))
        assert min(middle, key=lambda w: abs(spot[axis] - middle[w])) == v, (v, spot, middle)


def assert_lines_show(svg: str, sets: list[dict], log_x: bool = False) -> None:
    """One line per variant and machine, in the order they are drawn (machine by machine,
    variant by variant), a vertex per measured x, every vertex placed by the same two scales:
    y linear in the median and pointing up, x linear in x (or in log x)."""
    expected = []
    for d in sets:
        for v in dict.fromkeys(r["variant"] for r in d["results"]):
            rows = sorted((r for r in d["results"] if r["variant"] == v), key=lambda r: r["x"])
            expected.append([(r["x"], r["median"]) for r in rows])
    drawn = lines(svg)
    assert not bars(svg), "a line chart draws no bars"
    assert [len(line) for line in drawn] == [len(line) for line in expected], (drawn, expected)
    fx = math.log2 if log_x else (lambda x: x)
    pairs = [(px, d) for got, want in zip(drawn, expected) for px, d in zip(got, want)]
    for axis, to_data, up in ((0, lambda d: fx(d[0]), False), (1, lambda d: d[1], True)):
        values = [(px[axis], to_data(d)) for px, d in pairs]
        (p0, d0), (p1, d1) = min(values, key=lambda v: v[1]), max(values, key=lambda v: v[1])
        if d1 == d0:
            assert all(_close(p, p0) for p, _ in values), values
            continue
        slope = (p1 - p0) / (d1 - d0)
        assert slope != 0 and (slope < 0) == up, ("axis", axis, slope)  # SVG's y grows down
        for p, d in values:
            assert _close(p, p0 + slope * (d - d0)), ("axis", axis, p, d, values)
