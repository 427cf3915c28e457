"""Version claims in pages, drawn from the version matrix's records (results/versions/, written
by pipeline/records/versions.py): what each Keras 3 release, tf-keras release and PyTorch release did.

In a page:
  <!-- versions-table -->                 per case, per backend: which releases run took cuDNN
  <!-- torch-versions-table -->           what each PyTorch release run did with nn.LSTM
  <!-- since: BACKEND CASE OUTCOME -->    "3.14": the first Keras release from which every
                                          release run gives OUTCOME (and the newest does)
  <!-- releases: BACKEND CASE OUTCOME --> "3.4 to 3.8": the Keras releases run that give it
  <!-- run-range: BACKEND -->             "3.0.0 to 3.15.1": the Keras releases run (BACKEND
                                          pytorch: the PyTorch releases run)
  <!-- newest-run -->                     the newest release of each library run, and when
                                          (`python -m pipeline.release_watch` lists what the
                                          registry holds newer)
  <!-- nightly-run -->                    the keras-nightly run, by its date: "the keras-nightly
                                          of 2026-10-27 (run on 2026-11-29)"
  <!-- nightly-changes -->                per backend, the cases of the versions table where the
                                          keras-nightly answers otherwise than the newest release
  <!-- stacked-mask-table -->             two stacked LSTMs behind a mask, in the newest release
                                          and the nightly: the second one's mask, cuDNN, warning
  <!-- mixed-precision-table: BACKEND --> an LSTM and a GRU under each dtype policy, in every
                                          release run (and the nightly): cuDNN or not, and the
                                          dtype handed to it; releases that answer alike share a
                                          row
  <!-- tf-cudnn-kernels-table -->         the dtypes each TensorFlow run registers GPU kernels of
                                          CudnnRNN and CudnnRNNV3 for
  <!-- version-claims --> ... <!-- /version-claims -->
                                          a region (a table, a diagram) whose Keras versions must
                                          all come from markers: one written by hand fails the
                                          build, as does a marker no record backs

BACKEND is tensorflow, jax, torch or tf-keras; CASE a case of snippets/versions/ (lstm,
lstm_mask_right, ...); OUTCOME one of OUTCOMES. A claim drawn from a record made by an older
version of its snippet is marked, never shown as current.

A keras-nightly is the next release before it ships: it is named by its date ("the keras-nightly
of 2026-10-27"), never by its version, and no claim about releases (`since`, `releases`,
`run-range`, the versions table, `newest-run`) counts it. Records of another snippet than the
cases (a `topic`, such as the stacked masks) are read only by the markers made for them.
"""
from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.records import store as records

SINCE = re.compile(r"<!--\s*(since|releases):\s*([\w-]+)\s+(\w+)\s+([\w-]+)\s*-->")
RUN_RANGE = re.compile(r"<!--\s*run-range:\s*([\w-]+)\s*-->")
TABLE = re.compile(r"<!--\s*versions-table\s*-->")
TORCH_TABLE = re.compile(r"<!--\s*torch-versions-table\s*-->")
NEWEST = re.compile(r"<!--\s*newest-run\s*-->")
NIGHTLY = re.compile(r"<!--\s*nightly-run\s*-->")
NIGHTLY_CHANGES = re.compile(r"<!--\s*nightly-changes\s*-->")
MASK_TABLE = re.compile(r"<!--\s*stacked-mask-table\s*-->")
MIXED_TABLE = re.compile(r"<!--\s*mixed-precision-table:\s*([\w-]+)\s*-->")
KERNELS_TABLE = re.compile(r"<!--\s*tf-cudnn-kernels-table\s*-->")
REGION = re.compile(r"<!--\s*version-claims\s*-->(.*?)<!--\s*/version-claims\s*-->", re.S)
ANY_MARKER = re.compile(r"<!--.*?-->", re.S)
# A Keras 3 version written by hand: 3.4, 3.0.1 (not 2.13, 9.13 or 3.11.7's Python).
HAND_VERSION = re.compile(r"(?<![\w.])3\.\d{1,2}(?:\.\d+)?(?![\w.]*\d)")
BACKENDS = ("tensorflow", "jax", "torch", "tf-keras")
OUTCOMES = ("cudnn", "chosen", "fused", "generic", "error", "dropped", "kept", "body-runs",
            "body-fails", "raises")


class ClaimError(ValueError):
    """A version claim in a page that the records do not back: the message says which and why."""


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version.split("+")[0]))


@dataclass
class Run:
    """One cell of the matrix: one release of a library, its record's rules.json."""
    library: str  # keras, tf-keras, torch
    version: str
    backend: str  # tensorflow, jax, torch, tf-keras (tf-keras runs on TensorFlow); "" for torch
    cases: dict
    labels: dict
    stale: bool
    date: str
    frameworks: dict
    nightly: str = ""  # a keras-nightly: the date it was built (YYYY-MM-DD); "" for a release
    topic: str = ""  # "" for the cases of snippets/versions/_keras3_cases.py; else its snippet's
    extra: dict = field(default_factory=dict)  # the rest of rules.json (a topic's own facts)


