"""Python code blocks on a page: the lines that make the point first, and a copy button that
copies the whole program (pipeline/running/program.py), the one the runner executed.

A page embeds a snippet's section (`--8<-- "topic/name.py:show"`) or a whole file
(`--8<-- "topic/name.py"`). `rewrite()`, on the page's Markdown, marks each such fence with the
file it comes from (`data-program`), and:
- shows a whole file as its program's listing: the file without the lines only the repository
  needs (pipeline/running/program.py), its helpers' imports as written;
- under a section, when the program holds more than it, adds a collapsed block with the
  listing, the section's lines marked, that names the helpers the copy writes out, with a link
  to where each is shown in full.
Only what the build runs is offered to copy: the block of a helper module or of a program of
the version matrix (which runs in other environments) gets no copy button (Material's
`.no-copy`).
`add_copy()`, on the page's HTML, puts each marked block, with the listing under it, in a
`<div class="program">` whose `data-copy-src` names the program as a file of its own that the
build writes (`assets/programs/<hash>/<name>.py`, the name the runner saves it under): the page
does not carry it. overrides/assets/program-copy.js fetches it when the block comes near the
screen or the pointer or the focus reaches it, and sets it as the div's `data-copy`: Material's
copy button copies the `data-copy` of the closest element that has one instead of the code's
text (Material for MkDocs 9.4.4 and newer, `content.code.copy`). A click that comes before the
file does waits for it. Both blocks copy the same program.

`reader_names()` makes a page name files as a reader saves them: a code block's title, an
admonition's title or a code span that gives a path under snippets/ gives the file's name; so
does a code comment (`reader_names_in_comments()`).
"""
from __future__ import annotations

import ast
import html
import posixpath
import re
import unicodedata
from pathlib import Path

from pipeline.running import program as program_mod
from pipeline.running.snippets import is_runnable, load

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

    def __init__(self, docs: Path, language: str, here: str = "index.md"):
        """`here`: the page being made (its path under docs/), which links are relative to."""
        suffix = "" if language == "en" else f".{language}"
        self.docs, self.suffix, self.here = docs, suffix, here
        self.pages = sorted(p for p in docs.rglob(f"*{suffix}.md")
                            if suffix or p.name.count(".") == 1)

    def link(self, rel: str) -> str | None:
        shown = where_shown(rel, self.pages, self.docs)
        if not shown:
            return None
        page = shown[0].replace(self.suffix + ".md", ".md") if self.suffix else shown[0]
        return f"{posixpath.relpath(page, posixpath.dirname(self.here) or '.')}#{shown[1]}"


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


PROGRAMS = "assets/programs"  # where the build writes each program a copy button copies


def program_file(text: str, name: str) -> str:
    """The site path of a program's file: named by its content (the same program on two pages,
    or in two languages, is one file, and a changed one is a new address), saved under the name
    the runner saves it under."""
    return f"{PROGRAMS}/{program_mod.sha256(text.encode())[:16]}/{name}"


def add_copy(page_html: str, snippets: Path, files: dict[str, str], relative) -> str:
    """Each program's code block, and the collapsed listing under it, go into one div whose
    `data-copy-src` (`relative(site_path)`: the address from the page) names the program's
    file; `files` gets {site path: program}, for the hook to write."""
    def wrap(m: re.Match) -> str:
        ref = html.unescape(m.group("ref"))
        text = program_mod.build(snippets / ref, snippets).text
        path = program_file(text, Path(ref).name)
        files[path] = text
        return (f'<div class="program" data-program="{m.group("ref")}" '
                f'data-copy-src="{html.escape(relative(path))}">{m.group(0)}</div>')
    return BLOCK.sub(wrap, page_html)


# A path under snippets/ as a reader would not save it: "snippets/criteria/tf_backend/" before
# "masking.py". The runner saves a program under its file's name alone.
REPO_FOLDERS = re.compile(r"\bsnippets/(?:[\w.-]+/)*(?=[\w.-]*[\w-])")
FENCE_TITLE = re.compile(r'^([ \t]*(?:`{3,}|~{3,})[^\n]*?\btitle=")([^"\n]*)(")', re.M)
ADMONITION_TITLE = re.compile(r'^([ \t]*(?:!!!|\?\?\?\+?)[ \t]+[\w -]*?")([^"\n]*)(")', re.M)
PATH_SPAN = re.compile(r"(?<!`)`snippets/(?:[\w.-]+/)*([\w.-]+)`(?!`)")


def reader_names(markdown: str) -> str:
    """Code titles, admonition titles and code spans that are a path under snippets/ name the
    file alone (`title="snippets/criteria/tf_backend/masking.py"` shows "masking.py"); a link's
    address is left as it is."""
    unfolder = lambda m: m.group(1) + REPO_FOLDERS.sub("", m.group(2)) + m.group(3)  # noqa: E731
    markdown = FENCE_TITLE.sub(unfolder, markdown)
    markdown = ADMONITION_TITLE.sub(unfolder, markdown)
    return PATH_SPAN.sub(lambda m: f"`{m.group(1)}`", markdown)


# A comment of a highlighted code block (Pygments: Comment, Comment.Single, .Hashbang, .Multiline).
COMMENT = re.compile(r'(<span class="(?:c|c1|ch|cm)">)([^<]*)(</span>)')


def reader_names_in_comments(page_html: str) -> str:
    """A code comment that names a helper by its path under snippets/ names its file alone. The
    comments that do (`import cudnn_check  # the site's checker, snippets/cudnn_check.py`) sit on
    the import of a helper, a line the program a copy button copies does not hold: it holds the
    helper's code instead (tests/pages/test_copied_programs.py compares every copy with the program the
    build ran)."""
    return COMMENT.sub(lambda m: m.group(1) + REPO_FOLDERS.sub("", m.group(2)) + m.group(3),
                       page_html)
