"""Bugs of one release, as data: data/release_bugs.yml, one list per library, drawn by

    <!-- release-bugs: LIBRARY -->

as a table in the page's language (docs/troubleshooting/release-bugs.md and .es.md): the symptom
as a reader pastes it, the releases it affects, the release that fixed it, what to do, and the
source, linked, with its date. The hook draws it at the Markdown stage, so search indexes every
row; its release numbers come from the data, each row with its source link beside them
(CONTRIBUTING.md, "Release numbers", rule 3).

`load()` checks what can be checked, and the build stops at the first row that fails, in one line
naming it:

- every row has a symptom, an English and a Spanish note, a source with an https address at the
  exact thing that says so (a pull request, an issue, a commit, a release tag, release notes) and
  its date; every release number parses, and the affected releases come before the fix;
- where the library is installed here, the installed release is placed against the row: fixed,
  affected, or past the last affected release of a bug no release has fixed. A row that names the
  fix's own code (`check.installed`) is read against the installed package: the code must be there
  when the row says the installed release has the fix, and absent when it says the installed
  release comes before the fix. So a row that puts the fix in a release newer than the one that
  brought it (installed 3.15.1 holds code the row says came in 3.16.0) fails, and so does one that
  puts it too early for the installed release;
- where the version matrix asked the same question of every release (results/versions/,
  pipeline/claims/version_claims.py), `check.matrix` reads its records: every release run inside the
  affected range must show the bug and every release run at or past the fix must not. A row that
  names a fix one release too early (Keras 3.11.0 for a bug that 3.11.3 still shows) fails.

A row whose fix no release has yet (`fixed_in: null`) may name the keras-nightly that has it
(`nightly: {version, file, text}`): the version matrix must hold a record of that nightly (the
table names it by that record's date, "in the keras-nightly of 2026-10-27", never as a release),
and the fix's code (`text` in `file`) must be in that nightly's environment where the matrix built
it here (.cache/versions/envs/), and absent from the installed release when that one is affected.

Which rows the matrix answers: it asks, of every Keras 3 release on each backend, whether its
cuDNN path is taken for a list of layers, and of each PyTorch release run what torch.compile does
with nn.LSTM (snippets/versions/). Two rows are such questions: Bidirectional dropping
use_cudnn=False (Keras on TensorFlow) and torch.compile leaving the code after an LSTM uncompiled.
The other bugs are errors, shapes and states that no case of the matrix asks about.
"""
from __future__ import annotations

import html
import importlib.metadata
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

import yaml
from packaging.version import InvalidVersion, Version

from pipeline.claims import version_claims
from pipeline.running import yaml_load

DATA = Path(__file__).resolve().parents[2] / "data" / "release_bugs.yml"
MARKER = re.compile(r"<!--\s*release-bugs:\s*([\w-]+)\s*-->")

# Each library of the data: its name on the page, the distributions whose installed version is
# its release here, and the importable package whose files `check.installed` names.
LIBRARIES = {
    "keras": {"name": "Keras 3", "distributions": ("keras",), "package": "keras"},
    "tf-keras": {"name": "Keras 2 (keras 2.x, tf-keras)", "distributions": ("tf-keras",),
                 "package": "tf_keras"},
    "tensorflow": {"name": "TensorFlow", "distributions": ("tensorflow",),
                   "package": "tensorflow"},
    "pytorch": {"name": "PyTorch", "distributions": ("torch",), "package": "torch"},
    "jax": {"name": "JAX and jaxlib", "distributions": ("jaxlib", "jax"), "package": "jax"},
    "cudnn": {"name": "cuDNN", "distributions": ("nvidia-cudnn-cu13", "nvidia-cudnn-cu12"),
              "package": "nvidia.cudnn"},
    "onnxruntime": {"name": "ONNX Runtime", "distributions": ("onnxruntime", "onnxruntime-gpu"),
                    "package": "onnxruntime"},
    "onnxscript": {"name": "onnxscript (PyTorch's ONNX exporter)",
                   "distributions": ("onnxscript",), "package": "onnxscript"},
}
# A source or thread: a pull request, an issue (or one of its comments), a commit, a release tag
# on GitHub; any other https page (release notes) as it is.
GITHUB = re.compile(r"^https://github\.com/[\w.-]+/[\w.-]+/(?:pull/\d+|issues/\d+(?:#issuecomment-\d+)?"
                    r"|commit/[0-9a-f]{40}|releases/tag/[\w.+-]+)$")