def load(results: Path, snippets: Path) -> list[Run]:
    """Every cell on record (results/versions/), checked as every record is (RecordError)."""
    runs = []
    for m in records.load_all(Path(results), Path(snippets)):
        cell = dict(m.data.get("cell", {}))
        for r in m.records:
            if cell.get("pinned"):  # the project's own environment (CI's cell): its Keras
                cell["version"] = r.data["provenance"].get("frameworks", {}).get(
                    "tf-keras" if cell.get("library") == "tf-keras" else "keras", "")
            path = r.data_dir / "rules.json"
            if not path.is_file():
                raise records.RecordError(f"{r.path}: no data/rules.json")
            data = json.loads(path.read_text(encoding="utf-8"))
            library = cell.get("library")
            backend = "tf-keras" if library == "tf-keras" else cell.get("backend", "")
            runs.append(Run(library, cell.get("version", ""), backend, data.get("cases", {}),
                            data.get("labels", {}), r.stale, r.date,
                            r.data["provenance"].get("frameworks", {}),
                            cell.get("nightly", ""), cell.get("topic", ""),
                            {k: v for k, v in data.items() if k not in ("cases", "labels")}))
    return sorted(runs, key=lambda r: (r.library, r.backend, _key(r.version)))


def keras_runs(runs: list[Run], backend: str, topic: str = "") -> list[Run]:
    """The Keras releases run on a backend (never a nightly), oldest first."""
    return [r for r in runs if r.backend == backend and r.library in ("keras", "tf-keras")
            and not r.nightly and r.topic == topic]


def nightly_runs(runs: list[Run], backend: str, topic: str = "") -> list[Run]:
    """The keras-nightly runs on a backend, oldest first."""
    return [r for r in runs if r.backend == backend and r.library == "keras" and r.nightly
            and r.topic == topic]


NIGHTLY_WORDS = {"en": "the keras-nightly of {date}", "es": "el keras-nightly del {date}"}


def run_name(run: Run, lang: str = "en") -> str:
    """How a page names a run: "Keras 3.15.1", or a nightly by its date, never its version."""
    if run.nightly:
        return NIGHTLY_WORDS[lang].format(date=run.nightly)
    return {"keras": "Keras", "tf-keras": "tf-keras", "torch": "PyTorch"}.get(
        run.library, run.library) + " " + run.version.split("+")[0]


def _body(run: Run, case: str) -> dict | None:
    """Where the record also ran the body of Keras's cuDNN function for this kind of layer
    (PyTorch backend), that result: a call that reaches a failing body ends generic."""
    if case.endswith("_cudnn_body"):
        return None
    return run.cases.get(("gru" if "gru" in case else "lstm") + "_cudnn_body")


def outcomes(result: dict, body: dict | None = None) -> set[str]:
    """The words a case's result answers to. `chosen`: Keras called its cuDNN function;
    `cudnn`: and that is what runs (its body, where run, did not fail)."""
    calls, words = result.get("calls") or [], set()
    fused = any(c.startswith("bidirectional") for c in calls)
    fails = body is not None and body.get("body") not in ("runs", "no such function", "not called")
    if result.get("error"):
        words.add("error")
    elif calls:
        words.add("chosen")
        if fused:
            words |= {"cudnn", "fused"}
        elif fails:
            words.add("generic")
        else:
            words.add("cudnn")
    else:
        words.add("generic")
    if "inputs_dropped" in result:
        words.add("dropped" if result["inputs_dropped"] else "kept")
    if result.get("raised"):  # the layer raised in training (the stateful records)
        words.add("raises")
    if result.get("body") == "runs":
        words.add("body-runs")
    elif result.get("body") not in (None, "no such function", "not called"):
        words.add("body-fails")
    return words


def _holds(run: Run, case: str, outcome: str, where: str) -> bool:
    if case not in run.cases:
        raise ClaimError(f"{where}: the {run.library} {run.version} record has no case {case!r}")
    return outcome in outcomes(run.cases[case], _body(run, case))


def _short(runs: list[Run], holds: list[bool], i: int) -> str:
    """A release as a page names it: 3.4 for 3.4.1 when every release of 3.4 run gives the same
    answer; the full number where they differ (3.0.0 beside 3.0.1)."""
    minor = _key(runs[i].version)[:2]
    answers = {h for r, h in zip(runs, holds) if _key(r.version)[:2] == minor}
    return runs[i].version if len(answers) > 1 else ".".join(map(str, minor))


def _check(claim: str, backend: str, case: str, outcome: str, runs: list[Run], where: str) -> list[Run]:
    if backend not in BACKENDS:
        raise ClaimError(f"{where}: {claim} names backend {backend!r}; one of {', '.join(BACKENDS)}")
    if outcome not in OUTCOMES:
        raise ClaimError(f"{where}: {claim} names outcome {outcome!r}; one of {', '.join(OUTCOMES)}")
    chosen = keras_runs(runs, backend)
    if not chosen:
        raise ClaimError(f"{where}: {claim}: no record of the version matrix backs it "
                         f"(no release run on {backend}: `make versions`)")
    return chosen


def since(runs: list[Run], backend: str, case: str, outcome: str, where: str = "") -> tuple[str, list[Run]]:
    """The first release from which every release run gives `outcome`, and the runs behind it."""
    claim = f"<!-- since: {backend} {case} {outcome} -->"
    chosen = _check(claim, backend, case, outcome, runs, where)
    holds = [_holds(r, case, outcome, where) for r in chosen]
    if not holds[-1]:
        raise ClaimError(f"{where}: {claim}: the newest release run ({chosen[-1].version}) does "
                         f"not give {outcome!r}")
    first = len(holds) - next(i for i, h in enumerate(reversed(holds)) if not h) \
        if not all(holds) else 0
    return _short(chosen, holds, first), chosen[first:]


