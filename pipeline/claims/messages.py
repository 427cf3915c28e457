"""Messages the pages quote as a library's own text: data/messages.yml, checked at build.

Each entry is the exact text and one backing, which the build checks (CONTRIBUTING.md,
"Quoted messages"):

  in:      {package: tensorflow, files: [libtensorflow_framework.so.2]}
           the installed package's files hold the text: the string constants of a Python
           file, the bytes of any other file (a compiled library's strings)
  output:  troubleshooting/reproduce.py
           this build's run of that snippet printed it
  record:  {backend: torch, case: lstm_cudnn_body}
           a release of the version matrix (results/versions/) printed it for that case;
           <!-- message-releases: ID --> then names those releases. Backend `pytorch`: the
           PyTorch releases run (nn.LSTM itself, snippets/versions/torch_rnn.py)
  quoted:  {url: https://github.com/OWNER/REPO/issues/N, release: "jaxlib 0.4.30"}
           seen only in that thread (or a source file at that release): the page shows it as
           quoted from there, with the release, and links the thread

Where the library fills something in (a version, a layer's name), `parts` lists the pieces of
`text` it writes as they are, in order; the check looks for each piece.

In a page:
  <!-- message: ID -->          the message as a text block, titled with where it comes from
  <!-- message-releases: ID --> for a `record` message, the releases that printed it: "3.10 to 3.13"
and any text in double quotes (or a > blockquote) of four words or more is a quotation: the
build fails unless it is (a part of) a message here, the site's own words, or its block links
the source it quotes; a quote whose source is an issue thread also names the release it was
seen with (or the date of the comment it quotes), in the same block.
"""
from __future__ import annotations

import ast
import importlib.util
import json
import mmap
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from pipeline.claims import prose
from pipeline.running import yaml_load

MARKER = re.compile(r"<!--\s*message:\s*([\w-]+)\s*-->")
RELEASES_MARKER = re.compile(r"<!--\s*message-releases:\s*([\w-]+)\s*-->")
BACKINGS = ("in", "output", "record", "quoted")
QUOTE = re.compile(r'"([^"]+)"|“([^”]+)”|«([^»]+)»')
DATE = re.compile(r"\b(?:19|20)\d\d-\d\d-\d\d\b")
MIN_WORDS = 4
ELLIPSIS = re.compile(r"\s*(?:…|\.\.\.)\s*")
ISSUE = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/issues/\d+")

WORDS = {
    "en": {"in": "In {library} {version}, installed here",
           "output": "Printed by {snippet}, as run here",
           "record": "Printed by Keras {releases} on {backend}, as run here",
           "record_pytorch": "Printed by PyTorch {releases}, as run here",
           "record_nightly": "Printed by {releases} on {backend}, as run here",
           "and": "and",
           "quoted": "Quoted from {source}, {release}"},
    "es": {"in": "En {library} {version}, instalado aquí",
           "output": "Impreso por {snippet}, ejecutado aquí",
           "record": "Impreso por Keras {releases} con {backend}, ejecutado aquí",
           "record_pytorch": "Impreso por PyTorch {releases}, ejecutado aquí",
           "record_nightly": "Impreso por {releases} con {backend}, ejecutado aquí",
           "and": "y",
           "quoted": "Citado de {source}, {release}"},
}
# How a page names an installed package, and the distribution that holds its version.
LIBRARIES = {"tensorflow": ("TensorFlow", "tensorflow"), "keras": ("Keras", "keras"),
             "tf_keras": ("tf-keras", "tf-keras"), "torch": ("PyTorch", "torch"),
             "jax": ("JAX", "jax"), "jaxlib": ("jaxlib", "jaxlib"),
             "tf2onnx": ("tf2onnx", "tf2onnx"), "nvidia.cudnn": ("cuDNN", "nvidia-cudnn-cu12")}
BACKEND_NAMES = {"tensorflow": "TensorFlow", "jax": "JAX", "torch": "PyTorch"}


class MessageError(ValueError):
    """A message or a quotation that nothing backs: the text says which and why."""


@dataclass
class Message:
    id: str
    text: str
    backing: str
    detail: object
    parts: list[str] = field(default_factory=list)

    def fragments(self) -> list[str]:
        """What the check looks for: the parts the library writes as they are, or the text."""
        return self.parts or [self.text]


