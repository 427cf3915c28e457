"""The notebook pages in a real browser: the CSS trimmed at build draws what the full CSS
draws, math is typeset at build, the width is used on a phone.
(Shared pages and helpers: tests/site/browsing.py.)"""
from __future__ import annotations

import re

import numpy as np
import pytest
from PIL import Image

from browsing import (ANTI_ALIASING_LEVELS, ARTIFACTS, CHANGED_STYLES, NOTEBOOK_PAGES, PHONE_390,
                      SNAPSHOT_STYLES, page_ids, path_of, pixels, screenshot)
from chromium import report
from pipeline.pages.notebook_html import jupyter_css


@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_the_notebook_code_spans_the_build_drops_look_like_the_code_around_them(open_tab, scheme):
    """slim_notebook_code() unwraps the spans of the token classes it names in a notebook's code
    cells: only right if, with the notebook page's own CSS in Chromium, each such span has the
    colour, weight, style and background of the code around it, in both palettes (white space:
    the background and decoration, the only things of it that show). A keyword, a string and a
    comment keep a look of their own: the check that the probe sees styles at all."""
    from pipeline.pages.page_weight import NOTEBOOK_PLAIN_CLASSES
    tab = open_tab(path_of("en", NOTEBOOK_PAGES[0][1]))
    tab.palette(scheme)
    looks = tab.page.evaluate("""classes => {
        const cell = document.querySelector(".jp-CodeCell .highlight-ipynb");
        const box = cell.cloneNode(false);
        box.innerHTML = "<pre>" + classes.map(c => `<span class="${c}">x</span>`).join("") + "</pre>";
        cell.after(box);
        const look = (e, ink) => { const s = getComputedStyle(e);
            return [...(ink ? [s.color, s.fontWeight, s.fontStyle] : []), s.textDecorationLine,
                    ["rgba(0, 0, 0, 0)", "transparent"].includes(s.backgroundColor) ? "" : "background"]
                .join(" "); };
        const pre = box.querySelector("pre");
        return {code: look(pre, true), space: look(pre, false), spans: Object.fromEntries(
            [...pre.querySelectorAll("span")].map(s => [s.className, look(s, s.className !== "w")]))};
    }""", [*NOTEBOOK_PLAIN_CLASSES, "k", "s2", "c1"])
    spans = looks["spans"]
    assert all(spans[c] != looks["code"] for c in ("k", "s2", "c1")), looks
    differ = {c: spans[c] for c in NOTEBOOK_PLAIN_CLASSES
              if spans[c] != looks["space" if c == "w" else "code"]}
    assert not differ, f"{scheme}: unlike the code ({looks['code']}): {differ}"


@pytest.mark.parametrize("scheme", ["default", "slate"])
@pytest.mark.parametrize("lang,url", NOTEBOOK_PAGES, ids=page_ids(NOTEBOOK_PAGES))
def test_notebook_css_trimmed_at_build_draws_what_the_full_css_draws(open_tab, lang, url, scheme):
    """The build keeps about 18 KB of mkdocs-jupyter's 585 KB of CSS. Put the full files back in
    place of the trimmed blocks: every element's computed style and the whole page's pixels, in
    the light and the dark palette, must stay the same."""
    path = path_of(lang, url)
    tab = open_tab(path)
    tab.lay_out_everything()  # both screenshots show every cell, not only those near the screen
    tab.settle()
    tab.palette(scheme)
    page = tab.page
    # the trimmed CSS: stylesheets of the site the page links (pipeline/pages/notebook_html.py)
    trimmed = page.evaluate("""() => [...document.querySelectorAll('link[data-purged-from]')]
        .map(l => [l.dataset.purgedFrom, [...l.sheet.cssRules].map(r => r.cssText).join('').length])""")
    assert len(trimmed) >= 2 and all(0 < size < 100_000 for _, size in trimmed), \
        f"{path}: trimmed CSS {trimmed}"
    elements, png_before = page.evaluate(SNAPSHOT_STYLES), screenshot(page)
    page.evaluate("""css => { for (const link of document.querySelectorAll('link[data-purged-from]')) {
                                 const full = document.createElement('style');
                                 full.textContent = css[link.dataset.purgedFrom];
                                 link.replaceWith(full); } }""", jupyter_css())
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    changed, png_after = page.evaluate(CHANGED_STYLES), screenshot(page)
    assert elements > 100, f"{path}: {elements} notebook elements"
    assert not changed, report(f"{path} ({scheme}), styles that need the trimmed CSS",
                               changed[:10] + [f"({len(changed)} elements in all)"])
    # The same bytes are the same pixels: the usual case. Decoding and comparing the pixels of a
    # page 15,000 px tall takes seconds, so it is done only when the bytes differ.
    if png_after != png_before:
        shot_before, shot_after = pixels(png_before), pixels(png_after)
        moved = (shot_before.shape != shot_after.shape or
                 np.abs(shot_before - shot_after).max(axis=2) > ANTI_ALIASING_LEVELS)
        if np.any(moved):
            ARTIFACTS.mkdir(exist_ok=True)
            stem = f"notebook-{lang}-{scheme}"
            for name, shot in (("trimmed", shot_before), ("full", shot_after)):
                Image.fromarray(shot.astype(np.uint8)).save(ARTIFACTS / f"{stem}-{name}.png")
            where = "the page's size" if isinstance(moved, bool) else \
                f"{np.count_nonzero(moved)} pixels, rows {np.nonzero(moved)[0].min()}–{np.nonzero(moved)[0].max()}"
            pytest.fail(f"{path} ({scheme}): the page looks different with the full CSS ({where}; "
                        f"screenshots in test-artifacts/{stem}-*.png)", pytrace=False)
    assert not tab.problems, report(path, tab.problems)