def runs_of(holds: list[bool]) -> list[tuple[int, int]]:
    """The (first, last) index of each run of consecutive True values."""
    spans, start = [], None
    for i, h in enumerate(holds + [False]):
        if h and start is None:
            start = i
        elif not h and start is not None:
            spans.append((start, i - 1))
            start = None
    return spans


def releases(runs: list[Run], backend: str, case: str, outcome: str, where: str = "",
             lang: str = "en") -> tuple[str, list[Run]]:
    """The releases run that give `outcome`, as ranges: "3.4 to 3.8"."""
    claim = f"<!-- releases: {backend} {case} {outcome} -->"
    chosen = _check(claim, backend, case, outcome, runs, where)
    holds = [_holds(r, case, outcome, where) for r in chosen]
    if not any(holds):
        raise ClaimError(f"{where}: {claim}: no release run gives {outcome!r}")
    spans = runs_of(holds)
    to = WORDS[lang]["to"]
    text = ", ".join(_short(chosen, holds, a) if a == b
                     else f"{_short(chosen, holds, a)} {to} {_short(chosen, holds, b)}"
                     for a, b in spans)
    return text, [r for r, h in zip(chosen, holds) if h]


WORDS = {
    "en": {"cudnn": "cuDNN", "fused": "one fused cuDNN call", "generic": "generic",
           "no_argument": "no such argument", "error": "error", "dropped": "inputs dropped",
           "body_fails": "fails on the CPU too, then generic", "body_runs": "runs",
           "no_function": "no such function", "not_called": "not called",
           "chosen_fails": "cuDNN chosen, fails, then generic",
           "tfk_note": "In tf-keras, cuDNN means a cuDNN kernel in the traced graph, which "
                       "TensorFlow picks on a GPU at run time; there a mask is checked per batch.",
           "older": "from an older version of the check", "tensorflow": "TensorFlow",
           "jax": "JAX", "torch": "PyTorch", "tf-keras": "tf-keras (Keras 2)", "case": "layer",
           "run_list": "Releases run", "on": "on",
           "pretended": "each on a CPU, with Keras told a GPU is present",
           "torch_case": "what was asked", "to": "to", "runs_all": "every release run",
           "no_setting": "no such setting", "runs_cpu": "runs on the CPU",
           "cpu_build": "none (a CPU build)",
           "torch_same": "Every row is the same in each release run.",
           "torch_differ": "What differs between the releases run: {rows}. The rest is the same."},
    "es": {"cudnn": "cuDNN", "fused": "una sola llamada cuDNN fusionada", "generic": "genérico",
           "no_argument": "argumento inexistente", "error": "error",
           "dropped": "descarta entradas", "body_fails": "falla también en la CPU; luego genérico",
           "body_runs": "funciona", "no_function": "no existe esa función",
           "not_called": "no se llama",
           "chosen_fails": "elige cuDNN, falla y pasa a genérico",
           "tfk_note": "En tf-keras, cuDNN significa un kernel de cuDNN en el grafo trazado, que "
                       "TensorFlow elige en una GPU al ejecutar; allí la máscara se comprueba en "
                       "cada lote.", "older": "de una versión anterior de la comprobación",
           "tensorflow": "TensorFlow", "jax": "JAX", "torch": "PyTorch",
           "tf-keras": "tf-keras (Keras 2)", "case": "capa", "run_list": "Versiones ejecutadas",
           "on": "con", "pretended": "cada una en una CPU, diciéndole a Keras que hay una GPU",
           "torch_case": "qué se preguntó", "to": "a", "runs_all": "todas las versiones ejecutadas",
           "no_setting": "no existe ese ajuste", "runs_cpu": "funciona en la CPU",
           "cpu_build": "ninguno (una compilación para CPU)",
           "torch_same": "Cada fila es igual en todas las versiones ejecutadas.",
           "torch_differ": "Qué difiere entre las versiones ejecutadas: {rows}. El resto es "
                           "igual."},
}
# The cases' labels in Spanish (the English ones come from the records).
LABELS_ES = {
    "lstm": "LSTM(4)", "gru": "GRU(4)",
    "lstm_mask_right": "LSTM(4), máscara con relleno a la derecha",
    "lstm_mask_left": "LSTM(4), máscara con relleno a la izquierda",
    "gru_mask_right": "GRU(4), máscara con relleno a la derecha",
    "lstm_dropout_training": "LSTM(4, dropout=0.5), entrenamiento",
    "lstm_dropout_inference": "LSTM(4, dropout=0.5), inferencia",
    "lstm_recurrent_dropout": "LSTM(4, recurrent_dropout=0.5), entrenamiento",
    "lstm_use_cudnn_false": "LSTM(4, use_cudnn=False)",
    "lstm_relu": 'LSTM(4, activation="relu")', "lstm_unroll": "LSTM(4, unroll=True)",
    "lstm_no_bias": "LSTM(4, use_bias=False)", "gru_reset_after_false": "GRU(4, reset_after=False)",
    "bidirectional_lstm": "Bidirectional(LSTM(4))", "bidirectional_gru": "Bidirectional(GRU(4))",
    "bidirectional_lstm_use_cudnn_false": "Bidirectional(LSTM(4, use_cudnn=False))",
    "lstm_cudnn_body": "LSTM(4): la función cuDNN de Keras, ejecutada",
    "gru_cudnn_body": "GRU(4): la función cuDNN de Keras, ejecutada",
}
TORCH_LABELS = {
    "en": {"cuda_build": "built for CUDA (`torch.version.cuda`)",
           "cudnn_version": "cuDNN it loads (`torch.backends.cudnn.version()`)",
           "flatten_for_cudnn": "can flatten RNN weights for cuDNN",
           "allow_rnn_default": "`torch._dynamo.config.allow_rnn`, by default",
           "compile_default": "`torch.compile`: the graphs its compiler gets",
           "compile_fullgraph": "`torch.compile(fullgraph=True)`",
           "compile_allow_rnn": "`torch.compile` with `allow_rnn=True`: the graphs",
           "weight_buffers": "buffers holding a 2-layer `nn.LSTM`'s weights",
           "weight_buffers_after_flatten_on_cpu": "the same after `flatten_parameters()` on the CPU",
           "dtype_float16": "`nn.LSTM` in float16 on the CPU",
           "dtype_bfloat16": "`nn.LSTM` in bfloat16 on the CPU",
           "dtype_float64": "`nn.LSTM` in float64 on the CPU"},
    "es": {"cuda_build": "compilado para CUDA (`torch.version.cuda`)",
           "cudnn_version": "cuDNN que carga (`torch.backends.cudnn.version()`)",
           "flatten_for_cudnn": "puede aplanar los pesos de una RNN para cuDNN",
           "allow_rnn_default": "`torch._dynamo.config.allow_rnn`, por defecto",
           "compile_default": "`torch.compile`: los grafos que recibe su compilador",
           "compile_fullgraph": "`torch.compile(fullgraph=True)`",
           "compile_allow_rnn": "`torch.compile` con `allow_rnn=True`: los grafos",
           "weight_buffers": "búferes con los pesos de un `nn.LSTM` de 2 capas",
           "weight_buffers_after_flatten_on_cpu": "lo mismo tras `flatten_parameters()` en la CPU",
           "dtype_float16": "`nn.LSTM` en float16 en la CPU",
           "dtype_bfloat16": "`nn.LSTM` en bfloat16 en la CPU",
           "dtype_float64": "`nn.LSTM` en float64 en la CPU"},
}


