"""Code that serves the reader: on the pages with benchmarks, the code shown open is the part
that makes the point (the layers compared and how they are timed); the rest of each benchmark
is one click away, in a collapsed block, and still in the file that runs."""
from __future__ import annotations

import re

import pytest

from conftest import REPO

DOCS = REPO / "docs"
SNIPPETS = REPO / "snippets"
PAGES = [p for stem in ("index", "trade-offs", "benchmarks")
         for p in (DOCS / f"{stem}.md", DOCS / f"{stem}.es.md")]
MAX_OPEN_LINES = 30
EMBED = re.compile(r'^(?P<indent>[ \t]*)--8<-- "(?P<file>benchmarks/[\w.]+)(?::(?P<section>[\w-]+))?"$',
                   re.M)
MARKER = re.compile(r"-+8<-+[ \t]+\[[ \t]*(start|end)[ \t]*:[ \t]*([a-z][-_0-9a-z]*)[ \t]*\]")


def section_lines(file: str, section: str | None) -> list[str]:
    lines = (SNIPPETS / file).read_text().splitlines()
    if section:
        start = next(i for i, line in enumerate(lines) if (m := MARKER.search(line))
                     and m.groups() == ("start", section))
        end = next(i for i, line in enumerate(lines) if (m := MARKER.search(line))
                   and m.groups() == ("end", section))
        lines = lines[start + 1:end]
    return [line for line in lines if not MARKER.search(line)]


def embeds(page):
    """(file, section, collapsed) for every benchmark embed; an embed indented under a `???`
    block is collapsed."""
    text = page.read_text(encoding="utf-8")
    found = []
    for m in EMBED.finditer(text):
        before = text[:m.start()].splitlines()
        opener = next((line for line in reversed(before) if line and not line.startswith((" ", "\t"))), "")
        found.append((m.group("file"), m.group("section"), bool(m.group("indent")) and opener.startswith("??? ")))
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_open_benchmark_code_is_short_and_the_rest_is_one_click_away(page):
    found = embeds(page)
    assert found, f"{page.name}: no benchmark embedded"
    problems = []
    for file, section, collapsed in found:
        if file.startswith("benchmarks/_"):
            continue  # shared helpers: shown on purpose, in part or collapsed
        n = len(section_lines(file, section))
        if not collapsed and n > MAX_OPEN_LINES:
            problems.append(f"{file}:{section}: {n} lines shown open (at most {MAX_OPEN_LINES})")
    shown = {f for f, _, _ in found if not f.startswith("benchmarks/_")}
    for file in shown:
        if not any(f == file and s == "show" for f, s, _ in found):
            problems.append(f"{file}: its whole `show` section is neither open nor collapsed")
    assert not problems, f"{page.name}:\n  " + "\n  ".join(problems)


def test_every_compare_section_lies_inside_the_show_section():
    """The part a page shows open is a piece of what the file runs, not a copy of it."""
    for path in sorted((SNIPPETS / "benchmarks").glob("*.py")):
        text = path.read_text()
        if "[start:compare]" not in text:
            continue
        show = "\n".join(section_lines(f"benchmarks/{path.name}", "show"))
        compare = "\n".join(section_lines(f"benchmarks/{path.name}", "compare"))
        assert compare.strip() and compare in show, path.name
