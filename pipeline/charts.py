"""Draw benchmark charts (SVG) from result data: this build's run plus committed results.

A result file is JSON written by snippets/benchmarks/_bench.py (this build's, or a record's
under results/<machine>/, see pipeline/records.py):
  {"benchmark", "title", "metric", "lower_is_better", "x_label"?, "x_log"?, "expects_gpu"?,
   "provenance": {...},
   "results": [{"variant", "x"?, "device"?, "median", "q1", "q3", "min", "max", "samples"}]}
Every chart names the machine each series was measured on. A benchmark with "expects_gpu" whose
data hold no row with "device": "GPU" says on the chart that no GPU measurement is recorded yet.
"""
from __future__ import annotations

import hashlib
import html
import io
import json
from pathlib import Path

from .files import write_atomic

REQUIRED = ("benchmark", "title", "metric", "provenance", "results")


class ChartError(ValueError):
    pass


def load_result(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ChartError(f"{path}: not a readable result file ({e})")
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise ChartError(f"{path}: missing {', '.join(missing)}")
    if "machine" not in data["provenance"]:
        raise ChartError(f"{path}: provenance does not name the machine")
    if data.get("dry_run"):
        raise ChartError(f"{path}: a dry run (BENCH_CPU_DRY_RUN=1) checks code, it is not a "
                         "measurement to draw")
    return data


def collect(benchmark: str, local_files: list[Path],
            recorded: list[tuple[Path, str]]) -> list[dict]:
    """This build's result first, then every recorded one (under results/, with where it is
    and when from pipeline/records.py), each labelled with the machine its data names."""
    sets: dict[str, dict] = {}
    for path, where in [(p, "this build") for p in local_files] + list(recorded):
        d = load_result(path)
        label = f"{d['provenance']['machine']} ({where})"
        if label in sets:  # several snippets wrote this benchmark (one per framework): one
            sets[label]["results"] += d["results"]  # series per machine and run
        else:
            sets[label] = dict(d, label=label)
    return list(sets.values())


def describe(d: dict) -> str:
    p = d["provenance"]
    keys = ["tensorflow", "keras", "torch", "jax"]
    if p.get("device") == "GPU":  # CUDA/cuDNN versions mean nothing for a CPU measurement
        keys += ["tf_built_with_cuda", "tf_built_with_cudnn", "torch_cuda", "cudnn", "driver"]
    names = {"tf_built_with_cuda": "TF built with CUDA", "tf_built_with_cudnn": "TF built with cuDNN",
             "torch_cuda": "PyTorch CUDA", "cudnn": "cuDNN", "driver": "driver"}
    libs = " · ".join(f"{names.get(k, k)} {p[k]}" for k in keys if p.get(k))
    return f"{d['label']}: {libs} · {p.get('date', '')[:10]}"


NO_GPU_NOTE = "No GPU measurement is recorded yet: the GPU half of this benchmark needs a GPU."


def missing_gpu(sets: list[dict]) -> bool:
    """True when the benchmark has a GPU half and no machine has measured it: no row says it
    ran on a GPU, and no data set comes from a GPU (a GPU-only benchmark's rows need not say)."""
    return (any(d.get("expects_gpu") for d in sets)
            and not any(r.get("device") == "GPU" for d in sets for r in d["results"])
            and not any(d["provenance"].get("device") == "GPU" for d in sets))


# Series colours: each has a contrast of at least 3:1 against the white chart background (WCAG
# 1.4.11, non-text contrast), unlike matplotlib's default orange and green; Okabe-Ito based, so
# they stay apart for colour-blind readers.
COLOURS = ("#0072B2", "#B35900", "#007A5E", "#AA3377", "#555555", "#8C6D00")


def summary(sets: list[dict]) -> str:
    """The chart's data in words, for screen readers (the SVG's <desc>)."""
    first = sets[0]
    parts = [f"{first['metric']}, median with interquartile range"
             + (", lower is better." if first.get("lower_is_better") else ".")]
    for d in sets:
        rows = []
        for r in d["results"]:
            at = f" at {first.get('x_label', 'x')} {r['x']}" if r.get("x") is not None else ""
            rows.append(f"{r['variant']}{at}: {r['median']:.4g} ({r['q1']:.4g} to {r['q3']:.4g})")
        parts.append(f"{d['label']}: " + "; ".join(rows) + ".")
    if missing_gpu(sets):
        parts.append(NO_GPU_NOTE)
    return " ".join(parts)


def accessible(svg: str, title: str, description: str) -> str:
    """Name the SVG for assistive technologies: role="img" with an aria-label, and <title> and
    <desc> as its first children (no ids: a page may show the same chart twice)."""
    head_end = svg.index(">") + 1
    return (svg[:4] + f' role="img" aria-label="{html.escape(title)}"' + svg[4:head_end]
            + f"\n <title>{html.escape(title, quote=False)}</title>"
            + f"\n <desc>{html.escape(description, quote=False)}</desc>" + svg[head_end:])


def draw(sets: list[dict]) -> str:
    """One SVG: grouped bars (variant × machine) or lines when results carry an x value."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from cycler import cycler

    plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "cudnn-rnn",
                         "font.size": 10,  # real <text>: readable, searchable, stable
                         "axes.prop_cycle": cycler(color=COLOURS)})
    first = sets[0]
    has_x = any(r.get("x") is not None for d in sets for r in d["results"])
    fig, ax = plt.subplots(figsize=(8, 3.2 + 0.35 * len(first["results"]) * (not has_x)))
    if has_x:
        for d in sets:
            for variant in dict.fromkeys(r["variant"] for r in d["results"]):
                rows = sorted((r for r in d["results"] if r["variant"] == variant),
                              key=lambda r: r["x"])
                xs = [r["x"] for r in rows]
                med = [r["median"] for r in rows]
                err = [[r["median"] - r["q1"] for r in rows], [r["q3"] - r["median"] for r in rows]]
                label = variant if len(sets) == 1 else f"{variant} — {d['provenance']['machine']}"
                ax.errorbar(xs, med, yerr=err, marker="o", capsize=3, label=label)
        if any(d.get("x_log") for d in sets):  # sweeps over powers of two
            from matplotlib.ticker import NullLocator, ScalarFormatter
            ax.set_xscale("log", base=2)
            # Ticks at the measured sizes, written 8, 32, 128 rather than 2^3, 2^5, 2^7.
            ax.set_xticks(sorted({r["x"] for d in sets for r in d["results"]}))
            ax.xaxis.set_major_formatter(ScalarFormatter())
            ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlabel(first.get("x_label", "x"))
        ax.set_ylabel(first["metric"])
    else:
        variants = list(dict.fromkeys(r["variant"] for d in sets for r in d["results"]))
        height = 0.8 / len(sets)
        for i, d in enumerate(sets):
            by_variant = {r["variant"]: r for r in d["results"]}
            ys, med, err = [], [], [[], []]
            for j, v in enumerate(variants):
                if v in by_variant:
                    r = by_variant[v]
                    ys.append(j + i * height)
                    med.append(r["median"])
                    err[0].append(r["median"] - r["q1"])
                    err[1].append(r["q3"] - r["median"])
            ax.barh(ys, med, height=height, xerr=err, capsize=3, label=d["provenance"]["machine"])
        ax.set_yticks([j + height * (len(sets) - 1) / 2 for j in range(len(variants))], variants)
        ax.invert_yaxis()
        ax.set_xlabel(first["metric"] + " (median, bars: interquartile range)")
        ax.set_ylabel("variant")
    ax.set_title(first["title"], fontsize=11)
    ax.legend(fontsize=8, loc="best")
    ax.grid(axis="x" if not has_x else "both", alpha=0.3)
    lines = ["Measured on " + describe(d) for d in sets]
    if missing_gpu(sets):
        lines.insert(0, NO_GPU_NOTE)
    fig.text(0.01, 0.01, "\n".join(lines), fontsize=7, va="bottom", ha="left")
    fig.tight_layout(rect=(0, 0.04 + 0.045 * len(lines), 1, 1))
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]  # drop the XML prolog: the SVG goes inline into HTML
    return accessible(svg, first["title"], summary(sets))


class NoData(ChartError):
    """Nothing to draw: no snippet of this build wrote the benchmark and no record holds it."""


def chart_svg(benchmark: str, local_files: list[Path], recorded: list[tuple[Path, str]],
              cache_dir: Path) -> str:
    """Draw, or reuse a drawing of exactly the same data made by the same code."""
    sets = collect(benchmark, local_files, recorded)
    if not sets:
        raise NoData(f"no data for benchmark {benchmark!r}: no snippet wrote "
                     f"{benchmark}.json and no record under results/ holds it")
    h = hashlib.sha256(Path(__file__).read_bytes())
    h.update(json.dumps(sets, sort_keys=True).encode())
    cached = cache_dir / f"{benchmark}-{h.hexdigest()[:16]}.svg"
    if cached.is_file():
        return cached.read_text(encoding="utf-8")
    svg = draw(sets)
    write_atomic(cached, svg)
    return svg