def _answer(result: dict, w: dict, body: dict | None = None) -> str:
    """A case's result in the reader's words."""
    if result.get("error"):
        if "Unrecognized keyword" in result["error"] or result["error"].startswith("TypeError"):
            return w["no_argument"]
        return f'{w["error"]}: {result["error"].split(":")[0]}'
    if "body" in result:
        if result["body"] in ("runs", "no such function", "not called"):
            return w[{"runs": "body_runs", "no such function": "no_function",
                      "not called": "not_called"}[result["body"]]]
        return f'{w["body_fails"]} ({result["body"].split(":")[0]})'
    words = outcomes(result, body)
    text = w["fused"] if "fused" in words else w["cudnn"] if "cudnn" in words \
        else w["chosen_fails"] if "chosen" in words else w["generic"]
    if result.get("inputs_dropped"):
        text += f' ({w["dropped"]})'
    return text


def _cell(runs: list[Run], case: str, w: dict) -> str:
    """The releases run, grouped by answer: "generic: 3.0.0–3.1.1<br>cuDNN: 3.2.1–3.15.1"."""
    have = [r for r in runs if case in r.cases]
    if not have:
        return "—"
    groups: list[tuple[str, list[Run]]] = []
    for r in have:
        answer = _answer(r.cases[case], w, _body(r, case))
        if groups and groups[-1][0] == answer:
            groups[-1][1].append(r)
        else:
            groups.append((answer, [r]))
    parts = []
    for answer, rs in groups:
        span = rs[0].version if len(rs) == 1 else f"{rs[0].version}–{rs[-1].version}"
        mark = "*" if any(r.stale for r in rs) else ""
        parts.append(f'{html.escape(answer)}: <span class="releases">{span}{mark}</span>')
    return "<br>".join(parts)  # one answer a line: the cell stays narrow on a phone


def _code_label(text: str) -> str:
    """"LSTM(4), right-padded mask" -> "`LSTM(4)`, right-padded mask": the code as code."""
    m = re.match(r"(.*?\))([,:]) (.*)$", text)
    return f"`{m.group(1)}`{m.group(2)} {html.escape(m.group(3), quote=False)}" if m else f"`{text}`"


