"""Each built page opened once in Chromium per viewport, for every per-page check that reads it.

A visit loads the page once and runs, one after another, the steps that the checks of
tests/site/test_pages.py, test_charts_and_tables.py, test_notebook_pages.py and
test_copy_buttons.py need on that page, each step collecting what its check asserts on (counts,
sizes, texts, what was copied, what the page complained about by then); the checks then assert
on what was collected (the page was loaded once per check before).

- "phone": every page, loaded at 375 px (a phone's context: is_mobile, touch), as a reader's
  phone opens it: it loads cleanly and fits; the marks Material's script finds on <body> and
  <html> as it starts (recorded from before the page's own scripts, WATCH_*); then the same
  page laid out at 390 px (the notebook's width; charts, diagrams and tables) and at 1280 px
  (what a wider window shows of the boxes), as browsing.at_each_width lays it out.
- "desktop": the pages a desktop check reads (charts, diagrams, copy buttons, the notebook,
  the landing pages' dark mode and language selector), at 1280 px. The steps that change the
  page for good run last: the notebook's full CSS put back, the language selector followed.

Under pytest-xdist the modules that read a page run in different workers: the first worker
that asks for a visit makes it, under a lock, and the others read what it collected (JSON in
the run's shared folder). A step that raises is recorded as that step's error, and the check
that reads it fails with it; the steps after it still run.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import traceback
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from browsing import (ANTI_ALIASING_LEVELS, ARTIFACTS, CHANGED_STYLES, CHART_PAGES, COPY_CASES,
                      DIAGRAM_PAGES, NOTEBOOK_PAGES, PHONE, PHONE_390, SNAPSHOT_STYLES,
                      SOURCES, TABLE_PAGES, TWO_FRAMES, WATCH_HTML, WATCH_SWITCHING, WIDE_PAGES,
                      at_each_width, open_every_collapsed_block, path_of, pixels, screenshot,
                      titled_embeds)
import committed
from chromium import DESKTOP, Tab, clear_storage, copied_text_of, reused_context
from conftest import REPO, XDIST_WORKER

# On a phone, the pages whose charts, wide boxes or tables are measured (the three checks of
# test_charts_and_tables.py's phone test).
PHONE_PAGES = sorted(set(CHART_PAGES) | set(WIDE_PAGES) | set(TABLE_PAGES))

CRITERIA = ("en", "criteria/")
NOTEBOOK_CODE_PAGE = ("en", NOTEBOOK_PAGES[0][1])


# --- what the phone's checks measure -------------------------------------------------------

WIDER_THAN_THE_SCREEN = """() => {
    const limit = document.documentElement.clientWidth, out = [];
    const inScroller = e => {  // a table or code block may scroll in its own box
        for (let p = e.parentElement; p && p !== document.body; p = p.parentElement)
            if (getComputedStyle(p).overflowX !== 'visible') return true;
        return false;
    };
    for (const e of document.body.querySelectorAll('*')) {
        const r = e.getBoundingClientRect();
        if (r.right > limit + 1 && r.width > 0 && !inScroller(e))
            out.push(`${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}` +
                     `${e.classList.length ? '.' + [...e.classList].join('.') : ''} ` +
                     `(right edge ${Math.round(r.right)} px)`);
    }
    return out.slice(0, 8);
}"""

BROKEN_IN_CELLS = """() => [...document.querySelectorAll('article td code')]
    .filter(c => !/\\s/.test(c.textContent) && c.getClientRects().length > 1)
    .map(c => c.textContent)"""

WHITE_SPACE_AS_WRITTEN = """tags => [...document.body.querySelectorAll('*')]
    .filter(e => !/^(normal|nowrap)$/.test(getComputedStyle(e).whiteSpace)
                 && !e.closest(tags.join(',')) && [...e.childNodes].some(n => n.nodeType === 3))
    .map(e => e.tagName.toLowerCase() + [...e.classList].map(c => '.' + c).join('') + ' '
              + getComputedStyle(e).whiteSpace)"""

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

NOTEBOOK_ON_A_PHONE = """() => {
    const article = document.querySelector('article').getBoundingClientRect();
    const prose = document.querySelector('.jp-MarkdownCell .jp-RenderedMarkdown p')
                  .getBoundingClientRect();
    const code = document.querySelector('.jp-CodeCell .highlight-ipynb pre');
    const line = [...code.querySelectorAll('span')].find(s => s.textContent.trim())
                 .getBoundingClientRect();
    const copy = code.closest('.jp-CodeCell').querySelector('clipboard-copy');
    const button = copy.getBoundingClientRect();
    const icon = copy.querySelector('svg').getBBox();  // what its icon draws (a <use>)
    return {article: article.width, prose: prose.width, code: code.getBoundingClientRect().width,
            overlap: button.bottom > line.top + 1 && button.top < line.bottom - 1,
            icon: [icon.width, icon.height]};
}"""

SWITCHING_LIFTED = "!document.body.hasAttribute('data-md-color-switching')"


def _phone_loads(tab: Tab, lang: str) -> dict:
    """test_pages.py: loaded cleanly, in its language, nothing wider than the phone, no name
    broken in a table cell, no white space drawn as written outside the elements that keep it."""
    from pipeline.pages.page_weight import KEEPS_WHITE_SPACE
    page = tab.page
    tab.settle()
    found = {"requests": len(tab.requests),
             "lang": page.evaluate("document.documentElement.lang"),
             "widths": page.evaluate("() => [document.documentElement.scrollWidth, "
                                     "document.documentElement.clientWidth]")}
    found["wide"] = page.evaluate(WIDER_THAN_THE_SCREEN) if found["widths"][0] > found["widths"][1] \
        else []
    tab.lay_out_everything()
    tab.settle()  # what the loaded blocks and charts ask for in turn (images, styles)
    found["broken"] = page.evaluate(BROKEN_IN_CELLS)
    found["white_space"] = page.evaluate(WHITE_SPACE_AS_WRITTEN, list(KEEPS_WHITE_SPACE))
    found["keeps_white_space"] = list(KEEPS_WHITE_SPACE)
    return found


def _watched(tab: Tab) -> dict:
    """What the watches recorded as the page loaded (test_pages.py's checks of what Material's
    script finds): <html>'s writes by `load`, <body>'s mark once Material has lifted it."""
    html_writes = tab.page.evaluate("window.__html")
    tab.page.wait_for_function(SWITCHING_LIFTED, timeout=15_000)
    return {"html": html_writes, "switching": tab.page.evaluate("window.__switching")}


def _notebook_phone(tab: Tab) -> dict:
    tab.page.set_viewport_size(PHONE_390)
    tab.page.evaluate(TWO_FRAMES)
    tab.lay_out_everything()
    return tab.page.evaluate(NOTEBOOK_ON_A_PHONE)


def _phone_boxes(tab: Tab, lang: str, url: str) -> dict:
    """test_charts_and_tables.py: at 390 and 1280 px, what the chart text, wide-box and
    other-box checks measure; a picture of the first wide box at 390 px."""
    page = (lang, url)
    if page in TABLE_PAGES:  # the table checks read every chart's data table open
        tab.page.evaluate(
            "document.querySelectorAll('details.chart-data').forEach(d => d.open = true)")
    measures = [name for name, on in (("chart_text", page in CHART_PAGES),
                                      ("wide_boxes", page in WIDE_PAGES),
                                      ("other_boxes", page in TABLE_PAGES)) if on]
    script = {"chart_text": CHART_TEXT, "wide_boxes": WIDE_BOXES, "other_boxes": OTHER_BOXES}
    both = "() => [" + ", ".join(f"({script[m]})()" for m in measures) + "]"
    measured = at_each_width(tab, both)
    found = {m: [(width, values[i]) for width, values in measured] for i, m in enumerate(measures)}
    if page in WIDE_PAGES:
        ARTIFACTS.mkdir(exist_ok=True)
        tab.page.set_viewport_size(PHONE_390)
        tab.page.evaluate(TWO_FRAMES)
        first = tab.page.locator("article figure.benchmark-chart, article figure.diagram").first
        first.screenshot(
            path=str(ARTIFACTS / f"phone-wide-{lang}-{url.strip('/') or 'index'}.png"))
    return found


# --- what the desktop's checks measure ------------------------------------------------------

def _landing_picture(tab: Tab, lang: str) -> dict:
    ARTIFACTS.mkdir(exist_ok=True)
    tab.page.screenshot(path=str(ARTIFACTS / f"landing-{lang}.png"))
    return {}


def _charts(tab: Tab, lang: str, url: str) -> dict:
    """test_charts_render_visibly_and_name_the_machine: every chart of this site's own, the
    notes of the charts without data, and each drawn chart's SVG as it shows."""
    page = tab.page
    tab.load_everything()  # a chart is loaded as it comes near the screen
    found = {"drawn": [f.get_attribute("data-benchmark") for f in
                       page.locator("figure.benchmark-chart:not(.published-chart)").all()],
             "empty": [], "figures": []}
    for empty in page.locator("figure.benchmark-chart.no-data").all():
        empty.scroll_into_view_if_needed()  # laid out only near the screen (content-visibility)
        note = empty.locator(".no-data-note")
        if note.count() == 1:
            try:  # drawn on a frame after the scroll
                note.wait_for(state="visible", timeout=5_000)
            except PlaywrightError:
                pass
        one = note.count() == 1
        found["empty"].append({
            "name": empty.get_attribute("data-benchmark"), "notes": note.count(),
            "visible": one and note.is_visible(),
            # The words from the DOM (textContent), whether or not the block has been drawn yet.
            "text": note.text_content() if one else "", "svgs": empty.locator("svg").count()})
    found["no_data"] = page.locator("figure.benchmark-chart.no-data").count()
    figures = page.locator("figure.benchmark-chart:not(.no-data):not(.published-chart)")
    for i, figure in enumerate(figures.all()):
        svg = figure.locator(":scope > .chart-box > svg")
        chart = {"name": figure.get_attribute("data-benchmark"), "svgs": svg.count()}
        found["figures"].append(chart)
        if svg.count() != 1:
            continue
        svg.scroll_into_view_if_needed()
        chart.update(box=svg.bounding_box(), visible=svg.is_visible(), labels=svg.evaluate(
            """s => [...s.querySelectorAll('g[id^="matplotlib.axis"]')].map(
            axis => [...axis.children].filter(g => g.id.startsWith('text_'))
                                     .map(g => g.textContent.trim()).join(' '))"""),
                     text=svg.evaluate("s => s.textContent"))
        if i == 0:
            ARTIFACTS.mkdir(exist_ok=True)
            figure.screenshot(path=str(ARTIFACTS / f"chart-{lang}-{url.strip('/') or 'index'}.png"))
    return found


