"""Python code blocks on a page: the lines that make the point first, and a copy button that
copies the whole program (pipeline/program.py), the one the runner executed.

A page embeds a snippet's section (`--8<-- "topic/name.py:show"`) or a whole file
(`--8<-- "topic/name.py"`). `rewrite()`, on the page's Markdown, marks each such fence with the
file it comes from (`data-program`), and:
- shows a whole file as its program's listing: the file without the lines only the repository
  needs (pipeline/program.py), its helpers' imports as written;
- under a section, when the program holds more than it, adds a collapsed block with the
  listing, the section's lines marked, that names the helpers the copy writes out, with a link
  to where each is shown in full.
Only what the build runs is offered to copy: the block of a helper module or of a program of
the version matrix (which runs in other environments) gets no copy button (Material's
`.no-copy`).
`add_copy()`, on the page's HTML, puts each marked block, with the listing under it, in a
`<div class="program">` that names the pieces of its program; the page keeps each piece once
(`parts_script()`), and overrides/assets/program-copy.js joins a div's pieces into its
`data-copy` when the page loads: Material's copy button copies the `data-copy` of the closest
element that has one instead of the code's text (Material for MkDocs 9.4.4 and newer,
`content.code.copy`). Both blocks copy the same program.
"""
from __future__ import annotations

import ast
import html
import json
import re
import unicodedata
from pathlib import Path

from . import program as program_mod
from .snippets import is_runnable, load

# A Python fence holding one embed line: a section of a file, or the whole file.
FENCE = re.compile(r'^(?P<indent>[ \t]*)```python(?P<attrs>[^\n]*)\n'
                   r'(?P=indent)--8<-- "(?P<ref>[^":]+\.py)(?::(?P<section>[\w-]+))?"\n'
                   r'(?P=indent)```[ \t]*$', re.M)
TITLE = re.compile(r'title="([^"]*)"')
LISTING = "program-listing"  # the class of the collapsed listing under a shown section
# A code block marked by rewrite(), and the collapsed listing right under it, if any. Code is
# HTML-escaped: `</code></pre></div>` and `</details>` only close what they say.
BLOCK = re.compile(r'<div class="highlight" data-program="(?P<ref>[^"]+)">.*?</code></pre></div>'
                   rf'(?:\s*<details class="note {LISTING}">.*?</details>)?', re.S)


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


def _fence(body: str, attrs: str) -> list[str]:
    ticks = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", body)), default=0))
    return [f"{ticks} {{ .python {attrs}}}".replace("  }", " }"), *body.rstrip("\n").split("\n"),
            ticks]


def _indented(lines: list[str], indent: str) -> str:
    return "\n".join(indent + line if line.strip() else "" for line in lines)


def _extra_code(listing: str, first: int, last: int) -> bool:
    """Whether the listing holds code outside lines first..last besides its docstring and
    comments: then the section alone is not the program."""
    lines = listing.splitlines()
    tree = ast.parse(listing)
    doc = program_mod._docstring(tree)
    skip = set(range(doc.lineno, doc.end_lineno + 1)) if doc else set()
    return any(line.strip() and not line.lstrip().startswith("#") and n not in skip
               and not first <= n <= last for n, line in enumerate(lines, 1))


class Pages:
    """The pages of one language, to find where a helper is shown in full."""

    def __init__(self, docs: Path, language: str):
        suffix = "" if language == "en" else f".{language}"
        self.docs, self.suffix = docs, suffix
        self.pages = sorted(p for p in docs.glob(f"*{suffix}.md")
                            if suffix or p.name.count(".") == 1)

    def link(self, rel: str) -> str | None:
        shown = where_shown(rel, self.pages, self.docs)
        if not shown:
            return None
        page = shown[0].replace(self.suffix + ".md", ".md") if self.suffix else shown[0]
        return f"{page}#{shown[1]}"


