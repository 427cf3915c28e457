""""Measured" only next to a measurement on record. The strict build fails on a page that says
it measured something in a section that shows no measurement (CONTRIBUTING.md, "Measured").

The words: measured, measurement(s), measures, measuring (English); medido, medida(s)
(not in "a medida que"), medidos, medición, mediciones, medimos, miden (Spanish); any case. The
bare verb is advice to the reader ("measure both", "mide ambos") and is not checked. A word
within three words after a negation (not, no, never, nor, without, none; no, nunca, ni, sin,
ninguna, ninguno, ningún) says that nothing was measured, and is not checked either; nor is a
word inside a quotation of three words or fewer ("measured"), which names the word.

Next to a measurement means in the same section (from its heading to the next heading of the same
or a higher level, subsections included; the introduction is the text above the first
second-level heading), which
holds a marker whose content is a measurement on record: a chart (<!-- chart: -->, always drawn
from data), a GPU chart or GPU result with a record behind it, the output of a snippet that ran
(here, or on a GPU on record), the snippet timings, the home page's speed-up chart once this
site's own GPU records exist. The page's title (its first-level heading) speaks for the whole
page: any measurement on the page backs it.
"""
from __future__ import annotations

import re
from typing import Callable

from pipeline.claims import prose

WORDS = re.compile(r"\b(measured|measurements?|measures|measuring|medid[oa]s?|medici[oó]n|"
                   r"mediciones|medimos|miden)\b", re.I)
NEGATION = re.compile(r"\b(not|no|never|nor|without|none|nunca|ni|sin|ninguna|ninguno|ningún)"
                      r"\b(?:\W+\w+){0,3}\W+$", re.I)
IDIOM = re.compile(r"\b(a|en)\s+la\s+medida\b|\ba\s+medida\s+que\b", re.I)
MARKER = re.compile(r"<!--\s*([\w-]+)\s*:?\s*(\S*?)\s*-->")
MEASURES = ("chart", "gpu-chart", "gpu-result", "output", "execution-times", "speedup-evidence")


def claims(text: str) -> list[tuple[int, str]]:
    """(offset, word) for each claim word in a text, negated ones and idioms left out."""
    text = prose.plain(text)
    # a word in a short quotation ("measured") is mentioned, not used
    mentions = [(m.start(), m.end()) for m in re.finditer(r'["“«][^"”»\n]{0,40}["”»]', text)
                if len(m.group(0).split()) <= 3]
    found = []
    for m in WORDS.finditer(text):
        if NEGATION.search(text[:m.start()]) or IDIOM.search(text[max(0, m.start() - 10):m.end() + 5]) \
                or any(a < m.start() < b for a, b in mentions):
            continue
        found.append((m.start(), m.group(0)))
    return found


def _sections(markdown: str) -> list[tuple[int, int, int]]:
    """(level, first line, end line) of each section. A section runs from its heading to the next
    heading of the same or a higher level, so it holds its subsections; the introduction (level
    1: the title and the text before the first second-level heading) holds none."""
    kinds = [k for _, k in prose._lines(markdown)]
    lines = markdown.split("\n")
    heads = [(i, len(line) - len(line.lstrip("#"))) for i, line in enumerate(lines)
             if kinds[i] == "text" and prose.HEADING.match(line)]
    out = [(1, 0, heads[0][0] if heads and heads[0][1] > 1 else
            next((i for i, lv in heads if lv > 1), len(lines)))]
    for n, (i, level) in enumerate(heads):
        if level == 1:
            continue
        end = next((j for j, lv in heads[n + 1:] if lv <= level), len(lines))
        out.append((level, i, end))
    return out


def check(markdown: str, where: str, is_measurement: Callable[[str, str], bool]) -> list[str]:
    """One line per unbacked claim. `is_measurement(kind, argument)` says whether a marker
    (`output`, `topic/name.py`) shows a measurement on record in this build."""
    def backed(text: str) -> bool:
        return any(kind in MEASURES and is_measurement(kind, arg)
                   for kind, arg in MARKER.findall(text))

    lines = markdown.split("\n")
    sections = _sections(markdown)
    page_has_one = backed(markdown)
    problems = []
    for block in prose.blocks(markdown):
        found = claims(block.text)
        if not found:
            continue
        if block.kind == "heading" and block.text.startswith("# ") and page_has_one:
            continue  # the page's title speaks for the whole page
        line0 = block.line - 1
        # the innermost section that holds the block
        level, first, end = max((s for s in sections if s[1] <= line0 < s[2]),
                                key=lambda s: (s[0], s[1]))
        if backed("\n".join(lines[first:end])):
            continue
        for offset, word in found:
            line = block.line + prose.plain(block.text)[:offset].count("\n")
            problems.append(f"{where}:{line}: {word!r} with no measurement on record in its "
                            f"section: put the chart or output that measured it there, or "
                            f"say what was run instead")
    return problems
