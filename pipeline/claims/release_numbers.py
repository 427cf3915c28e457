"""Release numbers typed on a page: each one comes from the records, names the release installed
here, or sits next to its source. The strict build fails on any other, naming page, line and
number (CONTRIBUTING.md, "Release numbers").

What counts as a release number: a number with at least one dot (2.21, 3.15.1, 9.24.0.43,
1.5.0rc0) in a page's prose: paragraphs, list items, table cells, headings, admonition and tab
titles, diagram labels, and inline code after a version operator (`tensorflow==2.21.0`,
`>=9.3.0.75`). Not a release number: a number followed by a unit (1.5x, 7.8×, 0.3 s, 75 %,
150 MB), a number with a zero-led part (0.05, 0.0235: no release is written so), and a compute
capability (compute capability 8.0). Code blocks and what the build puts into a page (a
snippet's output, the markers' text) are not typed, so never checked.

Backed when, in this order:
1. it names the release installed here: the library's name stands right before it (or before the
   list it is in: "PyTorch 2.13 and 2.14.1" names PyTorch twice), and that library's installed
   version starts with it (TensorFlow 2.21 for 2.21.0). The check reads the installed packages,
   so the build fails when a pin moves and the sentence was not re-checked;
2. its block links another site: the thread, changelog, release, commit or source file it comes
   from (see pipeline/claims/prose.py for a block's scope: a heading's is its section, a table row's
   the row and the table's caption paragraph).
A release drawn from the records is not typed at all: <!-- since: ... --> and the other markers
of pipeline/claims/version_claims.py render it.
"""
from __future__ import annotations

import importlib.metadata
import re
import sys
from functools import lru_cache

from pipeline.claims import prose

VERSION = r"\d+(?:\.\d+)+(?:(?:a|b|rc|alpha|beta|\.dev|\.post)\d*)?\+?"
NUMBER = re.compile(rf"(?<![\w.,#])({VERSION})(?![\w]|\.\d)")
UNIT = re.compile(r"\s?(?:×|x\b|%|\s?(?:s|ms|µs|us|ns|GB|GiB|MB|MiB|KB|kB|TB|px|pt|seconds?|"
                  r"segundos?|times|veces|minutes?|minutos?|hours?|horas?)\b)")
# compute capability 8.0 is a GPU's, not a release
NOT_RELEASE_BEFORE = re.compile(r"(?:compute capability|capacidad de cómputo|capability)\s*(?:of\s*|de\s*)?$",
                                re.I)
# A version operator in inline code: tensorflow==2.21.0, >=9.3.0.75
CODE_SPAN = re.compile(r"`([^`\n]+)`")
PINNED = re.compile(rf"(?:==|>=|<=|~=|!=|<|>)\s*({VERSION})")
# The library a name stands for, and the distributions that hold its installed version.
LIBRARIES = {
    "keras": ("keras",), "tf-keras": ("tf-keras", "tf_keras"), "tf_keras": ("tf-keras", "tf_keras"),
    "tensorflow": ("tensorflow",), "tf": ("tensorflow",), "jax": ("jax",), "jaxlib": ("jaxlib",),
    "pytorch": ("torch",), "torch": ("torch",), "triton": ("triton",),
    "cudnn": ("nvidia-cudnn-cu12", "nvidia-cudnn-cu13"),
    "nvidia-cudnn-cu12": ("nvidia-cudnn-cu12",), "nvidia-cudnn-cu13": ("nvidia-cudnn-cu13",),
    "cudnn-frontend": ("nvidia-cudnn-frontend",), "tf2onnx": ("tf2onnx",), "onnx": ("onnx",),
    "numpy": ("numpy",), "mkdocs": ("mkdocs",), "python": ("python",),
}
NAME = re.compile(r"(?<![\w-])(" + "|".join(sorted(map(re.escape, LIBRARIES), key=len, reverse=True))
                  + r")`?(?:'s)?(?:\s*\((?:exactly|exactamente)\s+)?\s*(?:version\s+|versión\s+|v|==|>=|≥|\s)*$",
                  re.I)
# Joins a release to the one before it in a list: "2.13 and 2.14.1", "3.10 to 3.13", "3.9–3.12"
LIST_JOIN = re.compile(r"^\s*(?:,|,?\s*and|,?\s*or|to|y|o|a|e|–|-|/|through)\s*$", re.I)


@lru_cache(maxsize=None)
def installed(distribution: str) -> str | None:
    if distribution == "python":
        return ".".join(map(str, sys.version_info[:3]))
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _parts(version: str) -> list[str]:
    return re.findall(r"\d+|[a-z]+", version.split("+")[0].lower())


def names_installed(library: str, version: str) -> bool:
    """True when an installed distribution of `library` has a version that starts with
    `version` part by part (2.21 matches 2.21.0; 2.2 does not match 2.21.0)."""
    want = _parts(version.rstrip("+"))
    for dist in LIBRARIES[library.lower()]:
        have = installed(dist)
        if have and _parts(have)[:len(want)] == want:
            return True
    return False


def releases(text: str) -> list[tuple[int, str, str | None]]:
    """(offset, number, library named before it or None) for each release number in a block's
    text (see the module's docstring for what counts)."""
    text = prose.plain(text)
    found: list[tuple[int, str, str | None]] = []
    spans = [(m.start(), m.end()) for m in CODE_SPAN.finditer(text)]
    in_code = lambda pos: any(a <= pos < b for a, b in spans)  # noqa: E731
    last: tuple[int, str | None] | None = None  # end of the previous release, its library
    for m in NUMBER.finditer(text):
        start, number = m.start(1), m.group(1)
        if in_code(start):
            continue
        if UNIT.match(text, m.end(1)) or re.search(r"\.0\d", "." + number.split(".", 1)[1]) \
                or NOT_RELEASE_BEFORE.search(text[max(0, start - 40):start]):
            last = None
            continue
        before = text[max(0, start - 40):start]
        named = NAME.search(before)
        library = named.group(1).lower() if named else None
        if library is None and last is not None and LIST_JOIN.match(text[last[0]:start]):
            library = last[1]
        found.append((start, number, library))
        last = (m.end(1), library)
    for span in CODE_SPAN.finditer(text):
        for m in PINNED.finditer(span.group(1)):
            name = re.search(r"([\w.-]+)\s*(?:\[[^\]]*\])?\s*$", span.group(1)[:m.start()])
            library = name.group(1).lower() if name and name.group(1).lower() in LIBRARIES else None
            found.append((span.start(1) + m.start(1), m.group(1), library))
    return sorted(found)


def check(markdown: str, where: str) -> list[str]:
    """One line per block that holds release numbers nothing backs: page, line, the numbers,
    and what to do."""
    problems = []
    for block in prose.blocks(markdown):
        linked = bool(block.links())
        bad = [(offset, number, library) for offset, number, library in releases(block.text)
               if not (library and names_installed(library, number)) and not linked]
        if not bad:
            continue
        line = block.line + prose.plain(block.text)[:bad[0][0]].count("\n")
        numbers = ", ".join(f"{lib} {n}" if lib else n for _, n, lib in bad)
        here = sorted({f"{lib} {v}" for _, _, lib in bad if lib
                       for d in LIBRARIES[lib] if (v := installed(d))})
        problems.append(
            f"{where}:{line}: release number(s) typed with nothing behind them: {numbers}. Draw "
            f"them from the records (<!-- since: ... -->, <!-- releases: ... -->), or link the "
            f"thread, changelog or source they come from in the same "
            f"{'section' if block.kind == 'heading' else 'block'}"
            + (f" (installed here: {', '.join(here)})" if here else ""))
    return problems