DATE = re.compile(r"^(?:19|20)\d\d-(?:0[1-9]|1[0-2])(?:-(?:0[1-9]|[12]\d|3[01]))?$")
ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
OUTCOMES = set(version_claims.OUTCOMES)

WORDS = {
    "en": {"symptom": "Symptom", "affected": "Affected", "fixed": "Fixed in", "todo": "What to do",
           "source": "Source", "to": "to", "up_to": "up to", "none": "not yet",
           "reported": "reported", "here": "here", "here_fixed": "fixed", "here_affected": "affected",
           "here_past": "after the last release listed, no fix yet",
           "here_between": "between the last affected release and the fix",
           "matrix": "checked against the version matrix: {runs}",
           "nightly": "not in a release; in {nightly}"},
    "es": {"symptom": "Síntoma", "affected": "Afectadas", "fixed": "Arreglado en",
           "todo": "Qué hacer", "source": "Fuente", "to": "a", "up_to": "hasta",
           "none": "aún no", "reported": "informe", "here": "aquí", "here_fixed": "arreglado",
           "here_affected": "afectado",
           "here_past": "posterior a la última versión listada, sin arreglo aún",
           "here_between": "entre la última versión afectada y el arreglo",
           "matrix": "comprobado con la matriz de versiones: {runs}",
           "nightly": "en ninguna versión; en {nightly}"},
}


class ReleaseBugsError(ValueError):
    """A row the build refuses: the message names the file, the library and the row."""


@dataclass
class Row:
    library: str
    id: str
    symptom: str
    first: Version | None  # affected from (None: not established)
    last: Version  # affected to
    fixed: Version | None  # None: no release has the fix
    raw: dict  # the row as written (release numbers as the library writes them)
    installed: tuple[str, Version] | None = None  # (distribution, version) here
    here: str = ""  # fixed, affected, past, between ("" when not installed)
    matrix_runs: tuple[str, ...] = ()  # releases of the version matrix the row was checked on
    nightly: str = ""  # the date of the keras-nightly on record that has the fix ("" if none)


def _version(value, where: str, what: str) -> Version:
    try:
        return Version(str(value))
    except InvalidVersion:
        raise ReleaseBugsError(f"{where}: {what} {value!r} is not a readable release number") \
            from None


def installed(library: str) -> tuple[str, Version] | None:
    """The installed release of a library here: its first distribution that is installed."""
    for dist in LIBRARIES[library]["distributions"]:
        try:
            return dist, Version(importlib.metadata.version(dist))
        except (importlib.metadata.PackageNotFoundError, InvalidVersion):
            continue
    return None


