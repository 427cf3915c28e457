"""What a reader copies from a page runs.

Every Python code block's copy button, on every page in both languages, copies a program that
the build ran, byte for byte, alone in an empty folder, and that run ended well or said "needs a
GPU" (exit code 77). What the button copies is read from the built HTML the way Material's copy
button reads it (its clipboard handler: the `data-copy` of the closest element that has one,
else the code's text; the end trimmed), `data-copy` being, once the reader nears the block, the
file its div names in `data-copy-src` (overrides/assets/program-copy.js fetches it), and the
blocks of collapsed listings being the files the page loads when they are opened
(tests/built_pages.py); tests/site/test_copy_buttons.py clicks buttons in Chromium and finds the same. The runs are the build's own (the runner's cache, as the `site` build left it):
nothing runs twice here, except the one program the first report found broken
(`which_keras.py`), run again from its copy in an empty folder with a bare environment.

Blocks without a copy button (Material's `.no-copy`) must be listings of files the build does
not run: helper modules (`_name.py`) and programs of the version matrix.
Notebook pages are left out: their cells are the steps of one notebook, run in order by the
build (mkdocs-jupyter), not programs on their own.
"""
from __future__ import annotations

import ast
import hashlib
import html
import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from built_pages import opened, served
from conftest import REPO
from pipeline.running import runner
from pipeline.running.snippets import discover

SNIPPETS = REPO / "snippets"


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


class _Blocks(HTMLParser):
    """The `pre > code` elements of a page's article, each with what its copy button copies
    (or, under `.no-copy`, the file it lists)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, dict]] = []
        self.code: list[str] | None = None
        self.found: list[tuple[dict, str]] = []  # (what the ancestors say, the code's text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "code" and self.stack and self.stack[-1][0] == "pre" and self.inside():
            self.code = []
        if tag not in VOID:
            self.stack.append((tag, attrs))

    def inside(self) -> bool:
        return any(t == "article" and "md-content__inner" in a.get("class", "")
                   for t, a in self.stack)

    def handle_endtag(self, tag):
        if tag == "code" and self.code is not None:
            said = {"no-copy": None, "data-copy": None, "data-copy-src": None}
            for t, a in reversed(self.stack):
                if said["data-copy"] is None and said["data-copy-src"] is None:
                    said["data-copy"] = a.get("data-copy")
                    said["data-copy-src"] = a.get("data-copy-src")
                if said["no-copy"] is None and "no-copy" in a.get("class", "").split():
                    said["no-copy"] = a.get("data-listing", "")
            self.found.append((said, "".join(self.code)))
            self.code = None
        if any(t == tag for t, _ in self.stack):  # up to the matching tag (HTML forgives
            while self.stack.pop()[0] != tag:       # unclosed ones and stray end tags)
                pass

    def handle_data(self, data):
        if self.code is not None:
            self.code.append(data)


def copies(page: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(what each copy button of the page's article copies, with where it is; the text and
    file of each block without a button), every collapsed block opened."""
    source = opened(page)
    parser = _Blocks()  # charts and diagrams hold no code block, and are a tenth of the bytes
    parser.feed(re.sub(r"<svg\b.*?</svg>", "", source, flags=re.S))
    buttons, listings = [], []
    for n, (said, text) in enumerate(parser.found):
        if said["no-copy"] is not None:
            listings.append((text, said["no-copy"]))
            continue
        copied = text
        if said["data-copy"] is not None:
            copied = said["data-copy"]
        elif said["data-copy-src"] is not None:
            file = served(page, said["data-copy-src"])
            copied = file.read_bytes().decode("utf-8") if file.is_file() else f"(no {file})"
        buttons.append((f"block {n + 1}", copied.rstrip()))  # String.prototype.trimEnd
    return buttons, listings


def is_python(text: str) -> bool:
    """Code that parses as Python and does something: not one word, not a shell line."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return False
    return any(not (isinstance(s, ast.Expr) and isinstance(s.value, (ast.Name, ast.Constant)))
               for s in tree.body)


def reader_pages(site: Path) -> list[Path]:
    pages = [p for p in site.rglob("index.html") if "notebooks" not in p.parts
             and p.parent.name not in ("search", "assets")]
    assert len(pages) >= 20, pages
    return sorted(pages)


@pytest.fixture(scope="module")
def blocks(site) -> dict[Path, tuple[list, list]]:
    return {page: copies(page) for page in reader_pages(site)}


@pytest.fixture(scope="module")
def runs(site) -> dict[str, tuple[runner.Outcome, Path]]:
    """The build's run of each snippet, by the hash of the program it ran (from the cache)."""
    rels = [s.rel for s in discover(SNIPPETS) if s.kind == "py" and not s.matrix]
    found = {}
    for o in runner.run_all(runner.Project(REPO), execute_stale=False, only=rels):
        if o.status != runner.NOT_RUN and o.data_dir:
            entry = Path(o.data_dir).parent
            found[o.program_sha256] = (o, entry / json.loads(
                (entry / "result.json").read_text(encoding="utf-8"))["program"])
    return found


