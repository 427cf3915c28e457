"""Draw benchmark charts (SVG) from result data: this build's run plus committed results.

A result file is JSON written by snippets/benchmarks/_bench.py (this build's, or a record's
under results/<machine>/, see pipeline/records.py):
  {"benchmark", "title", "metric", "lower_is_better", "x_label"?, "x_log"?, "expects_gpu"?,
   "provenance": {...},
   "results": [{"variant", "x"?, "device"?, "median", "q1", "q3", "min", "max", "samples"}]}
Every chart names the machine each series was measured on. A benchmark with "expects_gpu" whose
data hold no row with "device": "GPU" says on the chart that no GPU measurement is recorded yet.

Each chart is drawn in its page's language (`lang`): the words the chart code writes are in
WORDS, and the English words the benchmark data carry (title, metric, axis label, variant names)
are translated by the phrase rules in PHRASES. Next to the SVG, data_table() gives the same
numbers as a small HTML table in that language.
"""
from __future__ import annotations

import hashlib
import html
import io
import json
import re
import textwrap
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


# The words the chart code itself writes, per language.
WORDS = {
    "en": {"this_run": "this page's run", "measured_on": "Measured on",
           "median_iqr": "median with interquartile range", "lower_better": "lower is better",
           "at": "at", "to": "to", "bars": "median, bars: interquartile range",
           "variant": "variant", "no_gpu": "No GPU measurement is recorded yet: the GPU half of "
           "this benchmark needs a GPU.",
           "table": "The data as a table", "machine": "Machine", "median": "Median",
           "iqr": "Interquartile range", "built_cuda": "TF built with CUDA",
           "built_cudnn": "TF built with cuDNN", "torch_cuda": "PyTorch CUDA", "driver": "driver"},
    "es": {"this_run": "ejecución de esta página", "measured_on": "Medido en",
           "median_iqr": "mediana con rango intercuartílico", "lower_better": "menos es mejor",
           "at": "con", "to": "a", "bars": "mediana, barras: rango intercuartílico",
           "variant": "variante", "no_gpu": "Aún no hay ninguna medición de GPU registrada: la "
           "mitad de GPU de este benchmark necesita una GPU.",
           "table": "Los datos en una tabla", "machine": "Máquina", "median": "Mediana",
           "iqr": "Rango intercuartílico", "built_cuda": "TF compilado con CUDA",
           "built_cudnn": "TF compilado con cuDNN", "torch_cuda": "PyTorch CUDA",
           "driver": "controlador"},
}
LANGUAGES = tuple(WORDS)