def load(path: Path) -> dict[str, Message]:
    """The registry, checked for shape (not yet against the libraries): {} when absent."""
    if not path.is_file():
        return {}
    try:
        raw = yaml_load.load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as e:
        raise MessageError(f"{path.name}: not readable YAML ({e})")
    if not isinstance(raw, dict):
        raise MessageError(f"{path.name}: expected a mapping of message ids")
    found = {}
    for mid, entry in raw.items():
        where = f"{path.name}, {mid}"
        if not re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", str(mid)):
            raise MessageError(f"{where}: an id is lowercase words and digits joined by dashes")
        if not (isinstance(entry, dict) and isinstance(entry.get("text"), str) and entry["text"]):
            raise MessageError(f"{where}: needs `text`")
        kinds = [k for k in BACKINGS if k in entry]
        if len(kinds) != 1:
            raise MessageError(f"{where}: needs exactly one of {', '.join(BACKINGS)}; has "
                               f"{', '.join(kinds) or 'none'}")
        kind, detail = kinds[0], entry[kinds[0]]
        if kind == "in" and not (isinstance(detail, dict) and detail.get("package")
                                 and isinstance(detail.get("files"), list) and detail["files"]):
            raise MessageError(f"{where}: `in` needs a package and a list of files")
        if kind == "output" and not isinstance(detail, str):
            raise MessageError(f"{where}: `output` is a snippet's path under snippets/")
        if kind == "record" and not (isinstance(detail, dict) and detail.get("backend")
                                     and detail.get("case")):
            raise MessageError(f"{where}: `record` needs a backend and a case")
        if kind == "quoted" and not (isinstance(detail, dict)
                                     and str(detail.get("url", "")).startswith("https://")
                                     and str(detail.get("release", "")).strip()):
            raise MessageError(f"{where}: `quoted` needs the https url of the thread or source, "
                               f"and the release it was seen with")
        parts = entry.get("parts") or []
        if not (isinstance(parts, list) and all(isinstance(p, str) and p for p in parts)):
            raise MessageError(f"{where}: `parts` is a list of pieces of the text")
        text, at = entry["text"].rstrip("\n"), 0
        for part in parts:  # pieces of the text, in order: the check never looks for other words
            found_at = text.find(part, at)
            if found_at < 0:
                raise MessageError(f"{where}: part {part!r} is not in the text (after the parts "
                                   f"before it)")
            at = found_at + len(part)
        found[mid] = Message(mid, text, kind, detail, parts)
    return found


# ------------------------------------------------------------------ the backings

