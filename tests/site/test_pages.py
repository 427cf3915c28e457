"""Every page in a real browser: it loads cleanly, fits a phone, its language selector lands on
its twin, old addresses land on their answer, and what Material's script changes as it
starts was already so in the page.
(Shared pages and helpers: tests/site/browsing.py.)"""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from browsing import (ARTIFACTS, LANGS, PAGES, PAGE_IDS, PHONE, WATCH_SWITCHING,
                      changes_while_loading, html_writes, path_of, sitemap_paths, twin_lang)
from chromium import report


def test_every_page_in_the_sitemap_is_tested(site_root):
    """The pages parametrized here come from docs/ (known before the build): none is missed."""
    missed = sitemap_paths(site_root) - {path_of(lang, url) for lang, url in PAGES}
    assert not missed, f"built pages these tests do not visit: {sorted(missed)}"


def test_the_sitemap_lists_every_page(site_root):
    """Every page, in both languages, is in sitemap.xml (with its other-language version)."""
    missing = {path_of(lang, url) for lang, url in PAGES} - sitemap_paths(site_root)
    assert not missing, f"pages missing from sitemap.xml: {sorted(missing)}"


@pytest.mark.parametrize("lang,url", PAGES, ids=PAGE_IDS)
def test_page_loads_cleanly_and_fits_a_phone(open_tab, lang, url):
    """No console error, no failed request, nothing from another host, once everything the
    page loads later (collapsed blocks, charts) has loaded; at 375 px nothing scrolls
    sideways (tables and code blocks may scroll inside their own box)."""
    path = path_of(lang, url)
    tab = open_tab(path, viewport=PHONE, is_mobile=True, has_touch=True)
    tab.settle()
    problems = []
    assert tab.requests, "no request recorded"
    lang_attr = tab.page.evaluate("document.documentElement.lang")
    if lang_attr != lang:
        problems.append(f'<html lang="{lang_attr}">, expected "{lang}"')
    widths = tab.page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    if widths[0] > widths[1]:
        wide = tab.page.evaluate("""() => {
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
        }""")
        problems.append(f"scrolls sideways at {PHONE['width']} px: scrollWidth {widths[0]} > "
                        f"clientWidth {widths[1]}; too wide: {', '.join(wide) or '?'}")
    # A name in a table cell (`recurrent_dropout`, `nvidia-cudnn-cu12`) is never broken across
    # lines.
    tab.lay_out_everything()
    tab.settle()  # what the loaded blocks and charts ask for in turn (images, styles)
    problems = list(tab.problems) + problems
    broken = tab.page.evaluate("""() => [...document.querySelectorAll('article td code')]
        .filter(c => !/\\s/.test(c.textContent) && c.getClientRects().length > 1)
        .map(c => c.textContent)""")
    if broken:
        problems.append(f"code broken across lines in table cells: {broken[:6]}")
    # The build writes each run of white space as one, except in the elements that keep theirs
    # (pipeline/pages/page_weight.py): no other element of the page draws its white space as written.
    from pipeline.pages.page_weight import KEEPS_WHITE_SPACE
    shown = tab.page.evaluate("""tags => [...document.body.querySelectorAll('*')]
        .filter(e => !/^(normal|nowrap)$/.test(getComputedStyle(e).whiteSpace)
                     && !e.closest(tags.join(',')) && [...e.childNodes].some(n => n.nodeType === 3))
        .map(e => e.tagName.toLowerCase() + [...e.classList].map(c => '.' + c).join('') + ' '
                  + getComputedStyle(e).whiteSpace)""", list(KEEPS_WHITE_SPACE))
    if shown:
        problems.append(f"white space drawn as written outside {KEEPS_WHITE_SPACE}: {shown[:6]}")
    assert not problems, report(path, problems)


@pytest.mark.parametrize("lang,old,now", [
    ("en", "pytorch-tf32", "troubleshooting/numbers/#pytorch-tf32"),
    ("es", "dornn-failed", "troubleshooting/runtime/#dornn-failed"),
    ("es", "estos-errores-reproducidos-aqui",
     "troubleshooting/keras/#these-errors-reproduced-here")])