# The English phrases that benchmark data carry (snippets/benchmarks/*.py: titles, metrics, axis
# labels, variant names), as ordered (pattern, replacement) rules: whole phrases first, then the
# "batch 32", "64 units" parts whose numbers change with the sizes. Code (nn.LSTM, unroll=True,
# recurrent_dropout=0.2) is not translated.
PHRASES = {"es": [(re.compile(p), r) for p, r in (
    (r", on a CPU no variant runs cuDNN", ", en una CPU ninguna variante usa cuDNN"),
    (r"Keras LSTM/GRU variants", "Variantes de LSTM/GRU en Keras"),
    (r"Training step relative to the default layer, by ",
     "Paso de entrenamiento relativo a la capa por defecto, según "),
    (r"LSTM forward\+backward, peak tensor memory, loop vs unroll",
     "LSTM hacia delante y hacia atrás, memoria máxima de los tensores, bucle frente a unroll"),
    (r"LSTM forward\+backward, loop vs unroll",
     "LSTM hacia delante y hacia atrás, bucle frente a unroll"),
    (r"Keras LSTM training throughput vs batch size",
     "Rendimiento de entrenamiento de una LSTM de Keras según el tamaño de lote"),
    (r"Keras LSTM train step, CPU vs GPU", "Paso de entrenamiento de una LSTM de Keras, CPU frente a GPU"),
    (r"Keras LSTM train step", "Paso de entrenamiento de una LSTM de Keras"),
    (r"PyTorch LSTM on (\w+)", r"LSTM de PyTorch en \1"),
    (r"cuDNN speed-up over the generic kernel \(median over the sizes; bars: IQR\)",
     "Aceleración de cuDNN frente al kernel genérico (mediana sobre los tamaños; barras: RIC)"),
    (r"cuDNN speed-up by ", "Aceleración de cuDNN según "),
    (r", training step \(", ", paso de entrenamiento ("),
    (r"cuDNN path: share of the GPU's FP32 matrix-multiply rate, by units",
     "Camino de cuDNN: fracción de la velocidad de producto de matrices FP32 de la GPU, según "
     "las unidades"),
    (r"Small LSTM: ", "LSTM pequeña: "),
    (r"above 1 the GPU is faster", "por encima de 1 la GPU es más rápida"),
    (r"time relative to the default layer \(x\)", "tiempo relativo a la capa por defecto (x)"),
    (r"ms per call", "ms por llamada"),
    (r"ms per forward\+backward", "ms por pasada hacia delante y hacia atrás"),
    (r"MiB held at the peak of one pass", "MiB ocupados en el máximo de una pasada"),
    (r"samples per second \(higher is better\)", "muestras por segundo (más es mejor)"),
    (r"ms per train step", "ms por paso de entrenamiento"),
    (r"speed-up \(generic time / cuDNN time\)", "aceleración (tiempo genérico / tiempo de cuDNN)"),
    (r"speed-up \(generic / cuDNN\)", "aceleración (genérico / cuDNN)"),
    (r"% of the FP32 matmul rate measured in the same run",
     "% de la velocidad de matmul FP32 medida en la misma ejecución"),
    (r"CPU time / GPU time", "tiempo en CPU / tiempo en GPU"),
    (r"sequence length", "longitud de secuencia"),
    (r"batch size", "tamaño de lote"),
    (r"default \(cuDNN-eligible\)", "por defecto (apta para cuDNN)"),
    (r"\(never cuDNN\)", "(nunca cuDNN)"),
    (r"LSTM loop \(", "LSTM con bucle ("),
    (r"loop over nn\.LSTMCell", "bucle sobre nn.LSTMCell"),
    (r"\blarge LSTM", "LSTM grande"),
    (r"\bsmall LSTM", "LSTM pequeña"),
    (r" on (CPU|GPU)\b", r" en \1"),
    (r"\btrain\b", "entrenamiento"),
    (r"\binference\b", "inferencia"),
    (r"\bsteps\b", "pasos"),
    (r"\bunits\b", "unidades"),
    (r"\bfeatures\b", "características"),
    (r"\bbatch\b", "lote"),
)]}


def translate(text: str, lang: str) -> str:
    """A benchmark's English phrase (title, metric, label, variant) in `lang`."""
    for pattern, replacement in PHRASES.get(lang, ()):
        text = pattern.sub(replacement, text)
    return text


def number(value: float, lang: str) -> str:
    """4 significant digits, with the language's decimal mark."""
    text = f"{value:.4g}"
    return text.replace(".", ",") if lang == "es" else text


def localise(sets: list[dict], lang: str) -> list[dict]:
    """The data sets with their words in `lang` (the numbers untouched)."""
    if lang == "en":
        return sets
    out = []
    for d in sets:
        d = dict(d, results=[dict(r, variant=translate(r["variant"], lang)) for r in d["results"]])
        for key in ("title", "metric", "x_label"):
            if d.get(key):
                d[key] = translate(d[key], lang)
        out.append(d)
    return out


def collect(benchmark: str, local_files: list[Path],
            recorded: list[tuple[Path, str]], lang: str = "en") -> list[dict]:
    """This page's run first, then every recorded one (under results/, with where it is
    and when from pipeline/records.py), each labelled with the machine its data names."""
    sets: dict[str, dict] = {}
    for path, where in [(p, WORDS[lang]["this_run"]) for p in local_files] + list(recorded):
        d = load_result(path)
        label = f"{d['provenance']['machine']} ({where})"
        if label in sets:  # several snippets wrote this benchmark (one per framework): one
            sets[label]["results"] += d["results"]  # series per machine and run
        else:
            sets[label] = dict(d, label=label)
    return list(sets.values())