def package_folder(name: str) -> Path | None:
    """An installed package's folder, without importing it (TensorFlow rewrites its __path__)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.origin and spec.origin.endswith("__init__.py"):
        return Path(spec.origin).parent
    locations = list(spec.submodule_search_locations or [])
    return Path(locations[0]) if locations else None


def python_strings(path: Path) -> list[str]:
    """Every string constant in a Python file (adjacent literals joined, as the parser does)."""
    tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


# Answers of FileSearch, kept while the file is unchanged (size and mtime): `make serve` keeps
# this process across rebuilds, and the libraries searched (hundreds of MB) do not change.
_KNOWN: dict[tuple[Path, tuple[int, int], str], bool] = {}
_STRINGS: dict[tuple[Path, tuple[int, int]], list[str]] = {}


_PATTERNS: dict[str, re.Pattern] = {}  # site_words' patterns: both languages share most


def _kept_strings(path: Path, stat: tuple[int, int] | None = None) -> list[str]:
    if stat is None:
        st = path.stat()
        stat = (st.st_size, st.st_mtime_ns)
    if (path, stat) not in _STRINGS:
        _STRINGS[path, stat] = python_strings(path)
    return _STRINGS[path, stat]


class FileSearch:
    """Whether a file holds a text, each answer remembered (both languages ask, and every
    rebuild of `make serve` asks again)."""

    def holds(self, path: Path, text: str) -> bool:
        st = path.stat()
        stat = (st.st_size, st.st_mtime_ns)
        key = (path, stat, text)
        if key not in _KNOWN:
            if path.suffix == ".py":
                _KNOWN[key] = any(text in s for s in _kept_strings(path, stat))
            else:
                with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
                    _KNOWN[key] = m.find(text.encode()) != -1
        return _KNOWN[key]


def installed_version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version
    dist = LIBRARIES.get(package, (package, package))[1]
    try:
        return version(dist)
    except PackageNotFoundError:
        return ""


def check_in(msg: Message, search: FileSearch) -> str:
    """'' when every fragment is in the listed files of the installed package, else why not."""
    folder = package_folder(msg.detail["package"])
    if folder is None:
        return f"package {msg.detail['package']!r} is not installed"
    files = [p for pattern in msg.detail["files"] for p in sorted(folder.glob(pattern)) if p.is_file()]
    if not files:
        return f"no file {msg.detail['files']} in the installed {msg.detail['package']} ({folder})"
    for frag in msg.fragments():
        if not any(search.holds(p, frag) for p in files):
            return (f"the installed {msg.detail['package']} "
                    f"{installed_version(msg.detail['package'])} does not contain {frag!r} "
                    f"(looked in {', '.join(p.name for p in files)})")
    return ""


def check_output(msg: Message, outputs: dict[str, str]) -> str:
    rel = msg.detail
    if rel not in outputs:
        return f"snippet {rel} has no output in this build (not run here, or it failed)"
    for frag in msg.fragments():
        if frag not in outputs[rel]:
            return f"{rel} did not print {frag!r} in this build"
    return ""


def matrix_runs(runs, backend: str, case: str | None = None, nightly: bool = False) -> list:
    """The releases of the version matrix a `record` message's backend names, oldest first:
    Keras's on that backend whose records ask `case` (the cases, or another snippet's), or
    PyTorch's (`pytorch`). `nightly`: the keras-nightly runs instead, never counted as
    releases."""
    if backend == "pytorch":
        return [] if nightly else [r for r in runs if r.library == "torch"]
    return [r for r in runs if r.backend == backend and r.library in ("keras", "tf-keras")
            and bool(r.nightly) == nightly and (case is None or case in r.cases)]


def record_runs(msg: Message, runs, nightly: bool | None = None) -> list:
    """The runs of the version matrix whose record of the case printed the message: releases
    and nightlies (`nightly` None), or only one of the two."""
    frags = msg.fragments()
    found = []
    chosen = [r for n in ((False, True) if nightly is None else (nightly,))
              for r in matrix_runs(runs, msg.detail["backend"], msg.detail["case"], n)]
    for run in chosen:
        said = json.dumps(run.cases.get(msg.detail["case"], {}), ensure_ascii=False)
        if all(json.dumps(f, ensure_ascii=False)[1:-1] in said for f in frags):
            found.append(run)
    return found


def check(msg: Message, search: FileSearch, outputs: dict[str, str], runs) -> str:
    """'' when the message's backing holds in this build, else one line saying why not."""
    if msg.backing == "in":
        return check_in(msg, search)
    if msg.backing == "output":
        return check_output(msg, outputs)
    if msg.backing == "record":
        return "" if record_runs(msg, runs) else (
            f"no release of the version matrix printed it for {msg.detail['backend']} "
            f"{msg.detail['case']} (results/versions/)")
    return ""  # quoted: its shape was checked by load(); the page must link it (render)


# ------------------------------------------------------------------ in a page

def source_name(url: str) -> str:
    m = re.match(r"https://github\.com/([\w.-]+/[\w.-]+)/(?:issues|pull|discussions)/(\d+)", url)
    return f"{m.group(1)}#{m.group(2)}" if m else re.sub(r"^https://", "", url)


def title(msg: Message, lang: str, runs) -> str:
    w = WORDS.get(lang, WORDS["en"])
    if msg.backing == "in":
        package = msg.detail["package"]
        return w["in"].format(library=LIBRARIES.get(package, (package,))[0],
                              version=installed_version(package))
    if msg.backing == "output":
        # the program as a reader saves it: the runner saves it under its file's name
        return w["output"].format(snippet=Path(msg.detail).name)
    if msg.backing == "record" and msg.detail["backend"] == "pytorch":
        return w["record_pytorch"].format(releases=release_text(msg, runs, lang))
    if msg.backing == "record" and not record_runs(msg, runs, nightly=False):
        return w["record_nightly"].format(releases=release_text(msg, runs, lang),
                                          backend=BACKEND_NAMES.get(msg.detail["backend"],
                                                                    msg.detail["backend"]))
    if msg.backing == "record":
        return w["record"].format(releases=release_text(msg, runs, lang),
                                  backend=BACKEND_NAMES.get(msg.detail["backend"],
                                                            msg.detail["backend"]))
    return w["quoted"].format(source=source_name(msg.detail["url"]), release=msg.detail["release"])


