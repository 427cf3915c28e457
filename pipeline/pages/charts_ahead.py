"""The charts a build will draw, drawn beforehand in a second process.

A build runs on one core, and a cold one (a fresh clone, `make serve`'s first build) spent about
5 of its 44 s drawing charts with matplotlib, while the machine's other core waited. Before its
first page, the build knows which charts its pages name and from which data: the drawings
missing from the chart cache are handed to a child process that draws them into that cache
(charts.figures and published.chart_html, the same calls the pages make) while the build
renders pages. It takes the Spanish pages first, which the build reaches last, then the English
ones from the last page back.

The child only fills the cache. A page whose drawing is not there yet draws it itself, as
before, and reports what goes wrong: the child keeps quiet about a drawing it could not make.
The same data and code give the same file, whoever drew it. CHARTS_AHEAD=0 turns it off.

    python -m pipeline.pages.charts_ahead < jobs.json   (what the build starts)
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

from pipeline.pages import charts, published

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = "published-speedups"  # a job for published.chart_html, not a benchmark


def page_language(path: Path, languages: tuple[str, ...] = ("es",)) -> str:
    """`page.es.md` is Spanish, `page.md` English (mkdocs-static-i18n's suffix rule)."""
    parts = path.name.split(".")
    return parts[-2] if len(parts) > 2 and parts[-2] in languages else "en"


def charts_named(docs_dir: Path, own_benchmark: str | None) -> list[tuple[str, str]]:
    """(benchmark or PUBLISHED, language) of every chart the pages name, in the order the
    child draws them: Spanish pages first, then English pages from the last one back."""
    pages = sorted(p for p in docs_dir.rglob("*.md"))
    spanish = [p for p in pages if page_language(p) == "es"]
    english = [p for p in reversed(pages) if page_language(p) == "en"]
    out: list[tuple[str, str]] = []
    for page in spanish + english:
        lang, text = page_language(page), page.read_text(encoding="utf-8")
        named = [m.group(2) for m in charts.MARKER.finditer(text)]
        evidence = published.EVIDENCE_MARKER.search(text)
        if own_benchmark and evidence:
            named.append(own_benchmark)
        if evidence or published.CHART_MARKER.search(text):
            named.append(PUBLISHED)
        out += [(b, lang) for b in named if (b, lang) not in out]
    return out


def jobs(named: list[tuple[str, str]], inputs: Callable[[str], tuple[list, list]],
         cache_dir: Path) -> list[dict]:
    """The charts of `named` with a drawing missing from `cache_dir`; `inputs(benchmark)` is
    (this build's result files, recorded (file, label) pairs), as the pages pass them."""
    out = []
    for benchmark, lang in named:
        if benchmark == PUBLISHED:
            try:
                missing = not published.drawing(lang, cache_dir, published.load()).is_file()
            except Exception:  # noqa: BLE001 - the page reports it
                missing = False
            if missing:
                out.append({"benchmark": PUBLISHED, "lang": lang})
            continue
        local, recorded = inputs(benchmark)
        try:
            planned = charts.drawings(benchmark, local, recorded, cache_dir, lang)
        except Exception:  # noqa: BLE001 - no data, bad data: the page reports it
            continue
        if any(not path.is_file() for path, _, _ in planned):
            out.append({"benchmark": benchmark, "lang": lang,
                        "local": [str(p) for p in local],
                        "recorded": [[str(p), where] for p, where in recorded]})
    return out


def start(todo: list[dict], cache_dir: Path) -> subprocess.Popen | None:
    """The child that draws `todo` into `cache_dir`, started; None when there is nothing to
    draw or it is turned off."""
    if not todo or os.environ.get("CHARTS_AHEAD", "1") == "0":
        return None
    child = subprocess.Popen([sys.executable, "-m", "pipeline.pages.charts_ahead"],
                             cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, text=True)
    try:
        child.stdin.write(json.dumps({"cache": str(cache_dir), "jobs": todo}))
        child.stdin.close()
    except OSError:
        pass  # it stopped already: the pages draw their own charts
    return child


def stop(child: subprocess.Popen | None) -> None:
    """At the build's end: what the child has not drawn yet, the build did."""
    if child is not None and child.poll() is None:
        child.kill()
        child.wait()


def main() -> int:
    request = json.load(sys.stdin)
    cache = Path(request["cache"])
    for job in request["jobs"]:
        try:
            if job["benchmark"] == PUBLISHED:
                published.chart_html(job["lang"], cache)
            else:
                charts.figures(job["benchmark"], [Path(p) for p in job["local"]],
                               [(Path(p), where) for p, where in job["recorded"]], cache,
                               job["lang"])
        except Exception:  # noqa: BLE001 - the page draws it again and says what is wrong
            continue
    return 0


if __name__ == "__main__":
    sys.exit(main())