def _diagrams(tab: Tab, lang: str) -> dict:
    """test_diagrams_are_drawn_named_and_follow_the_palette: each diagram's name, size, labels
    and the colour of its text in the light and the dark palette."""
    figures = tab.page.locator("figure.diagram")
    found = {"count": figures.count(), "diagrams": []}
    for i, figure in enumerate(figures.all()):
        # role=img, or role=group when its boxes are links (pipeline/pages/diagrams.py)
        svg = figure.locator(":scope > svg[role=img], :scope > svg[role=group]")
        name = svg.get_attribute("aria-label") if svg.count() == 1 else None
        diagram = {"name": name}
        found["diagrams"].append(diagram)
        if not name:
            continue
        diagram["box"] = svg.bounding_box()
        diagram["texts"] = svg.evaluate(
            "s => [...s.querySelectorAll('text')].map(t => t.textContent.trim())")
        ink = "s => getComputedStyle(s.querySelector('text')).fill"
        diagram["light"] = svg.evaluate(ink)
        tab.palette("slate")
        diagram["dark"] = svg.evaluate(ink)
        diagram["body"] = tab.page.evaluate("getComputedStyle(document.body).color")
        tab.palette("default")
        if i == 0 and lang == "en":
            ARTIFACTS.mkdir(exist_ok=True)
            figure.screenshot(path=str(ARTIFACTS / "diagram-en.png"))
    return found


