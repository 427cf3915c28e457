"""Draw benchmark charts (SVG) from result data: this build's run plus committed results.

A result file is JSON written by snippets/benchmarks/_bench.py (this build's, or a record's
under results/<machine>/, see pipeline/records/store.py):
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

from pipeline.records import conditions
from pipeline.running.files import write_atomic

REQUIRED = ("benchmark", "title", "metric", "provenance", "results")
MARKER = re.compile(r"<!--\s*(gpu-)?chart:\s*([\w.-]+)\s*-->")  # where a page puts a chart


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
           "built_cudnn": "TF built with cuDNN", "torch_cuda": "PyTorch CUDA", "driver": "driver",
           "reps": "{n} timed repetitions", "reps_range": "{a} to {b} timed repetitions",
           "reps_size": "{a} to {b} timed repetitions a size",
           "reps_size_one": "{n} timed repetitions a size",
           "few": "no spread drawn from fewer than {n}",
           "common": "each bar: the median over the sizes that every framework timed for that "
                     "layer and mode (steps × units × batch in the data table)",
           "summary_title": "cuDNN speed-up over the generic kernel, median over the sizes every "
                            "framework timed (bars: interquartile range over them)",
           "n_sizes": "{n} sizes", "sizes": "Sizes (steps × units × batch)"},
    "es": {"this_run": "ejecución de esta página", "measured_on": "Medido en",
           "median_iqr": "mediana con rango intercuartílico", "lower_better": "menos es mejor",
           "at": "con", "to": "a", "bars": "mediana, barras: rango intercuartílico",
           "variant": "variante", "no_gpu": "Aún no hay ninguna medición de GPU registrada: la "
           "mitad de GPU de este benchmark necesita una GPU.",
           "table": "Los datos en una tabla", "machine": "Máquina", "median": "Mediana",
           "iqr": "Rango intercuartílico", "built_cuda": "TF compilado con CUDA",
           "built_cudnn": "TF compilado con cuDNN", "torch_cuda": "PyTorch CUDA",
           "driver": "controlador", "reps": "{n} repeticiones medidas",
           "reps_range": "de {a} a {b} repeticiones medidas",
           "reps_size": "de {a} a {b} repeticiones medidas por tamaño",
           "reps_size_one": "{n} repeticiones medidas por tamaño",
           "few": "sin dispersión con menos de {n}",
           "common": "cada barra: la mediana sobre los tamaños que todos los frameworks midieron "
                     "para esa capa y ese modo (pasos × unidades × lote en la tabla de datos)",
           "summary_title": "Aceleración de cuDNN frente al kernel genérico, mediana sobre los "
                            "tamaños que todos los frameworks midieron (barras: rango "
                            "intercuartílico sobre ellos)",
           "n_sizes": "{n} tamaños", "sizes": "Tamaños (pasos × unidades × lote)"},
}
LANGUAGES = tuple(WORDS)

# The English phrases that benchmark data carry (snippets/benchmarks/*.py: titles, metrics, axis
# labels, variant names), as ordered (pattern, replacement) rules: whole phrases first, then the
# "batch 32", "64 units" parts whose numbers change with the sizes. Code (nn.LSTM, unroll=True,
# recurrent_dropout=0.2) is not translated.
PHRASES = {"es": [(re.compile(p), r) for p, r in (
    (r", on a CPU no variant runs cuDNN", ", en una CPU ninguna variante usa cuDNN"),
    (r"^FP32, TF32 off$", "FP32, sin TF32"),
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
    and when from pipeline/records/store.py), each labelled with the machine its data names. Files of
    one machine and run (one per framework) make one set; `parts` keeps each file as written."""
    sets: dict[str, dict] = {}
    for path, where in [(p, WORDS[lang]["this_run"]) for p in local_files] + list(recorded):
        d = load_result(path)
        label = f"{d['provenance']['machine']} ({where})"
        if label in sets:  # several snippets wrote this benchmark (one per framework): one
            sets[label]["results"] += d["results"]  # series per machine and run
            sets[label]["parts"].append(d)
            # what each framework's file says of the run (its cuDNN, its CUDA build) is the run's
            sets[label]["provenance"] = {**d["provenance"], **sets[label]["provenance"]}
        else:
            sets[label] = dict(d, label=label, results=list(d["results"]), parts=[d])
    return [_summarised(d) for d in sets.values()]


def _summarised(d: dict) -> dict:
    """A summary over sizes (rows with no x, and a `grid` of the sizes timed) drawn again over
    the sizes that every framework of the set timed for that layer and mode
    (conditions.common_size_summary): a time limit that cut one framework's sizes must not
    compare it with the others on a different set."""
    if any(r.get("x") is not None for r in d["results"]) or not all(
            conditions.is_speedup_grid(p.get("grid")) for p in d["parts"]):
        return d
    rows, sizes = conditions.common_size_summary(d["parts"])
    return dict(d, results=rows, common_sizes=sizes) if rows else d