def test_a_link_into_the_old_troubleshooting_page_lands_on_its_answer(open_tab, lang, old, now):
    """A link from another site into the one troubleshooting page there was: the index page's
    script sends the reader on to the entry, on the page of its kind."""
    tab = open_tab(path_of(lang, f"troubleshooting/#{old}"), wait="domcontentloaded")
    expected = path_of(lang, now)
    tab.page.wait_for_url(lambda u: u.endswith(expected), timeout=10_000)
    assert tab.page.locator(f"#{now.partition('#')[2]}").count() == 1
    # the index's own requests, cut short when the script leaves it, are the move, not a fault
    problems = [p for p in tab.problems if "net::ERR_ABORTED" not in p]
    assert not problems, report(expected, problems)


def test_every_language_selector_links_the_same_page_in_the_other_language(site_root):
    """Every page's language selector (Material writes it into the page at build) links the same
    page in the other language, and that page says it is in that language. A click on it is
    tried below, on the landing page of each language: a link followed is a link followed."""
    from urllib.parse import urljoin
    from bs4 import BeautifulSoup
    problems = []
    for lang, url in PAGES:
        path, other = path_of(lang, url), twin_lang(lang)
        soup = BeautifulSoup((site_root / path.strip("/") / "index.html").read_text(
            encoding="utf-8"), "html.parser")
        links = soup.select(f".md-header .md-select a.md-select__link[hreflang={other}]")
        if len(links) != 1:
            problems.append(f"{path}: {len(links)} links to '{other}' in the language selector")
            continue
        target = urlsplit(urljoin(f"http://site{path}", links[0]["href"])).path
        if target != path_of(other, url):
            problems.append(f"{path}: the '{other}' link leads to {target}")
            continue
        twin = BeautifulSoup((site_root / target.strip("/") / "index.html").read_text(
            encoding="utf-8"), "html.parser")
        if twin.html.get("lang") != other:
            problems.append(f"{target}: says lang={twin.html.get('lang')!r}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lang", LANGS)
def test_language_selector_lands_on_the_same_page(open_tab, lang):
    url = ""  # the landing page, clicked in the browser
    path, other = path_of(lang, url), twin_lang(lang)
    expected = path_of(other, url)
    tab = open_tab(path, wait="domcontentloaded")
    if url == "":  # the landing page: keep a picture of it
        ARTIFACTS.mkdir(exist_ok=True)
        tab.page.wait_for_load_state("load")
        tab.page.screenshot(path=str(ARTIFACTS / f"landing-{lang}.png"))
    selector = tab.page.locator(".md-header .md-select")
    selector.locator("button").hover()
    link = selector.locator(f"a.md-select__link[hreflang={other}]")
    assert link.count() == 1, f"{path}: the language selector has no link to '{other}'"
    href = link.get_attribute("href")
    link.click()
    try:
        tab.page.wait_for_url(lambda u: urlsplit(u).path == expected,
                              wait_until="domcontentloaded", timeout=10_000)
    except PlaywrightTimeout:
        pytest.fail(report(path, [f"the selector's '{other}' link (href={href!r}) led to "
                                  f"{tab.page.url}, not {expected}", *tab.problems]), pytrace=False)
    landed = tab.page.evaluate("document.documentElement.lang")
    assert landed == other, f"{path} -> {expected}: the page says lang={landed!r}"
    bad = [p for p in tab.problems if p.startswith(("HTTP", "request to another host"))]
    assert not bad, report(f"{path} -> {expected}", bad)