@pytest.mark.parametrize("lang,url", NOTEBOOK_PAGES, ids=page_ids(NOTEBOOK_PAGES))
def test_notebook_math_is_typeset_at_build_and_no_math_script_loads(open_tab, lang, url):
    path = path_of(lang, url)
    tab = open_tab(path)
    tab.settle()
    page = tab.page
    scripts = page.evaluate("[...document.scripts].map(s => s.src).filter(Boolean)")
    assert not [s for s in scripts if "mathjax" in s.lower() or "mermaid" in s.lower()], scripts
    formulas = page.locator(".jp-MarkdownOutput mjx-container > svg")
    assert formulas.count() >= 20, f"{path}: {formulas.count()} typeset formulas"
    hidden = page.locator(".jp-MarkdownOutput mjx-container > mjx-assistive-mml math").count()
    assert hidden == formulas.count(), f"{path}: {hidden} MathML copies for screen readers"
    display = page.locator(".jp-MarkdownOutput mjx-container[display=true] > svg").first
    display.scroll_into_view_if_needed()
    box = display.bounding_box()
    assert display.is_visible() and box and box["width"] > 100 and box["height"] > 10, box
    tab.lay_out_everything()
    text = page.evaluate("[...document.querySelectorAll('.jp-MarkdownOutput')]"
                         ".map(c => c.innerText).join(' ')")
    leftover = re.findall(r"\$\$|\$[^$\s][^$\n]*\$|\\(?:frac|sigma|tanh|odot)\b", text)
    assert not leftover, f"{path}: TeX left as text: {leftover[:5]}"
    assert not tab.problems, report(path, tab.problems)


@pytest.mark.parametrize("lang,url", NOTEBOOK_PAGES, ids=page_ids(NOTEBOOK_PAGES))
def test_the_notebook_uses_the_width_on_a_phone_and_its_tables_fit_on_a_desktop(open_tab, lang, url):
    path = path_of(lang, url)
    tab = open_tab(path, viewport=PHONE_390, is_mobile=True, has_touch=True)
    tab.lay_out_everything()
    phone = tab.page.evaluate("""() => {
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
    }""")
    problems = []
    if min(phone["icon"]) < 10:
        problems.append(f"the copy button's icon draws {phone['icon']} (of 16 by 16)")
    if phone["prose"] < 0.9 * phone["article"]:
        problems.append(f"prose {phone['prose']:.0f} px wide in a {phone['article']:.0f} px column")
    if phone["code"] < 0.85 * phone["article"]:
        problems.append(f"code {phone['code']:.0f} px wide in a {phone['article']:.0f} px column")
    if phone["overlap"]:
        problems.append("the copy button covers the first line of code")
    desktop = open_tab(path)
    desktop.lay_out_everything()
    cut = desktop.page.evaluate("""() => [...document.querySelectorAll('.jp-OutputArea-output pre')]
        .filter(p => /Param #/.test(p.textContent) && p.scrollWidth > p.clientWidth + 1)
        .map(p => `${p.scrollWidth} > ${p.clientWidth}`)""")
    if cut:
        problems.append(f"model.summary() tables cut on a desktop: {cut}")
    assert not problems, report(path, problems + tab.problems + desktop.problems)
