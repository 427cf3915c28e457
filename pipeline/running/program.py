"""A snippet as the program a reader copies: one file that runs on its own in an empty folder.

A snippet may import helpers that sit beside it (`from _pretend_gpu import pretend_gpu`,
`import _bench`) or the checker at the root of snippets/ (`cudnn_check`). Copied alone, those
imports fail. The program is the snippet with each such import replaced by the helper's own
code, written out once where it is first imported (a helper's helpers the same way), and
without the lines only the repository needs: the `# snippet:` line the runner reads, the
section markers and the `sys.path` lines that find the helpers.

    `from helper import a, b as c`   the helper's code, then `c = b`
    `import helper as h`             the helper's code, then `h = sys.modules[__name__]`: its
                                     names are the program's own, so `h.name` still works

The runner executes exactly this text (pipeline/running/runner.py) and the copy button copies exactly
it (pipeline/pages/hooks/build.py): the output a page shows is what the copy prints.

`listing()` is the same program with the helpers' imports left as they are: what a page shows
of it, with the lines of each section named.
"""
from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.running.snippets import parse, Snippet, SnippetError

MARKER = re.compile(r"^[ \t]*# -+8<-+ \[(start|end):([\w-]+)\][ \t]*$")
HEADER = re.compile(r"^[ \t]*#\s*snippet:")


class ProgramError(SnippetError):
    """A snippet cannot become one program (a name defined twice, an import it cannot place)."""


@dataclass
class Program:
    text: str  # what runs and what the copy button copies
    listing: str  # the same with helper imports kept: what a page shows
    sections: dict[str, tuple[int, int]]  # section name -> (first, last) line of `listing`, 1-based
    helpers: list[tuple[str, int]] = field(default_factory=list)  # (file name, lines) written out
    files: list[Path] = field(default_factory=list)  # every file it was made from


def _local(name: str, folder: Path, root: Path) -> Path | None:
    """The file a top-level module name stands for: beside the importer, else at the root of
    snippets/ (as pipeline/running/snippets.py finds helpers)."""
    for candidate in (folder / f"{name}.py", root / f"{name}.py"):
        if candidate.is_file():
            return candidate
    return None


def _is_sys_path(node: ast.stmt) -> bool:
    """`sys.path.insert(...)` or `sys.path.append(...)`: how a file finds its helpers."""
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
            and ast.unparse(node.value.func.value) == "sys.path")