def table(runs: list[Run], lang: str) -> str:
    """The versions table, in the page's language."""
    w = WORDS[lang]
    columns = [b for b in BACKENDS if keras_runs(runs, b)]
    if not columns:
        raise ClaimError("<!-- versions-table -->: no record of the version matrix "
                         "(results/versions/ is empty: `make versions`)")
    by_col = {b: keras_runs(runs, b) for b in columns}
    found = {c for b in columns for r in by_col[b] for c in r.cases}
    cases = [c for c in LABELS_ES if c in found] + sorted(found - set(LABELS_ES))
    english = {c: l for b in columns for r in by_col[b] for c, l in r.labels.items()}
    label = (lambda c: LABELS_ES.get(c, english.get(c, c))) if lang == "es" \
        else (lambda c: english.get(c, c))
    lines = [f'| {w["case"]} | ' + " | ".join(w[b] for b in columns) + " |",
             "|---|" + "---|" * len(columns)]
    for c in cases:
        lines.append(f"| {_code_label(label(c))} | "
                     + " | ".join(_cell(by_col[b], c, w) for b in columns) + " |")
    lines.append("")
    for b in columns:
        rs = by_col[b]
        backends = sorted({f"{k} {v}" for r in rs for k, v in r.frameworks.items()
                           if k in ("tensorflow", "jax", "torch")}, key=lambda s: (s.split()[0],
                                                                                  _key(s.split()[1])))
        lines.append(f'- {w[b]}: {", ".join(r.version for r in rs)} ({w["on"]} '
                     f'{", ".join(backends)}), {w["pretended"]}.')
    if "tf-keras" in columns:
        lines.append(f'- {w["tfk_note"]}')
    if any(r.stale for b in columns for r in by_col[b]):
        lines.append(f'- \\* {w["older"]}.')
    return "\n".join(lines)


def _torch_value(value, w: dict) -> str:
    if isinstance(value, list):
        return "; ".join("[" + ", ".join(f"`{op}`" for op in graph) + "]" for graph in value) \
            or "[]"
    if value == "no such setting":
        return w["no_setting"]
    if value == "runs on the CPU":
        return w["runs_cpu"]
    if value == "none (a CPU build)":
        return w["cpu_build"]
    return html.escape(str(value)).replace("|", "\\|")


def torch_table(runs: list[Run], lang: str) -> str:
    w = WORDS[lang]
    chosen = [r for r in runs if r.library == "torch"]
    if not chosen:
        raise ClaimError("<!-- torch-versions-table -->: no PyTorch release on record "
                         "(`make versions`)")
    labels = TORCH_LABELS[lang]
    found = {k for r in chosen for k in r.cases}
    keys = [k for k in labels if k in found] + sorted(found - set(labels))
    lines = [f'| {w["torch_case"]} | ' + " | ".join(
        f"PyTorch {r.version}" + ("*" if r.stale else "") for r in chosen) + " |",
        "|---|" + "---|" * len(chosen)]
    for k in keys:
        lines.append(f"| {labels.get(k, k)} | " + " | ".join(
            _torch_value(r.cases.get(k, "—"), w) for r in chosen) + " |")
    same = [labels.get(k, k) for k in keys if len({json.dumps(r.cases.get(k)) for r in chosen}) == 1]
    differ = [labels.get(k, k) for k in keys if labels.get(k, k) not in same]
    lines += ["", w["torch_differ"].format(rows="; ".join(differ)) if differ else w["torch_same"]]
    if any(r.stale for r in chosen):
        lines += ["", f'\\* {w["older"]}.']
    return "\n".join(lines)


def unbacked(markdown: str, where: str) -> list[str]:
    """Keras versions written by hand inside a version-claims region."""
    found = []
    for region in REGION.finditer(markdown):
        text = ANY_MARKER.sub(" ", region.group(1))
        text = re.sub(r"\]\([^)]*\)", "]", text)  # link targets (pull request numbers, anchors)
        for m in HAND_VERSION.finditer(text):
            line = text[:m.start()].count("\n") + markdown[:region.start(1)].count("\n") + 1
            found.append(f"{where}:{line}: Keras version {m.group(0)!r} written by hand in a "
                         "version-claims region: draw it from the records with "
                         "<!-- since: ... --> or <!-- releases: ... -->")
    return found


NEWEST_WORDS = {"en": "{library} {version} (run on {date})",
                "es": "{library} {version} (ejecutada el {date})"}


def newest_runs(runs: list[Run], lang: str) -> str:
    """"Keras 3.15.1 (run on 2026-11-26), tf-keras 2.21.0 (...), PyTorch 2.15.0 (...)": the
    newest release of each library the matrix ran, with the date of its newest record."""
    names = {"keras": "Keras", "tf-keras": "tf-keras", "torch": "PyTorch"}
    shown = []
    for library, name in names.items():
        mine = [r for r in runs if r.library == library and r.version and not r.nightly
                and not r.topic]
        if not mine:
            continue
        top = max(mine, key=lambda r: _key(r.version))
        date = max(r.date for r in mine if r.version == top.version)[:10]
        shown.append(NEWEST_WORDS[lang].format(library=name, version=top.version.split("+")[0],
                                               date=date) + ("*" if top.stale else ""))
    if not shown:
        raise ClaimError("<!-- newest-run -->: no release on record (`make versions`)")
    return ", ".join(shown)


