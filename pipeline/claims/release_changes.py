"""What changed, release by release: every change to a library's recurrent-layer code between
consecutive releases, as data (data/release_changes.yml, its rows; data/release_files.yml, every
release's files and their hashes, both written from the published wheels by
pipeline/claims/release_changes_gen.py), drawn by

    <!-- release-changes: LIBRARY -->

as a table in the page's language (docs/troubleshooting/release-bugs.md and .es.md): the two
releases, what a reader saw before the change (or, for an internal one, that nothing visible
changed), the release to move to, the files and the pull requests that made it.

`load()` refuses, in one line naming the row, data where:
- a pair of consecutive releases of release_files.yml whose files differ has no row, or a row
  names a pair that is not consecutive there, or files that did not change;
- a row has no pull request or commit link (https, on GitHub) and says neither why none was found
  (`prs_none`) nor which issue it read instead;
- a visible row has no symptom in both languages, or an internal one no line in both; a quoted
  `message` is not in its symptom; a `bugs` id is not a row of data/release_bugs.yml for the
  same library fixed in the row's `to`.

`local_problems()` re-reads every release installed here (the project's environment, the version
matrix's under .cache/versions/envs/), without network: each must be in release_files.yml with the
same hashes, and a row's `message` must stand in its old release's code where that release is
installed.
"""
from __future__ import annotations

import html
import os
import re
import subprocess
from pathlib import Path

import yaml
from packaging.version import InvalidVersion, Version

from pipeline.claims import release_files
from pipeline.running import yaml_load

ROOT = release_files.ROOT
CHANGES = ROOT / "data" / "release_changes.yml"
FILES = ROOT / "data" / "release_files.yml"
BUGS = ROOT / "data" / "release_bugs.yml"
PROGRAMS = Path(__file__).resolve().parent / "release_programs"
BACKENDS = ("jax", "tensorflow", "torch")
MARKER = re.compile(r"<!--\s*release-changes:\s*([\w-]+)\s*-->")
SOURCE = re.compile(r"^https://github\.com/[\w.-]+/[\w.-]+/(?:pull/\d+|commit/[0-9a-f]{40}"
                    r"|issues/\d+)$")
DATE = re.compile(r"^20\d\d-[01]\d-[0-3]\d$")
LANGS = ("en", "es")
WORDS = {
    "en": {"releases": "Releases", "saw": "What changed (what you saw before)",
           "move": "Move to", "files": "Files", "prs": "Pull requests",
           "none": "none found: {why}", "issue": "issue", "bug": "also a row above",
           "wheels": "packages read", "internal": "—"},
    "es": {"releases": "Versiones", "saw": "Qué cambió (lo que veías antes)",
           "move": "Pasa a", "files": "Archivos", "prs": "Pull requests",
           "none": "no encontrado: {why}", "issue": "issue",
           "bug": "también en una fila de arriba", "wheels": "paquetes leídos", "internal": "—"},
}
NONE_WHY = {
    "en": {"the repository's history was not read":
           "the repository's history was not read here",
           "no release tag for both releases in the repository's history":
           "the repository has no tag for one of the two releases",
           "no commit between the two release tags touches these files":
           "no commit between the two release tags touches these files"},
    "es": {"the repository's history was not read":
           "aquí no se leyó la historia del repositorio",
           "no release tag for both releases in the repository's history":
           "el repositorio no tiene etiqueta para una de las dos versiones",
           "no commit between the two release tags touches these files":
           "ningún commit entre las dos etiquetas toca estos archivos"},
}


class ReleaseChangesError(ValueError):
    """Data the build refuses: the message names the file, the library and the row."""


def _v(text, where: str) -> Version:
    try:
        return Version(str(text))
    except InvalidVersion:
        raise ReleaseChangesError(f"{where}: {text!r} is not a readable release number") from None


def _read(path: Path):
    try:
        return yaml_load.load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise ReleaseChangesError(f"{path}: not a readable data file ({e})") from None


def load_files(path: Path = FILES) -> dict[str, dict[str, dict[str, str]]]:
    """{library: {release: {file: hash}}}, releases in order."""
    data = _read(path)
    if not isinstance(data, dict) or set(data) - set(release_files.LIBRARIES):
        raise ReleaseChangesError(f"{Path(path).name}: expected one mapping per library of "
                                  f"{', '.join(release_files.LIBRARIES)}")
    out = {}
    for library, releases in data.items():
        where = f"{Path(path).name}: {library}"
        if not isinstance(releases, dict) or not releases:
            raise ReleaseChangesError(f"{where}: expected {{release: {{file: hash}}}}")
        order = sorted(releases, key=lambda r: _v(r, where))
        out[library] = {str(r): dict(releases[r] or {}) for r in order}
    return out


