"""Published cuDNN speed-ups (others' figures, never this site's): data/published_speedups.yml.

One file holds every published figure the pages quote; the pages draw them through the hook's
markers `<!-- published-speedups -->` (a table) and `<!-- published-speedups-chart -->` (a chart
with a collapsed data table), in the page's language. The chart reuses pipeline/pages/charts.py's
helpers (number format, accessible SVG, text sizes) but is grey and hatched, and titled as
published by others, so it never looks like one of this site's measurements.
"""
from __future__ import annotations

import hashlib
import html
import io
import json
import re
import textwrap
from pathlib import Path

import yaml

from pipeline.claims import gpu_facts
from pipeline.pages import charts
from pipeline.running.files import write_atomic
from pipeline.running import yaml_load

DATA = Path(__file__).resolve().parents[2] / "data" / "published_speedups.yml"
PROSE = ("hardware", "setup", "result")  # fields with English and Spanish text
REQUIRED = ("id", "source", "year", "framework", "speedup", "verified") + PROSE

WORDS = {
    "en": {"title": "Published by others, not measured here: cuDNN speed-up over the generic "
                    "kernel",
           "axis": "speed-up (generic time / cuDNN time), as published",
           "source": "Source", "year": "Year", "hardware": "Hardware",
           "framework": "Framework and version", "setup": "Setup", "result": "Result as published",
           "speedup": "Speed-up", "up_to": "up to", "none": "no number given",
           "unverified": "not checked against its source",
           "table": "The published figures as a table",
           "note": "Others' figures on others' hardware and versions, copied from the sources "
                   "linked in the table. Not comparable with each other or with this site's runs."},
    "es": {"title": "Publicado por otros, no medido aquí: aceleración de cuDNN frente al kernel "
                    "genérico",
           "axis": "aceleración (tiempo genérico / tiempo de cuDNN), según la fuente",
           "source": "Fuente", "year": "Año", "hardware": "Hardware",
           "framework": "Framework y versión", "setup": "Configuración",
           "result": "Resultado publicado", "speedup": "Aceleración", "up_to": "hasta",
           "none": "sin cifra", "unverified": "no comprobado con su fuente",
           "table": "Las cifras publicadas en una tabla",
           "note": "Cifras de otros, con su hardware y sus versiones, copiadas de las fuentes "
                   "enlazadas en la tabla. No se comparan entre sí ni con las ejecuciones de "
                   "este sitio."},
}

# Grey and hatched: none of the series colours of this site's own charts (charts.COLOURS).
COLOUR = "#6B6B6B"

CHART_MARKER = re.compile(r"<!--\s*published-speedups-chart\s*-->")  # the chart on its own
EVIDENCE_MARKER = re.compile(r"<!--\s*speedup-evidence\s*-->")  # the home page's: ours, then it


class PublishedError(ValueError):
    pass


def load(path: Path = DATA) -> list[dict]:
    """The rows, checked: every row has a source name, an https URL at the exact version its
    figures come from (exact_version_problem), a year, its prose in every chart language, and a
    positive speed-up or null that is the ratio of the two timings it quotes (ratio_problem)."""
    try:
        rows = yaml_load.load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise PublishedError(f"{path}: not a readable data file ({e})")
    if not isinstance(rows, list) or not rows:
        raise PublishedError(f"{path}: expected a list of published figures")
    for i, row in enumerate(rows):
        where = f"{path.name}, row {i + 1}"
        if not isinstance(row, dict):
            raise PublishedError(f"{where}: not a mapping")
        missing = [k for k in REQUIRED if k not in row]
        if missing:
            raise PublishedError(f"{where}: missing {', '.join(missing)}")
        src = row["source"]
        if not (isinstance(src, dict) and src.get("name")
                and str(src.get("url", "")).startswith("https://")):
            raise PublishedError(f"{where}: the source needs a name and an https:// url")
        problem = exact_version_problem(src)
        if problem:
            raise PublishedError(f"{where}: {problem}")
        if not (isinstance(row["year"], int) and 1990 < row["year"] < 2100):
            raise PublishedError(f"{where}: year {row['year']!r} is not a year")
        for key in PROSE:
            if not (isinstance(row[key], dict) and all(row[key].get(lang) for lang in WORDS)):
                raise PublishedError(f"{where}: {key} needs text in {', '.join(WORDS)}")
        s = row["speedup"]
        if s is not None and not (isinstance(s, (int, float)) and s > 0):
            raise PublishedError(f"{where}: speedup {s!r} is neither a positive number nor null")
        problem = ratio_problem(row)
        if problem:
            raise PublishedError(f"{where}: {problem}")
    return rows