def _diagrams_fit(tab: Tab) -> dict:
    tab.lay_out_everything()
    return {"cut": tab.page.evaluate("""() => [...document.querySelectorAll('figure.diagram')]
        .filter(f => f.scrollWidth > f.clientWidth + 1).map(f => `${f.scrollWidth} > ${f.clientWidth}`)""")}


CODE_SPAN_COLOURS = """classes => {
    const box = document.createElement("div");
    box.className = "highlight";
    box.innerHTML = "<pre><code>" + classes.map(c => `<span class="${c}">x</span>`).join("")
                    + "</code></pre>";
    document.querySelector("article").append(box);
    const code = getComputedStyle(box.querySelector("code")).color;
    const found = {code, spans: Object.fromEntries([...box.querySelectorAll("span")].map(
        s => [s.className, getComputedStyle(s).color]))};
    box.remove();  // the probe leaves the page as it was, for the steps after it
    return found;
}"""


def _in_both_palettes(tab: Tab, script: str, arg) -> dict:
    """{scheme: what `script` returns} in Material's light and dark palettes, light again after."""
    found = {}
    for scheme in ("default", "slate"):
        tab.palette(scheme)
        found[scheme] = tab.page.evaluate(script, arg)
    tab.palette("default")
    return found


def _code_spans(tab: Tab) -> dict:
    """test_the_code_spans_the_build_drops_had_the_codes_own_colour, in both palettes."""
    from pipeline.pages.page_weight import PLAIN_CLASSES
    return _in_both_palettes(tab, CODE_SPAN_COLOURS, [*PLAIN_CLASSES, "k", "s2"])