def _is_main_guard(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and ast.unparse(node.test) in (
        "__name__ == '__main__'", "'__main__' == __name__")


def _docstring(tree: ast.Module) -> ast.Expr | None:
    first = tree.body[0] if tree.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
            and isinstance(first.value.value, str):
        return first
    return None


def _bound(nodes: list[ast.stmt]) -> dict[str, str]:
    """Names a piece of top-level code binds for good, each with what binds it: an import binds
    the module or object it names (two pieces importing the same thing agree); a definition or
    an assignment binds something of its own. Loop, `with` and `except` names are left out: they
    are scratch names, not what a helper offers."""
    names: dict[str, str] = {}

    def targets(node: ast.AST, where: str) -> None:
        if isinstance(node, ast.Name):
            names[node.id] = where
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Name, ast.Tuple, ast.List, ast.Starred)):
                targets(child, where)

    def statement(node: ast.stmt) -> None:
        where = f"line {node.lineno}"
        if isinstance(node, ast.Import):
            for a in node.names:
                bound = a.asname or a.name.split(".")[0]
                names[bound] = f"import {a.name if a.asname else bound}"
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                names[a.asname or a.name] = f"from {node.module} import {a.name}"
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = where
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                targets(t, where)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets(node.target, where)
        for child in ast.iter_child_nodes(node):  # the bodies of if, try, with, for, while
            if isinstance(child, ast.stmt) and not isinstance(
                    node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                statement(child)
            elif isinstance(child, ast.excepthandler):
                for inner in child.body:
                    statement(inner)

    for node in nodes:
        statement(node)
    return names


class _Builder:
    def __init__(self, root: Path):
        self.root = root.resolve()
        self.done: set[Path] = set()  # helpers already written out
        self.futures: list[str] = []
        self.owners: dict[str, tuple[str, str]] = {}  # name -> (file, what binds it)
        self.helpers: list[tuple[str, int]] = []
        self.files: list[Path] = []

    def claim(self, names: dict[str, str], who: str) -> None:
        """Every name one file binds must mean the same thing in every file it shares the
        program with: a helper's `run` must not be the snippet's `run`."""
        for name, what in names.items():
            if name in self.owners:
                other, other_what = self.owners[name]
                if other != who and not (what.startswith(("import ", "from "))
                                         and what == other_what):
                    raise ProgramError(
                        f"{who}: `{name}` ({what}) is also defined in {other} ({other_what}); "
                        f"written out into one program they would collide: rename one")
            else:
                self.owners[name] = (who, what)

    def piece(self, path: Path, main: bool) -> tuple[list[str], list[str], dict]:
        """(program lines, listing lines, sections) of one file."""
        source = path.read_text(encoding="utf-8")
        who = path.relative_to(self.root).as_posix() if path.is_relative_to(self.root) \
            else path.name
        try:
            tree = parse(source, filename=who)
        except SyntaxError as e:
            raise ProgramError(f"{who}: {e}") from None
        lines = source.splitlines()
        # What each top-level statement becomes: (first line, last line, replacement or None).
        edits: list[tuple[int, int, list[str] | None, list[str] | None]] = []
        doc = _docstring(tree)
        if doc is not None and not main:  # a helper's docstring, as comments where it stands
            text = doc.value.value.strip("\n")
            comment = [("# " + line).rstrip() for line in text.splitlines()]
            edits.append((doc.lineno, doc.end_lineno, comment, None))
        uses_sys = any(isinstance(n, ast.Name) and n.id == "sys" for stmt in tree.body
                       if not _is_sys_path(stmt) for n in ast.walk(stmt))
        kept: list[ast.stmt] = []
        for node in tree.body:
            span = (node.lineno, node.end_lineno)
            if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                self.futures += [f"from __future__ import {a.name}" for a in node.names
                                 if f"from __future__ import {a.name}" not in self.futures]
                edits.append((*span, [], None))  # first in the program; kept in the listing
            elif _is_sys_path(node):
                edits.append((*span, [], []))
            elif main and not uses_sys and isinstance(node, ast.Import) and \
                    [a.name for a in node.names] == ["sys"] and not node.names[0].asname:
                edits.append((*span, [], []))  # it only served the sys.path line
            elif not main and _is_main_guard(node):
                edits.append((*span, [], []))  # the helper's own command line: not run here
            elif isinstance(node, (ast.Import, ast.ImportFrom)) and self._locals(node, path):
                edits.append((*span, self.inline(node, path, who), None))
                kept.append(node)
            else:
                kept.append(node)
        self.claim(_bound([n for n in kept if not (isinstance(n, (ast.Import, ast.ImportFrom))
                                                   and self._locals(n, path))]), who)
        for node in ast.walk(tree):  # a local import anywhere else cannot be written out
            if isinstance(node, (ast.Import, ast.ImportFrom)) and node not in tree.body \
                    and self._locals(node, path):
                raise ProgramError(f"{who}:{node.lineno}: import local helpers at the top "
                                   f"level of the file, where they can be written out")
        return self._apply(lines, edits)

    def _locals(self, node: ast.Import | ast.ImportFrom, path: Path) -> list[Path]:
        if isinstance(node, ast.ImportFrom):
            if node.level or not node.module:
                return []
            names = [node.module]
        else:
            names = [a.name for a in node.names]
        found = [_local(n.split(".")[0], path.parent, self.root) for n in names]
        if any(found) and not all(found):
            raise ProgramError(f"{path.name}:{node.lineno}: import local helpers on a line of "
                               f"their own")
        return [f for f in found if f]

    def inline(self, node: ast.Import | ast.ImportFrom, path: Path, who: str) -> list[str]:
        out: list[str] = []
        for helper in self._locals(node, path):
            if helper.resolve() in self.done:
                continue
            self.done.add(helper.resolve())
            self.files.append(helper.resolve())
            self.helpers.append((helper.name, len(helper.read_text(encoding="utf-8").splitlines())))
            code, _, _ = self.piece(helper, main=False)  # its own helpers are written out in it
            while code and not code[0].strip():
                code.pop(0)
            while code and not code[-1].strip():
                code.pop()
            out += ["", f"# ---- {helper.name}, written out here so that this file runs on its "
                    f"own ----", *code, f"# ---- end of {helper.name} ----", ""]
        aliases: dict[str, str] = {}
        if isinstance(node, ast.ImportFrom):
            for a in node.names:
                if a.name == "*":
                    raise ProgramError(f"{who}:{node.lineno}: `import *` from a helper: name "
                                       f"what you use")
                if a.asname and a.asname != a.name:
                    out.append(f"{a.asname} = {a.name}")
                    aliases[a.asname] = f"from {node.module} import {a.name}"
        else:
            for a in node.names:
                name = a.asname or a.name
                out += ["import sys",
                        f"{name} = sys.modules[__name__]  # {a.name}.py is written out above: "
                        f"its names are this file's own"]
                aliases[name] = f"import {a.name}"
        self.claim(aliases, who)
        return out

    @staticmethod
    def _apply(lines: list[str], edits) -> tuple[list[str], list[str], dict]:
        """The file's lines with the edits made: once for the program (replacements), once for
        the listing (local imports kept); marker and `# snippet:` lines dropped, sections noted."""
        by_start = {first: (first, last, prog, lst) for first, last, prog, lst in edits}
        program: list[str] = []
        listing: list[str] = []
        sections: dict[str, list[int]] = {}
        i = 1
        while i <= len(lines):
            if i in by_start:
                first, last, prog, lst = by_start[i]
                program += prog if prog is not None else lines[first - 1:last]
                listing += lst if lst is not None else lines[first - 1:last]
                i = last + 1
                continue
            line = lines[i - 1]
            m = MARKER.match(line)
            if m:
                sections.setdefault(m.group(2), [len(listing) + 1, 0])
                if m.group(1) == "end":
                    sections[m.group(2)][1] = len(listing)
            elif not HEADER.match(line):
                program.append(line)
                listing.append(line)
            i += 1
        return program, listing, {k: (a, b) for k, (a, b) in sections.items()}


def _tidy(lines: list[str]) -> str:
    """At most two blank lines in a row (dropped lines leave runs), one newline at the end."""
    text = "\n".join(lines)
    return re.sub(r"\n[ \t]*\n([ \t]*\n)+(?=[ \t]*\n)", "\n\n", text).strip("\n") + "\n"


def _with_futures(lines: list[str], futures: list[str]) -> list[str]:
    """`from __future__` lines first, after the docstring and the opening comments."""
    if not futures:
        return lines
    doc = _docstring(parse("\n".join(lines)))
    at = doc.end_lineno if doc is not None else 0
    while at < len(lines) and lines[at].lstrip().startswith("#"):
        at += 1
    return lines[:at] + futures + lines[at:]


def _stamp(files: list[Path]) -> tuple:
    return tuple((p, p.stat().st_mtime_ns, p.stat().st_size) for p in files)


_built: dict[tuple[Path, Path], tuple[tuple, Program]] = {}


def build(path: Path, root: Path) -> Program:
    """The program of the Python file `path` under the snippets folder `root`; made again only
    when one of the files it was made from changed (a page asks for it several times)."""
    path, root = Path(path).resolve(), Path(root).resolve()
    known = _built.get((path, root))
    if known:
        try:
            if _stamp(known[1].files) == known[0]:
                return known[1]
        except OSError:
            pass
    builder = _Builder(root)
    stamp = _stamp([path])
    program, listing, sections = builder.piece(path, main=True)
    text = _tidy(_with_futures(program, builder.futures))
    compile(text, str(path), "exec")  # a program that does not parse is this module's fault
    made = Program(text, "\n".join(listing).rstrip("\n") + "\n", sections, builder.helpers,
                   [path, *builder.files])
    _built[(path, root)] = (stamp + _stamp(builder.files), made)
    return made


def for_snippet(snippet: Snippet) -> Program:
    return build(snippet.path, snippet.root)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
