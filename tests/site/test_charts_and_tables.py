"""Charts, diagrams, tables and code in a real browser: drawn, named, readable on a phone,
and a box wider than the screen says so and scrolls.
(Shared pages and helpers: tests/site/browsing.py.)"""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import Error as PlaywrightError

from browsing import (ARTIFACTS, CHART_PAGES, DIAGRAM_PAGES, HINT_WORDS, OWN_SPEEDUP_ON_RECORD,
                      PHONE_390, SOURCES, TABLE_PAGES, TWO_FRAMES, WIDE_PAGES, at_each_width,
                      page_ids, path_of)
from chromium import report


@pytest.mark.parametrize("lang,url", CHART_PAGES, ids=page_ids(CHART_PAGES))
def test_charts_render_visibly_and_name_the_machine(open_tab, lang, url):
    path = path_of(lang, url)
    tab = open_tab(path)
    tab.load_everything()  # a chart is loaded as it comes near the screen
    source = SOURCES[url].read_text(encoding="utf-8")
    # This site's measurements; the published chart (others' figures) names no machine of ours.
    every = tab.page.locator("figure.benchmark-chart:not(.published-chart)")
    # every marker draws its benchmark: one chart per machine and run that measured it
    marked = re.findall(r"<!--\s*(?:gpu-)?chart:\s*([\w.-]+)\s*-->", source) + (
        ["cudnn_speedup"] * source.count("<!-- speedup-evidence") if OWN_SPEEDUP_ON_RECORD else [])
    drawn = [f.get_attribute("data-benchmark") for f in every.all()]
    assert sorted(set(drawn)) == sorted(set(marked)) and len(drawn) >= len(marked), \
        f"{path}: charts of {drawn}, markers of {marked}"
    problems = []
    # A GPU-only chart without a GPU record says so, visibly, and draws nothing.
    for empty in tab.page.locator("figure.benchmark-chart.no-data").all():
        name = f"chart {empty.get_attribute('data-benchmark')}"
        empty.scroll_into_view_if_needed()  # laid out only near the screen (content-visibility)
        note = empty.locator(".no-data-note")
        if note.count() == 1:
            try:  # drawn on a frame after the scroll
                note.wait_for(state="visible", timeout=5_000)
            except PlaywrightError:
                pass
        if note.count() != 1 or not note.is_visible():
            problems.append(f"{name}: no visible note")
        # The words from the DOM (textContent), whether or not the block has been drawn yet.
        elif not re.search(r"No GPU measurement is recorded yet|Aún no hay ninguna medición en GPU",
                           note.text_content()) or empty.get_attribute("data-benchmark") not in \
                note.text_content():
            problems.append(f"{name}: the note does not say that no GPU measurement is recorded")
        if empty.locator("svg").count():
            problems.append(f"{name}: draws an SVG without data")
    if tab.page.locator("figure.benchmark-chart.no-data").count() > source.count("<!-- gpu-chart:"):
        problems.append("a chart that must have data has none")
    figures = tab.page.locator("figure.benchmark-chart:not(.no-data):not(.published-chart)")
    for i, figure in enumerate(figures.all()):
        name = f"chart {i + 1} ({figure.get_attribute('data-benchmark')})"
        svg = figure.locator(":scope > .chart-box > svg")
        if svg.count() != 1:
            problems.append(f"{name}: {svg.count()} inline <svg>")
            continue
        svg.scroll_into_view_if_needed()
        box = svg.bounding_box()
        if not svg.is_visible() or not box or box["width"] < 100 or box["height"] < 50:
            problems.append(f"{name}: not visible or too small ({box})")
        labels = svg.evaluate("""s => [...s.querySelectorAll('g[id^="matplotlib.axis"]')].map(
            axis => [...axis.children].filter(g => g.id.startsWith('text_'))
                                     .map(g => g.textContent.trim()).join(' '))""")
        if len(labels) < 2 or not all(labels):
            problems.append(f"{name}: axis labels missing (found {labels})")
        text = svg.evaluate("s => s.textContent")
        said = {"en": r"Measured on (CPU|GPU): .+? \((this page's run|\d{4}-\d\d-\d\d[^)]*)\)",
                "es": r"Medido en (CPU|GPU): .+? \((ejecución de esta página|\d{4}-\d\d-\d\d[^)]*)\)"}
        if not re.search(said[lang], text):
            problems.append(f"{name}: does not say which machine measured it "
                            "('Measured on CPU: …' / 'Medido en CPU: …')")
        if i == 0:
            ARTIFACTS.mkdir(exist_ok=True)
            figure.screenshot(path=str(ARTIFACTS / f"chart-{lang}-{url.strip('/') or 'index'}.png"))
    problems += tab.problems
    assert not problems, report(path, problems)