def _copy_buttons(tab: Tab, lang: str, url: str) -> dict:
    """test_copy_button_copies_exactly_the_snippet: what each titled block's button copied."""
    page = tab.page
    open_every_collapsed_block(tab)
    copied = []
    for title, rest, ref in titled_embeds(url, lang):
        name = Path(title).name + rest  # as the page titles it: the file's name, then its words
        block = page.locator("div.highlight").filter(
            has=page.locator(":scope > span.filename", has_text=re.compile(
                rf"^\s*{re.escape(name)}\s*$")))
        try:
            block.first.wait_for(state="attached", timeout=5_000)
        except PlaywrightTimeout:
            pass
        entry = {"ref": ref, "name": name, "blocks": block.count()}
        copied.append(entry)
        if block.count() != 1:
            continue
        page.evaluate("navigator.clipboard.writeText('')")
        block.hover()
        block.locator("button.md-code__button[data-md-type=copy], button.md-clipboard").first.click()
        entry["copied"] = copied_text_of(page)
    return {"copied": copied, "other_hosts": tab.other_hosts()}


def _whole_program_listing(tab: Tab) -> dict:
    """test_the_whole_program_listing_copies_the_program_and_a_helper_offers_no_copy."""
    page = tab.page
    program = page.locator('div.program[data-program="criteria/tf_backend/masking.py"]')
    program.locator("details").evaluate("d => d.open = true")
    copied = []
    for block in (program.locator("div.highlight").nth(0), program.locator("details div.highlight")):
        page.evaluate("navigator.clipboard.writeText('')")
        block.scroll_into_view_if_needed()
        block.hover()
        block.locator("button.md-code__button[data-md-type=copy], button.md-clipboard").first.click()
        copied.append(copied_text_of(page))
    page.locator("article details > summary", has_text="TensorFlow backend: _pretend_gpu.py").click()
    helper = page.locator('div.no-copy[data-listing="criteria/tf_backend/_pretend_gpu.py"]')
    helper.hover()
    return {"copied": copied,
            "helper_buttons": helper.locator("button.md-code__button, button.md-clipboard").count()}