def release_text(msg: Message, runs, lang: str) -> str:
    from pipeline.claims.version_claims import runs_of, run_name, WORDS as VWORDS
    every = matrix_runs(runs, msg.detail["backend"], msg.detail["case"])
    hits = {id(r) for r in record_runs(msg, runs, nightly=False)}
    nightlies = sorted({run_name(r, lang) for r in record_runs(msg, runs, nightly=True)})
    spans = runs_of([id(r) in hits for r in every])

    def short(i: int) -> str:  # 3.13 for 3.13.2, as the versions table names a release
        if msg.detail["backend"] == "pytorch":  # PyTorch's table names the whole release
            return every[i].version.split("+")[0]
        return ".".join(every[i].version.split(".")[:2])
    to = VWORDS.get(lang, VWORDS["en"])["to"]
    stale = "*" if any(every[i].stale for a, b in spans for i in range(a, b + 1)) else ""
    text = ", ".join(short(a) if a == b else f"{short(a)} {to} {short(b)}"
                     for a, b in spans) + stale  # * as pipeline/claims/version_claims.py marks it
    if nightlies:  # a nightly is named by its date, after the releases, never as one
        w = WORDS.get(lang, WORDS["en"])
        text = f" {w['and']} ".join(([text] if text else []) + [", ".join(nightlies)])
    return text


def block(msg: Message, lang: str, runs) -> str:
    ticks = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", msg.text)), default=0))
    shown = msg.text
    return f'{ticks} {{ .text .message title="{title(msg, lang, runs).replace(chr(34), chr(39))}" }}\n{shown}\n{ticks}'


def render(markdown: str, registry: dict[str, Message], lang: str, runs, where: str) -> tuple[str, list[str]]:
    """The page with its message markers replaced, and the problems found in them."""
    problems = []

    def one(m: re.Match) -> str:
        msg = registry.get(m.group(1))
        if msg is None:
            problems.append(f"{where}: <!-- message: {m.group(1)} --> names no message in "
                            f"data/messages.yml")
            return m.group(0)
        if msg.backing == "quoted" and msg.detail["url"] not in markdown:
            problems.append(f"{where}: message {msg.id} is quoted from {msg.detail['url']}, "
                            f"which the page does not link")
        indent = markdown[markdown.rfind("\n", 0, m.start()) + 1:m.start()]
        text = block(msg, lang, runs)
        return text.replace("\n", "\n" + indent) if indent and not indent.strip() else text

    def releases(m: re.Match) -> str:
        msg = registry.get(m.group(1))
        if msg is None or msg.backing != "record":
            problems.append(f"{where}: <!-- message-releases: {m.group(1)} --> needs a message "
                            f"with a `record` backing in data/messages.yml")
            return m.group(0)
        return release_text(msg, runs, lang)

    markdown = MARKER.sub(one, markdown)
    markdown = RELEASES_MARKER.sub(releases, markdown)
    for bad in re.findall(r"<!--\s*message[^>]*-->", markdown):  # a marker the patterns missed
        problems.append(f"{where}: {bad} is not a message marker: <!-- message: ID --> or "
                        f"<!-- message-releases: ID -->, ID in lowercase words and dashes")
    return markdown, problems


def used(markdown: str) -> set[str]:
    return set(MARKER.findall(markdown)) | set(RELEASES_MARKER.findall(markdown))


# ------------------------------------------------------------------ quotations in prose

def _normal(text: str) -> str:
    text = re.sub(r"[`*\[\]]", "", text)
    return re.sub(r"\s+", " ", text).strip()