# A file or folder of a repository at one commit: the version whose numbers a row quotes.
AT_COMMIT = re.compile(r"^https://github\.com/[\w.-]+/[\w.-]+/(?:blob|tree|commit)/[0-9a-f]{40}(?:/|$)")
THREAD = re.compile(r"^https://github\.com/[\w.-]+/[\w.-]+/(?:issues|pull|discussions)/\d+$")
ARXIV = re.compile(r"^https://arxiv\.org/abs/\d{4}\.\d{4,5}v\d+$")
DATE = re.compile(r"\b(?:19|20)\d\d-\d\d-\d\d\b")
YEAR = re.compile(r"\b(?:19|20)\d\d\b")


def exact_version_problem(src: dict) -> str:
    """'' when the source names the exact version its numbers come from, else what is missing:
    a repository's file at a commit, an arXiv version, a thread's comment and its date, or for
    any other page the year it was published (a page with one version)."""
    url, version = src["url"], src.get("version")
    if not (isinstance(version, dict) and all(version.get(lang) for lang in WORDS)):
        return f"the source needs `version` in {', '.join(WORDS)}: which version its numbers are from"
    text = version["en"]
    if url.startswith("https://github.com/") and not THREAD.match(url):
        return "" if AT_COMMIT.match(url) else (f"{url} is not at a commit: link the file at the "
                                                "commit (40 hex digits) whose numbers are quoted")
    if THREAD.match(url):
        return "" if DATE.search(text) else "a thread: name the comment quoted and its date"
    if url.startswith("https://arxiv.org/"):
        return "" if ARXIV.match(url) else f"{url}: link the arXiv version (…v1) quoted"
    return "" if YEAR.search(text) else "name when the page was published"


TIMING = re.compile(r"(\d+(?:[.,]\d+)?) (?:s|ms|µs)\b")


def timings(text: str) -> list[float]:
    """The timings a result quotes, in order (decimal comma or point)."""
    return [float(v.replace(",", ".")) for v in TIMING.findall(text)]


def ratio_problem(row: dict) -> str:
    """'' when a row's speed-up is the ratio of the two timings it quotes (the same in every
    language), else why not. A speed-up with no two timings must be a bound the source gives."""
    found = {lang: timings(row["result"][lang]) for lang in WORDS}
    if len({tuple(v) for v in found.values()}) > 1:
        return f"the timings differ between languages: {found}"
    times, s = found["en"], row["speedup"]
    if s is None:
        return ""
    if len(times) == 2:
        ratio = round(times[0] / times[1], 1)
        return "" if abs(ratio - s) < 1e-9 else (f"speedup {s} is not {times[0]} / {times[1]} "
                                                 f"= {ratio}")
    return "" if row.get("bound") == "up_to" else ("a speed-up needs the two timings it comes "
                                                    "from, or bound: up_to")


def _speedup(row: dict, lang: str) -> str:
    w = WORDS[lang]
    if row["speedup"] is None:
        return w["none"]
    prefix = f"{w['up_to']} " if row.get("bound") == "up_to" else ""
    return f"{prefix}{charts.number(row['speedup'], lang)}×"


def _cell(text: str) -> str:
    return html.escape(str(text), quote=False).replace("|", "&#124;")


def _year(r: dict, lang: str) -> str:
    """The year and the exact version of the source the figures are from."""
    return f"{r['year']}; {r['source']['version'][lang]}"