def describe(d: dict, lang: str = "en") -> str:
    """The machine, what its figures ran with, and when: a chart's "Measured on" line."""
    p, w = d["provenance"], WORDS[lang]
    libs = conditions.releases(p)
    if p.get("device") == "GPU":  # CUDA versions mean nothing for a CPU measurement
        names = {"tf_built_with_cuda": w["built_cuda"], "tf_built_with_cudnn": w["built_cudnn"],
                 "torch_cuda": w["torch_cuda"], "driver": w["driver"]}
        libs += [f"{name} {p[k]}" for k, name in names.items() if p.get(k)]
    return f"{d['label']}: {' · '.join(libs + [p.get('date', '')[:10]])}"


def conditions_line(d: dict, lang: str = "en") -> str:
    """The data type and TF32 setting, the repetitions made, and for a summary over sizes which
    sizes: what the figures hold besides the machine."""
    w = WORDS[lang]
    parts = []
    if d.get("precision"):
        parts.append(translate(d["precision"], lang))
    timed = [c["speedup"] for p in d["parts"] for c in p.get("grid") or [] if c.get("speedup")] \
        if d.get("common_sizes") else d["results"]
    reps = conditions.repetitions(timed)
    if reps and not d.get("common_sizes"):
        parts.append(w["reps"].format(n=reps[0]) if reps[0] == reps[1]
                     else w["reps_range"].format(a=reps[0], b=reps[1]))
    elif reps:
        parts.append(w["reps_size"].format(a=reps[0], b=reps[1]) if reps[0] != reps[1]
                     else w["reps_size_one"].format(n=reps[0]))
    if d.get("common_sizes"):
        parts.append(w["common"])
    if any(not conditions.spread_shown(r) for r in d["results"]):
        parts.append(w["few"].format(n=conditions.MIN_SPREAD_SAMPLES))
    return " · ".join(parts)


def title_of(d: dict, lang: str = "en") -> str:
    """The chart's title: the benchmark's, with the machine it was measured on, so that charts of
    two machines never share one."""
    title = WORDS[lang]["summary_title"] if d.get("common_sizes") else d["title"]
    return f"{title} · {d['provenance']['machine']}"


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


def _iqr(r: dict, n) -> str:
    return f"{n(r['q1'])} – {n(r['q3'])}" if conditions.spread_shown(r) else "—"


def _variant(r: dict, lang: str) -> str:
    """A row's name, with the number of sizes a summary row holds."""
    if r.get("n_sizes"):
        return f"{r['variant']} · {WORDS[lang]['n_sizes'].format(n=r['n_sizes'])}"
    return r["variant"]


def summary(d: dict, lang: str = "en", no_gpu: bool = False) -> str:
    """The chart's data in words, for screen readers (the SVG's <desc>)."""
    w, n = WORDS[lang], lambda v: number(v, lang)
    parts = [f"{d['metric']}, {w['median_iqr']}"
             + (f", {w['lower_better']}." if d.get("lower_is_better") else ".")]
    rows = []
    for r in d["results"]:
        at = f" {w['at']} {d.get('x_label', 'x')} {r['x']}" if r.get("x") is not None else ""
        spread = f" ({n(r['q1'])} {w['to']} {n(r['q3'])})" if conditions.spread_shown(r) else ""
        rows.append(f"{_variant(r, lang)}{at}: {n(r['median'])}{spread}")
    parts.append(f"{d['label']}: " + "; ".join(rows) + ".")
    if no_gpu:
        parts.append(w["no_gpu"])
    return " ".join(parts)


def data_table(d: dict, lang: str = "en") -> str:
    """The chart's numbers as a small HTML table, collapsed under a summary line; a summary over
    sizes lists the sizes each layer and mode was compared on."""
    d, w, n = localise([d], lang)[0], WORDS[lang], lambda v: number(v, lang)
    has_x = any(r.get("x") is not None for r in d["results"])
    sizes = d.get("common_sizes")
    head = [w["variant"].capitalize()] \
        + ([d.get("x_label", "x")[:1].upper() + d.get("x_label", "x")[1:]] if has_x else []) \
        + [w["median"], w["iqr"]] + ([w["sizes"]] if sizes else [])
    rows = []
    for r in d["results"]:
        cells = [_variant(r, lang)] \
            + ([str(r["x"]) if r.get("x") is not None else "—"] if has_x else []) \
            + [n(r["median"]), _iqr(r, n)]
        if sizes:
            cells.append(", ".join(conditions.size_name(s)
                                   for s in sizes.get(f"{r.get('layer')} {r.get('mode')}", [])))
        rows.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    caption = f"{title_of(d, lang)} · {d['metric']}"
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