# On a phone, each page is loaded once for its three checks (they were three tests, each loading
# the page again): chart text size, boxes of charts and diagrams wider than their column, and
# any other box (tables, tabs) that hides part of what it holds.
PHONE_PAGES = sorted(set(CHART_PAGES) | set(WIDE_PAGES) | set(TABLE_PAGES))

CHART_TEXT = """() => [...document.querySelectorAll(
    'figure.benchmark-chart .chart-box > svg')].map(s => {
      const k = s.getBoundingClientRect().width / s.viewBox.baseVal.width;
      const px = [...s.querySelectorAll('text')].map(t => parseFloat(getComputedStyle(t).fontSize) * k)
                                               .filter(v => v > 0);
      const box = getComputedStyle(s.parentElement).overflowX;
      return [s.closest('figure').dataset.benchmark, Math.min(...px), box];
    })"""

WIDE_BOXES = """() => [...document.querySelectorAll(
    'article figure.benchmark-chart > .chart-box, article figure.diagram')].map(box => {
      const shown = box.querySelector('svg').getBoundingClientRect();
      const hint = getComputedStyle(box, '::before');
      const name = box.closest('figure').dataset.benchmark || box.querySelector('svg')
                   .getAttribute('aria-label').slice(0, 40);
      box.scrollLeft = box.scrollWidth;
      const end = box.querySelector('svg').getBoundingClientRect().right;
      const found = {name, hides: box.scrollWidth > box.clientWidth + 1,
              scrolls: ['auto', 'scroll'].includes(getComputedStyle(box).overflowX),
              reached: end <= box.getBoundingClientRect().right + 1,
              hint: hint.display !== 'none' ? hint.content : '',
              room: shown.top - box.getBoundingClientRect().top};
      box.scrollLeft = 0;
      return found;
    })"""

OTHER_BOXES = """() => [...document.querySelectorAll('article *')]
    .filter(box => !box.closest('pre, figure.diagram, .chart-box')
            && ['auto', 'scroll'].includes(getComputedStyle(box).overflowX))
    .map(box => ({hides: box.matches('.tabbed-labels')
                      // a row of tabs: a tab's name (not its padding) past the box's edge
                      ? [...box.querySelectorAll('label')].some(label => {
                          const words = document.createRange();
                          words.selectNodeContents(label.querySelector('a') || label);
                          return [...words.getClientRects()].some(r => r.width &&
                              r.right > box.getBoundingClientRect().right + 1); })
                      : box.scrollWidth > box.clientWidth + 1,
                  hint: getComputedStyle(box, '::before').content,
                  // Material's own cue for a row of tabs: an arrow button beside it.
                  arrows: box.matches('.tabbed-labels') && [...box.parentElement.querySelectorAll(
                      ':scope > .tabbed-control')].some(c => !c.hidden && c.offsetWidth > 0),
                  tables: [...box.querySelectorAll('table')].map(t =>
                      getComputedStyle(t).backgroundColor),
                  text: `${box.tagName.toLowerCase()}.${[...box.classList].join('.')} ` +
                        box.textContent.trim().slice(0, 40)}))"""


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
        open_tab, lang, url):
    """One load at 390 px, then the same page laid out at 1280 px (at_each_width): the checks of
    chart_text_problems (chart pages), wide_box_problems (pages with a chart or diagram) and
    other_box_problems (pages with a table), each named in what fails."""
    path = path_of(lang, url)
    page = (lang, url)
    tab = open_tab(path, viewport=PHONE_390, is_mobile=True, has_touch=True)
    if page in TABLE_PAGES:  # the table checks read every chart's data table open
        tab.page.evaluate(
            "document.querySelectorAll('details.chart-data').forEach(d => d.open = true)")
    measures = [m for m, on in ((CHART_TEXT, page in CHART_PAGES), (WIDE_BOXES, page in WIDE_PAGES),
                                (OTHER_BOXES, page in TABLE_PAGES)) if on]
    both = "() => [" + ", ".join(f"({m})()" for m in measures) + "]"
    measured = at_each_width(tab, both)
    by_check = {m: [(width, found[i]) for width, found in measured]
                for i, m in enumerate(measures)}
    problems = []
    if CHART_TEXT in by_check:  # at 390 px only
        problems += chart_text_problems(by_check[CHART_TEXT][0][1])
    if WIDE_BOXES in by_check:
        problems += wide_box_problems(by_check[WIDE_BOXES], lang)
    if OTHER_BOXES in by_check:
        problems += other_box_problems(by_check[OTHER_BOXES], lang)
    assert not problems, report(path, problems + tab.problems)
    if page in WIDE_PAGES:
        ARTIFACTS.mkdir(exist_ok=True)
        tab.page.set_viewport_size(PHONE_390)
        tab.page.evaluate(TWO_FRAMES)
        first = tab.page.locator("article figure.benchmark-chart, article figure.diagram").first
        first.screenshot(
            path=str(ARTIFACTS / f"phone-wide-{lang}-{url.strip('/') or 'index'}.png"))


