"""The notebook pages in a real browser: the CSS trimmed at build draws what the full CSS
draws, math is typeset at build, the width is used on a phone.
(Shared pages and helpers: tests/site/browsing.py. Each page is opened once per viewport for
the checks of every module that reads it: tests/site/visits.py.)"""
from __future__ import annotations

import re

import pytest

from browsing import NOTEBOOK_PAGES, page_ids, path_of
from chromium import report
from visits import NOTEBOOK_CODE_PAGE, visit  # noqa: F401 (visit: the fixture)


@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_the_notebook_code_spans_the_build_drops_look_like_the_code_around_them(visit, scheme):
    """slim_notebook_code() unwraps the spans of the token classes it names in a notebook's code
    cells: only right if, with the notebook page's own CSS in Chromium, each such span has the
    colour, weight, style and background of the code around it, in both palettes (white space:
    the background and decoration, the only things of it that show). A keyword, a string and a
    comment keep a look of their own: the check that the probe sees styles at all."""
    from pipeline.pages.page_weight import NOTEBOOK_PLAIN_CLASSES
    looks = visit("desktop", *NOTEBOOK_CODE_PAGE).step("notebook_code_spans")[scheme]
    spans = looks["spans"]
    assert all(spans[c] != looks["code"] for c in ("k", "s2", "c1")), looks
    differ = {c: spans[c] for c in NOTEBOOK_PLAIN_CLASSES
              if spans[c] != looks["space" if c == "w" else "code"]}
    assert not differ, f"{scheme}: unlike the code ({looks['code']}): {differ}"


@pytest.mark.parametrize("scheme", ["default", "slate"])
@pytest.mark.parametrize("lang,url", NOTEBOOK_PAGES, ids=page_ids(NOTEBOOK_PAGES))
def test_notebook_css_trimmed_at_build_draws_what_the_full_css_draws(visit, lang, url, scheme):
    """The build keeps about 18 KB of mkdocs-jupyter's 585 KB of CSS. Put the full files back in
    place of the trimmed blocks: every element's computed style and the whole page's pixels, in
    the light and the dark palette, must stay the same (the pictures where they differ:
    test-artifacts/notebook-LANG-SCHEME-*.png)."""
    path = path_of(lang, url)
    page = visit("desktop", lang, url)
    found = page.step("notebook_css")
    trimmed = found["trimmed"]
    assert len(trimmed) >= 2 and all(0 < size < 100_000 for _, size in trimmed), \
        f"{path}: trimmed CSS {trimmed}"
    elements, changed, moved = (found[scheme][k] for k in ("elements", "changed", "moved"))
    assert elements > 100, f"{path}: {elements} notebook elements"
    assert not changed, report(f"{path} ({scheme}), styles that need the trimmed CSS",
                               changed[:10] + [f"({len(changed)} elements in all)"])
    if moved:
        stem = f"notebook-{lang}-{scheme}"
        pytest.fail(f"{path} ({scheme}): the page looks different with the full CSS ({moved}; "
                    f"screenshots in test-artifacts/{stem}-*.png)", pytrace=False)
    assert not page.problems("notebook_css"), report(path, page.problems("notebook_css"))


@pytest.mark.parametrize("lang,url", NOTEBOOK_PAGES, ids=page_ids(NOTEBOOK_PAGES))
def test_notebook_math_is_typeset_at_build_and_no_math_script_loads(visit, lang, url):
    path = path_of(lang, url)
    page = visit("desktop", lang, url)
    found = page.step("math")
    scripts = found["scripts"]
    assert not [s for s in scripts if "mathjax" in s.lower() or "mermaid" in s.lower()], scripts
    formulas = found["formulas"]
    assert formulas >= 20, f"{path}: {formulas} typeset formulas"
    assert found["hidden"] == formulas, f"{path}: {found['hidden']} MathML copies for screen readers"
    box = found["display"]["box"]
    assert found["display"]["visible"] and box and box["width"] > 100 and box["height"] > 10, box
    leftover = re.findall(r"\$\$|\$[^$\s][^$\n]*\$|\\(?:frac|sigma|tanh|odot)\b", found["text"])
    assert not leftover, f"{path}: TeX left as text: {leftover[:5]}"
    assert not page.problems("math"), report(path, page.problems("math"))


@pytest.mark.parametrize("lang,url", NOTEBOOK_PAGES, ids=page_ids(NOTEBOOK_PAGES))
def test_the_notebook_uses_the_width_on_a_phone_and_its_tables_fit_on_a_desktop(visit, lang, url):
    path = path_of(lang, url)
    on_phone, on_desktop = visit("phone", lang, url), visit("desktop", lang, url)
    phone = on_phone.step("notebook")  # laid out at 390 px
    problems = []
    if min(phone["icon"]) < 10:
        problems.append(f"the copy button's icon draws {phone['icon']} (of 16 by 16)")
    if phone["prose"] < 0.9 * phone["article"]:
        problems.append(f"prose {phone['prose']:.0f} px wide in a {phone['article']:.0f} px column")
    if phone["code"] < 0.85 * phone["article"]:
        problems.append(f"code {phone['code']:.0f} px wide in a {phone['article']:.0f} px column")
    if phone["overlap"]:
        problems.append("the copy button covers the first line of code")
    cut = on_desktop.step("notebook_tables")["cut"]
    if cut:
        problems.append(f"model.summary() tables cut on a desktop: {cut}")
    assert not problems, report(path, problems + on_phone.problems("notebook")
                                + on_desktop.problems("notebook_tables"))
