"""Charts, diagrams, tables and code in a real browser: drawn, named, readable on a phone,
and a box wider than the screen says so and scrolls.
(Shared pages and helpers: tests/site/browsing.py. Each page is opened once per viewport for
the checks of every module that reads it: tests/site/visits.py.)"""
from __future__ import annotations

import re

import pytest

from browsing import (CHART_PAGES, DIAGRAM_PAGES, HINT_WORDS, OWN_SPEEDUP_ON_RECORD, SOURCES,
                      page_ids, path_of)
from chromium import report
from visits import PHONE_PAGES, visit  # noqa: F401 (visit: the fixture)


@pytest.mark.parametrize("lang,url", CHART_PAGES, ids=page_ids(CHART_PAGES))
def test_charts_render_visibly_and_name_the_machine(visit, lang, url):
    path = path_of(lang, url)
    page = visit("desktop", lang, url)
    found = page.step("charts")  # every chart loaded, as it comes near the screen
    source = SOURCES[url].read_text(encoding="utf-8")
    # This site's measurements; the published chart (others' figures) names no machine of ours.
    # Every marker draws its benchmark: one chart per machine and run that measured it.
    marked = re.findall(r"<!--\s*(?:gpu-)?chart:\s*([\w.-]+)\s*-->", source) + (
        ["cudnn_speedup"] * source.count("<!-- speedup-evidence") if OWN_SPEEDUP_ON_RECORD else [])
    drawn = found["drawn"]
    assert sorted(set(drawn)) == sorted(set(marked)) and len(drawn) >= len(marked), \
        f"{path}: charts of {drawn}, markers of {marked}"
    problems = []
    # A GPU-only chart without a GPU record says so, visibly, and draws nothing.
    for empty in found["empty"]:
        name = f"chart {empty['name']}"
        if empty["notes"] != 1 or not empty["visible"]:
            problems.append(f"{name}: no visible note")
        elif not re.search(r"No GPU measurement is recorded yet|Aún no hay ninguna medición en GPU",
                           empty["text"]) or empty["name"] not in empty["text"]:
            problems.append(f"{name}: the note does not say that no GPU measurement is recorded")
        if empty["svgs"]:
            problems.append(f"{name}: draws an SVG without data")
    if found["no_data"] > source.count("<!-- gpu-chart:"):
        problems.append("a chart that must have data has none")
    for i, chart in enumerate(found["figures"]):  # a picture of the first: test-artifacts/
        name = f"chart {i + 1} ({chart['name']})"
        if chart["svgs"] != 1:
            problems.append(f"{name}: {chart['svgs']} inline <svg>")
            continue
        box = chart["box"]
        if not chart["visible"] or not box or box["width"] < 100 or box["height"] < 50:
            problems.append(f"{name}: not visible or too small ({box})")
        labels = chart["labels"]
        if len(labels) < 2 or not all(labels):
            problems.append(f"{name}: axis labels missing (found {labels})")
        said = {"en": r"Measured on (CPU|GPU): .+? \((this page's run|\d{4}-\d\d-\d\d[^)]*)\)",
                "es": r"Medido en (CPU|GPU): .+? \((ejecución de esta página|\d{4}-\d\d-\d\d[^)]*)\)"}
        if not re.search(said[lang], chart["text"]):
            problems.append(f"{name}: does not say which machine measured it "
                            "('Measured on CPU: …' / 'Medido en CPU: …')")
    problems += page.problems("charts")
    assert not problems, report(path, problems)


# On a phone, each page's three checks read one visit (tests/site/visits.py, PHONE_PAGES): chart
# text size, boxes of charts and diagrams wider than their column, and any other box (tables,
# tabs) that hides part of what it holds.


def chart_text_problems(sizes: list) -> list[str]:
    """Each chart's smallest text as drawn at 390 px (its font size times the SVG's scale) is at
    least 11 px; a chart wider than the column scrolls in its own box instead of shrinking."""
    if not sizes:
        return ["no chart drawn"]
    return ([f"chart text: {name}: {px:.1f} px" for name, px, _ in sizes if px < 11]
            + [f"chart text: {name}: not in a scroll box" for name, _, box in sizes
               if box not in ("auto", "scroll")])


def wide_box_problems(measured: list, lang: str) -> list[str]:
    """At 390 and 1280 px, a chart or diagram that does not fit its column scrolls in its own box
    to its last bar and label, and a line in the page's language above it says so, in view."""
    problems = []
    for width, boxes in measured:
        if not boxes:
            problems.append(f"{width} px: no chart or diagram")
        for b in boxes:
            if not b["hides"]:
                continue
            if not b["scrolls"] or not b["reached"]:
                problems.append(f"{width} px: {b['name']}: wider than its column and its end "
                                "cannot be reached")
            if HINT_WORDS[lang] not in b["hint"] or b["room"] < 10:
                problems.append(f"{width} px: {b['name']}: wider than its column, and nothing "
                                f"says so (hint {b['hint']!r}, {b['room']:.0f} px above it)")
    return problems


