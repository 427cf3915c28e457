"""MkDocs hook: run stale snippets before each build and put their real output and charts
into the pages.

In a page:
  <!-- output: topic/name.py -->      the snippet's output from this build; for a snippet that
                                      needs a GPU on a build without one, also every GPU record
  <!-- gpu-result: topic/name.py -->  a claim that a GPU ran it: every record of it under
                                      results/; the build fails when no record backs the claim
  <!-- chart: benchmark_id -->        the chart drawn from that benchmark's data
  <!-- gpu-chart: benchmark_id -->    the same for a GPU-only benchmark: without data, says that
                                      no GPU measurement is recorded yet
  <!-- machines-on-record -->         the machines under results/, with their provenance
  <!-- published-speedups -->         others' published speed-ups (data/published_speedups.yml)
  <!-- published-speedups-chart -->   the same as a chart, titled as published, not measured here
  <!-- speedup-link -->               a link to this site's GPU speed-ups when any are recorded,
                                      otherwise to the home page's published chart, from any page
                                      (pipeline/pages/published.py): "measured" only with a record
  <!-- speedup-evidence -->           the home page's chart: ours when recorded, then the published
  <!-- execution-times -->            how long each snippet took
  <!-- versions-table -->, <!-- since: ... -->, <!-- version-claims --> ...
                                      what each library release did, drawn from the version
                                      matrix's records (pipeline/claims/version_claims.py): a version
                                      claim no record backs fails the build
  <!-- message: ID -->, <!-- message-releases: ID -->
                                      a library's message from data/messages.yml, checked against
                                      what backs it (pipeline/claims/messages.py)
  <!-- release-bugs: LIBRARY -->       that library's bugs of one release (data/release_bugs.yml),
                                      each row checked against the installed release and the
                                      version matrix (pipeline/claims/release_bugs.py)

Every Markdown table's rows have as many cells as its header (pipeline/pages/table_shape.py).
Every page is also checked for what is typed by hand (check_claims): release numbers
(pipeline/claims/release_numbers.py), "measured" (pipeline/claims/measured.py) and quotations
(pipeline/claims/messages.py). The strict build fails naming the page, the line and the text.

Records (pipeline/records/store.py) are shown labelled with their machine and date; one made for an
older version of the snippet says so, and is never shown as current.

A Python block's copy button copies the whole program the runner ran (pipeline/pages/page_programs.py,
pipeline/running/program.py): a file of its own that the build writes, which the page names and fetches
when the reader is about to copy. A code block in a collapsed block is a file too, loaded when the
reader opens it, and code blocks drop the markup that changes nothing a reader sees
(pipeline/pages/page_weight.py); code titles name a file as a reader saves it, not its path under
snippets/ (page_programs.reader_names). Chart boxes and diagrams carry the words that say, on a
screen narrower than them, that they scroll sideways (overrides/assets/scroll-hint.js). While stale snippets run, a line
says which one starts and ends, with how many are done and the time so far (runner.Progress).

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
from mkdocs.utils import get_relative_url

# MkDocs loads a hook as a lone file: make the `pipeline` package importable.
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from pipeline.claims import (gpu_facts, measured, messages, release_bugs, release_numbers,
                             version_claims)  # noqa: E402
from pipeline.pages import (charts, charts_ahead, page_load, page_programs, page_weight,
                            published, table_shape, troubleshooting_pages)  # noqa: E402
from pipeline.records import conditions, store as records  # noqa: E402
from pipeline.running import background, runner, startup_noise  # noqa: E402
from pipeline.running.files import write_named_by_content  # noqa: E402
from pipeline.running.snippets import SnippetError  # noqa: E402

log = logging.getLogger("mkdocs.hooks.snippets")

OUTPUT = re.compile(r"<!--\s*output:\s*(\S+?)\s*-->")
GPU_RESULT = re.compile(r"<!--\s*gpu-result:\s*(\S+?)\s*-->")
CHART = charts.MARKER  # <!-- chart: NAME -->, <!-- gpu-chart: NAME -->
TIMES = re.compile(r"<!--\s*execution-times\s*-->")
MACHINES = re.compile(r"<!--\s*machines-on-record\s*-->")
PUBLISHED = re.compile(r"<!--\s*published-speedups\s*-->")
PUBLISHED_CHART = published.CHART_MARKER
SPEEDUP_LINK = re.compile(r"<!--\s*speedup-link\s*-->")
SPEEDUP_EVIDENCE = published.EVIDENCE_MARKER

# Words the hook writes into pages. Each language overrides them under `extra.pipeline_text`
# in its mkdocs-static-i18n `languages:` entry.
TEXT = {
    # An output's title: what ran it, and where. `told_gpu` when the program told Keras that a
    # GPU is present (its _pretend_gpu.py helper) on a machine without one.
    "output": "Output",
    "ran_cpu": "run here on a CPU",
    "ran_gpu": "run here on a GPU ({gpu})",
    "told_gpu": "with Keras told a GPU is present",
    # A program that needs a GPU, where there is none: said once, in one line (the page says
    # what it shows on a GPU), then the GPU records of it, if any.
    "needs_gpu_title": "Needs a GPU.",
    "needs_gpu": "Without one it only says so, and no GPU run of it is on record yet.",
    "needs_gpu_recorded": "Without one it only says so. On a GPU:",
    "failed_title": "Snippet failed",
    "not_run_title": "Not executed",
    # Under `make serve` only, while the snippet's first run goes on (pipeline/running/background.py).
    "pending_title": "Running…",
    "pending_body": "This program has not finished its first run on this machine yet: the page "
                    "reloads with its output when it does.",
    "not_run_body": "Execution is turned off and this snippet has no cached result.",
    "times_header": "| Snippet | Status | Seconds | Device | Finished (UTC) |",
    "language": "en",  # the language charts are drawn in (pipeline/pages/charts.py WORDS)
    # Under a shown part of a program that holds more (pipeline/pages/page_programs.py).
    "program_title": "The whole program, as the copy button copies it",
    "program_body": "The copy button copies this whole program. It runs on its own, in an "
                    "empty folder.",
    "program_body_helpers": "The copy button copies this whole program, with the code of "
                            "{helpers} in place of its import: it runs on its own, in an empty "
                            "folder.",
    "program_helper": "`{module}` ({lines}, [shown in full]({link}))",
    "program_helper_here": "`{module}` ({lines})",
    "program_lines": "{lines} lines",
    "program_and": "and",
    # Above a chart or diagram wider than the screen (overrides/assets/scroll-hint.js).
    "scroll_hint": "Wider than the screen: swipe sideways to see it all",
    # GPU records (results/): {machine}, {releases} (what the program ran with: its frameworks
    # and cuDNN), {date} and {where} are filled in.
    "recorded_title": "Recorded on {machine} · {releases} · {date}",
    "recorded_body": "This output was recorded on {machine} with {releases} on {date}, for the "
                     "current version of this program.",
    "recorded_output": "Output · recorded on {machine} · {releases} · {date}",
    "stale_title": "From an older version of this program · {machine} · {releases} · {date}",
    "stale_body": "This output was recorded on {machine} with {releases} on {date} for an older "
                  "version of this program. The program has changed since, so this is not what "
                  "it prints now. A new run on a GPU records the current version.",
    "stale_output": "Output of an older version · recorded on {machine} · {releases} · {date}",
    "no_record_title": "No GPU record",
    "gpu_chart_none": "No GPU measurement is recorded yet for this chart (`{benchmark}`): it "
                      "needs a run on a GPU machine, and none has run it yet.",
    "machines_none_title": "No GPU machine yet",
    "machines_none": "No machine is on record yet: no GPU machine has run these benchmarks.",
    "machine_rows": {"gpu": "GPU", "driver": "Driver", "cuda": "CUDA",
                     "cudnn": "cuDNN", "frameworks": "Frameworks", "python": "Python, CPU",
                     "run": "Last run", "records": "Records", "skipped": "Skipped",
                     "failed": "Failed", "tests": "GPU tests"},
    "machine_words": {"supports": "supports CUDA", "compute": "compute capability",
                      "toolkit": "toolkit", "built": "built with", "system": "system",
                      "older": "for older versions of their programs",
                      "interrupted": "interrupted", "none": "none",
                      "passed": "passed", "failed": "failed", "skipped": "skipped",
                      "not_run": "not run", "scale": "sizes"},
}

_state: dict = {"command": "build", "outcomes": {}, "project": None, "error": None,
                "machines": [], "matrix": [], "messages": {}, "search": None, "checked": {},
                "page_files": {}, "pending": set(), "background": None, "ahead": None,
                "ahead_planned": False}


def on_startup(command, dirty):
    _state["command"] = command


def on_shutdown():
    charts_ahead.stop(_state["ahead"])


def on_config(config):
    root = Path(config["config_file_path"]).resolve().parent
    _state["project"] = runner.Project(root)
    return config


def _in_background() -> bool:
    """`make serve`: snippets run in a background thread while pages are served (pipeline/
    background.py), unless SNIPPETS_BACKGROUND=0 or execution is off. Not without live reload
    (`mkdocs serve --no-livereload`, seen in the command line: the hook learns it no other way
    before the first build): nothing would rebuild the pages as outputs arrive."""
    return (_state["command"] == "serve" and os.environ.get("SNIPPETS_BACKGROUND", "1") != "0"
            and os.environ.get("SNIPPETS_EXECUTE", "1") != "0"
            and "--no-livereload" not in sys.argv)


def on_serve(server, config, builder):
    project = _state["project"]
    for folder in (project.snippets, project.root / "results"):
        if folder.is_dir():
            server.watch(str(folder))
    if _in_background():  # a snippet that ends in the background touches a file in it
        reload_dir = project.cache / background.RELOAD_DIR
        reload_dir.mkdir(parents=True, exist_ok=True)
        server.watch(str(reload_dir))
        if _state["background"] is not None:
            _state["background"].watched()
    return server


def on_pre_build(config):
    project = _state["project"]
    execute = os.environ.get("SNIPPETS_EXECUTE", "1") != "0"
    _state["error"] = None
    try:
        if _in_background():
            if _state["background"] is None or _state["background"].project != project:
                _state["background"] = background.Background(project)
            outcomes, _state["pending"] = _state["background"].outcomes(log.info)
        else:
            outcomes = runner.run_all(project, execute_stale=execute, progress=log.info)
            _state["pending"] = set()
    except SnippetError as e:
        raise PluginError(str(e))
    _state["outcomes"] = {o.snippet.rel: o for o in outcomes}
    try:
        _state["machines"] = records.load_all(project.root / "results", project.snippets)
    except records.RecordError as e:
        _state["machines"] = []
        _problem(f"results/: {e}")
    try:  # the version matrix's cells: results/versions/ (pipeline/records/versions.py)
        _state["matrix"] = version_claims.load(project.root / "results" / records.MATRIX_DIR,
                                               project.snippets)
    except records.RecordError as e:
        _state["matrix"] = []
        _problem(f"results/{records.MATRIX_DIR}/: {e}")
    try:  # the messages pages quote as a library's text (pipeline/claims/messages.py)
        _state["messages"] = messages.load(project.root / "data" / "messages.yml")
    except messages.MessageError as e:
        _state["messages"] = {}
        _problem(str(e))
    _state["search"], _state["checked"] = messages.FileSearch(), {}
    if _state["pending"]:
        log.info("snippets: %d running in the background, %d from the cache; pages fill in as "
                 "they end", len(_state["pending"]), len(outcomes) - len(_state["pending"]))
    else:
        log.info("%s", runner.summary(outcomes))
    _draw_charts_ahead(config)
    bad = runner.failures(outcomes)
    if bad:
        err = runner.RunFailed(bad)
        if _state["command"] == "serve":
            log.error("%s", err)  # pages show the error; the server keeps running
        else:
            raise PluginError(str(err))


def _text(config) -> dict:
    return {**TEXT, **(config.get("extra", {}).get("pipeline_text") or {})}


# A line of a table: columns lined up with runs of spaces.
ALIGNED = re.compile(r"\S {2,}\S")


def _fence(body: str, title: str) -> str:
    """An output block. One whose long lines are prose (a warning, a message: no columns lined
    up with spaces) gets the class "wrap", and overrides/assets/site.css wraps those lines on a
    wide screen; a table keeps its columns and scrolls in its box."""
    ticks = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", body)), default=0))
    long = [line for line in body.splitlines() if len(line) > 90]
    wrap = " .wrap" if long and not any(ALIGNED.search(line) for line in long) else ""
    return f'{ticks} {{ .text .output{wrap} title="{title}" }}\n{body.rstrip()}\n{ticks}'


def _indent(block: str) -> str:
    return "\n".join(("    " + line) if line else "" for line in block.splitlines())


def _quote(title: str) -> str:
    return title.replace('"', "'")


# Markdown's own punctuation: a backslash before it makes it a plain character.
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+!|])")


def _literal(value) -> str:
    """A value from a record (a machine's name, a date, a version) as plain text in Markdown:
    HTML escaped and Markdown's punctuation escaped, so that a record cannot put markup, a
    link or a script on a page, whoever wrote it."""
    text = html.escape(str(value).replace("\n", " "), quote=False)
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", text)


def render_records(recs: list[records.Record], t: dict) -> str:
    """Each machine's record of a snippet, labelled with the machine and the date; one made
    for an older version of the snippet says so in its title, its text and its output's title."""
    root, snippets = _state["project"].root, _state["project"].snippets
    blocks = []
    for r in recs:
        frameworks = gpu_facts.frameworks_of(snippets / r.snippet)
        releases = ", ".join(conditions.releases(r.data["provenance"], frameworks)) or "—"
        fill = {"machine": _literal(r.machine), "date": _literal(r.date),
                "where": _literal(r.where(root)), "releases": _literal(releases)}
        kind, prefix = ("warning", "stale") if r.stale else ("info", "recorded")
        body = t[f"{prefix}_body"].format(**fill)
        output = _fence(startup_noise.strip(r.data["stdout"]) or "(no output)",
                        t[f"{prefix}_output"].format(**fill))
        blocks.append(f'!!! {kind} record "{_quote(t[prefix + "_title"].format(**fill))}"\n'
                      f"    {body}\n\n" + _indent(output))
    return "\n\n".join(blocks)


def _where(o: runner.Outcome, t: dict) -> str:
    """Where an output was made, in the reader's words: "run here on a CPU, with Keras told a
    GPU is present"."""
    if o.device == "CPU":
        told = any(h.name == "_pretend_gpu.py" for h in o.snippet.helpers)
        return t["ran_cpu"] + (f", {t['told_gpu']}" if told else "")
    return t["ran_gpu"].format(gpu=o.device.removeprefix("GPU: "))


def render_output(rel: str, config, page) -> str:
    t = _text(config)
    o = _state["outcomes"].get(rel)
    if o is None:
        _problem(f"{page.file.src_uri}: <!-- output: {rel} --> names no snippet under snippets/")
        return f'!!! failure "{t["failed_title"]}: {rel}"\n    No such snippet.'
    date = o.finished_at[:10]
    if o.status == runner.OK:  # start-up log lines left out here, kept in the cache
        return _fence(startup_noise.strip(o.stdout) or "(no output)",
                      f"{t['output']} · {_where(o, t)} · {date}")
    if o.status == runner.NEEDS_GPU:  # its "needs a GPU: ..." line is not news to the reader
        recs = records.for_snippet(_state["machines"], rel)
        line = (f'<p class="needs-gpu"><strong>{html.escape(t["needs_gpu_title"])}</strong> '
                f'{html.escape(t["needs_gpu_recorded" if recs else "needs_gpu"])}</p>')
        return line + ("\n\n" + render_records(recs, t) if recs else "")
    if o.status == runner.NOT_RUN and rel in _state["pending"]:
        return f'!!! info "{t["pending_title"]} {rel}"\n    {t["pending_body"]}'
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
    # in a box search leaves out (pipeline/pages/search_text.py): a reader never searches for it
    return '<div class="execution-times" markdown>\n\n' + "\n".join(rows) + "\n\n</div>"


def _problem(message: str) -> None:
    if _state["command"] == "serve":
        log.error(message)
    else:
        raise PluginError(message)


def render_gpu_result(rel: str, config, page) -> str:
    """A page's claim that a GPU ran this snippet: the records that back it, or a failure."""
    t = _text(config)
    recs = records.for_snippet(_state["machines"], rel)
    if not recs:
        _problem(f"{page.file.src_uri}: <!-- gpu-result: {rel} --> claims a GPU result, but no "
                 f"record under results/ backs it (run `make gpu-run` on a GPU and commit "
                 f"results/)")
        return (f'!!! failure "{t["no_record_title"]}: {rel}"\n'
                f"    `<!-- gpu-result: {rel} -->`: no record under `results/`.")
    return render_records(recs, t)


FRAMEWORKS = (("torch", "PyTorch"), ("jax", "JAX"), ("keras", "Keras"),
              ("tensorflow", "TensorFlow"), ("tf-keras", "tf-keras"),
              ("nvidia-cudnn-frontend", "cudnn-frontend"))


def _machine_column(m: records.Machine, t: dict) -> dict[str, str]:
    w, p, run = t["machine_words"], m.data.get("provenance", {}), m.data.get("run") or {}
    pkgs = p.get("packages", {})
    gpu = p.get("gpu_name", p.get("machine", ""))
    if p.get("gpu_count", 1) > 1:
        gpu += f" × {p['gpu_count']}"
    gpu += "".join(f", {x}" for x in (p.get("gpu_memory"),) if x)
    if p.get("gpu_compute_capability"):
        gpu += f", {w['compute']} {p['gpu_compute_capability']}"
    cuda = [f"{w['toolkit']} {p['cuda_toolkit']}" if p.get("cuda_toolkit") else "",
            f"PyTorch {w['built']} {p['torch_cuda']}" if p.get("torch_cuda") else "",
            f"TensorFlow {w['built']} {p['tensorflow_built_with_cuda']}"
            if p.get("tensorflow_built_with_cuda") else ""]
    cudnn = [f"PyTorch {conditions.cudnn_version(p['torch_cudnn'])}" if p.get("torch_cudnn") else "",
             f"{w['system']} {p['cudnn_system']}" if p.get("cudnn_system") else "",
             *(f"{name} {pkgs[name]}" for name in ("nvidia-cudnn-cu12", "nvidia-cudnn-cu13")
               if name in pkgs),
             f"TensorFlow {w['built']} {p['tensorflow_built_with_cudnn']}"
             if p.get("tensorflow_built_with_cudnn") else ""]
    stale = sum(r.stale for r in m.records)
    skipped: dict[str, int] = {}
    for reason in (run.get("skipped") or {}).values():
        skipped[reason] = skipped.get(reason, 0) + 1
    tests = run.get("gpu_tests") or {}
    if "not_run" in tests:
        tested = f"{w['not_run']}: {tests['not_run']}"
    elif tests:
        tested = (f"{tests.get('passed', 0)} {w['passed']}, {len(tests.get('failed', {}))} "
                  f"{w['failed']}, {sum(map(len, tests.get('skipped', {}).values()))} "
                  f"{w['skipped']}")
    else:
        tested = w["not_run"]
    when = (run.get("started_at") or p.get("date", ""))[:10]
    if run and not run.get("finished_at"):
        when += f" ({w['interrupted']})"
    if run.get("bench_scale"):
        when += f", {w['scale']} ×{run['bench_scale']}"
    join = lambda parts: " · ".join(x for x in parts if x) or "—"  # noqa: E731
    return {
        "folder": f"`results/{m.slug}/`",
        "gpu": gpu,
        "driver": join([p.get("driver", ""), f"{w['supports']} {p['cuda_driver_supports']}"
                        if p.get("cuda_driver_supports") else ""]),
        "cuda": join(cuda), "cudnn": join(cudnn),
        "frameworks": join(f"{label} {pkgs[name]}" for name, label in FRAMEWORKS
                           if name in pkgs),
        "python": join([p.get("python", ""), f"{p.get('cpu_model', '')} ({p.get('cpu_cores')})"
                        if p.get("cpu_model") else ""]),
        "run": when,
        "records": f"{len(m.records)}" + (f" ({stale} {w['older']})" if stale else ""),
        "skipped": join(f"{reason}: {n}" for reason, n in sorted(skipped.items()))
        if skipped else w["none"],
        "failed": join(sorted(run.get("failed") or {})) if run.get("failed") else w["none"],
        "tests": tested,
    }


def render_machines(config) -> str:
    """The machines on record, side by side: one column each, with their provenance."""
    t = _text(config)
    machines = _state["machines"]
    if not machines:
        return f'!!! note "{t["machines_none_title"]}"\n    {t["machines_none"]}'
    cols = [_machine_column(m, t) for m in machines]
    cell = _literal
    rows = ["| | " + " | ".join(cell(m.data["provenance"]["machine"]) for m in machines) + " |",
            "|---|" + "---|" * len(machines)]
    for key, label in t["machine_rows"].items():
        rows.append(f"| {label} | " + " | ".join(cell(c.get(key, "—")) for c in cols) + " |")
    return "\n".join(rows)


def _at_marker(render):
    """A re.sub replacement that indents every line of the rendered block as deep as its
    marker, so a marker inside an admonition or a collapsed block stays inside it."""
    def replace(m):
        indent = m.string[m.string.rfind("\n", 0, m.start()) + 1:m.start()]
        block = render(m)
        if not indent or indent.strip():  # not at the start of an indented line
            return block
        return block.replace("\n", "\n" + indent)
    return replace


def _is_measurement(kind: str, argument: str) -> bool:
    """Whether a marker shows a measurement on record in this build (pipeline/claims/measured.py)."""
    machines = _state["machines"]
    if kind in ("chart", "execution-times"):
        return True  # a chart without data fails the build; the timings are this build's
    if kind == "gpu-chart":
        return bool(records.data_files(machines, f"{argument}.json"))
    if kind == "gpu-result":
        return bool(records.for_snippet(machines, argument))
    if kind == "speedup-evidence":
        return published.own_gpu_records(machines)
    if kind in ("gpu-fact", "gpu-runs"):  # sentences written from the GPU records
        return any(r.on_gpu for m in machines for r in m.records)
    if kind == "output" and argument in _state["pending"]:
        return True  # `make serve`: its first run is going on; a build runs it first
    if kind == "output":
        o = _state["outcomes"].get(argument)
        return bool(o) and (o.status == runner.OK or (
            o.status == runner.NEEDS_GPU and bool(records.for_snippet(machines, argument))))
    return False


def check_claims(markdown: str, page, config) -> str:
    """The checks of what a page states by hand (CONTRIBUTING.md, "Claims the build checks"):
    release numbers, "measured", quoted messages. Returns the page with its messages drawn."""
    where = page.file.src_uri
    if not where.endswith(".md"):
        return markdown  # a notebook page: its text is the notebook's, run as it is
    raw = page.file.content_string if hasattr(page.file, "content_string") else markdown
    offset = raw[:max(raw.find(markdown[:200]), 0)].count("\n") if markdown.strip() else 0
    shift = lambda text: re.sub(r"^([^:\n]+):(\d+):",  # noqa: E731  page lines, front matter included
                                lambda m: f"{m.group(1)}:{int(m.group(2)) + offset}:", text)
    registry, lang = _state["messages"], _text(config)["language"]
    # a Keras 3 release typed in a version-claims region: that region's own rule says it best
    problems = version_claims.unbacked(markdown, where) + release_numbers.check(markdown, where)
    problems += measured.check(markdown, where, _is_measurement)
    problems += gpu_facts.check(markdown, where)
    own = _state.setdefault("own_words", {}).get(lang)
    if own is None:
        extra = [v for v in _text(config).values() if isinstance(v, str)]
        own = _state["own_words"][lang] = messages.site_words(_state["project"].root, extra)
    problems += messages.check_quotes(markdown, where, registry, own)
    outputs = {rel: o.stdout + o.stderr for rel, o in _state["outcomes"].items()
               if o.status == runner.OK}
    for mid in sorted(messages.used(markdown)):
        msg = registry.get(mid)
        if msg is None:
            continue  # render() names it
        if msg.backing == "output" and msg.detail in _state["pending"]:
            continue  # `make serve`: checked once the snippet's first run ends
        if mid not in _state["checked"]:
            _state["checked"][mid] = messages.check(msg, _state["search"], outputs, _state["matrix"])
        if _state["checked"][mid]:
            problems.append(f"{where}: message {mid} (data/messages.yml): {_state['checked'][mid]}")
    markdown, found = messages.render(markdown, registry, lang, _state["matrix"], where)
    problems += found
    if problems:
        _problem("\n".join(shift(p) for p in problems))
    return markdown


def on_page_markdown(markdown, page, config, files):
    markdown = check_claims(markdown, page, config)
    markdown, problems = gpu_facts.render(markdown, _state["machines"], _text(config)["language"],
                                          page.file.src_uri, _state["project"].snippets)
    if problems:
        _problem("\n".join(problems))
    markdown = page_programs.reader_names(markdown)
    try:
        markdown = version_claims.render(markdown, _state["matrix"], _text(config)["language"],
                                         page.file.src_uri)
    except version_claims.ClaimError as e:
        _problem(str(e))
    t = _text(config)
    markdown = page_programs.rewrite(markdown, _state["project"].snippets,
                                     page_programs.Pages(Path(config["docs_dir"]), t["language"],
                                                         page.file.src_uri),
                                     t)
    markdown = OUTPUT.sub(_at_marker(lambda m: render_output(m.group(1), config, page)), markdown)
    markdown = GPU_RESULT.sub(_at_marker(lambda m: render_gpu_result(m.group(1), config, page)),
                              markdown)
    markdown = MACHINES.sub(_at_marker(lambda m: render_machines(config)), markdown)
    lang = _text(config)["language"]
    markdown = PUBLISHED.sub(_at_marker(lambda m: published.table(published.load(), lang)),
                             markdown)
    try:  # a table per library, in the Markdown so that search indexes every row
        markdown = release_bugs.render(markdown, lang, _state["matrix"],
                                       _state["project"].root / "data" / "release_bugs.yml")
    except release_bugs.ReleaseBugsError as e:
        _problem(f"{page.file.src_uri}: {e}")
    # every table as the page will have it, those drawn from data included
    shape = table_shape.problems(markdown, page.file.src_uri)
    if shape:
        _problem("\n".join(shape))
    home = page.file.src_uri.split(".")[0] == "index"
    markdown = SPEEDUP_LINK.sub(lambda m: published.speedup_link(_state["machines"], lang, home),
                                markdown)
    return TIMES.sub(_at_marker(lambda m: render_times(config)), markdown)


def _local_result_files(benchmark: str) -> list[Path]:
    found = []
    for o in _state["outcomes"].values():
        if o.status == runner.OK and o.data_dir:
            candidate = Path(o.data_dir) / f"{benchmark}.json"
            if candidate.is_file():
                found.append(candidate)
    return found


def _chart_inputs(benchmark: str) -> tuple[list[Path], list[tuple[Path, str]]]:
    """This build's result files of a benchmark, and its recorded ones with their labels: on a
    reader page, a record's date (and whether the snippet changed since), not its folder."""
    recorded = [(path, re.sub(r"^results/[^,]*, ", "", where))
                for path, where in records.data_files(_state["machines"], f"{benchmark}.json")]
    return _local_result_files(benchmark), recorded


def _draw_charts_ahead(config) -> None:
    """The drawings missing from the chart cache, started in a second process while this
    process renders the pages (pipeline/pages/charts_ahead.py). Once a process, for both
    languages: a rebuild under `make serve` draws the few charts whose data changed itself."""
    if _state["ahead_planned"]:
        return
    _state["ahead_planned"] = True
    own = published.OWN_BENCHMARK if published.own_gpu_records(_state["machines"]) else None
    named = charts_ahead.charts_named(Path(config["docs_dir"]), own)
    cache = _state["project"].cache / "charts"
    _state["ahead"] = charts_ahead.start(charts_ahead.jobs(named, _chart_inputs, cache), cache)


def render_chart(benchmark: str, config, page, gpu_only: bool = False) -> str:
    project = _state["project"]
    t = _text(config)
    local, recorded = _chart_inputs(benchmark)
    try:
        drawn = charts.figures(benchmark, local, recorded, project.cache / "charts", t["language"])
    except charts.NoData as e:
        if _state["pending"]:  # `make serve`: the benchmark may be among those still running
            return (f'<div class="admonition info"><p class="admonition-title">'
                    f'{html.escape(t["pending_title"])} {benchmark}</p>'
                    f'<p>{html.escape(t["pending_body"])}</p></div>')
        if gpu_only:  # a GPU-only benchmark without a GPU run: say so, draw nothing
            note = markdown_inline(t["gpu_chart_none"].format(benchmark=benchmark))
            return (f'<figure class="benchmark-chart no-data" data-benchmark="{benchmark}">'
                    f'<p class="no-data-note">{note}</p></figure>')
        _problem(f"{page.file.src_uri}: {e}")
        return f'<div class="admonition failure"><p>{html.escape(str(e))}</p></div>'
    except charts.ChartError as e:
        _problem(f"{page.file.src_uri}: {e}")
        return f'<div class="admonition failure"><p>{html.escape(str(e))}</p></div>'
    return "".join(f'<figure class="benchmark-chart" data-benchmark="{benchmark}">'
                   f'<div class="scroll-box chart-box" tabindex="0">{svg}</div>{table}</figure>'
                   for svg, table in drawn)


def render_troubleshooting(config, page) -> str:
    """The troubleshooting index: its pages and entries, and where each old anchor went."""
    try:
        return troubleshooting_pages.contents(
            Path(config["docs_dir"]), _state["project"].root / "data" / "troubleshooting.yml",
            _text(config)["language"],
            lambda slug: get_relative_url(f"{page.url}{slug}/", page.url))
    except troubleshooting_pages.PagesError as e:
        _problem(f"{page.file.src_uri}: {e}")
        return f'<div class="admonition failure"><p>{html.escape(str(e))}</p></div>'


def markdown_inline(text: str) -> str:
    """`code` spans of a short text as HTML (charts are put in after Markdown has run)."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text, quote=False))


SCROLLERS = re.compile(r'<(?:div class="scroll-box chart-box"|figure class="diagram")(?= )')


TABLE = re.compile(r"<table>")  # a Markdown table: Material's script wraps it in a scroll box


def _scroll_hints(content: str, hint: str) -> str:
    """Charts and diagrams scroll sideways in their box when wider than the screen: each box
    carries the words that say so, which site.css shows while it overflows. A Markdown table's
    box is made by Material's script in the browser: the table carries the words for it."""
    value = html.escape(hint, quote=True)
    content = TABLE.sub(f'<table data-scroll-hint-words="{value}">', content)
    return SCROLLERS.sub(lambda m: f'{m.group(0)} data-scroll-hint="{value}"', content)


def on_page_content(content, page, config, files):
    if page.file.src_uri.endswith(".ipynb"):  # mkdocs-jupyter's outputs, as the hook's above
        content = page_weight.slim_notebook_code(startup_noise.strip_notebook_html(content))
    else:  # the programs a copy button copies, and the code blocks shown only when opened
        written = _state["page_files"][page.file.src_uri] = {}
        relative = lambda path: get_relative_url(path, page.url)  # noqa: E731
        content = page_programs.add_copy(content, _state["project"].snippets, written, relative)
        content = page_programs.reader_names_in_comments(page_weight.slim_code(content))
        content = page_weight.defer(content, written, relative)
    lang, cache = _text(config)["language"], _state["project"].cache / "charts"
    content = SPEEDUP_EVIDENCE.sub(lambda m: (
        render_chart(published.OWN_BENCHMARK, config, page, True)
        if published.own_gpu_records(_state["machines"]) else "")
        + published.chart_html(lang, cache), content)
    content = PUBLISHED_CHART.sub(lambda m: published.chart_html(lang, cache), content)
    content = CHART.sub(lambda m: render_chart(m.group(2), config, page, bool(m.group(1))),
                        content)
    content = troubleshooting_pages.MARKER.sub(lambda m: render_troubleshooting(config, page),
                                               content)
    if not page.file.src_uri.endswith(".ipynb"):  # each chart a file, loaded near the screen
        content = page_weight.defer_charts(content, _state["page_files"][page.file.src_uri],
                                           lambda path: get_relative_url(path, page.url))
    return _scroll_hints(content, _text(config)["scroll_hint"])


def on_post_page(output, page, config):
    """The files the page names (pipeline/pages/page_programs.py, pipeline/pages/page_weight.py), written
    into the site: each is named by its content, so one already there is the same file. The
    page's indentation goes (page_weight.collapse_white_space), and it opens with <body> marked
    as Material's script marks it (page_load.palette_switching_at_load)."""
    write_named_by_content(Path(config["site_dir"]),
                           _state["page_files"].pop(page.file.src_uri, {}))
    return page_load.palette_switching_at_load(page_weight.collapse_white_space(output))


def on_post_template(output, template_name, config):
    """The 404 page (a template MkDocs renders on its own, not a page) opens as the pages do."""
    if template_name.endswith(".html"):
        return page_load.palette_switching_at_load(output)
    return output