def table(rows: list[dict], lang: str) -> str:
    """A Markdown table of every published figure, in `lang`, each source linked: five columns,
    the speed-up and the result first, so that a narrow screen shows them without scrolling."""
    w = WORDS[lang]
    out = [f"| {w['source']} ({w['year'].lower()}) | {w['speedup']} | {w['result']} | "
           f"{w['hardware']}, {w['framework'][:1].lower() + w['framework'][1:]} | {w['setup']} |",
           "|---|---|---|---|---|"]
    for r in rows:
        src = f"[{_cell(r['source']['name'])}]({r['source']['url']}) ({_cell(_year(r, lang))})"
        if not r["verified"]:
            src += f" ({w['unverified']})"
        out.append("| " + " | ".join([src, _speedup(r, lang), _cell(r["result"][lang]),
                                      _cell(f"{r['hardware'][lang]}; {r['framework']}"),
                                      _cell(r["setup"][lang])]) + " |")
    # in a box search leaves out (pipeline/pages/search_text.py): others' figures, shown on two pages
    return '<div class="published-table" markdown>\n\n' + "\n".join(out) + "\n\n</div>"


def _bar_label(r: dict, lang: str) -> str:
    return f"{r['source']['name']} ({r['year']}) · {r['hardware'][lang]} · {r['framework']}"


def _bar_lines(r: dict, lang: str) -> str:
    """Two lines above a bar: the source and year, then the hardware and framework version."""
    return (textwrap.shorten(f"{r['source']['name']} ({r['year']})", 84, placeholder="…") + "\n"
            + textwrap.shorten(f"{r['hardware'][lang]} · {r['framework']}", 84, placeholder="…"))


def draw(rows: list[dict], lang: str) -> str:
    """The SVG: one grey hatched bar per figure that has a number, labelled with its source,
    hardware, framework version and year."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    w = WORDS[lang]
    drawn = [r for r in rows if r["speedup"] is not None]
    plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "cudnn-rnn", "font.size": 10,
                         "hatch.color": "white"})
    fig, ax = plt.subplots(figsize=(charts.FIG_WIDTH_IN, 1.9 + 0.72 * len(drawn)))
    ys = range(len(drawn))
    ax.barh(list(ys), [r["speedup"] for r in drawn], height=0.42, color=COLOUR, hatch="//",
            edgecolor=COLOUR)
    for y, r in zip(ys, drawn):
        # the labels above their bar, the number at its end: both readable on a phone
        ax.text(0, y - 0.26, _bar_lines(r, lang), fontsize=charts.SMALLEST_PT, va="bottom",
                ha="left", linespacing=1.1)
        ax.text(r["speedup"] + 0.2, y, _speedup(r, lang), fontsize=charts.SMALLEST_PT,
                va="center", ha="left")
    ax.set_yticks([])
    ax.set_ylim(len(drawn) - 0.5, -1.1)
    ax.set_xlim(0, max(r["speedup"] for r in drawn) * 1.2)
    from matplotlib.ticker import FuncFormatter
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: charts.number(v, lang)))
    ax.set_xlabel(w["axis"])
    ax.set_title("\n".join(textwrap.wrap(w["title"], 70)), fontsize=10.5, loc="left")
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    note = "\n".join(textwrap.wrap(w["note"], 95))
    fig.text(0.01, 0.01, note, fontsize=charts.SMALLEST_PT, va="bottom", ha="left")
    fig.tight_layout(rect=(0, (0.12 + 0.17 * (note.count("\n") + 1)) / fig.get_figheight(), 1, 1))
    fig.subplots_adjust(left=0.03, right=0.97)  # the labels start at the bars, not at ticks
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None},
                transparent=True)  # the page's box is white, with its scroll shadows
    plt.close(fig)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]
    desc = "; ".join(f"{_bar_label(r, lang)}: {_speedup(r, lang)}" for r in drawn) + "."
    return charts.accessible(svg, w["title"], f"{w['title']}. {desc}")


def data_table(rows: list[dict], lang: str) -> str:
    """The chart's figures as a collapsed HTML table in `lang`, each source linked."""
    w = WORDS[lang]
    head = [w["source"], w["year"], w["hardware"], w["framework"], w["setup"], w["result"],
            w["speedup"]]
    body = []
    for r in rows:
        src = (f'<a href="{html.escape(r["source"]["url"])}">'
               f'{html.escape(r["source"]["name"])}</a>'
               + ("" if r["verified"] else f" ({html.escape(w['unverified'])})"))
        cells = [src] + [html.escape(c) for c in (
            _year(r, lang), r["hardware"][lang], r["framework"], r["setup"][lang],
            r["result"][lang], _speedup(r, lang))]
        body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return (f'<details class="chart-data"><summary>{html.escape(w["table"])}</summary>'
            f'<table><caption>{html.escape(w["title"])}'
            "</caption><thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head)
            + "</tr></thead><tbody>" + "".join(body) + "</tbody></table></details>")