def changed(files: dict[str, dict[str, str]]) -> list[tuple[str, str, list[str]]]:
    """(from, to, files that differ) for each consecutive pair of releases that differ."""
    releases = list(files)
    out = []
    for old, new in zip(releases, releases[1:]):
        names = sorted(n for n in set(files[old]) | set(files[new])
                       if files[old].get(n) != files[new].get(n))
        if names:
            out.append((old, new, names))
    return out


def _bilingual(value, where: str, what: str) -> None:
    if not (isinstance(value, dict) and all(isinstance(value.get(l), str) and value[l].strip()
                                            for l in LANGS)):
        raise ReleaseChangesError(f"{where}: {what} needs {' and '.join(LANGS)}")


def _bug_rows(path: Path) -> dict[str, tuple[str, str]]:
    """{id: (library, fixed_in)} of data/release_bugs.yml."""
    data = _read(path) or {}
    return {r["id"]: (library, str(r.get("fixed_in"))) for library, rows in data.items()
            for r in rows or [] if isinstance(r, dict) and "id" in r}


def _check_row(library: str, row, where: str, bugs: dict) -> None:
    if not isinstance(row, dict):
        raise ReleaseChangesError(f"{where}: not a mapping")
    prs = row.get("prs")
    if not isinstance(prs, list):
        raise ReleaseChangesError(f"{where}: prs must be a list (empty when none was found)")
    for pr in prs:
        if not (isinstance(pr, dict) and SOURCE.match(str(pr.get("url", "")))
                and str(pr.get("title", "")).strip() and DATE.match(str(pr.get("date", "")))):
            raise ReleaseChangesError(f"{where}: a pull request needs an https address at a pull "
                                      f"request or commit, a title and a date: {pr!r}")
    issue = row.get("issue")
    if issue is not None and not (isinstance(issue, dict) and SOURCE.match(
            str(issue.get("url", ""))) and str(issue.get("title", "")).strip()):
        raise ReleaseChangesError(f"{where}: issue needs an https address and a title")
    if not prs and not issue and row.get("prs_none") not in NONE_WHY["en"]:
        raise ReleaseChangesError(f"{where}: no pull request, no issue, and prs_none does not say "
                                  f"why (one of: {'; '.join(NONE_WHY['en'])})")
    kind = row.get("kind")
    if kind == "internal":
        _bilingual(row.get("what"), where, "an internal change's `what`")
    elif kind == "visible":
        _bilingual(row.get("symptom"), where, "a visible change's symptom")
    else:
        raise ReleaseChangesError(f"{where}: kind must be visible or internal, not {kind!r}")
    message = row.get("message")
    if message is not None and not all(message.strip() in row["symptom"][l] for l in LANGS):
        raise ReleaseChangesError(f"{where}: the message {message!r} is not quoted in the symptom "
                                  "in both languages")
    runs = row.get("run") or []
    if not isinstance(runs, list):
        raise ReleaseChangesError(f"{where}: run must be a list of programs to run")
    for run in runs:
        if not (isinstance(run, dict) and library == "keras" and run.get("backend") in BACKENDS
                and (PROGRAMS / str(run.get("program"))).is_file()
                and ": " in str(run.get("shows", ""))):
            raise ReleaseChangesError(f"{where}: run needs a program of {PROGRAMS.name}/, a Keras "
                                      f"backend ({', '.join(BACKENDS)}) and `shows`, a line it "
                                      "prints (`label: the error`)")
        # the error's own words, without Keras's wrapper ("TypeError: Exception encountered
        # when calling Bidirectional.call(). "), which the symptom may leave out
        error = re.sub(r"^\w+: Exception encountered when calling [\w.]+\(\)\. ", "",
                       run["shows"].split(": ", 1)[1])
        if not all(error in row["symptom"][l] for l in LANGS):
            raise ReleaseChangesError(f"{where}: the error {error!r} that run.shows expects is "
                                      "not quoted in the symptom in both languages")
    for bug in row.get("bugs") or []:
        if bugs.get(bug) != (library, str(row["to"])):
            raise ReleaseChangesError(
                f"{where}: bugs names {bug!r}, which is not a release_bugs.yml row of {library} "
                f"fixed in {row['to']} ({bugs.get(bug)})")