def test_every_python_block_copies_a_program_the_build_ran(site, blocks, runs):
    checked, problems = 0, []
    for page, (buttons, _) in blocks.items():
        for where, text in buttons:
            if not is_python(text):
                continue
            checked += 1
            place = f"{page.relative_to(site).parent}/ {where}"
            digest = hashlib.sha256((text + "\n").encode()).hexdigest()
            if digest not in runs:
                problems.append(f"{place}: copies a program the build did not run "
                                f"({len(text.splitlines())} lines, starting {text[:60]!r})")
                continue
            o, program = runs[digest]
            if program.read_bytes() != (text + "\n").encode():
                problems.append(f"{place}: differs from {program}")
            if not (o.status == runner.OK and o.returncode == 0 or
                    o.status == runner.NEEDS_GPU and o.returncode == runner.NEEDS_GPU_EXIT):
                problems.append(f"{place}: {o.snippet.rel} ended {o.status} ({o.returncode})")
    assert not problems, "\n".join(problems[:30])
    assert checked >= 150, f"only {checked} Python blocks found: the reading no longer matches"


PROGRAM_DIV = re.compile(r'<div class="program" data-program="([^"]+)" data-copy-src="([^"]+)"')


def test_a_page_names_its_programs_as_files_of_the_site_saved_as_the_runner_saves_them(
        site, runs):
    """A page does not carry the programs it copies: it names each one's file, an address on
    the same site (relative, no host), under the name the runner gave the program when it ran
    it; the file holds exactly that program."""
    by_name = {}
    for o, program in runs.values():
        by_name.setdefault(o.snippet.rel, set()).add(program.name)
    problems, checked = [], 0
    for page in reader_pages(site):
        text = page.read_text(encoding="utf-8")
        assert "data-copy=" not in text and "program-parts" not in text, page
        for rel, address in PROGRAM_DIV.findall(text):
            checked += 1
            where = f"{page.relative_to(site).parent}/ {rel}"
            address = html.unescape(address)
            if re.match(r"^(?:[a-z][\w+.-]*:|/)", address, re.I):
                problems.append(f"{where}: {address} is not an address on this site")
                continue
            file = served(page, address)
            if not (file.is_file() and file.is_relative_to(site.resolve())):
                problems.append(f"{where}: {address} is no file of the site")
            elif {file.name} != by_name.get(html.unescape(rel)):
                problems.append(f"{where}: named {file.name}, run as {by_name.get(rel)}")
            elif hashlib.sha256(file.read_bytes()).hexdigest() not in runs:
                problems.append(f"{where}: {address} is not a program the build ran")
    assert not problems, "\n".join(problems[:30])
    assert checked >= 150, checked


def _matrix(rel: str) -> bool:
    head = (SNIPPETS / rel).read_text(encoding="utf-8").splitlines()[:30]
    return any(line.startswith("# snippet:") and "matrix" in line.split() for line in head)


def test_only_files_the_build_does_not_run_are_shown_without_a_copy_button(site, blocks):
    """A helper module or a version-matrix program: a listing to read; the programs that use
    a helper carry it in their copy."""
    problems, seen = [], set()
    for page, (_, listings) in blocks.items():
        for text, rel in listings:
            where = f"{page.relative_to(site).parent}/: {rel or text[:50]!r}"
            if not rel or not (SNIPPETS / rel).is_file():
                problems.append(f"{where}: a block without a copy button names no file")
                continue
            if not (Path(rel).name.startswith("_") or _matrix(rel)):
                problems.append(f"{where}: the build runs it; its block must offer a copy")
            source = set((SNIPPETS / rel).read_text(encoding="utf-8").splitlines())
            stray = [line for line in text.splitlines() if line not in source]
            if stray:
                problems.append(f"{where}: shows lines that are not in the file: {stray[:2]}")
            seen.add(rel)
    assert not problems, "\n".join(problems)
    assert {"criteria/tf_backend/_pretend_gpu.py", "versions/keras3_tensorflow.py"} <= seen, seen


def test_no_page_says_what_the_copy_lacks():
    """The lines a block relied on used to sit in an expander after it, outside the copy."""
    for page in (REPO / "docs").rglob("*.md"):
        text = page.read_text(encoding="utf-8")
        assert "What this block relies on" not in text and "Lo que este bloque necesita" not in text


def test_a_copied_program_runs_in_an_empty_folder_with_a_bare_environment(site, blocks, tmp_path):
    """The program the first report found broken (NameError: name 'os' is not defined), copied
    from the warning page and run as a reader runs it: no SNIPPET_* variables, no sandbox, a new
    folder as its only company."""
    buttons, _ = blocks[site / "warning" / "index.html"]
    # The shown block and its listing copy the same program.
    [text] = {t for _, t in buttons if is_python(t) and "tf.keras.__version__" in t}
    (tmp_path / "which_keras.py").write_text(text + "\n", encoding="utf-8")
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "TF_CPP_MIN_LOG_LEVEL": "3"}
    proc = subprocess.run([sys.executable, "which_keras.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "tf.keras is Keras 3" in proc.stdout