def _package_folder(package: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    return Path(next(iter(spec.submodule_search_locations or []), "") or Path(spec.origin).parent)


def _check_source(ref, where: str, what: str, need_date: bool) -> None:
    if not isinstance(ref, dict) or not str(ref.get("url", "")).startswith("https://"):
        raise ReleaseBugsError(f"{where}: no {what} URL (an https address at the exact thing "
                               "that says so)")
    url = ref["url"]
    if url.startswith("https://github.com/") and not GITHUB.match(url):
        raise ReleaseBugsError(f"{where}: {what} {url} is not a pull request, an issue, a commit "
                               "(40 hex digits) or a release tag")
    date = ref.get("date")
    if (need_date or date is not None) and not DATE.match(str(date or "")):
        raise ReleaseBugsError(f"{where}: {what} date {date!r} is not YYYY-MM-DD (or YYYY-MM)")


def _check_installed(row: Row, check: dict, where: str) -> None:
    """The fix's own code against the installed package (see the module's docstring)."""
    if row.installed is None or row.here not in ("fixed", "affected"):
        return
    folder = _package_folder(LIBRARIES[row.library]["package"])
    path = folder / check["file"] if folder else None
    if path is None or not path.is_file():
        raise ReleaseBugsError(f"{where}: check.installed names {check['file']}, which the "
                               f"installed {row.installed[0]} {row.installed[1]} does not have")
    holds = check["text"] in path.read_text(encoding="utf-8", errors="replace")
    dist, version = row.installed
    if row.here == "fixed" and not holds:
        raise ReleaseBugsError(
            f"{where}: says {dist} {version}, installed here, has the fix (fixed in "
            f"{row.raw['fixed_in']}), but its {check['file']} lacks the fix's code "
            f"{check['text']!r}")
    if row.here == "affected" and holds:
        raise ReleaseBugsError(
            f"{where}: says {dist} {version}, installed here, comes before the fix "
            f"({'fixed in ' + str(row.raw['fixed_in']) if row.fixed else 'no release has it'}), "
            f"but its {check['file']} already holds the fix's code {check['text']!r}")


def _shows(run: version_claims.Run, check: dict) -> bool | None:
    """Whether a release of the matrix shows the bug; None when the record does not ask."""
    result = run.cases.get(check["case"])
    if result is None:
        return None
    if "lacks" in check:  # PyTorch: the graphs torch.compile handed to its compiler
        if not isinstance(result, list):
            return None
        return not any(check["lacks"] in graph for graph in result)
    if isinstance(result, dict) and result.get("error"):
        return None  # the release has no such argument: it does not ask the question
    return check["shows"] in version_claims.outcomes(result, version_claims._body(run, check["case"]))


def _check_matrix(row: Row, check: dict, runs: list, where: str) -> None:
    backend = check.get("backend")
    if "shows" in check:
        if check["shows"] not in OUTCOMES:
            raise ReleaseBugsError(f"{where}: check.matrix shows {check['shows']!r}: one of "
                                   f"{', '.join(sorted(OUTCOMES))}")
        chosen = version_claims.keras_runs(runs, backend, check.get("topic", ""))
    elif "lacks" in check and backend == "pytorch":
        chosen = [r for r in runs if r.library == "torch"]
    else:
        raise ReleaseBugsError(f"{where}: check.matrix needs `shows` (a Keras backend) or "
                               "`lacks` (backend: pytorch)")
    inside, wrong = [], []
    for run in chosen:
        v = Version(run.version.split("+")[0])
        shows = _shows(run, check)
        if shows is None:
            continue
        if row.fixed is not None and v >= row.fixed:
            if shows:
                wrong.append(f"{run.version} still shows it, though the row says fixed in "
                             f"{row.raw['fixed_in']}")
        elif (row.first is None or v >= row.first) and v <= row.last:
            inside.append(run.version)
            if not shows:
                wrong.append(f"{run.version} does not show it, though the row says affected")
    # the nightly the row names as having the fix: its record must not show the bug
    nightly = []
    for run in [r for r in version_claims.nightly_runs(runs, backend, check.get("topic", ""))
                if row.nightly and r.nightly == row.nightly]:
        if _shows(run, check):
            wrong.append(f"{version_claims.run_name(run)} still shows it, though the row names "
                         "it as having the fix")
        elif _shows(run, check) is False:
            nightly.append(version_claims.run_name(run))
    if wrong:
        raise ReleaseBugsError(f"{where}: the version matrix ({backend} {check['case']}): "
                               + "; ".join(wrong))
    if not inside:
        raise ReleaseBugsError(f"{where}: check.matrix: no release of the version matrix lies in "
                               "the affected range, so it checks nothing (`make versions`)")
    row.matrix_runs = tuple(inside + nightly)


NIGHTLY_ENVS = Path(__file__).resolve().parents[2] / ".cache" / "versions" / "envs"


def _nightly_file(date: str, rel: str, envs: Path) -> Path | None:
    """`rel` (under the keras package) in an environment the matrix built for that nightly."""
    for env in sorted(Path(envs).glob(f"keras-nightly-{date}-*")):
        for found in env.glob(f"lib/python*/site-packages/keras/{rel}"):
            return found
    return None


def _check_nightly(row: Row, nightly, runs: list | None, where: str, envs: Path) -> None:
    if row.library != "keras" or row.fixed is not None:
        raise ReleaseBugsError(f"{where}: `nightly` names a keras-nightly with the fix, for a "
                               "Keras row no release has fixed (fixed_in: null)")
    if not (isinstance(nightly, dict) and nightly.get("version") and nightly.get("file")
            and nightly.get("text")):
        raise ReleaseBugsError(f"{where}: `nightly` needs `version`, `file` and `text`")
    if runs is None:
        return
    mine = [r for r in runs if r.library == "keras" and r.nightly
            and r.version == str(nightly["version"])]
    if not mine:
        raise ReleaseBugsError(f"{where}: no record of keras-nightly {nightly['version']} in the "
                               "version matrix (`python -m pipeline.versions`)")
    row.nightly = mine[0].nightly
    found = _nightly_file(row.nightly, nightly["file"], envs)
    if found is not None and nightly["text"] not in found.read_text(encoding="utf-8",
                                                                     errors="replace"):
        raise ReleaseBugsError(f"{where}: says keras-nightly {nightly['version']} has the fix, "
                               f"but its {nightly['file']} ({found}) lacks {nightly['text']!r}")
    if row.here == "affected":
        folder = _package_folder(LIBRARIES["keras"]["package"])
        path = folder / nightly["file"] if folder else None
        if path is not None and path.is_file() and nightly["text"] in path.read_text(
                encoding="utf-8", errors="replace"):
            raise ReleaseBugsError(
                f"{where}: says {row.installed[0]} {row.installed[1]}, installed here, is "
                f"affected, but its {nightly['file']} already holds {nightly['text']!r}")


def _row(library: str, i: int, raw, path: Path, runs: list | None,
         envs: Path = NIGHTLY_ENVS) -> Row:
    where = f"{path.name}: {library}, row {i + 1}"
    if not isinstance(raw, dict):
        raise ReleaseBugsError(f"{where}: not a mapping")
    if raw.get("id"):
        where = f"{path.name}: {library} {raw['id']}"
    if not ID.match(str(raw.get("id", ""))):
        raise ReleaseBugsError(f"{where}: needs an id of lowercase words and dashes")
    symptom = raw.get("symptom")
    if not (isinstance(symptom, str) and len(symptom.split()) >= 4):
        raise ReleaseBugsError(f"{where}: the symptom is what a reader pastes: the message, or "
                               "the behaviour in the source's words (four words at least)")
    _check_source(raw.get("source"), where, "source", need_date=True)
    if raw.get("reported") is not None:
        _check_source(raw["reported"], where, "reported", need_date=False)
    note = raw.get("note")
    if not (isinstance(note, dict) and all(isinstance(note.get(l), str) and note[l].strip()
                                           for l in WORDS)):
        raise ReleaseBugsError(f"{where}: the note needs {', '.join(WORDS)}")
    affected = raw.get("affected")
    if not (isinstance(affected, dict) and affected.get("to") is not None):
        raise ReleaseBugsError(f"{where}: affected needs `to` (the last affected release) and "
                               "`from` (null when the first one was not established)")
    first = None if affected.get("from") is None else _version(affected["from"], where,
                                                               "affected from")
    last = _version(affected["to"], where, "affected to")
    if "fixed_in" not in raw:
        raise ReleaseBugsError(f"{where}: fixed_in is missing (null when no release has the fix)")
    fixed = None if raw["fixed_in"] is None else _version(raw["fixed_in"], where, "fixed_in")
    if first is not None and first > last:
        raise ReleaseBugsError(f"{where}: affected from {affected['from']} comes after "
                               f"{affected['to']}")
    if fixed is not None and fixed <= last:
        raise ReleaseBugsError(f"{where}: fixed in {raw['fixed_in']}, but affected up to "
                               f"{affected['to']}: the fix must come after the last affected "
                               "release")
    row = Row(library, raw["id"], symptom, first, last, fixed, raw)
    row.installed = installed(library)
    if row.installed:
        v = row.installed[1]
        if fixed is not None and v >= fixed:
            row.here = "fixed"
        elif (first is None or v >= first) and v <= last:
            row.here = "affected"
        elif fixed is None and v > last:
            row.here = "past"
        elif fixed is not None and last < v < fixed:
            row.here = "between"
    check = raw.get("check") or {}
    if not isinstance(check, dict) or set(check) - {"installed", "matrix"}:
        raise ReleaseBugsError(f"{where}: check takes `installed` and `matrix` only")
    if "installed" in check:
        inst = check["installed"]
        if not (isinstance(inst, dict) and inst.get("file") and inst.get("text")):
            raise ReleaseBugsError(f"{where}: check.installed needs `file` and `text`")
        _check_installed(row, inst, where)
    if raw.get("nightly") is not None:
        _check_nightly(row, raw["nightly"], runs, where, envs)
    if "matrix" in check and runs is not None:
        _check_matrix(row, check["matrix"], runs, where)
    return row


def load(path: Path = DATA, runs: list | None = None,
         envs: Path = NIGHTLY_ENVS) -> dict[str, list[Row]]:
    """Every library's rows, checked (see the module's docstring). `runs`: the version matrix's
    records (version_claims.load); without them, `check.matrix` and a row's nightly are not
    read. `envs`: where the matrix built its environments."""
    path = Path(path)
    try:
        data = yaml_load.load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise ReleaseBugsError(f"{path}: not a readable data file ({e})") from None
    if not isinstance(data, dict) or not data:
        raise ReleaseBugsError(f"{path}: expected one list of rows per library")
    out, seen = {}, set()
    for library, rows in data.items():
        if library not in LIBRARIES:
            raise ReleaseBugsError(f"{path.name}: {library!r} is not a library this site knows "
                                   f"({', '.join(LIBRARIES)})")
        if not isinstance(rows, list) or not rows:
            raise ReleaseBugsError(f"{path.name}: {library}: expected a list of rows")
        out[library] = []
        for i, raw in enumerate(rows):
            row = _row(library, i, raw, path, runs, envs)
            if row.id in seen:
                raise ReleaseBugsError(f"{path.name}: {library} {row.id}: the id is used twice")
            seen.add(row.id)
            out[library].append(row)
    return out


_ESCAPE = re.compile(r"([\\`*_{}\[\]()#+!|])")


def _cell(text: str) -> str:
    """Plain text in a Markdown table cell: HTML escaped and Markdown's punctuation escaped, so
    nothing in it becomes markup (as mkdocs_hook._literal does for records)."""
    return _ESCAPE.sub(r"\\\1", html.escape(" ".join(str(text).split()), quote=False))


def _affected(row: Row, w: dict) -> str:
    a = row.raw["affected"]
    if a.get("from") is None:
        return f"{w['up_to']} {a['to']}"
    if str(a["from"]) == str(a["to"]):
        return str(a["to"])
    return f"{a['from']} {w['to']} {a['to']}"


def _link(ref: dict) -> str:
    m = re.match(r"https://github\.com/([\w.-]+/[\w.-]+)/(?:pull|issues)/(\d+)", ref["url"])
    if m:
        text = f"{m.group(1)}#{m.group(2)}"
    else:
        m = re.match(r"https://github\.com/([\w.-]+/[\w.-]+)/commit/([0-9a-f]{10})", ref["url"])
        text = f"{m.group(1)}@{m.group(2)}" if m else re.sub(r"^https://([^/]+)/.*", r"\1",
                                                              ref["url"])
    date = f" ({ref['date']})" if ref.get("date") else ""
    return f"[{_cell(text)}]({ref['url']}){date}"


def table(rows: list[Row], lang: str) -> str:
    """One library's rows as a Markdown table in `lang`."""
    w = WORDS[lang]
    head = (w["symptom"], w["affected"], w["fixed"], w["todo"], w["source"])
    out = ["| " + " | ".join(_aside(h) for h in head) + " |", "|---|---|---|---|---|"]
    for r in rows:
        fixed = _cell(str(r.raw["fixed_in"]) if r.fixed else w["nightly"].format(
            nightly=version_claims.NIGHTLY_WORDS[lang].format(date=r.nightly)) if r.nightly
            else w["none"])
        if r.installed and r.here:
            dist, version = r.installed
            fixed += " " + _aside(_cell(f"({w['here']}: {dist} {version}, "
                                        f"{w['here_' + r.here]})"))
        todo = r.raw["note"][lang]
        if r.matrix_runs:
            todo += " " + w["matrix"].format(runs=", ".join(r.matrix_runs))
        source = _link(r.raw["source"])
        if r.raw.get("reported"):
            source += f"; {w['reported']}: {_link(r.raw['reported'])}"
        out.append("| " + " | ".join([_cell(r.symptom), _cell(_affected(r, w)), fixed,
                                      _aside(_cell(todo)), _aside(source)]) + " |")
    return "\n".join(out)


def _aside(markdown: str) -> str:
    """A cell's text that search leaves out (pipeline/pages/search_text.py): a reader pastes the
    symptom, and each language's index stays under its size (tests/site/test_search_index.py)."""
    return f'<span class="release-bugs-aside" data-search-exclude>{markdown}</span>'


def render(markdown: str, lang: str, runs: list | None, path: Path = DATA) -> str:
    """The page with each <!-- release-bugs: LIBRARY --> replaced by that library's table;
    ReleaseBugsError names the first row (or marker) that fails."""
    if not MARKER.search(markdown):
        return markdown
    libraries = load(path, runs)

    def replace(m: re.Match) -> str:
        library = m.group(1)
        if library not in libraries:
            raise ReleaseBugsError(f"<!-- release-bugs: {library} -->: {Path(path).name} has no "
                                   f"rows for {library!r} ({', '.join(libraries)})")
        return table(libraries[library], lang)

    return MARKER.sub(replace, markdown)
