"""The conditions a measurement was made under, read from its own file: the machine, the
releases it ran with, the data type and TF32 setting, the sizes and the repetitions made.

Charts (pipeline/pages/charts.py) print them under each chart and sentences written from the records
(pipeline/claims/gpu_facts.py) name them, so that no figure is shown without what it was measured on.
A benchmark's data file (snippets/benchmarks/_bench.py) carries its provenance; the speed-up
benchmarks also carry `precision` and `grid` (one entry per size timed, with its samples).
"""
from __future__ import annotations

import statistics

# Releases a figure is read with, in the order they are named; cuDNN is written 9.19.0, not 91900.
LIBRARIES = (("tensorflow", "TensorFlow"), ("tf_keras", "tf-keras"), ("keras", "Keras"),
             ("torch", "PyTorch"), ("jax", "JAX"))
MIN_SPREAD_SAMPLES = 5  # fewer repetitions than this: a median is shown, never a spread


def cudnn_version(value) -> str:
    """cuDNN's version as PyTorch reports it (91900, 8907) in the usual form (9.19.0, 8.9.7)."""
    if isinstance(value, int):
        major, rest = (value // 10000, value % 10000) if value >= 90000 else \
            (value // 1000, value % 1000)
        return f"{major}.{rest // 100}.{rest % 100}"
    return str(value)


def releases(provenance: dict, only: tuple[str, ...] | None = None) -> list[str]:
    """["PyTorch 2.11.0", "cuDNN 9.19.0"]: the frameworks of a measurement's provenance (a
    benchmark file's, or a record's, whose `packages` list them), and on a GPU the cuDNN its
    framework loaded. `only`: the provenance keys to name (a program's own frameworks)."""
    p = provenance
    pkgs = p.get("packages") or {}
    out = []
    for key, name in LIBRARIES:
        if only is not None and key not in only:
            continue
        version = p.get(key) or pkgs.get(key.replace("_", "-")) or pkgs.get(key)
        if version:
            out.append(f"{name} {str(version).split('+')[0]}")
    on_gpu = p.get("device") == "GPU" or str(p.get("machine", "")).startswith("GPU:")
    if on_gpu:
        cudnn = p.get("cudnn") or p.get("torch_cudnn") or next(
            (pkgs[k] for k in ("nvidia-cudnn-cu13", "nvidia-cudnn-cu12") if k in pkgs), None)
        if cudnn:
            out.append(f"cuDNN {'.'.join(cudnn_version(cudnn).split('.')[:3])}")
    return out


def repetitions(rows: list[dict]) -> tuple[int, int] | None:
    """(fewest, most) timed samples behind the rows drawn, or None when no row says."""
    counts = [len(r["samples"]) for r in rows if isinstance(r.get("samples"), list)]
    return (min(counts), max(counts)) if counts else None


def spread_shown(row: dict) -> bool:
    """Whether a row's interquartile range may be drawn: from five samples up, or when the row
    does not list its samples (a summary over sizes says how many it holds)."""
    samples = row.get("samples")
    return not isinstance(samples, list) or len(samples) >= MIN_SPREAD_SAMPLES


def size_key(cell: dict) -> tuple:
    return tuple(cell[k] for k in ("steps", "units", "batch"))


def size_name(key: tuple) -> str:
    """(64, 256, 64) -> "64×256×64" (steps × units × batch)."""
    return "×".join(str(v) for v in key)


def _spread(values: list[float]) -> dict:
    """The statistics snippets/benchmarks/_bench.py's spread() gives, over sizes."""
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 \
        else (values[0],) * 3
    return {"median": statistics.median(values), "q1": q1, "q3": q3, "min": min(values),
            "max": max(values)}


SPEEDUP_CELL = {"framework", "layer", "mode", "steps", "units", "batch", "speedup"}


def is_speedup_grid(grid) -> bool:
    """A speed-up benchmark's grid: one cell per framework, layer, mode and size timed."""
    return bool(grid) and all(isinstance(c, dict) and SPEEDUP_CELL <= set(c) for c in grid)


def common_size_summary(parts: list[dict]) -> tuple[list[dict], dict[str, list[list[int]]]]:
    """The speed-up summary (one bar per framework, layer and mode) over the sizes that every
    framework timed for that layer and mode, from the `grid` of each framework's file: a
    framework whose time limit dropped some sizes is compared with the others on the sizes
    they share, never on a set of its own. Returns the rows and, per "LAYER MODE", the sizes
    as [steps, units, batch]."""
    cells: dict[tuple, dict[str, dict[tuple, float]]] = {}
    for part in parts:
        for c in part.get("grid") or []:
            if c.get("speedup"):
                cells.setdefault((c["layer"], c["mode"]), {}).setdefault(
                    c["framework"], {})[size_key(c)] = c["speedup"]["median"]
    rows, sizes = [], {}
    for (layer, mode), by_framework in cells.items():
        shared = sorted(set.intersection(*(set(v) for v in by_framework.values())))
        if not shared:
            continue
        sizes[f"{layer} {mode}"] = [list(k) for k in shared]
        for framework, medians in by_framework.items():
            values = [medians[k] for k in shared]
            rows.append({"variant": f"{framework} {layer} {mode}", "layer": layer,
                         "mode": mode, "n_sizes": len(shared), **_spread(values),
                         "samples": values})
    order = {v: i for i, v in enumerate(r["variant"] for p in parts for r in p["results"])}
    rows.sort(key=lambda r: order.get(r["variant"], len(order)))
    return rows, sizes