def quotations(block: prose.Block) -> list[tuple[int, str]]:
    """(offset in the block's plain text, quoted text) of four words or more."""
    text = prose.plain(block.text)
    if block.kind == "quote":
        body = re.sub(r"^\s*>\s?", "", text, flags=re.M)
        return [(0, body)] if len(_normal(body).split()) >= MIN_WORDS else []
    # inside code spans a double quote is code, not a quotation
    masked = re.sub(r"`[^`\n]*`", lambda m: m.group(0).replace('"', "'"), text)
    found = []
    for m in QUOTE.finditer(masked):
        inner = text[m.start() + 1:m.end() - 1]
        if len(_normal(inner).split()) >= MIN_WORDS:
            found.append((m.start(), inner))
    return found


def matches(quote: str, msg: Message) -> bool:
    """True when the quote is the message or parts of it, in order ("…" between parts)."""
    text, pos = _normal(msg.text), 0
    for part in ELLIPSIS.split(_normal(quote)):
        part = part.strip(" .,:;")
        if not part:
            continue
        at = text.find(part, pos)
        if at < 0:
            return False
        pos = at + len(part)
    return True


def site_words(root: Path, extra: list[str]) -> list[tuple[str, re.Pattern]]:
    """The site's own words a page may quote (a box's title, a chart's note, the checker's
    verdicts): the string constants of pipeline/*.py and snippets/cudnn_check.py and the texts of
    the languages' configuration. Each as (its text, a pattern where a {placeholder} stands for
    any text)."""
    found = list(extra)
    for path in sorted((root / "pipeline").rglob("*.py")) + [root / "snippets" / "cudnn_check.py"]:
        if path.is_file():
            found += _kept_strings(path)
    words = []
    for text in found:
        if not isinstance(text, str):
            continue
        pieces = re.split(r"\{[^{}\s]*\}", _normal(text))
        if len(" ".join(pieces).split()) >= 2:  # not a bare format such as "{}: {}"
            pattern = ".+?".join(map(re.escape, pieces))
            if pattern not in _PATTERNS:  # more than re's own cache holds
                _PATTERNS[pattern] = re.compile(pattern)
            words.append((" … ".join(pieces), _PATTERNS[pattern]))
    return words


def is_site_words(quote: str, own: list[tuple[str, re.Pattern]]) -> bool:
    """True when the quote is the site's own words: a part of one of them ("…" where a value
    goes), or one of them with its values filled in."""
    norm = _normal(quote).strip(" .")
    return any(norm in text or pattern.fullmatch(norm) for text, pattern in own)


def _source_of(block: prose.Block, quote: str) -> str | None:
    """The link a quotation cites: the first one after it in its block, else the last before."""
    links = [(m.start(), m.group(1) or m.group(2)) for m in prose.EXTERNAL_LINK.finditer(block.scope)]
    if not links:
        return None
    at = block.scope.find(quote.strip()[:15])
    after = [url for pos, url in links if pos >= at]
    return after[0] if after else links[-1][1]


def check_quotes(markdown: str, where: str, registry: dict[str, Message], own: list[str]) -> list[str]:
    from pipeline.claims.release_numbers import releases as release_numbers
    problems = []
    for block in prose.blocks(markdown):
        for offset, quote in quotations(block):
            norm = _normal(quote)
            hit = next((m for m in registry.values() if matches(quote, m)), None)
            if hit is not None:
                if hit.backing == "quoted" and hit.detail["url"] not in markdown:
                    problems.append(f"{where}:{block.line}: \"{norm[:60]}\" is message {hit.id}, "
                                    f"seen only in {hit.detail['url']}: link that thread on the page")
                continue
            if is_site_words(quote, own):
                continue
            source = _source_of(block, quote)
            if source is None:
                problems.append(
                    f"{where}:{block.line}: the quotation \"{norm[:70]}\" has nothing behind it: "
                    f"if it is a library's message, add it to data/messages.yml (checked against "
                    f"the library) and show it with <!-- message: ID -->; if it quotes a thread "
                    f"or a document, link it in the same block")
            elif ISSUE.match(source) and not (release_numbers(block.scope)
                                              or DATE.search(block.scope)):
                problems.append(
                    f"{where}:{block.line}: the quotation \"{norm[:70]}\" is from the thread "
                    f"{source}: name the release it was seen with (or the comment's date) in the "
                    f"same block")
    return problems