def draw(d: dict, lang: str = "en", no_gpu: bool = False) -> str:
    """One SVG of one machine's set: bars (one per variant) or lines when results carry an x
    value. A row of fewer than five samples is drawn without a spread. `no_gpu`: the benchmark
    has a GPU half that no machine on record has measured (missing_gpu), which the note says."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from cycler import cycler

    plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "cudnn-rnn",
                         "font.size": 10,  # real <text>: readable, searchable, stable
                         "axes.prop_cycle": cycler(color=COLOURS)})
    w = WORDS[lang]
    described, said = describe(d, lang), conditions_line(d, lang)  # before translation
    d = localise([d], lang)[0]
    has_x = any(r.get("x") is not None for r in d["results"])
    fig, ax = plt.subplots(figsize=(FIG_WIDTH_IN,
                                    3.6 + 0.3 * len(d["results"]) * (not has_x)))
    spread = lambda rows: [[r["median"] - r["q1"] if conditions.spread_shown(r) else 0  # noqa
                            for r in rows],
                           [r["q3"] - r["median"] if conditions.spread_shown(r) else 0
                            for r in rows]]
    if has_x:
        for variant in dict.fromkeys(r["variant"] for r in d["results"]):
            rows = sorted((r for r in d["results"] if r["variant"] == variant),
                          key=lambda r: r["x"])
            ax.errorbar([r["x"] for r in rows], [r["median"] for r in rows], yerr=spread(rows),
                        marker="o", capsize=3, label=variant)
        if d.get("x_log"):  # sweeps over powers of two
            from matplotlib.ticker import NullLocator, ScalarFormatter
            ax.set_xscale("log", base=2)
            # Ticks at the measured sizes, written 8, 32, 128 rather than 2^3, 2^5, 2^7.
            ax.set_xticks(sorted({r["x"] for r in d["results"]}))
            ax.xaxis.set_major_formatter(ScalarFormatter())
            ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlabel(d.get("x_label", "x"))
        ax.set_ylabel(d["metric"])
        ax.legend(fontsize=SMALLEST_PT, loc="best")
    else:
        rows = d["results"]
        ax.barh(range(len(rows)), [r["median"] for r in rows], height=0.8, xerr=spread(rows),
                capsize=3)
        ax.set_yticks(range(len(rows)), [_variant(r, lang) for r in rows])
        ax.invert_yaxis()
        ax.set_xlabel(f"{d['metric']} ({w['bars']})", loc="right")
        ax.set_ylabel(w["variant"])
    wrap = lambda text, width: "\n".join(textwrap.wrap(text, width))  # noqa: E731
    # A bar chart's axes start right of its variant names: its title and axis label end at the
    # axes' right edge and run left over the names' column, so they stay inside the figure.
    title = title_of(d, lang)
    ax.set_title(wrap(title, 70), fontsize=10.5, loc="center" if has_x else "right")
    ax.grid(axis="x" if not has_x else "both", alpha=0.3)
    lines = [wrap(f"{w['measured_on']} {described}", 95)] + ([wrap(said, 95)] if said else [])
    if no_gpu:
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
    return accessible(svg, title, summary(d, lang, no_gpu))


class NoData(ChartError):
    """Nothing to draw: no snippet of this build wrote the benchmark and no record holds it."""


def figures(benchmark: str, local_files: list[Path], recorded: list[tuple[Path, str]],
            cache_dir: Path, lang: str = "en") -> list[tuple[str, str]]:
    """(SVG, data table) of each chart of a benchmark: one per machine and run, this page's
    run first, never two machines in one chart. A drawing of exactly the same data made by the
    same code is reused."""
    if lang not in WORDS:
        raise ChartError(f"no chart words for language {lang!r} (pipeline/pages/charts.py has "
                         f"{', '.join(LANGUAGES)})")
    out = []
    for cached, d, no_gpu in drawings(benchmark, local_files, recorded, cache_dir, lang):
        if cached.is_file():
            svg = cached.read_text(encoding="utf-8")
        else:
            svg = draw(d, lang, no_gpu)
            write_atomic(cached, svg)
        out.append((svg, data_table(d, lang)))
    return out


def drawings(benchmark: str, local_files: list[Path], recorded: list[tuple[Path, str]],
             cache_dir: Path, lang: str = "en") -> list[tuple[Path, dict, bool]]:
    """Each chart of a benchmark as (its drawing's file in the cache, named by its data and
    this code; its data; whether the data lack the GPU they expect), without drawing it."""
    sets = collect(benchmark, local_files, recorded, lang)
    if not sets:
        raise NoData(f"no data for benchmark {benchmark!r}: no snippet wrote "
                     f"{benchmark}.json and no record under results/ holds it")
    code = hashlib.sha256(Path(__file__).read_bytes() + Path(conditions.__file__).read_bytes())
    no_gpu = missing_gpu(sets)
    out = []
    for d in sets:
        h = code.copy()
        h.update(json.dumps([lang, no_gpu, d], sort_keys=True).encode())
        out.append((cache_dir / f"{benchmark}-{lang}-{h.hexdigest()[:16]}.svg", d, no_gpu))
    return out