def other_box_problems(measured: list, lang: str) -> list[str]:
    """At 390 and 1280 px, with every chart's data table open: each box of the article that
    scrolls sideways and hides some of its content (any box, code blocks, charts and diagrams
    aside) has a line in the page's language above it that says so (a row of framework tabs:
    Material's arrow), and a table in it lets the box's edge shadow show (no background of its
    own over it)."""
    problems = []
    for width, boxes in measured:
        if not any(b["tables"] for b in boxes):
            problems.append(f"{width} px: no table box (Material's script did not wrap the tables)")
        problems += [f"{width} px: {b['text']!r}: wider than its box, and nothing says so "
                     f"({b['hint']!r})" for b in boxes if b["hides"]
                     and HINT_WORDS[lang] not in b["hint"] and not b["arrows"]]
        problems += [f"{width} px: {b['text']!r}: the table's background {colour} hides the "
                     "scroll shadow" for b in boxes if b["hides"] for colour in b["tables"]
                     if colour not in ("rgba(0, 0, 0, 0)", "transparent")]
    return problems


@pytest.mark.parametrize("lang,url", PHONE_PAGES, ids=page_ids(PHONE_PAGES))
def test_on_a_phone_charts_read_and_every_box_wider_than_the_screen_says_so_and_scrolls(
        visit, lang, url):
    """The page's phone visit, laid out at 390 px, then at 1280 px (at_each_width): the checks of
    chart_text_problems (chart pages), wide_box_problems (pages with a chart or diagram) and
    other_box_problems (pages with a table), each named in what fails. A picture of the first
    wide box at 390 px: test-artifacts/."""
    path = path_of(lang, url)
    page = visit("phone", lang, url)
    by_check = page.step("boxes")
    problems = []
    if "chart_text" in by_check:  # at 390 px only
        problems += chart_text_problems(by_check["chart_text"][0][1])
    if "wide_boxes" in by_check:
        problems += wide_box_problems(by_check["wide_boxes"], lang)
    if "other_boxes" in by_check:
        problems += other_box_problems(by_check["other_boxes"], lang)
    assert not problems, report(path, problems + page.problems("boxes"))


@pytest.mark.parametrize("lang,url", DIAGRAM_PAGES, ids=page_ids(DIAGRAM_PAGES))
def test_diagrams_are_drawn_named_and_follow_the_palette(visit, lang, url):
    path = path_of(lang, url)
    page = visit("desktop", lang, url)
    found = page.step("diagrams")  # a picture of the first English one: test-artifacts/
    source = SOURCES[url] if lang == "en" else SOURCES[url].with_suffix(f".{lang}.md")
    expected = source.read_text(encoding="utf-8").count("```dot")
    assert found["count"] == expected, f"{path}: {found['count']} diagrams, expected {expected}"
    problems = []
    for i, diagram in enumerate(found["diagrams"]):
        if not diagram["name"]:
            problems.append(f"diagram {i + 1}: no <svg role=img|group> with an aria-label")
            continue
        box, texts = diagram["box"], diagram["texts"]
        if not box or box["width"] < 200 or box["height"] < 50 or len(texts) < 3:
            problems.append(f"diagram {i + 1}: too small or too few labels ({box}, {texts})")
        light, dark, body = diagram["light"], diagram["dark"], diagram["body"]
        if light == dark or dark != body:
            problems.append(f"diagram {i + 1}: text {light} in light mode and {dark} in dark "
                            f"mode (dark page text: {body})")
    problems += page.problems("diagrams")
    assert not problems, report(path, problems)


@pytest.mark.parametrize("lang,url", DIAGRAM_PAGES, ids=page_ids(DIAGRAM_PAGES))
def test_diagrams_fit_the_column_on_a_desktop(visit, lang, url):
    """At 1280 px a diagram is whole in the column (on a phone it may scroll in its box)."""
    path = path_of(lang, url)
    page = visit("desktop", lang, url)
    cut = page.step("diagrams_fit")["cut"]
    assert not cut, report(path, [f"diagram wider than its column: {cut}"]
                           + page.problems("diagrams_fit"))


@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_the_code_spans_the_build_drops_had_the_codes_own_colour(visit, scheme):
    """slim_code() unwraps the spans of the token classes it names (their text stays): only
    right if, with the site's CSS in Chromium, each such span is painted as the code around it,
    in both palettes. A class that keeps a colour of its own (a keyword, a string) is the check
    that the probe sees colours at all."""
    from pipeline.pages.page_weight import PLAIN_CLASSES
    colours = visit("desktop", "en", "criteria/").step("code_spans")[scheme]
    spans = colours["spans"]
    assert spans["k"] != colours["code"] and spans["s2"] != colours["code"], colours
    differ = {c: spans[c] for c in PLAIN_CLASSES if spans[c] != colours["code"]}
    assert not differ, f"{scheme}: painted unlike the code ({colours['code']}): {differ}"