def _notebook_math(tab: Tab) -> dict:
    """test_notebook_math_is_typeset_at_build_and_no_math_script_loads."""
    page = tab.page
    tab.settle()
    found = {"scripts": page.evaluate("[...document.scripts].map(s => s.src).filter(Boolean)"),
             "formulas": page.locator(".jp-MarkdownOutput mjx-container > svg").count(),
             "hidden": page.locator(
                 ".jp-MarkdownOutput mjx-container > mjx-assistive-mml math").count()}
    display = page.locator(".jp-MarkdownOutput mjx-container[display=true] > svg").first
    display.scroll_into_view_if_needed()
    found["display"] = {"visible": display.is_visible(), "box": display.bounding_box()}
    tab.lay_out_everything()
    found["text"] = page.evaluate("[...document.querySelectorAll('.jp-MarkdownOutput')]"
                                  ".map(c => c.innerText).join(' ')")
    return found


def _notebook_tables(tab: Tab) -> dict:
    """The desktop half of test_the_notebook_uses_the_width_on_a_phone_and_its_tables_fit_on_a_desktop."""
    tab.lay_out_everything()
    return {"cut": tab.page.evaluate("""() => [...document.querySelectorAll('.jp-OutputArea-output pre')]
        .filter(p => /Param #/.test(p.textContent) && p.scrollWidth > p.clientWidth + 1)
        .map(p => `${p.scrollWidth} > ${p.clientWidth}`)""")}


NOTEBOOK_CODE_LOOKS = """classes => {
    const cell = document.querySelector(".jp-CodeCell .highlight-ipynb");
    const box = cell.cloneNode(false);
    box.innerHTML = "<pre>" + classes.map(c => `<span class="${c}">x</span>`).join("") + "</pre>";
    cell.after(box);
    const look = (e, ink) => { const s = getComputedStyle(e);
        return [...(ink ? [s.color, s.fontWeight, s.fontStyle] : []), s.textDecorationLine,
                ["rgba(0, 0, 0, 0)", "transparent"].includes(s.backgroundColor) ? "" : "background"]
            .join(" "); };
    const pre = box.querySelector("pre");
    const found = {code: look(pre, true), space: look(pre, false), spans: Object.fromEntries(
        [...pre.querySelectorAll("span")].map(s => [s.className, look(s, s.className !== "w")]))};
    box.remove();  // the probe leaves the page as it was, for the CSS check after it
    return found;
}"""


def _notebook_code_spans(tab: Tab) -> dict:
    """test_the_notebook_code_spans_the_build_drops_look_like_the_code_around_them."""
    from pipeline.pages.page_weight import NOTEBOOK_PLAIN_CLASSES
    return _in_both_palettes(tab, NOTEBOOK_CODE_LOOKS, [*NOTEBOOK_PLAIN_CLASSES, "k", "s2", "c1"])


def _settled_palette(tab: Tab, scheme: str) -> None:
    """The palette switched, Material's mark of a switch lifted (its own next task), and the
    page as a picture of it before and after must find it: at its top (the sticky header is
    drawn where the page is scrolled to), nothing focused, the mouse on no control (the toggle
    just clicked would show its hover)."""
    tab.palette(scheme)
    tab.page.wait_for_function(SWITCHING_LIFTED, timeout=5_000)
    tab.page.evaluate("() => { document.activeElement?.blur(); window.scrollTo(0, 0); }")
    tab.page.mouse.move(0, 0)
    tab.page.evaluate(TWO_FRAMES)