NIGHTLY_TEXT = {
    "en": {"run": "{name} (run on {date})", "none": "no keras-nightly on record (`make versions`)",
           "same": "{backend}: each layer as in {release}.",
           "differ": "{backend}: {cases}; each other layer as in {release}.",
           "case": "{case}: {old} in {release}, {new} in {nightly}",
           "backend": "backend", "run_col": "run", "mask": "mask of the second LSTM",
           "second": "second LSTM", "warning": "mask warning",
           "mask_passed": "the first LSTM's mask", "mask_none": "none", "yes": "yes", "no": "no"},
    "es": {"run": "{name} (ejecutado el {date})",
           "none": "ningún keras-nightly registrado (`make versions`)",
           "same": "{backend}: cada capa como en {release}.",
           "differ": "{backend}: {cases}; cada otra capa como en {release}.",
           "case": "{case}: {old} en {release}, {new} en {nightly}",
           "backend": "backend", "run_col": "versión", "mask": "máscara de la segunda LSTM",
           "second": "segunda LSTM", "warning": "aviso de máscara",
           "mask_passed": "la máscara de la primera LSTM", "mask_none": "ninguna", "yes": "sí",
           "no": "no"},
}


def nightly_run(runs: list[Run], lang: str) -> str:
    """"the keras-nightly of 2026-10-27 (run on 2026-11-29)": the newest nightly on record."""
    mine = [r for r in runs if r.nightly]
    if not mine:
        raise ClaimError(f"<!-- nightly-run -->: {NIGHTLY_TEXT['en']['none']}")
    top = max(r.nightly for r in mine)
    date = max(r.date for r in mine if r.nightly == top)[:10]
    stale = "*" if any(r.stale for r in mine if r.nightly == top) else ""
    return NIGHTLY_TEXT[lang]["run"].format(name=NIGHTLY_WORDS[lang].format(date=top),
                                            date=date) + stale


def nightly_changes(runs: list[Run], lang: str) -> str:
    """Per backend, the cases where the newest keras-nightly answers otherwise than the newest
    release run: a list, one backend a line."""
    w, t = WORDS[lang], NIGHTLY_TEXT[lang]
    english = {c: l for r in runs for c, l in r.labels.items()}
    label = (lambda c: LABELS_ES.get(c, english.get(c, c))) if lang == "es" \
        else (lambda c: english.get(c, c))
    lines = []
    for b in ("tensorflow", "jax", "torch"):
        releases, nightlies = keras_runs(runs, b), nightly_runs(runs, b)
        if not (releases and nightlies):
            continue
        old, new = releases[-1], max(nightlies, key=lambda r: r.nightly)
        differ = []
        for c in [c for c in old.cases if c in new.cases]:
            a = _answer(old.cases[c], w, _body(old, c))
            z = _answer(new.cases[c], w, _body(new, c))
            if a != z:
                differ.append(t["case"].format(case=_code_label(label(c)), old=html.escape(a),
                                               new=html.escape(z), release=run_name(old, lang),
                                               nightly=run_name(new, lang)))
        stale = "*" if old.stale or new.stale else ""
        lines.append("- " + (t["differ"].format(backend=w[b], cases="; ".join(differ),
                                                release=run_name(old, lang)) if differ
                             else t["same"].format(backend=w[b], release=run_name(old, lang)))
                     + stale)
    if not lines:
        raise ClaimError(f"<!-- nightly-changes -->: {t['none']}")
    return "\n".join(lines)


def stacked_mask_table(runs: list[Run], lang: str) -> str:
    """Two stacked LSTMs behind a mask, per backend, in each release and nightly run: the mask
    the second LSTM received, whether Keras sent it to cuDNN, whether Keras warned."""
    w, t = WORDS[lang], NIGHTLY_TEXT[lang]
    lines = [f"| {t['backend']} | {t['run_col']} | {t['mask']} | {t['second']} | {t['warning']} |",
             "|---|---|---|---|---|"]
    for b in ("tensorflow", "jax", "torch"):
        for r in keras_runs(runs, b, "stacked-mask") + nightly_runs(runs, b, "stacked-mask"):
            case = r.cases.get("stacked_lstm_mask")
            if not case:
                raise ClaimError(f"<!-- stacked-mask-table -->: the {run_name(r)} record on {b} "
                                 "has no case 'stacked_lstm_mask'")
            first, second = case["layers"]["first_lstm"], case["layers"]["second_lstm"]
            mask = t["mask_none"] if second["mask"] is None else t["mask_passed"] \
                if second["mask"] == first["mask"] else json.dumps(second["mask"])
            lines.append(f"| {w[b]} | {run_name(r, lang)}{'*' if r.stale else ''} | {mask} | "
                         f"{w['cudnn'] if second['cudnn'] else w['generic']} | "
                         f"{t['yes'] if case['warnings'] else t['no']} |")
    if len(lines) == 2:
        raise ClaimError("<!-- stacked-mask-table -->: no record of the stacked masks "
                         "(`make versions`)")
    if any(r.stale for r in runs if r.topic == "stacked-mask"):
        lines += ["", f'\\* {w["older"]}.']
    return "\n".join(lines)