def describe(d: dict, lang: str = "en") -> str:
    p, w = d["provenance"], WORDS[lang]
    keys = ["tensorflow", "keras", "torch", "jax"]
    if p.get("device") == "GPU":  # CUDA/cuDNN versions mean nothing for a CPU measurement
        keys += ["tf_built_with_cuda", "tf_built_with_cudnn", "torch_cuda", "cudnn", "driver"]
    names = {"tf_built_with_cuda": w["built_cuda"], "tf_built_with_cudnn": w["built_cudnn"],
             "torch_cuda": w["torch_cuda"], "cudnn": "cuDNN", "driver": w["driver"]}
    libs = " · ".join(f"{names.get(k, k)} {p[k]}" for k in keys if p.get(k))
    return f"{d['label']}: {libs} · {p.get('date', '')[:10]}"


NO_GPU_NOTE = WORDS["en"]["no_gpu"]


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


def summary(sets: list[dict], lang: str = "en") -> str:
    """The chart's data in words, for screen readers (the SVG's <desc>)."""
    first, w, n = sets[0], WORDS[lang], lambda v: number(v, lang)
    parts = [f"{first['metric']}, {w['median_iqr']}"
             + (f", {w['lower_better']}." if first.get("lower_is_better") else ".")]
    for d in sets:
        rows = []
        for r in d["results"]:
            at = f" {w['at']} {first.get('x_label', 'x')} {r['x']}" if r.get("x") is not None else ""
            rows.append(f"{r['variant']}{at}: {n(r['median'])} ({n(r['q1'])} {w['to']} "
                        f"{n(r['q3'])})")
        parts.append(f"{d['label']}: " + "; ".join(rows) + ".")
    if missing_gpu(sets):
        parts.append(w["no_gpu"])
    return " ".join(parts)


def data_table(sets: list[dict], lang: str = "en") -> str:
    """The chart's numbers as a small HTML table, collapsed under a summary line."""
    sets, w, n = localise(sets, lang), WORDS[lang], lambda v: number(v, lang)
    first = sets[0]
    has_x = any(r.get("x") is not None for d in sets for r in d["results"])
    head = ([w["machine"]] if len(sets) > 1 else []) + [w["variant"].capitalize()] \
        + ([first.get("x_label", "x")[:1].upper() + first.get("x_label", "x")[1:]] if has_x else [])\
        + [w["median"], w["iqr"]]
    rows = []
    for d in sets:
        for r in d["results"]:
            cells = ([d["provenance"]["machine"]] if len(sets) > 1 else []) + [r["variant"]] \
                + ([str(r["x"]) if r.get("x") is not None else "—"] if has_x else []) \
                + [n(r["median"]), f"{n(r['q1'])} – {n(r['q3'])}"]
            rows.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    caption = f"{first['title']} · {first['metric']}"
    return (f'<details class="chart-data"><summary>{html.escape(w["table"])}</summary>'
            f'<table><caption>{html.escape(caption)}'
            "</caption><thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head)
            + "</tr></thead><tbody>" + "".join(rows) + "</tbody></table></details>")


def accessible(svg: str, title: str, description: str) -> str:
    """Name the SVG for assistive technologies: role="img" with an aria-label, and <title> and
    <desc> as its first children (no ids: a page may show the same chart twice)."""
    head_end = svg.index(">") + 1
    return (svg[:4] + f' role="img" aria-label="{html.escape(title)}"' + svg[4:head_end]
            + f"\n <title>{html.escape(title, quote=False)}</title>"
            + f"\n <desc>{html.escape(description, quote=False)}</desc>" + svg[head_end:])