def _notebook_css(tab: Tab, lang: str) -> dict:
    """test_notebook_css_trimmed_at_build_draws_what_the_full_css_draws, both palettes: every
    element's computed style and a picture of the whole page in each palette with the trimmed
    CSS, then the full CSS put back in its place (once: it changes the page for good) and each
    palette's styles and picture again. Pixels are compared here, where the pictures are."""
    from pipeline.pages.notebook_html import jupyter_css
    page = tab.page
    tab.lay_out_everything()  # both screenshots show every cell, not only those near the screen
    tab.settle()
    # the trimmed CSS: stylesheets of the site the page links (pipeline/pages/notebook_html.py)
    found = {"trimmed": page.evaluate(
        """() => [...document.querySelectorAll('link[data-purged-from]')]
        .map(l => [l.dataset.purgedFrom, [...l.sheet.cssRules].map(r => r.cssText).join('').length])""")}
    before = {}
    for scheme in ("default", "slate"):
        _settled_palette(tab, scheme)
        found[scheme] = {"elements": page.evaluate(SNAPSHOT_STYLES)}
        page.evaluate(f"() => {{ window.__styles_{scheme} = window.__styles; }}")  # kept there
        before[scheme] = screenshot(page)
    page.evaluate("""css => { for (const link of document.querySelectorAll('link[data-purged-from]')) {
                                 const full = document.createElement('style');
                                 full.textContent = css[link.dataset.purgedFrom];
                                 link.replaceWith(full); } }""", jupyter_css())
    for scheme in ("slate", "default"):  # the palette left on first: one switch fewer
        _settled_palette(tab, scheme)
        page.evaluate(f"() => {{ window.__styles = window.__styles_{scheme}; }}")
        found[scheme]["changed"] = page.evaluate(CHANGED_STYLES)
        found[scheme]["moved"] = _moved(before[scheme], screenshot(page), f"notebook-{lang}-{scheme}")
    return found


def _moved(png_before: bytes, png_after: bytes, stem: str) -> str:
    """Where two pictures of the page differ past anti-aliasing ("" if nowhere); both saved
    to test-artifacts/STEM-{trimmed,full}.png when they do."""
    # The same bytes are the same pixels: the usual case. Decoding and comparing the pixels of a
    # page 15,000 px tall takes seconds, so it is done only when the bytes differ.
    if png_after == png_before:
        return ""
    shot_before, shot_after = pixels(png_before), pixels(png_after)
    moved = (shot_before.shape != shot_after.shape or
             np.abs(shot_before - shot_after).max(axis=2) > ANTI_ALIASING_LEVELS)
    if not np.any(moved):
        return ""
    ARTIFACTS.mkdir(exist_ok=True)
    for name, shot in (("trimmed", shot_before), ("full", shot_after)):
        Image.fromarray(shot.astype(np.uint8)).save(ARTIFACTS / f"{stem}-{name}.png")
    return "the page's size" if isinstance(moved, bool) else \
        f"{np.count_nonzero(moved)} pixels, rows {np.nonzero(moved)[0].min()}–{np.nonzero(moved)[0].max()}"


def _dark_mode(tab: Tab, lang: str) -> dict:
    """test_dark_mode_toggles: the page's palette and background, before, in dark mode and
    after toggling back."""
    page = tab.page
    page.evaluate("window.scrollTo(0, 0)")  # the picture shows the top, as a reader lands

    def state():
        return page.evaluate("() => [document.body.getAttribute('data-md-color-scheme'), "
                             "getComputedStyle(document.body).backgroundColor]")

    toggle = page.locator("form[data-md-component=palette] label:not([hidden])")
    found = {"light": state()}
    toggle.click()
    page.wait_for_function("document.body.getAttribute('data-md-color-scheme') === 'slate'",
                           timeout=5_000)
    found["dark"] = state()
    if lang == "en":
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "landing-en-dark.png"))
    toggle.click()
    page.wait_for_function("document.body.getAttribute('data-md-color-scheme') === 'default'",
                           timeout=5_000)
    found["again"] = state()
    return found