MIXED = "mixed-precision"
POLICIES = ("float32", "mixed_float16", "mixed_bfloat16")
MIXED_TEXT = {
    "en": {"policy": "policy", "generic": "generic loop", "jax_yes": "jaxlib accepts it",
           "jax_no": "jaxlib refuses it", "given": "cuDNN, {dtype}",
           "fails": "cuDNN chosen ({dtype}), fails (`{error}`), then generic loop",
           "input": "input {input}, states and weights {others}",
           "ran": "Releases run, each on a CPU with Keras told a GPU is present: {list}.",
           "ran_tfk": "Releases run, each on a CPU: {list}. cuDNN means the cuDNN op tf-keras "
                      "puts in the graph, which TensorFlow picks on a GPU at run time.",
           "tf_ops": "On TensorFlow, the op named is the one Keras's cuDNN function builds, "
                     "traced into a graph with the arguments Keras gave it.",
           "kernels_head": "| TensorFlow | `CudnnRNN` | `CudnnRNNV3` |",
           "kernels_ran": "TensorFlow releases run: {list}; each listed on a CPU, from "
                          "TensorFlow's kernel registry (the Linux wheel carries the GPU "
                          "kernels)."},
    "es": {"policy": "política", "generic": "bucle genérico", "jax_yes": "jaxlib lo acepta",
           "jax_no": "jaxlib lo rechaza", "given": "cuDNN, {dtype}",
           "fails": "elige cuDNN ({dtype}), falla (`{error}`) y pasa al bucle genérico",
           "input": "entrada {input}, estados y pesos {others}",
           "ran": "Versiones ejecutadas, cada una en una CPU diciéndole a Keras que hay una GPU: "
                  "{list}.",
           "ran_tfk": "Versiones ejecutadas, cada una en una CPU: {list}. cuDNN significa la "
                      "operación de cuDNN que tf-keras pone en el grafo, y que TensorFlow elige "
                      "en una GPU al ejecutar.",
           "tf_ops": "En TensorFlow, la operación nombrada es la que construye la función cuDNN "
                     "de Keras, trazada en un grafo con los argumentos que Keras le pasó.",
           "kernels_head": "| TensorFlow | `CudnnRNN` | `CudnnRNNV3` |",
           "kernels_ran": "Versiones de TensorFlow ejecutadas: {list}; cada una consultada en "
                          "una CPU, en el registro de kernels de TensorFlow (el paquete para "
                          "Linux trae los kernels de GPU)."},
}


def mixed_answer(result: dict, lang: str) -> str:
    """One case of the mixed-precision records in the reader's words: "cuDNN, float16" (with the
    op TensorFlow builds, or jaxlib's verdict), "generic loop", or the error."""
    t, w = MIXED_TEXT[lang], WORDS[lang]
    if result.get("error"):
        return f'{w["error"]}: {result["error"].split(":")[0]}'
    calls = result.get("calls") or []
    if not calls:
        return t["generic"]
    ops = result.get("ops")
    if all(" " in c for c in calls):  # tf-keras: the cuDNN ops of the graph, with their dtype
        ops = calls
    if isinstance(ops, list) and ops:
        forward = [o for o in ops if "Backprop" not in o]
        return "cuDNN: " + ", ".join(f"`{o.split()[0]}` {o.split()[1]}" for o in forward)
    others = result.get("others") or []
    dtype = result.get("input") if others in ([], [result.get("input")]) else \
        t["input"].format(input=result.get("input"), others=", ".join(others))
    body = result.get("body")
    if body and not body.startswith("runs"):  # PyTorch: Keras's cuDNN function failed
        return t["fails"].format(dtype=dtype, error=body.split(":")[0])
    text = t["given"].format(dtype=dtype)
    accepts = result.get("jaxlib_accepts")
    if accepts:
        text += "; " + (t["jax_yes"] if accepts == "yes" else
                        f'{t["jax_no"]} (`{accepts.removeprefix("no: ")}`)')
    return text


def _mixed_runs(runs: list[Run], backend: str) -> list[Run]:
    return keras_runs(runs, backend, MIXED) + nightly_runs(runs, backend, MIXED)


def mixed_precision_table(runs: list[Run], backend: str, lang: str) -> str:
    """Per release run (consecutive releases that answer alike share a row group): for each
    policy, what the LSTM and the GRU do on a GPU."""
    w, t = WORDS[lang], MIXED_TEXT[lang]
    claim = f"<!-- mixed-precision-table: {backend} -->"
    if backend not in BACKENDS:
        raise ClaimError(f"{claim}: backend {backend!r}; one of {', '.join(BACKENDS)}")
    chosen = _mixed_runs(runs, backend)
    if not chosen:
        raise ClaimError(f"{claim}: no record of the mixed-precision cells (`make versions`)")
    answers = []
    for r in chosen:
        row = {}
        for kind in ("lstm", "gru"):
            for policy in POLICIES:
                case = f"{kind}_{policy}"
                if case not in r.cases:
                    raise ClaimError(f"{claim}: the {run_name(r)} record has no case {case!r}")
                row[case] = mixed_answer(r.cases[case], lang)
        answers.append(row)
    groups: list[list[int]] = []
    for i, r in enumerate(chosen):
        if groups and not r.nightly and not chosen[groups[-1][-1]].nightly \
                and answers[groups[-1][-1]] == answers[i]:
            groups[-1].append(i)
        else:
            groups.append([i])
    head = "tf-keras" if backend == "tf-keras" else "Keras"
    lines = [f"| {head} | {t['policy']} | LSTM | GRU |", "|---|---|---|---|"]
    for g in groups:
        first, last = chosen[g[0]], chosen[g[-1]]
        name = run_name(first, lang) if first.nightly else first.version if len(g) == 1 \
            else f"{first.version} {w['to']} {last.version}"
        name += "*" if any(chosen[i].stale for i in g) else ""
        for j, policy in enumerate(POLICIES):
            a = answers[g[0]]
            lines.append(f"| {name if j == 0 else ''} | `{policy}` | {a['lstm_' + policy]} | "
                         f"{a['gru_' + policy]} |")
    lines.append("")
    frameworks = sorted({f"{k} {v}" for r in chosen for k, v in r.frameworks.items()
                         if k in ("tensorflow", "jax", "torch")},
                        key=lambda s: (s.split()[0], _key(s.split()[1])))
    names = [f"{head} " + ", ".join(r.version for r in chosen if not r.nightly)] + \
        [run_name(r, lang) for r in chosen if r.nightly]
    listed = "; ".join(names) + f" ({w['on']} {', '.join(frameworks)})"
    lines.append("- " + (t["ran_tfk"] if backend == "tf-keras" else t["ran"]).format(list=listed))
    if backend == "tensorflow":
        lines.append(f"- {t['tf_ops']}")
    if any(r.stale for r in chosen):
        lines.append(f'- \\* {w["older"]}.')
    return release_lookup("\n".join(lines))