# Chart text sizes, in points of the 6.4-inch-wide figure (460.8 pt). A page shows the SVG at
# least MIN_WIDTH_PX wide (overrides/assets/site.css: a narrower screen scrolls it inside its
# box), so the smallest, SMALLEST_PT, is never drawn under 11 px: 9 * 570 / 460.8 = 11.1.
FIG_WIDTH_IN = 6.4
SMALLEST_PT = 9
MIN_WIDTH_PX = 570


def draw(sets: list[dict], lang: str = "en") -> str:
    """One SVG: grouped bars (variant × machine) or lines when results carry an x value."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from cycler import cycler

    plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "cudnn-rnn",
                         "font.size": 10,  # real <text>: readable, searchable, stable
                         "axes.prop_cycle": cycler(color=COLOURS)})
    w = WORDS[lang]
    described = [describe(d, lang) for d in sets]  # machine labels before translation
    sets = localise(sets, lang)
    first = sets[0]
    has_x = any(r.get("x") is not None for d in sets for r in d["results"])
    fig, ax = plt.subplots(figsize=(FIG_WIDTH_IN,
                                    3.6 + 0.3 * len(first["results"]) * (not has_x)))
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
        ax.set_xlabel(f"{first['metric']} ({w['bars']})", loc="right")
        ax.set_ylabel(w["variant"])
    wrap = lambda text, width: "\n".join(textwrap.wrap(text, width))  # noqa: E731
    # A bar chart's axes start right of its variant names: its title and axis label end at the
    # axes' right edge and run left over the names' column, so they stay inside the figure.
    ax.set_title(wrap(first["title"], 70), fontsize=10.5, loc="center" if has_x else "right")
    ax.legend(fontsize=SMALLEST_PT, loc="best")
    ax.grid(axis="x" if not has_x else "both", alpha=0.3)
    lines = [wrap(f"{w['measured_on']} {text}", 95) for text in described]
    if missing_gpu(sets):
        lines.insert(0, wrap(w["no_gpu"], 95))
    note = "\n".join(lines)
    fig.text(0.01, 0.01, note, fontsize=SMALLEST_PT, va="bottom", ha="left")
    # Room for the note under the axes: 0.17 inch a line of 9-point text, whatever the height.
    fig.tight_layout(rect=(0, (0.12 + 0.17 * (note.count("\n") + 1)) / fig.get_figheight(), 1, 1))
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None},
                transparent=True)  # the page's box is white, with its scroll shadows
    plt.close(fig)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]  # drop the XML prolog: the SVG goes inline into HTML
    return accessible(svg, first["title"], summary(sets, lang))


class NoData(ChartError):
    """Nothing to draw: no snippet of this build wrote the benchmark and no record holds it."""


def chart_svg(benchmark: str, local_files: list[Path], recorded: list[tuple[Path, str]],
              cache_dir: Path, lang: str = "en") -> str:
    """Draw, or reuse a drawing of exactly the same data made by the same code."""
    if lang not in WORDS:
        raise ChartError(f"no chart words for language {lang!r} (pipeline/charts.py has "
                         f"{', '.join(LANGUAGES)})")
    sets = collect(benchmark, local_files, recorded, lang)
    if not sets:
        raise NoData(f"no data for benchmark {benchmark!r}: no snippet wrote "
                     f"{benchmark}.json and no record under results/ holds it")
    h = hashlib.sha256(Path(__file__).read_bytes())
    h.update(json.dumps([lang, sets], sort_keys=True).encode())
    cached = cache_dir / f"{benchmark}-{lang}-{h.hexdigest()[:16]}.svg"
    if cached.is_file():
        return cached.read_text(encoding="utf-8")
    svg = draw(sets, lang)
    write_atomic(cached, svg)
    return svg


def chart_table(benchmark: str, local_files: list[Path], recorded: list[tuple[Path, str]],
                lang: str = "en") -> str:
    """The collapsed data table shown under a chart, in `lang`."""
    return data_table(collect(benchmark, local_files, recorded, lang), lang)