def _language_selector(tab: Tab, lang: str, url: str) -> dict:
    """test_language_selector_lands_on_the_same_page: the selector's link to the other language
    clicked (the page is left: the last step)."""
    from browsing import twin_lang
    page, other = tab.page, twin_lang(lang)
    expected = path_of(other, url)
    page.evaluate("window.scrollTo(0, 0)")
    selector = page.locator(".md-header .md-select")
    selector.locator("button").hover()
    link = selector.locator(f"a.md-select__link[hreflang={other}]")
    found = {"links": link.count(), "href": None, "landed_at": None, "lang": None}
    if link.count() != 1:
        return found
    found["href"] = link.get_attribute("href")
    link.click()
    try:
        page.wait_for_url(lambda u: urlsplit(u).path == expected,
                          wait_until="domcontentloaded", timeout=10_000)
    except PlaywrightTimeout:
        found["landed_at"] = page.url
        return found
    found["landed_at"] = expected
    found["lang"] = page.evaluate("document.documentElement.lang")
    return found


# --- the visits ----------------------------------------------------------------------------

def _step(found: dict, name: str, tab: Tab, run) -> None:
    """Run one step; keep what it collected, or its error, and what the page complained about
    by its end."""
    try:
        found[name] = {"data": run()}
    except Exception:  # recorded for the check that reads this step; the next steps still run
        found[name] = {"error": traceback.format_exc(limit=6)}
    found[name]["problems"] = list(tab.problems)


def _phone(browser, origin: str, lang: str, url: str) -> dict:
    context = reused_context(browser, origin, "phone", viewport=PHONE, is_mobile=True,
                             has_touch=True, init_scripts=(WATCH_SWITCHING, WATCH_HTML))
    tab, found = Tab(context, origin), {}
    try:
        tab.goto(path_of(lang, url))
        _step(found, "watch", tab, lambda: _watched(tab))
        _step(found, "loads", tab, lambda: _phone_loads(tab, lang))
        if (lang, url) in NOTEBOOK_PAGES:
            _step(found, "notebook", tab, lambda: _notebook_phone(tab))
        if (lang, url) in PHONE_PAGES:
            _step(found, "boxes", tab, lambda: _phone_boxes(tab, lang, url))
    finally:
        clear_storage(tab.page)
        tab.page.close()
    return found, tab.requests


def _desktop(browser, origin: str, lang: str, url: str) -> dict:
    context = reused_context(browser, origin, "desktop", viewport=DESKTOP, clipboard=True)
    tab, found, page = Tab(context, origin), {}, (lang, url)
    try:
        tab.goto(path_of(lang, url))
        if url == "":
            _step(found, "landing", tab, lambda: _landing_picture(tab, lang))
        if page in CHART_PAGES:
            _step(found, "charts", tab, lambda: _charts(tab, lang, url))
        if page in DIAGRAM_PAGES:
            _step(found, "diagrams", tab, lambda: _diagrams(tab, lang))
            _step(found, "diagrams_fit", tab, lambda: _diagrams_fit(tab))
        if page == CRITERIA:
            _step(found, "code_spans", tab, lambda: _code_spans(tab))
            _step(found, "listing", tab, lambda: _whole_program_listing(tab))
        if page in COPY_CASES:
            _step(found, "copy", tab, lambda: _copy_buttons(tab, lang, url))
        if page in NOTEBOOK_PAGES:
            _step(found, "math", tab, lambda: _notebook_math(tab))
            _step(found, "notebook_tables", tab, lambda: _notebook_tables(tab))
            if page == NOTEBOOK_CODE_PAGE:
                _step(found, "notebook_code_spans", tab, lambda: _notebook_code_spans(tab))
            _step(found, "notebook_css", tab, lambda: _notebook_css(tab, lang))  # changes the CSS
        if url == "":
            _step(found, "dark_mode", tab, lambda: _dark_mode(tab, lang))
            _step(found, "language", tab, lambda: _language_selector(tab, lang, url))  # leaves
    finally:
        clear_storage(tab.page)
        tab.page.close()
    return found, tab.requests