def drawing(lang: str, cache_dir: Path, rows: list[dict]) -> Path:
    """The chart's file in the cache, named by its rows and this code."""
    h = hashlib.sha256(Path(__file__).read_bytes() + Path(charts.__file__).read_bytes())
    h.update(json.dumps([lang, rows], sort_keys=True, default=str).encode())
    return cache_dir / f"published-speedups-{lang}-{h.hexdigest()[:16]}.svg"


def chart_html(lang: str, cache_dir: Path, path: Path = DATA) -> str:
    """The figure the page shows: the SVG (cached by data and code) and its data table."""
    if lang not in WORDS:
        raise PublishedError(f"no published-chart words for language {lang!r}")
    rows = load(path)
    cached = drawing(lang, cache_dir, rows)
    if cached.is_file():
        svg = cached.read_text(encoding="utf-8")
    else:
        svg = draw(rows, lang)
        write_atomic(cached, svg)
    return (f'<figure class="benchmark-chart published-chart" id="published-speedups">'
            f'<div class="scroll-box chart-box" tabindex="0">{svg}</div>'
            f'{data_table(rows, lang)}</figure>')


# --- what the home page shows: this site's GPU speed-ups once recorded, the published ones always

OWN_BENCHMARK = "cudnn_speedup"  # snippets/benchmarks/cudnn_speedup*.py, GPU-only
HOME_SECTION = "how-much-faster"  # the home page's section that holds <!-- speedup-evidence -->
LINKS = {
    "en": {"published": "published figures, not measured here",
           "own": "measured on {gpu}: {ranges}",
           "without_tf": "on this site's {gpu}, {missing} was not measured; the others were: "
                         "[{ranges}](benchmarks.md#cudnn-speed-up)"},
    "es": {"published": "cifras publicadas, no medidas aquí",
           "own": "medido en {gpu}: {ranges}",
           "without_tf": "en la {gpu} de este sitio no se midió {missing}; los demás sí: "
                         "[{ranges}](benchmarks.md#cudnn-speed-up)"},
}
# The message beside which the link stands is tf-keras's: what backs "usually much slower" for
# it is a TensorFlow measurement, ours when recorded, the published ones otherwise.
TENSORFLOW = ("tf-keras", "Keras 3 (TensorFlow)")


def own_gpu_records(machines) -> bool:
    """True when a machine on record (pipeline/records/store.py) measured the cuDNN speed-up on a GPU."""
    return any(r.on_gpu and (r.data_dir / f"{OWN_BENCHMARK}.json").is_file()
               for m in machines for r in m.records)


def speedup_link(machines, lang: str, home: bool = True) -> str:
    """What backs "usually much slower" beside tf-keras's warning, written from the records:
    this site's TensorFlow figures once a GPU run has them; until then the home page's published
    chart, labelled as published, and what this site's GPU runs measured of the other frameworks
    (and that TensorFlow is not among them). `home`: the link is made for the home page
    (docs/index*.md); from another page it goes to index.md's section."""
    if lang not in LINKS:
        raise PublishedError(f"no link words for language {lang!r}")
    w = LINKS[lang]
    published = f"[{w['published']}]({'' if home else 'index.md'}#{HOME_SECTION})"
    parts = []
    for gpu, ranges, missing in gpu_facts.speedup_ranges_by_gpu(machines):
        tf = {f: v for f, v in ranges.items() if f in TENSORFLOW}
        if tf:
            parts.insert(0, f"[{w['own'].format(gpu=gpu, ranges=', '.join(gpu_facts.range_words(tf, lang)))}]"
                            "(benchmarks.md#cudnn-speed-up)")
        else:
            parts.append(w["without_tf"].format(
                gpu=gpu, missing="TensorFlow",
                ranges=", ".join(gpu_facts.range_words(ranges, lang))))
    return "; ".join([p for p in parts if p.startswith("[")] + [published]
                     + [p for p in parts if not p.startswith("[")])
