"""What a shown code block relies on, one click away.

A page shows a section of a snippet (`--8<-- "topic/name.py:show"`); the names that section uses
but does not define (`x`, `takes_cudnn`, `np`) come from the lines above it in the file. The hook
(pipeline/mkdocs_hook.py) puts those lines in a collapsed block right under the shown one, and
names the helper module they import from next to the snippet (`_pretend_gpu.py`), with a link to
where a page shows that helper in full. Shown code plus that block runs as it is.
"""
from __future__ import annotations

import ast
import builtins
import re
import textwrap
import unicodedata
from pathlib import Path

# A shown section of a Python snippet: the fence with its title, the embed line, the fence's end.
SHOWN = re.compile(r'^(?P<indent>[ \t]*)```python title="(?P<title>[^"]*)"[^\n]*\n'
                   r'(?P=indent)--8<-- "(?P<ref>[^":"]+\.py):(?P<section>[\w-]+)"\n'
                   r'(?P=indent)```[ \t]*$', re.M)
MARKER = re.compile(r"^\s*# -+8<-+ \[(?:start|end):[\w-]+\]\s*$")
SETUP_SKIP = re.compile(r"^# snippet:")


def section_text(source: str, section: str) -> tuple[str, str] | None:
    """(the lines before the section, the section), marker lines left out; None without it."""
    start = re.search(rf"^[ \t]*# -+8<-+ \[start:{re.escape(section)}\][ \t]*$", source, re.M)
    end = re.search(rf"^[ \t]*# -+8<-+ \[end:{re.escape(section)}\][ \t]*$", source, re.M)
    if not start or not end:
        return None
    keep = lambda text: "".join(l for l in text.splitlines(keepends=True)  # noqa: E731
                                if not MARKER.match(l))
    return keep(source[:start.start()]), textwrap.dedent(keep(source[start.end():end.start()]))


def _bound(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


def free_names(code: str) -> set[str]:
    """Names the code reads but neither defines nor gets from Python's builtins."""
    tree = ast.parse(code)
    bound = _bound(tree) | set(dir(builtins)) | {"__file__"}  # a script's own path
    return {n.id for n in ast.walk(tree)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in bound}


def setup_for(source: str, section: str) -> tuple[str, set[str]] | None:
    """The lines above a section that it needs (module docstring and `# snippet:` lines left
    out), and the names it needs from them; None when the section runs on its own."""
    parts = section_text(source, section)
    if parts is None:
        return None
    before, shown = parts
    try:
        needed = free_names(shown)
    except SyntaxError:
        return None
    if not needed:
        return None
    tree = ast.parse(before)
    lines = before.splitlines()
    if tree.body and isinstance(tree.body[0], ast.Expr) and isinstance(
            getattr(tree.body[0], "value", None), ast.Constant) and isinstance(
            tree.body[0].value.value, str):
        lines = lines[tree.body[0].end_lineno:]
    lines = [line for line in lines if not SETUP_SKIP.match(line)]
    setup = "\n".join(lines).strip("\n")
    return setup, needed


def local_helpers(setup: str, folder: Path) -> list[str]:
    """The modules the setup imports from files next to the snippet (`_pretend_gpu`)."""
    found = []
    for node in ast.walk(ast.parse(setup)):
        names = [node.module] if isinstance(node, ast.ImportFrom) and node.module else \
            [a.name for a in node.names] if isinstance(node, ast.Import) else []
        found += [n for n in names if (folder / f"{n}.py").is_file() and n not in found]
    return found


def slugify(text: str) -> str:
    """A heading's anchor as Python-Markdown's toc extension makes it."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*(?:\{\s*#([\w-]+)\s*\})?\s*$")


def where_shown(rel: str, pages: list[Path], docs: Path) -> tuple[str, str] | None:
    """(page, anchor) of the first page that embeds the whole file `rel`, at the heading above."""
    for page in pages:
        heading = ""
        for line in page.read_text(encoding="utf-8").splitlines():
            m = HEADING.match(line)
            if m:
                heading = m.group(2) or slugify(re.sub(r"`", "", m.group(1)))
            elif line.strip() == f'--8<-- "{rel}"':
                return page.relative_to(docs).as_posix(), heading
    return None