@pytest.mark.parametrize("lang,url", DIAGRAM_PAGES, ids=page_ids(DIAGRAM_PAGES))
def test_diagrams_are_drawn_named_and_follow_the_palette(open_tab, lang, url):
    path = path_of(lang, url)
    tab = open_tab(path)
    source = SOURCES[url] if lang == "en" else SOURCES[url].with_suffix(f".{lang}.md")
    expected = source.read_text(encoding="utf-8").count("```dot")
    figures = tab.page.locator("figure.diagram")
    assert figures.count() == expected, f"{path}: {figures.count()} diagrams, expected {expected}"
    problems = []
    for i, figure in enumerate(figures.all()):
        # role=img, or role=group when its boxes are links (pipeline/pages/diagrams.py)
        svg = figure.locator(":scope > svg[role=img], :scope > svg[role=group]")
        name = svg.get_attribute("aria-label") if svg.count() == 1 else None
        if not name:
            problems.append(f"diagram {i + 1}: no <svg role=img|group> with an aria-label")
            continue
        box = svg.bounding_box()
        texts = svg.evaluate("s => [...s.querySelectorAll('text')].map(t => t.textContent.trim())")
        if not box or box["width"] < 200 or box["height"] < 50 or len(texts) < 3:
            problems.append(f"diagram {i + 1}: too small or too few labels ({box}, {texts})")
        ink = "s => getComputedStyle(s.querySelector('text')).fill"
        light = svg.evaluate(ink)
        tab.palette("slate")
        dark = svg.evaluate(ink)
        body = tab.page.evaluate("getComputedStyle(document.body).color")
        tab.palette("default")
        if light == dark or dark != body:
            problems.append(f"diagram {i + 1}: text {light} in light mode and {dark} in dark "
                            f"mode (dark page text: {body})")
        if i == 0 and lang == "en":
            ARTIFACTS.mkdir(exist_ok=True)
            figure.screenshot(path=str(ARTIFACTS / "diagram-en.png"))
    problems += tab.problems
    assert not problems, report(path, problems)


@pytest.mark.parametrize("lang,url", DIAGRAM_PAGES, ids=page_ids(DIAGRAM_PAGES))
def test_diagrams_fit_the_column_on_a_desktop(open_tab, lang, url):
    """At 1280 px a diagram is whole in the column (on a phone it may scroll in its box)."""
    path = path_of(lang, url)
    tab = open_tab(path)
    tab.lay_out_everything()
    cut = tab.page.evaluate("""() => [...document.querySelectorAll('figure.diagram')]
        .filter(f => f.scrollWidth > f.clientWidth + 1).map(f => `${f.scrollWidth} > ${f.clientWidth}`)""")
    assert not cut, report(path, [f"diagram wider than its column: {cut}"] + tab.problems)


@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_the_code_spans_the_build_drops_had_the_codes_own_colour(open_tab, scheme):
    """slim_code() unwraps the spans of the token classes it names (their text stays): only
    right if, with the site's CSS in Chromium, each such span is painted as the code around it,
    in both palettes. A class that keeps a colour of its own (a keyword, a string) is the check
    that the probe sees colours at all."""
    from pipeline.pages.page_weight import PLAIN_CLASSES
    tab = open_tab(path_of("en", "criteria/"))
    tab.palette(scheme)
    colours = tab.page.evaluate("""classes => {
        const box = document.createElement("div");
        box.className = "highlight";
        box.innerHTML = "<pre><code>" + classes.map(c => `<span class="${c}">x</span>`).join("")
                        + "</code></pre>";
        document.querySelector("article").append(box);
        const code = getComputedStyle(box.querySelector("code")).color;
        return {code, spans: Object.fromEntries([...box.querySelectorAll("span")].map(
            s => [s.className, getComputedStyle(s).color]))};
    }""", [*PLAIN_CLASSES, "k", "s2"])
    spans = colours["spans"]
    assert spans["k"] != colours["code"] and spans["s2"] != colours["code"], colours
    differ = {c: spans[c] for c in PLAIN_CLASSES if spans[c] != colours["code"]}
    assert not differ, f"{scheme}: painted unlike the code ({colours['code']}): {differ}"