def rewrite(markdown: str, snippets: Path, pages: Pages, t: dict) -> str:
    """Every Python fence that embeds a snippet file, as described in the module's docstring.
    Texts from `t` (the hook's words): program_title, program_body, program_body_helpers,
    program_helper, program_helper_here, program_and, program_lines."""

    def replace(m: re.Match) -> str:
        path = snippets / m.group("ref")
        if not path.is_file():
            return m.group(0)  # pymdownx.snippets reports the missing file
        prog = program_mod.build(path, snippets)
        indent, ref, section = m.group("indent"), m.group("ref"), m.group("section")
        title = TITLE.search(m.group("attrs"))
        attrs = f'title="{title.group(1)}" ' if title else ""
        # Only a program the build runs is offered to copy: a helper module, or a program of
        # the version matrix (run in other environments), gets no copy button.
        built = is_runnable(path, snippets) and not load(path, snippets).matrix
        attrs += f'data-program="{ref}" ' if built else f'.no-copy data-listing="{ref}" '
        if section is None:  # the whole file: its listing
            return _indented(_fence(prog.listing, attrs), indent)
        if section not in prog.sections:
            return m.group(0)  # pymdownx.snippets reports the missing section
        parts = [f"``` {{ .python {attrs}}}", f'--8<-- "{ref}:{section}"', "```"]
        if not built:
            return _indented(parts, indent)
        first, last = prog.sections[section]
        if _extra_code(prog.listing, first, last):
            helpers = []
            for name, lines in prog.helpers:
                link = pages.link(load(_helper_path(path, name, snippets), snippets).rel)
                words = t["program_lines"].format(lines=lines)
                helpers.append(t["program_helper"].format(module=name, lines=words, link=link)
                               if link else t["program_helper_here"].format(module=name,
                                                                             lines=words))
            body = (t["program_body_helpers"].format(
                helpers=f" {t['program_and']} ".join(helpers)) if helpers else t["program_body"])
            listing = _fence(prog.listing, f'hl_lines="{first}-{last}" data-program="{ref}" ')
            parts += ["", f'??? note {LISTING} "{t["program_title"]}"', "", "    " + body, "",
                      *["    " + line if line else "" for line in listing]]
        return _indented(parts, indent)

    return FENCE.sub(replace, markdown)


def _helper_path(path: Path, name: str, snippets: Path) -> Path:
    beside = path.parent / name
    return beside if beside.is_file() else snippets / name


# A helper written out in a program, from its first line to its last: the same text in every
# program that imports it (pipeline/program.py), so a page keeps it once.
HELPER_BLOCK = re.compile(r"^# ---- (\S+), written out here so that this file runs on its own ----\n"
                          r".*?^# ---- end of \1 ----\n", re.S | re.M)


def pieces(text: str) -> list[str]:
    """A program cut into pieces whose concatenation is the program: each helper written out
    in it is a piece of its own."""
    out, at = [], 0
    for m in HELPER_BLOCK.finditer(text):
        out += [text[at:m.start()], m.group(0)]
        at = m.end()
    return [p for p in out + [text[at:]] if p]


def add_copy(page_html: str, snippets: Path, store: dict[str, str]) -> str:
    """Each program's code block, and the collapsed listing under it, go into one div naming the
    pieces of its program (`data-copy-parts`); `store` gets each piece once, by key, for
    `parts_script()`. overrides/assets/program-copy.js joins a div's pieces into its
    `data-copy`, what Material's copy button copies for both blocks. A helper shared by many
    programs (the checker: some 50 KB) is then in the page once, not once per program."""
    def wrap(m: re.Match) -> str:
        ref = html.unescape(m.group("ref"))
        keys = []
        for piece in pieces(program_mod.build(snippets / ref, snippets).text):
            key = program_mod.sha256(piece.encode())[:16]
            store[key] = piece
            keys.append(key)
        return (f'<div class="program" data-program="{m.group("ref")}" '
                f'data-copy-parts="{" ".join(keys)}">{m.group(0)}</div>')
    return BLOCK.sub(wrap, page_html)


def parts_script(store: dict[str, str]) -> str:
    """The pieces of a page's programs, as JSON in a script element that no browser runs (put in
    after the search index is made: a program's text is not the page's text)."""
    data = json.dumps(store, ensure_ascii=False, sort_keys=True).replace("</", "<\\/")
    return f'<script type="application/json" id="program-parts">{data}</script>'
