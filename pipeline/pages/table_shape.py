"""Markdown tables whose rows have as many cells as their header.

Python-Markdown pads a short row with empty cells and drops a long row's extra ones, so a row
that lost or gained a cell shows every later cell under the wrong column, with no error. The
cells are split by Python-Markdown's own table processor (pipes in code spans and escaped pipes
are not separators), on the page's final Markdown: tables drawn from data are checked too.
"""
from __future__ import annotations

import re

import markdown

FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")


def _processor():
    return markdown.Markdown(extensions=["tables"]).parser.blockprocessors["table"]


def problems(text: str, where: str) -> list[str]:
    """'page:line: …' for each table row whose cell count differs from its header's."""
    table = _processor()
    lines = text.split("\n")
    found: list[str] = []
    fence = None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = FENCE.match(line)
        if fence:  # inside a code block: its lines are code, not tables
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            i += 1
            continue
        if m:
            fence = m.group(1)
            i += 1
            continue
        starts_block = i == 0 or not lines[i - 1].strip()
        if starts_block and "|" in line and i + 1 < len(lines):
            end = i
            while end < len(lines) and lines[end].strip():
                end += 1
            block = [row.strip() for row in lines[i:end]]
            if len(block) > 1 and table.test(None, "\n".join(block)):
                width = len(table._split_row(block[0]))
                for n, row in enumerate(block[2:], start=i + 3):
                    cells = len(table._split_row(row))
                    if cells != width:
                        found.append(f"{where}:{n}: a table row has {cells} cells for the "
                                     f"header's {width}: {row[:80]}")
                i = end
                continue
        i += 1
    return found
