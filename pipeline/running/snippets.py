"""Find the snippets under snippets/ and read what each one declares about how it runs."""
from __future__ import annotations

import ast
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

RUNNABLE_SUFFIXES = (".py", ".c")
DEFAULT_TIMEOUT = 300.0
# `# snippet: timeout=120 needs=gpu exclusive` (or `// snippet: ...` in C); `matrix`: run only by
# the version matrix (pipeline/records/versions.py), in each release's environment, never by the build;
# `fresh`: always in a fresh Python, never forked from one that imported its frameworks ahead
# (pipeline/running/warm.py), for a snippet about Python's own start-up
_HEADER = re.compile(r"^\s*(?:#|//)\s*snippet:(.*)$")


# The runner parses programs in its threads (pipeline/running/warm.py, program.py). CPython 3.11
# builds an AST's Python objects with a counter it does not keep per thread, and two parses at
# once can raise a spurious "SystemError: AST constructor recursion depth mismatch"
# (python/cpython#106905): one parse at a time.
_PARSE = threading.Lock()


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """ast.parse, one thread at a time."""
    with _PARSE:
        return ast.parse(source, filename=filename)


class SnippetError(ValueError):
    """A snippet's header is malformed."""


@dataclass(frozen=True)
class Snippet:
    path: Path  # absolute
    rel: str  # relative to the snippets root, with forward slashes: how pages name it
    timeout: float = DEFAULT_TIMEOUT
    needs_gpu: bool = False
    exclusive: bool = False
    matrix: bool = False
    fresh: bool = False
    helpers: tuple[Path, ...] = field(default_factory=tuple)  # local files it depends on

    @property
    def kind(self) -> str:
        return self.path.suffix.lstrip(".")

    @property
    def root(self) -> Path:
        """The snippets folder it was found in."""
        return self.path.parents[len(Path(self.rel).parts) - 1]


def parse_header(text: str, rel: str) -> dict:
    """Read the `snippet:` line (first 30 lines only)."""
    opts: dict = {"timeout": DEFAULT_TIMEOUT, "needs_gpu": False, "exclusive": False,
                  "matrix": False, "fresh": False}
    for line in text.splitlines()[:30]:
        m = _HEADER.match(line)
        if not m:
            continue
        for word in m.group(1).split():
            key, _, value = word.partition("=")
            if key == "timeout":
                try:
                    opts["timeout"] = float(value)
                except ValueError:
                    raise SnippetError(f"{rel}: timeout must be a number of seconds, got {value!r}")
                if opts["timeout"] <= 0:
                    raise SnippetError(f"{rel}: timeout must be positive")
            elif key == "needs" and value == "gpu":
                opts["needs_gpu"] = True
            elif key == "exclusive" and not value:
                opts["exclusive"] = True
            elif key == "matrix" and not value:
                opts["matrix"] = True
            elif key == "fresh" and not value:
                opts["fresh"] = True
            else:
                raise SnippetError(f"{rel}: unknown snippet option {word!r}")
        break
    return opts


# A file's top-level module names, remembered while the file is unchanged (its size and mtime):
# every build reads every snippet's helpers several times (the runner, the records, the version
# matrix, each language), and `make serve` keeps this process across rebuilds.
_IMPORTS: dict[Path, tuple[tuple[int, int], frozenset[str]]] = {}


def _stat_key(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def imported_names(path: Path) -> frozenset[str]:
    """The top-level names a Python file imports (`import a.b`, `from a import b`: "a");
    nothing for a file that does not parse (the run reports it)."""
    key = _stat_key(path)
    known = _IMPORTS.get(path)
    if known and known[0] == key:
        return known[1]
    try:
        tree = parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError:
        names: frozenset[str] = frozenset()
    else:
        found = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module.split(".")[0])
        names = frozenset(found)
    _IMPORTS[path] = (key, names)
    return names


def _python_helpers(path: Path, root: Path, seen: set[Path]) -> None:
    """Local modules a Python file imports from its own folder or the snippets root (where
    shared files such as cudnn_check.py live), followed transitively."""
    for name in sorted(imported_names(path)):
        for candidate in (path.parent / f"{name}.py", root / f"{name}.py"):
            if candidate.is_file():
                if candidate not in seen:
                    seen.add(candidate)
                    _python_helpers(candidate, root, seen)
                break


def _c_helpers(path: Path) -> set[Path]:
    """A C snippet depends on its folder's Makefile and headers."""
    folder = path.parent
    found = {p for p in folder.glob("*.h")}
    for name in ("Makefile", "CMakeLists.txt"):
        if (folder / name).is_file():
            found.add(folder / name)
    return found


def load(path: Path, root: Path) -> Snippet:
    path = path.resolve()
    rel = path.relative_to(root.resolve()).as_posix()
    opts = parse_header(path.read_text(encoding="utf-8", errors="replace"), rel)
    if path.suffix == ".py":
        seen: set[Path] = set()
        _python_helpers(path, root.resolve(), seen)
        helpers = seen
    else:
        helpers = _c_helpers(path)
    helpers.discard(path)
    return Snippet(path=path, rel=rel, helpers=tuple(sorted(helpers)), **opts)


def is_runnable(path: Path, root: Path) -> bool:
    parts = path.relative_to(root).parts
    return (
        path.suffix in RUNNABLE_SUFFIXES
        and path.is_file()
        and not any(p.startswith(("_", ".")) for p in parts)
    )


def discover(root: Path) -> list[Snippet]:
    root = root.resolve()
    return [load(p, root) for p in sorted(root.rglob("*")) if is_runnable(p, root)]
