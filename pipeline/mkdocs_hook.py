"""MkDocs hook: run stale snippets before each build and put their real output and charts
into the pages.

In a page:
  <!-- output: topic/name.py -->   the snippet's output from this build
  <!-- chart: benchmark_id -->     the chart drawn from that benchmark's data
  <!-- execution-times -->         how long each snippet took

`mkdocs build` fails naming every failed snippet; `mkdocs serve --no-strict` (what `make serve`
runs: mkdocs.yml is strict, and strict mode stops the server at the first error) shows an error
box in the page instead, so that you can fix it while the server runs. SNIPPETS_EXECUTE=0 turns
execution off (cached results are still shown).
"""
from __future__ import annotations

import html
import logging
import os
import re
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError

# MkDocs loads a hook as a lone file: make the `pipeline` package importable.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from pipeline import charts, runner  # noqa: E402
from pipeline.snippets import SnippetError  # noqa: E402

log = logging.getLogger("mkdocs.hooks.snippets")

OUTPUT = re.compile(r"<!--\s*output:\s*(\S+?)\s*-->")
CHART = re.compile(r"<!--\s*chart:\s*([\w.-]+)\s*-->")
TIMES = re.compile(r"<!--\s*execution-times\s*-->")

# Words the hook writes into pages. Each language overrides them under `extra.pipeline_text`
# in its mkdocs-static-i18n `languages:` entry.
TEXT = {
    "output": "Output",
    "ran_on": "ran on",
    "cached": "from cache",
    "needs_gpu_title": "Needs a GPU",
    "needs_gpu_body": "This snippet needs a CUDA GPU. This build ran on a machine without one, "
                      "so no GPU output is shown. What it printed:",
    "failed_title": "Snippet failed",
    "not_run_title": "Not executed",
    "not_run_body": "Execution is turned off and this snippet has no cached result.",
    "times_header": "| Snippet | Status | Seconds | Device | Finished (UTC) |",
    "chart_caption": "Drawn at build time from the data files named under the chart.",
}

_state: dict = {"command": "build", "outcomes": {}, "project": None, "error": None}


def on_startup(command, dirty):
    _state["command"] = command


def on_config(config):
    root = Path(config["config_file_path"]).resolve().parent
    _state["project"] = runner.Project(root)
    return config


def on_serve(server, config, builder):
    project = _state["project"]
    for folder in (project.snippets, project.root / "results"):
        if folder.is_dir():
            server.watch(str(folder))
    return server


def on_pre_build(config):
    project = _state["project"]
    execute = os.environ.get("SNIPPETS_EXECUTE", "1") != "0"
    _state["error"] = None
    try:
        outcomes = runner.run_all(project, execute_stale=execute)
    except SnippetError as e:
        raise PluginError(str(e))
    _state["outcomes"] = {o.snippet.rel: o for o in outcomes}
    executed = sum(o.executed for o in outcomes)
    log.info("snippets: %d executed, %d from cache", executed, len(outcomes) - executed)
    bad = runner.failures(outcomes)
    if bad:
        err = runner.RunFailed(bad)
        if _state["command"] == "serve":
            log.error("%s", err)  # pages show the error; the server keeps running
        else:
            raise PluginError(str(err))


def _text(config) -> dict:
    return {**TEXT, **(config.get("extra", {}).get("pipeline_text") or {})}


def _fence(body: str, title: str) -> str:
    ticks = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", body)), default=0))
    return f'{ticks} text title="{title}"\n{body.rstrip()}\n{ticks}'


def _indent(block: str) -> str:
    return "\n".join(("    " + line) if line else "" for line in block.splitlines())


def render_output(rel: str, config, page) -> str:
    t = _text(config)
    o = _state["outcomes"].get(rel)
    if o is None:
        _problem(f"{page.file.src_uri}: <!-- output: {rel} --> names no snippet under snippets/")
        return f'!!! failure "{t["failed_title"]}: {rel}"\n    No such snippet.'
    date = o.finished_at[:10]
    if o.status == runner.OK:
        return _fence(o.stdout or "(no output)", f"{t['output']} · {t['ran_on']} {o.device} · {date}")
    if o.status == runner.NEEDS_GPU:
        said = (o.stdout + o.stderr).strip() or "(nothing)"
        return (f'!!! warning "{t["needs_gpu_title"]}"\n    {t["needs_gpu_body"]}\n\n'
                + _indent(_fence(said, f"{t['output']} · {t['ran_on']} {o.device} · {date}")))
    if o.status == runner.NOT_RUN:
        return f'!!! note "{t["not_run_title"]}: {rel}"\n    {t["not_run_body"]}'
    body = o.problem + "\n\n" + (o.stderr_tail() or o.stdout[-2000:])
    return f'!!! failure "{t["failed_title"]}: {rel}"\n' + _indent(_fence(body, "stderr"))


def render_times(config) -> str:
    t = _text(config)
    rows = [t["times_header"], "|---|---|--:|---|---|"]
    for rel, o in sorted(_state["outcomes"].items()):
        rows.append(f"| `{rel}` | {o.status} | {o.seconds:.1f} | {o.device} | "
                    f"{o.finished_at.replace('T', ' ')[:16]} |")
    return "\n".join(rows)


def _problem(message: str) -> None:
    if _state["command"] == "serve":
        log.error(message)
    else:
        raise PluginError(message)


def on_page_markdown(markdown, page, config, files):
    markdown = OUTPUT.sub(lambda m: render_output(m.group(1), config, page), markdown)
    return TIMES.sub(lambda m: render_times(config), markdown)


def _local_result_files(benchmark: str) -> list[Path]:
    found = []
    for o in _state["outcomes"].values():
        if o.status == runner.OK and o.data_dir:
            candidate = Path(o.data_dir) / f"{benchmark}.json"
            if candidate.is_file():
                found.append(candidate)
    return found


def render_chart(benchmark: str, config, page) -> str:
    project = _state["project"]
    try:
        svg = charts.chart_svg(benchmark, _local_result_files(benchmark),
                               project.root / "results", project.cache / "charts")
    except charts.ChartError as e:
        _problem(f"{page.file.src_uri}: {e}")
        return f'<div class="admonition failure"><p>{html.escape(str(e))}</p></div>'
    caption = html.escape(_text(config)["chart_caption"])
    return (f'<figure class="benchmark-chart" data-benchmark="{benchmark}">{svg}'
            f"<figcaption>{caption}</figcaption></figure>")


def on_page_content(content, page, config, files):
    return CHART.sub(lambda m: render_chart(m.group(1), config, page), content)