_MADE: dict[tuple[str, str, str], dict] = {}  # this process's visits


class Visit:
    """What one visit collected: `step(name)` gives a step's data (the check fails with the
    step's error if it raised), `problems(name)` what the page complained about by its end."""

    def __init__(self, kind: str, lang: str, url: str, found: dict):
        self.where = f"{path_of(lang, url)} ({kind} visit)"
        self.found = found

    def step(self, name: str):
        if name not in self.found:
            pytest.fail(f"{self.where}: no step {name!r} in this visit", pytrace=False)
        if "error" in self.found[name]:
            pytest.fail(f"{self.where}: the step {name!r} failed in the browser:\n"
                        f"{self.found[name]['error']}", pytrace=False)
        return self.found[name]["data"]

    def problems(self, name: str) -> list[str]:
        return self.found[name]["problems"]


def committed_name(kind: str, lang: str, url: str) -> str:
    """The name of a visit's committed run: visits/phone-es-troubleshooting_keras_."""
    return "visits/" + f"{kind}-{lang}-{url}".replace("/", "_")


def _inputs(kind: str, lang: str, url: str) -> dict:
    """What decides a visit besides the files it asks the site for and the code: the page's
    sources (which steps run, the titles the copy step looks for), and the notebook's full CSS."""
    source = SOURCES[url]
    twin = source.with_name(source.name.removesuffix(".md") + ".es.md")
    found = {p.relative_to(REPO).as_posix(): committed.sha(p) for p in (source, twin) if p.is_file()}
    if kind == "desktop" and (lang, url) in NOTEBOOK_PAGES:
        from pipeline.pages.notebook_html import jupyter_css
        found["jupyter_css"] = hashlib.sha256(json.dumps(jupyter_css(), sort_keys=True)
                                              .encode()).hexdigest()
    return found


@pytest.fixture
def visit(browser, request, tmp_path_factory):
    """visit(kind, lang, url) -> Visit: the page's visit of that kind ("phone" or "desktop"),
    made once for the run: by this process, or read from the worker that made it, or taken from
    its committed run when nothing it read has changed (committed.py)."""
    shared = tmp_path_factory.getbasetemp().parent / "visits" if XDIST_WORKER else None

    def get(kind: str, lang: str, url: str) -> Visit:
        if isinstance(browser, str):
            pytest.fail(browser, pytrace=False)
        key = (kind, lang, url)
        if key not in _MADE:
            name = committed_name(kind, lang, url)
            store = committed.for_site(request.getfixturevalue("site_root"), browser.version,
                                      request.getfixturevalue("server"))
            inputs = _inputs(kind, lang, url)
            _MADE[key] = store.taken(name, Path(__file__), inputs)
            if _MADE[key] is None:
                origin = request.getfixturevalue("server")

                def make() -> dict:
                    found, requests = {"phone": _phone, "desktop": _desktop}[kind](
                        browser, origin, lang, url)
                    found = json.loads(json.dumps(found))  # as a worker reads it from another
                    if not any("error" in step for step in found.values()):
                        store.keep(name, Path(__file__), committed.requested_files(requests, origin),
                                   found, inputs)
                    return found

                _MADE[key] = make() if shared is None else _shared(shared, key, make)
        return Visit(kind, lang, url, _MADE[key])

    return get


def _shared(folder: Path, key: tuple[str, str, str], make) -> dict:
    """The visit a worker of this run made, or made now by this one, under a lock."""
    from filelock import FileLock
    folder.mkdir(exist_ok=True)
    name = "-".join(key).replace("/", "_") or "page"
    file = folder / f"{name}.json"
    with FileLock(str(folder / f"{name}.lock")):
        if file.is_file():
            return json.loads(file.read_text(encoding="utf-8"))
        found = make()
        part = file.with_suffix(f".{os.getpid()}.part")
        part.write_text(json.dumps(found), encoding="utf-8")
        part.replace(file)
        return found