def load(path: Path = CHANGES, files_path: Path = FILES, bugs_path: Path = BUGS) -> dict:
    """{library: rows}, checked (see the module's docstring)."""
    files = load_files(files_path)
    data = _read(path)
    if not isinstance(data, dict):
        raise ReleaseChangesError(f"{Path(path).name}: expected one list of rows per library")
    bugs = _bug_rows(bugs_path)
    out = {}
    for library in files:
        rows = data.get(library) or []
        pairs = {(old, new): names for old, new, names in changed(files[library])}
        seen = set()
        for i, row in enumerate(rows):
            where = f"{Path(path).name}: {library}, row {i + 1}"
            if not isinstance(row, dict) or "from" not in row or "to" not in row:
                raise ReleaseChangesError(f"{where}: needs `from` and `to`")
            old, new = str(row["from"]), str(row["to"])
            where = f"{Path(path).name}: {library} {old} to {new}"
            _v(old, where), _v(new, where)
            if (old, new) not in pairs:
                raise ReleaseChangesError(
                    f"{where}: not two consecutive releases of {Path(files_path).name} whose "
                    "files differ")
            if sorted(row.get("files") or {}) != pairs[(old, new)]:
                raise ReleaseChangesError(f"{where}: files {sorted(row.get('files') or {})} are "
                                          f"not those that differ: {pairs[(old, new)]}")
            _check_row(library, row, where, bugs)
            seen.add((old, new))
        missing = [f"{a} to {b}" for a, b in pairs if (a, b) not in seen]
        if missing:
            raise ReleaseChangesError(f"{Path(path).name}: {library}: no row for the change "
                                      f"between {', '.join(missing)} (run the generator)")
        out[library] = rows
    unknown = set(data) - set(files)
    if unknown:
        raise ReleaseChangesError(f"{Path(path).name}: {sorted(unknown)} have no releases in "
                                  f"{Path(files_path).name}")
    return out


def local_problems(envs: Path = release_files.ENVS, path: Path = CHANGES,
                   files_path: Path = FILES) -> tuple[list[str], list[str]]:
    """(problems, releases checked) for the releases installed here (no network)."""
    files = load_files(files_path)
    rows = _read(path) or {}
    problems, checked = [], []
    installs = release_files.local_installs(envs)
    for library, releases in installs.items():
        known = files.get(library, {})
        for version, site in sorted(releases.items()):
            v = Version(version)
            if v.is_prerelease or v.is_devrelease:
                continue  # a nightly: not a release
            if version not in known:
                if v >= Version(next(iter(known))):  # older than the span: not asked
                    problems.append(f"{library} {version} (installed in {site}) is not in "
                                    f"{Path(files_path).name}: run the generator "
                                    "(release_changes_gen.py, its RANGES reaching it)")
                continue
            here = release_files.hash_folder(library, site)
            if here != known[version]:
                differ = sorted(n for n in set(here) | set(known[version])
                                if here.get(n) != known[version].get(n))
                problems.append(f"{library} {version} (in {site}): files differ from "
                                f"{Path(files_path).name}: {', '.join(differ)}")
            checked.append(f"{library} {version}")
        for row in rows.get(library) or []:
            message, old = row.get("message"), str(row.get("from"))
            if message and old in releases:
                prefix = releases[old] / release_files.LIBRARIES[library]["prefix"]
                texts = [(prefix / n).read_text(encoding="utf-8", errors="replace")
                         for n in known.get(old, {}) if (prefix / n).is_file()]
                if not any(message in t for t in texts):
                    problems.append(f"{library} {old}: the message {message!r} of the row "
                                    f"{old} to {row['to']} is not in that release's code")
    return problems, checked


def _keras_env(envs: Path, release: str, backend: str) -> Path | None:
    python = Path(envs) / f"keras-{release}-{backend}" / "bin" / "python"
    return python if python.is_file() else None


def run_check(row: dict, envs: Path = release_files.ENVS,
              files_path: Path = FILES) -> tuple[list[str], list[str]]:
    """Each of run_one() for a row's programs (`run`): (what ran, problems)."""
    ran, problems = [], []
    for run in row.get("run") or []:
        r, p = run_one(row, run, envs, files_path)
        ran, problems = ran + r, problems + p
    return ran, problems