@pytest.mark.parametrize("lang", LANGS)
def test_materials_palette_mark_is_on_body_from_the_start_and_lifted_once_loaded(
        browser, server, lang):
    """pipeline/pages/page_load.py: the page opens with <body> marked data-md-color-switching, so that
    Material's script, which marks it as it starts (every element's style computed again when
    the mark comes and when it goes), finds it already there and only lifts it. Asked of
    Material's own script: it still sets the mark (else the page's mark has no purpose), finds
    it already set, and lifts it, so that transitions work once the page is open."""
    path = path_of(lang, "criteria/")
    changes = changes_while_loading(browser, server + path, WATCH_SWITCHING, "window.__switching",
                                    "!document.body.hasAttribute('data-md-color-switching')")
    assert changes, f"{path}: Material's script no longer marks <body> data-md-color-switching " \
                    "as it starts: the mark pipeline/pages/page_load.py puts on the page is no use"
    assert changes[0] == ["", True], f"{path}: the mark was not on <body> when Material's " \
                                     f"script set it: {changes}"
    assert changes[-1] == ["", False], f"{path}: Material's script did not lift it: {changes}"


@pytest.mark.parametrize("lang", LANGS)
def test_html_is_js_before_the_content_and_materials_own_change_finds_it(browser, server, lang):
    """overrides/main.html: <html class="no-js"> becomes "js" in the page's head, before the
    content is parsed, so that Material's script, which makes the same change as it starts
    (every element's style computed again), changes nothing. Asked of Material's own script: it
    still writes the class (else the head's change has no purpose), and finds "js" there."""
    path = path_of(lang, "criteria/")
    changes = html_writes(browser, server + path, "class")
    from_no_js = [c for c in changes if "no-js" in (c[0] or "").split()]
    assert from_no_js and all(not content for *_, content in from_no_js), \
        f"{path}: <html> left 'no-js' after the content was parsed: {changes}"
    later = [c for c in changes if c[2]]  # Material's script's writes: the content is there
    assert later, f"{path}: Material's script no longer writes <html>'s class: the head's " \
                  f"change has no purpose ({changes})"
    assert all("js" in c[0].split() and "no-js" not in c[0].split() for c in later), changes
    assert changes[-1][1].split().count("js") == 1 and "no-js" not in changes[-1][1], changes


@pytest.mark.parametrize("lang", LANGS)
def test_html_has_the_focus_visible_mark_before_the_content_and_materials_polyfill_finds_it(
        browser, server, lang):
    """overrides/main.html: <html> gets the class js-focus-visible and the attribute
    data-js-focus-visible in the page's head, so that Material's focus-visible polyfill, which
    writes both as it starts (every element's style computed again), changes nothing. Asked of
    Material's own script: it still writes the attribute (else the head's mark has no purpose),
    and every write of <html>'s class once the content is there finds the class already set."""
    path = path_of(lang, "criteria/")
    url = server + path
    marks = html_writes(browser, url, "data-js-focus-visible")
    assert marks and marks[0] == [None, "", False], \
        f"{path}: <html> was not marked data-js-focus-visible before the content: {marks}"
    material = marks[1:]
    assert material and all(m == ["", "", True] for m in material), \
        f"{path}: Material's polyfill no longer marks <html>, or found it unmarked: {marks}"
    late = [c for c in html_writes(browser, url, "class") if c[2]]
    assert late and all("js-focus-visible" in (old or "").split() for old, *_ in late), \
        f"{path}: <html>'s class gained js-focus-visible after the content was parsed: {late}"


@pytest.mark.parametrize("lang", LANGS)
def test_dark_mode_toggles(open_tab, lang):
    path = path_of(lang, "")
    tab = open_tab(path)
    page = tab.page

    def state():
        return page.evaluate("() => [document.body.getAttribute('data-md-color-scheme'), "
                             "getComputedStyle(document.body).backgroundColor]")

    toggle = page.locator("form[data-md-component=palette] label:not([hidden])")
    light = state()
    assert light[0] == "default", f"{path}: starts as {light[0]!r}"
    toggle.click()
    page.wait_for_function("document.body.getAttribute('data-md-color-scheme') === 'slate'",
                           timeout=5_000)
    dark = state()
    assert dark[1] != light[1], f"{path}: background stays {light[1]} in dark mode"
    if lang == "en":
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "landing-en-dark.png"))
    toggle.click()
    page.wait_for_function("document.body.getAttribute('data-md-color-scheme') === 'default'",
                           timeout=5_000)
    assert state() == light, f"{path}: toggling twice does not restore the light palette"
    assert not tab.problems, report(path, tab.problems)
