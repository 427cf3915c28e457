"""Every page in a real browser: it loads cleanly, fits a phone, its language selector lands on
its twin, old addresses land on their answer, and what Material's script changes as it
starts was already so in the page.
(Shared pages and helpers: tests/site/browsing.py. Each page is opened once per viewport for
the checks of every module that reads it, here the phone's and the landing pages' desktop
visits: tests/site/visits.py.)"""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from browsing import LANGS, PAGES, PAGE_IDS, PHONE, path_of, sitemap_paths, twin_lang
from chromium import report
from visits import visit  # noqa: F401 (the fixture)


def test_every_page_in_the_sitemap_is_tested(site_root):
    """The pages parametrized here come from docs/ (known before the build): none is missed."""
    missed = sitemap_paths(site_root) - {path_of(lang, url) for lang, url in PAGES}
    assert not missed, f"built pages these tests do not visit: {sorted(missed)}"


def test_the_sitemap_lists_every_page(site_root):
    """Every page, in both languages, is in sitemap.xml (with its other-language version)."""
    missing = {path_of(lang, url) for lang, url in PAGES} - sitemap_paths(site_root)
    assert not missing, f"pages missing from sitemap.xml: {sorted(missing)}"


@pytest.mark.parametrize("lang,url", PAGES, ids=PAGE_IDS)
def test_page_loads_cleanly_and_fits_a_phone(visit, lang, url):
    """No console error, no failed request, nothing from another host, once everything the
    page loads later (collapsed blocks, charts) has loaded; at 375 px nothing scrolls
    sideways (tables and code blocks may scroll inside their own box)."""
    path = path_of(lang, url)
    page = visit("phone", lang, url)
    found = page.step("loads")
    problems = []
    assert found["requests"], "no request recorded"
    if found["lang"] != lang:
        problems.append(f'<html lang="{found["lang"]}">, expected "{lang}"')
    widths = found["widths"]
    if widths[0] > widths[1]:
        problems.append(f"scrolls sideways at {PHONE['width']} px: scrollWidth {widths[0]} > "
                        f"clientWidth {widths[1]}; too wide: {', '.join(found['wide']) or '?'}")
    problems = list(page.problems("loads")) + problems
    # A name in a table cell (`recurrent_dropout`, `nvidia-cudnn-cu12`) is never broken across
    # lines.
    if found["broken"]:
        problems.append(f"code broken across lines in table cells: {found['broken'][:6]}")
    # The build writes each run of white space as one, except in the elements that keep theirs
    # (pipeline/pages/page_weight.py): no other element of the page draws its white space as written.
    if found["white_space"]:
        problems.append(f"white space drawn as written outside {tuple(found['keeps_white_space'])}: "
                        f"{found['white_space'][:6]}")
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
def test_language_selector_lands_on_the_same_page(visit, lang):
    url = ""  # the landing page, clicked in the browser (a picture of it: test-artifacts/)
    path, other = path_of(lang, url), twin_lang(lang)
    expected = path_of(other, url)
    page = visit("desktop", lang, url)
    page.step("landing")
    found = page.step("language")
    assert found["links"] == 1, f"{path}: the language selector has no link to '{other}'"
    if found["landed_at"] != expected:
        pytest.fail(report(path, [f"the selector's '{other}' link (href={found['href']!r}) led to "
                                  f"{found['landed_at']}, not {expected}",
                                  *page.problems("language")]), pytrace=False)
    assert found["lang"] == other, f"{path} -> {expected}: the page says lang={found['lang']!r}"
    bad = [p for p in page.problems("language") if p.startswith(("HTTP", "request to another host"))]
    assert not bad, report(f"{path} -> {expected}", bad)


def _html_writes(page, attribute: str) -> list:
    """[old, new, whether <body> had content] for each write of <html>'s `attribute` while the
    page loaded (browsing.WATCH_HTML, recorded in the page's phone visit)."""
    return [c[1:] for c in page.step("watch")["html"] if c[0] == attribute]


@pytest.mark.parametrize("lang", LANGS)
def test_materials_palette_mark_is_on_body_from_the_start_and_lifted_once_loaded(visit, lang):
    """pipeline/pages/page_load.py: the page opens with <body> marked data-md-color-switching, so that
    Material's script, which marks it as it starts (every element's style computed again when
    the mark comes and when it goes), finds it already there and only lifts it. Asked of
    Material's own script: it still sets the mark (else the page's mark has no purpose), finds
    it already set, and lifts it, so that transitions work once the page is open."""
    path = path_of(lang, "criteria/")
    changes = visit("phone", lang, "criteria/").step("watch")["switching"]
    assert changes, f"{path}: Material's script no longer marks <body> data-md-color-switching " \
                    "as it starts: the mark pipeline/pages/page_load.py puts on the page is no use"
    assert changes[0] == ["", True], f"{path}: the mark was not on <body> when Material's " \
                                     f"script set it: {changes}"
    assert changes[-1] == ["", False], f"{path}: Material's script did not lift it: {changes}"


@pytest.mark.parametrize("lang", LANGS)
def test_html_is_js_before_the_content_and_materials_own_change_finds_it(visit, lang):
    """overrides/main.html: <html class="no-js"> becomes "js" in the page's head, before the
    content is parsed, so that Material's script, which makes the same change as it starts
    (every element's style computed again), changes nothing. Asked of Material's own script: it
    still writes the class (else the head's change has no purpose), and finds "js" there."""
    path = path_of(lang, "criteria/")
    changes = _html_writes(visit("phone", lang, "criteria/"), "class")
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
        visit, lang):
    """overrides/main.html: <html> gets the class js-focus-visible and the attribute
    data-js-focus-visible in the page's head, so that Material's focus-visible polyfill, which
    writes both as it starts (every element's style computed again), changes nothing. Asked of
    Material's own script: it still writes the attribute (else the head's mark has no purpose),
    and every write of <html>'s class once the content is there finds the class already set."""
    path = path_of(lang, "criteria/")
    page = visit("phone", lang, "criteria/")
    marks = _html_writes(page, "data-js-focus-visible")
    assert marks and marks[0] == [None, "", False], \
        f"{path}: <html> was not marked data-js-focus-visible before the content: {marks}"
    material = marks[1:]
    assert material and all(m == ["", "", True] for m in material), \
        f"{path}: Material's polyfill no longer marks <html>, or found it unmarked: {marks}"
    late = [c for c in _html_writes(page, "class") if c[2]]
    assert late and all("js-focus-visible" in (old or "").split() for old, *_ in late), \
        f"{path}: <html>'s class gained js-focus-visible after the content was parsed: {late}"


@pytest.mark.parametrize("lang", LANGS)
def test_dark_mode_toggles(visit, lang):
    path = path_of(lang, "")
    page = visit("desktop", lang, "")
    found = page.step("dark_mode")  # a picture of the English page: test-artifacts/
    light, dark = found["light"], found["dark"]
    assert light[0] == "default", f"{path}: starts as {light[0]!r}"
    assert dark[1] != light[1], f"{path}: background stays {light[1]} in dark mode"
    assert found["again"] == light, f"{path}: toggling twice does not restore the light palette"
    assert not page.problems("dark_mode"), report(path, page.problems("dark_mode"))