def run_one(row: dict, run: dict, envs: Path = release_files.ENVS,
            files_path: Path = FILES) -> tuple[list[str], list[str]]:
    """Run one program of a row (`run`) on the CPU in the version matrix's environments, where they
    are here: the old release must print `shows`; the new one (or the first later release built
    here whose recurrent-layer files are the same as the new one's) must run it without. Returns
    (what ran, problems); nothing ran when neither environment is here."""
    files = load_files(files_path)["keras"]
    old, new = str(row["from"]), str(row["to"])
    later = [v for v in files if Version(v) >= Version(new) and files[v] == files[new]]
    ran, problems = [], []
    for release, should in [(old, True)] + [(v, False) for v in later[:]]:
        python = _keras_env(envs, release, run["backend"])
        if python is None:
            continue
        env = dict(os.environ, KERAS_BACKEND=run["backend"], CUDA_VISIBLE_DEVICES="",
                   JAX_PLATFORMS="cpu", TF_CPP_MIN_LOG_LEVEL="3")
        done = subprocess.run([str(python), str(PROGRAMS / run["program"])], env=env,
                              capture_output=True, text=True, timeout=600, cwd=Path(envs))
        lines = done.stdout.splitlines()
        shows = any(line.startswith(run["shows"]) for line in lines)
        ran.append(f"keras {release} ({run['backend']})")
        if done.returncode or not lines:
            problems.append(f"{run['program']} failed in keras {release}: "
                            f"{(done.stderr.strip().splitlines() or ['no output'])[-1]}")
        elif shows != should:
            problems.append(f"keras {release} ({run['backend']}) "
                            f"{'does not print' if should else 'still prints'} {run['shows']!r}")
        if not should:
            break  # the first later release built here answers for the new one
    return ran, problems


_ESCAPE = re.compile(r"([\\`*_{}\[\]()#+!|<>])")


def _cell(text: str) -> str:
    return _ESCAPE.sub(r"\\\1", html.escape(" ".join(str(text).split()), quote=False))


def _aside(markdown: str) -> str:
    """A cell search leaves out (pipeline/pages/search_text.py): a reader pastes a symptom, and
    each language's index stays under its size (tests/site/test_search_index.py)."""
    return f'<span class="release-bugs-aside" data-search-exclude>{markdown}</span>'


def _pr(pr: dict) -> str:
    m = re.search(r"/(pull|issues)/(\d+)$", pr["url"])
    label = f"#{m.group(2)}" if m else pr["url"].rsplit("/", 1)[-1][:10]
    return f"[{label}]({pr['url']}) {_cell(pr['title'])}" + (
        f" ({pr['date']})" if pr.get("date") else "")


def _pypi(library: str, release: str) -> str:
    dist = release_files.LIBRARIES[library]["distribution"]
    return f"[{dist} {release}](https://pypi.org/project/{dist}/{release}/)"


def table(library: str, rows: list[dict], lang: str) -> str:
    w = WORDS[lang]
    head = (w["releases"], w["saw"], w["move"], w["files"], w["prs"])
    out = ["| " + " | ".join(_aside(h) for h in head) + " |", "|---|---|---|---|---|"]
    for row in rows:
        files = "; ".join(f"`{n}` {_cell(s)}" for n, s in row["files"].items())
        sources = [_pr(p) for p in row["prs"]]
        if row.get("issue"):
            sources.append(f"{w['issue']}: [#{row['issue']['url'].rsplit('/', 1)[-1]}]"
                           f"({row['issue']['url']}) {_cell(row['issue']['title'])}")
        if not sources:
            sources.append(_cell(w["none"].format(why=NONE_WHY[lang][row["prs_none"]])))
        sources.append(f"{w['wheels']}: {_pypi(library, row['from'])}, {_pypi(library, row['to'])}")
        if row["kind"] == "visible":
            saw = _cell(row["symptom"][lang]) + (f" {_aside('(' + w['bug'] + ')')}"
                                                 if row.get("bugs") else "")
            move = _cell(row["to"])
        else:
            saw, move = _aside(_cell(row["what"][lang])), _aside(w["internal"])
        out.append("| " + " | ".join([_aside(_cell(f"{row['from']} → {row['to']}")), saw, move,
                                      _aside(files), _aside("<br>".join(sources))]) + " |")
    return "\n".join(out)


def render(markdown: str, lang: str, root: Path) -> tuple[str, list[str]]:
    """The page with each marker replaced by that library's table; ([], problems) style of the
    generated-sections hook: the problems list names what fails."""
    if not MARKER.search(markdown):
        return markdown, []
    data = root / "data"
    try:
        libraries = load(data / "release_changes.yml", data / "release_files.yml",
                         data / "release_bugs.yml")
    except ReleaseChangesError as e:
        return markdown, [str(e)]
    problems = []

    def replace(m: re.Match) -> str:
        if m.group(1) not in libraries:
            problems.append(f"<!-- release-changes: {m.group(1)} -->: no such library "
                            f"({', '.join(libraries)})")
            return m.group(0)
        return table(m.group(1), libraries[m.group(1)], lang)

    return MARKER.sub(replace, markdown), problems