LOOKUP = '<div class="release-lookup" hidden></div>'


def release_lookup(markdown: str) -> str:
    """A table readers look their release up in, row by row, rather than search: the empty
    marker before it tells search to leave out the table that follows
    (pipeline/pages/search_text.py); the prose around it stays."""
    return f"{LOOKUP}\n\n{markdown}"


def tf_kernels_table(runs: list[Run], lang: str) -> str:
    """The dtypes each TensorFlow release run registers GPU kernels of CudnnRNN and CudnnRNNV3
    for, from the mixed-precision records (consecutive releases alike share a row)."""
    t, w = MIXED_TEXT[lang], WORDS[lang]
    by_tf: dict[str, tuple] = {}
    stale: set[str] = set()
    for r in runs:
        kernels = r.extra.get("gpu_kernels")
        if r.topic != MIXED or not kernels:
            continue
        version = r.extra["tensorflow"]
        row = tuple(tuple(kernels[op]) for op in ("CudnnRNN", "CudnnRNNV3"))
        if by_tf.setdefault(version, row) != row:
            raise ClaimError(f"<!-- tf-cudnn-kernels-table -->: two records of TensorFlow "
                             f"{version} list other kernels")
        if r.stale:
            stale.add(version)
    if not by_tf:
        raise ClaimError("<!-- tf-cudnn-kernels-table -->: no record of TensorFlow's kernels "
                         "(`make versions`)")
    versions = sorted(by_tf, key=_key)
    lines = [t["kernels_head"], "|---|---|---|"]
    start = 0
    for i in range(1, len(versions) + 1):
        if i == len(versions) or by_tf[versions[i]] != by_tf[versions[start]]:
            a, b = versions[start], versions[i - 1]
            name = a if a == b else f"{a} {w['to']} {b}"
            name += "*" if stale & set(versions[start:i]) else ""
            row = by_tf[a]
            lines.append(f"| {name} | {', '.join(row[0])} | {', '.join(row[1])} |")
            start = i
    lines += ["", t["kernels_ran"].format(list=", ".join(versions))]
    if stale:
        lines += ["", f'\\* {w["older"]}.']
    return release_lookup("\n".join(lines))


def render(markdown: str, runs: list[Run], lang: str, where: str) -> str:
    """The page with every marker replaced; ClaimError names the first claim nothing backs."""
    problems = unbacked(markdown, where)
    if problems:
        raise ClaimError("\n".join(problems))
    w = WORDS[lang]

    def claim(m: re.Match) -> str:
        kind, backend, case, outcome = m.groups()
        text, behind = since(runs, backend, case, outcome, where) if kind == "since" \
            else releases(runs, backend, case, outcome, where, lang)
        return text + ("*" if any(r.stale for r in behind) else "")

    def run_range(m: re.Match) -> str:
        backend = m.group(1)  # "pytorch": the PyTorch releases run (nn.LSTM itself)
        rs = [r for r in runs if r.library == "torch"] if backend == "pytorch" \
            else keras_runs(runs, backend)
        if not rs:
            raise ClaimError(f"{where}: <!-- run-range: {backend} -->: no release run")
        return f'{rs[0].version} {w["to"]} {rs[-1].version}'

    markdown = SINCE.sub(claim, markdown)
    markdown = RUN_RANGE.sub(run_range, markdown)
    markdown = TABLE.sub(lambda m: release_lookup(table(runs, lang)), markdown)
    markdown = TORCH_TABLE.sub(lambda m: release_lookup(torch_table(runs, lang)), markdown)
    markdown = NEWEST.sub(lambda m: newest_runs(runs, lang), markdown)
    markdown = NIGHTLY.sub(lambda m: nightly_run(runs, lang), markdown)
    markdown = NIGHTLY_CHANGES.sub(lambda m: nightly_changes(runs, lang), markdown)
    markdown = MASK_TABLE.sub(lambda m: release_lookup(stacked_mask_table(runs, lang)), markdown)
    markdown = MIXED_TABLE.sub(lambda m: mixed_precision_table(runs, m.group(1), lang), markdown)
    markdown = KERNELS_TABLE.sub(lambda m: tf_kernels_table(runs, lang), markdown)
    return REGION.sub(lambda m: m.group(1), markdown)
