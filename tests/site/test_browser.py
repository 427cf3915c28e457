"""The built site in a real browser: Playwright driving Chromium (headless), against the `site`
fixture's build served on 127.0.0.1.

Every English page and its Spanish twin (the notebook page too) is loaded and must log no console
error, fail no request, and ask no host but the local server for anything; its language selector
must land on the same page in the other language, and at 375 px wide the page must not scroll
sideways. Search, charts, copy buttons and the dark-mode toggle are checked on the pages that have
them. Screenshots go to test-artifacts/.

The browser is Chromium at $CHROME_PATH, else /usr/bin/chromium (Debian's `chromium` package);
Playwright's own browser downloads are never used. Without a browser every test fails and says so.
For a quicker loop while editing overrides/, BROWSER_TEST_SITE=site reuses a build already made
(`make build`) instead of building the site again.
"""
from __future__ import annotations

import functools
import io
import json
import re
import textwrap
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest
import yaml
from PIL import Image
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from chromium import DESKTOP, Tab, report  # the fixtures (browser, server, open_tab): conftest.py
from conftest import REPO
from pipeline.pages import published
from pipeline.pages.notebook_html import jupyter_css
from pipeline.records import store as records

# The home page draws this site's own speed-up chart before the published one when a GPU record
# holds it (pipeline/pages/published.py).
OWN_SPEEDUP_ON_RECORD = published.own_gpu_records(records.load_all(REPO / "results",
                                                                   REPO / "snippets"))

DOCS = REPO / "docs"
SNIPPETS = REPO / "snippets"
ARTIFACTS = REPO / "test-artifacts"

PHONE = {"width": 375, "height": 812}
LANGS = ("en", "es")
SEARCH_TERMS = ("cuDNN", "recurrent_dropout")
# Pages whose copy buttons are checked: every block whose source is titled "snippets/<file>", shown
# titled with the file's name alone (pipeline/pages/page_programs.py, reader_names).
COPY_PAGES = ("", "cudnn-c/")


# --- what there is to test, from the sources (known before the build) -------------------------

def _url(doc: Path) -> str:
    """Site-relative URL of an English source page: docs/a/b.md -> "a/b/", docs/index.md -> ""."""
    rel = doc.relative_to(DOCS).with_suffix("").as_posix()
    if rel == "index" or rel.endswith("/index"):
        return rel[: -len("index")]
    return rel + "/"


@functools.cache
def mkdocs_config() -> dict:
    class Loader(yaml.SafeLoader):  # mkdocs.yml names Python objects (!!python/name:...)
        pass
    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda *_: None)
    return yaml.load((REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)


def _notebooks() -> list[Path]:
    """The notebooks mkdocs-jupyter turns into pages (its `include` list in mkdocs.yml)."""
    for plugin in mkdocs_config().get("plugins", []):
        if isinstance(plugin, dict) and "mkdocs-jupyter" in plugin:
            return [DOCS / p for p in plugin["mkdocs-jupyter"].get("include", [])]
    return []


def english_sources() -> list[Path]:
    pages = [p for p in DOCS.rglob("*.md") if not p.name.endswith(".es.md")]
    pages += [p for p in _notebooks() if not p.name.endswith(".es.ipynb")]
    return sorted(pages, key=_url)


SOURCES = {_url(p): p for p in english_sources()}


def path_of(lang: str, url: str) -> str:
    """The path a page is served at: "/x/" in English, "/es/x/" in Spanish."""
    return "/" + ("" if lang == "en" else f"{lang}/") + url


def twin_lang(lang: str) -> str:
    return "es" if lang == "en" else "en"


def page_ids(cases) -> list[str]:
    """Test ids of (lang, url) cases: "es:/es/warning/"."""
    return [f"{lang}:{path_of(lang, url)}" for lang, url in cases]


PAGES = [(lang, url) for url in SOURCES for lang in LANGS]
PAGE_IDS = page_ids(PAGES)
CHART_PAGES = [(lang, url) for lang, url in PAGES
               if re.search(r"<!-- (gpu-)?chart:", SOURCES[url].read_text(encoding="utf-8"))]
DIAGRAM_PAGES = [(lang, url) for lang, url in PAGES
                 if "```dot" in SOURCES[url].read_text(encoding="utf-8")]
NOTEBOOK_PAGES = [(lang, url) for lang, url in PAGES if SOURCES[url].suffix == ".ipynb"]

TITLED_EMBED = re.compile(r'^```\w*[^\n]*\btitle="snippets/([^"]+)"[^\n]*\n--8<-- "([^"]+)"\n```$',
                          re.M)
SECTION_MARKER = re.compile(r"-+8<-+[ \t]+\[[ \t]*(start|end)[ \t]*:[ \t]*([a-z][-_0-9a-z]*)[ \t]*\]")


def titled_embeds(url: str) -> list[tuple[str, str]]:
    """(title file, embed reference) of every code block `title="snippets/F"` that embeds F."""
    text = SOURCES[url].read_text(encoding="utf-8")
    return [(title, ref) for title, ref in TITLED_EMBED.findall(text)
            if ref.partition(":")[0] == title]


def snippet_text(ref: str) -> str:
    """The text a page shows for `--8<-- "ref"`, as pymdownx.snippets embeds it (mkdocs.yml:
    `dedent_subsections: true`): the whole file, or the lines between the section's start and end
    markers, dedented; section-marker lines are never shown. Trailing whitespace at the very end is
    removed, because Material's copy button trims it (String.prototype.trimEnd). Nothing else is
    normalised: tabs, indentation and inner blank lines must survive the copy exactly."""
    rel, _, section = ref.partition(":")
    lines = (SNIPPETS / rel).read_text(encoding="utf-8").split("\n")
    if section:
        marks = [(i, m.group(1)) for i, line in enumerate(lines)
                 if (m := SECTION_MARKER.search(line)) and m.group(2) == section]
        start = next(i for i, kind in marks if kind == "start")
        end = next(i for i, kind in marks if kind == "end" and i > start)
        body = [line for line in lines[start + 1:end] if not SECTION_MARKER.search(line)]
        return textwrap.dedent("\n".join(body)).rstrip()
    return "\n".join(line for line in lines if not SECTION_MARKER.search(line)).rstrip()


# --- the tests -------------------------------------------------------------------------------

def sitemap_paths(site_root: Path) -> set[str]:
    """Every path the sitemap lists (each page and its alternates), as served: "/", "/es/x/"."""
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9", "x": "http://www.w3.org/1999/xhtml"}
    tree = ET.parse(site_root / "sitemap.xml")
    urls = [u.findtext("s:loc", namespaces=ns) for u in tree.getroot().findall("s:url", ns)]
    urls += [a.get("href") for a in tree.getroot().iterfind("s:url/x:link", ns)]
    root = urlsplit(mkdocs_config().get("site_url") or "/").path  # sitemap URLs are under it
    assert all(urlsplit(u).path.startswith(root) for u in urls), urls
    return {"/" + urlsplit(u).path[len(root):] for u in urls}


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
    """No console error, no failed request, nothing from another host; at 375 px nothing scrolls
    sideways (tables and code blocks may scroll inside their own box)."""
    path = path_of(lang, url)
    tab = open_tab(path, viewport=PHONE, is_mobile=True, has_touch=True)
    tab.settle()
    problems = list(tab.problems)
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


@pytest.mark.parametrize("lang,url", PAGES, ids=PAGE_IDS)
def test_language_selector_lands_on_the_same_page(open_tab, lang, url):
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


RESULTS = ".md-search-result__list > li.md-search-result__item > a"


# The box emptied as a key does (Material searches on keyup) and its list gone: whether the box
# had the focus. Test plumbing, so that a result is never a previous query's: one call, where
# Playwright's fill, press and wait took three.
CLEAR = """results => new Promise((done, fail) => {
  const box = document.querySelector("input.md-search__input"), start = performance.now();
  box.value = "";
  box.dispatchEvent(new KeyboardEvent("keyup", {key: "End", bubbles: true}));
  const gone = () => document.querySelectorAll(results).length === 0
    ? done(box === document.activeElement)
    : performance.now() - start > 15000 ? fail(new Error("the results stay after emptying the box"))
    : requestAnimationFrame(gone);
  gone();
})"""
# Every result link's address, once there are some (null until then).
LINKS = "s => { const a = [...document.querySelectorAll(s)]; return a.length ? a.map(l => l.getAttribute('href')) : null; }"


def search(page, query: str) -> tuple[list, str]:
    """Type `query` into Material's search box as a reader pastes it. Returns this query's result
    links (split URLs), never a previous query's, and what the page showed when none came.
    The box is first emptied (CLEAR), then filled and sent with one key. Where no result comes
    in 15 s the key is pressed once more, as a reader would, with a warning that shows the
    page's state; no result after that fails."""
    box = page.locator("input.md-search__input")
    if not page.evaluate(CLEAR, RESULTS):  # a reader's click into the box, the first time
        box.click()
    box.fill(query)
    for attempt in (1, 2):
        box.press("End")
        try:
            hrefs = page.wait_for_function(LINKS, arg=RESULTS, timeout=15_000).json_value()
            break
        except PlaywrightTimeout:
            state = page.evaluate("""() => ({
                value: document.querySelector('input.md-search__input').value,
                meta: document.querySelector('.md-search-result__meta')?.textContent,
                listHidden: document.querySelector('.md-search-result__list')?.hidden,
                searchOpen: document.getElementById('__search')?.checked,
                focus: document.activeElement?.className})""")
            if attempt == 2:
                return [], f"no result ({state})"
            warnings.warn(f"search {query!r}: no result in 15 s, pressing a key again ({state})")
    return [urlsplit(href) for href in hrefs], ""


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("term", SEARCH_TERMS)
def test_search_finds_pages_in_the_language_being_read(open_tab, lang, term):
    home = path_of(lang, "")
    tab = open_tab(home)
    page = tab.page
    hrefs, why = search(page, term)
    assert hrefs, f"{home}: {term!r}: {why}"
    results = page.locator(RESULTS)
    in_spanish = [h.path.startswith("/es/") for h in hrefs]
    wrong = list(dict.fromkeys(h.path for h, es in zip(hrefs, in_spanish) if es != (lang == "es")))
    assert not wrong, f"{home}: searching {term!r} lists pages in another language: {wrong}"
    target = results.first.get_attribute("href")
    results.first.click()
    # the page takes the terms (`?h=`) out of its address as it opens (assets/search.js)
    page.wait_for_function("""target => { const want = new URL(target);
        want.searchParams.delete("h"); return location.href === want.href; }""", arg=target)
    page.wait_for_load_state("domcontentloaded")
    tab.lay_out_everything()
    text = page.locator("article").inner_text().lower()
    assert term.lower() in text, f"{home}: result {target} for {term!r} does not contain it"
    assert not tab.problems, report(f"{home} search {term!r}", tab.problems)


def index_requests(tab: Tab) -> list[str]:
    return [urlsplit(u).path.rsplit("/", 1)[-1] for u in tab.requests if "/search/search_index" in u]


@pytest.mark.parametrize("how", ["hover", "tap on a phone", "keyboard shortcut"])
@pytest.mark.parametrize("lang", LANGS)
def test_search_index_loads_in_its_language_only_when_the_reader_goes_to_search(open_tab, lang, how):
    """assets/search.js: a page loads no search index; going to search loads this
    language's index (never the combined one), and search then finds pages."""
    phone = how.startswith("tap")
    home = path_of(lang, "")
    tab = open_tab(home, **({"viewport": PHONE, "is_mobile": True, "has_touch": True} if phone else {}))
    tab.settle()
    assert index_requests(tab) == [], f"{home}: the search index loaded before any search"
    page = tab.page
    if how == "hover":
        page.locator("input.md-search__input").hover()
    elif phone:
        page.locator("label.md-header__button[for='__search']").tap()
    else:
        page.keyboard.press("/")  # Material's shortcut focuses the search box
    page.wait_for_function("() => performance.getEntriesByType('resource')"
                           ".some(e => e.name.includes('/search/search_index'))", timeout=10_000)
    hrefs, why = search(page, "cuDNN")
    assert hrefs, f"{home}: 'cuDNN': {why}"
    assert index_requests(tab) == [f"search_index.{lang}.json"], f"{home}: {index_requests(tab)}"
    assert not tab.problems, report(f"{home} search after {how}", tab.problems)


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


COPY_CASES = [(lang, url) for url in COPY_PAGES for lang in LANGS]


def executed_program(ref: str) -> str:
    """The program the build ran for a Python snippet (the runner's cache), its end trimmed as
    the copy button trims it: what a Python block's copy button copies, whichever part the block
    shows (tests/pages/test_copied_programs.py checks every page's blocks; here, the real button)."""
    from pipeline.running import runner
    rel = ref.partition(":")[0]
    [o] = runner.run_all(runner.Project(REPO), execute_stale=False, only=[rel])
    assert o.data_dir, f"{rel}: the build has not run it"
    entry = Path(o.data_dir).parent
    name = json.loads((entry / "result.json").read_text(encoding="utf-8"))["program"]
    return (entry / name).read_text(encoding="utf-8").rstrip()


def open_every_collapsed_block(tab: Tab) -> None:
    """Open every collapsed block of the article, as a reader clicks each, and load the code
    blocks in them, as they load when the reader gets to them (overrides/assets/program-copy.js)."""
    tab.page.evaluate("document.querySelectorAll('article details').forEach(d => d.open = true)")
    tab.load_everything()


@pytest.mark.parametrize("lang,url", COPY_CASES, ids=page_ids(COPY_CASES))
def test_copy_button_copies_exactly_the_snippet(open_tab, lang, url):
    """Each code block titled snippets/F in its source that embeds F, shown titled with F's name
    alone (no path under snippets/): its copy button puts on the clipboard the snippet's text
    (see snippet_text for exactly what is compared), or for a Python file the whole program the
    build ran (executed_program). Blocks in collapsed blocks are opened first."""
    path, blocks = path_of(lang, url), titled_embeds(url)
    assert blocks, f"{path}: no titled snippet block to copy from"
    tab = open_tab(path, clipboard=True)
    page = tab.page
    open_every_collapsed_block(tab)
    problems = []
    for title, ref in blocks:
        name = Path(title).name
        block = page.locator("div.highlight").filter(
            has=page.locator(":scope > span.filename", has_text=re.compile(
                rf"^\s*{re.escape(name)}\s*$")))
        try:
            block.first.wait_for(state="attached", timeout=5_000)
        except PlaywrightTimeout:
            pass
        if block.count() != 1:
            problems.append(f"{ref}: {block.count()} blocks titled {name}")
            continue
        page.evaluate("navigator.clipboard.writeText('')")
        block.hover()
        button = block.locator("button.md-code__button[data-md-type=copy], button.md-clipboard")
        button.first.click()
        page.wait_for_function("async () => (await navigator.clipboard.readText()) !== ''",
                               polling=50, timeout=5_000)
        copied = page.evaluate("navigator.clipboard.readText()")
        expected = executed_program(ref) if ref.partition(":")[0].endswith(".py") \
            else snippet_text(ref)
        if copied != expected:
            first = next((n for n, (a, b) in enumerate(zip(copied.split("\n"),
                                                          expected.split("\n"))) if a != b),
                         min(copied.count("\n"), expected.count("\n")))
            problems.append(f"{ref}: clipboard differs from the snippet at line {first + 1}: "
                            f"copied {copied.split(chr(10))[first:first + 1]!r}, "
                            f"snippet {expected.split(chr(10))[first:first + 1]!r} "
                            f"({len(copied)} vs {len(expected)} characters)")
    problems += tab.other_hosts()
    assert not problems, report(path, problems)


def test_the_whole_program_listing_copies_the_program_and_a_helper_offers_no_copy(open_tab):
    """Under a shown part of a program, the collapsed listing's copy button copies the same
    program as the shown part's; a helper module shown to read has no copy button."""
    tab = open_tab(path_of("en", "criteria/"), clipboard=True)
    page = tab.page
    expected = executed_program("criteria/tf_backend/masking.py")
    program = page.locator('div.program[data-program="criteria/tf_backend/masking.py"]')
    program.locator("details").evaluate("d => d.open = true")
    copied = []
    for block in (program.locator("div.highlight").nth(0), program.locator("details div.highlight")):
        page.evaluate("navigator.clipboard.writeText('')")
        block.scroll_into_view_if_needed()
        block.hover()
        block.locator("button.md-code__button[data-md-type=copy], button.md-clipboard").first.click()
        page.wait_for_function("async () => (await navigator.clipboard.readText()) !== ''",
                               polling=50, timeout=5_000)
        copied.append(page.evaluate("navigator.clipboard.readText()"))
    assert copied == [expected, expected], [c[:80] for c in copied]
    page.locator("article details > summary", has_text="TensorFlow backend: _pretend_gpu.py").click()
    helper = page.locator('div.no-copy[data-listing="criteria/tf_backend/_pretend_gpu.py"]')
    helper.hover()
    assert helper.locator("button.md-code__button, button.md-clipboard").count() == 0
    assert not tab.problems, report("/criteria/", tab.problems)


def test_a_copy_clicked_before_the_program_arrives_waits_for_it(open_tab):
    """The page does not carry the programs it copies: each is a file of the site, fetched as the
    reader nears its block. Here every program file arrives 1.5 s late, and the copy button is
    clicked while its div has no program yet: the clipboard still gets the whole program the
    build ran, from this origin, under the name the runner saves it. A listing opened loads its
    code, with a copy button."""
    tab = open_tab(path_of("es", "criteria/"), clipboard=True)
    tab.settle()  # nothing of the first load in flight when the page reloads
    page = tab.page
    page.add_init_script("""{
      const fetchNow = window.fetch;
      window.fetch = (url, options) => String(url).includes("/assets/programs/")
        ? new Promise((done) => setTimeout(done, 1500)).then(() => fetchNow(url, options))
        : fetchNow(url, options);
    }""")
    page.reload(wait_until="load")
    ref = "criteria/jax_backend/masking.py"
    program = page.locator(f'div.program[data-program="{ref}"]')
    block = program.locator("div.highlight").first
    page.evaluate("navigator.clipboard.writeText('')")
    block.scroll_into_view_if_needed()
    block.hover()
    button = block.locator("button.md-code__button[data-md-type=copy]").first
    assert program.evaluate("d => d.dataset.copy === undefined"), "the program came too early"
    button.click()
    copied = ""
    for _ in range(100):
        copied = page.evaluate("navigator.clipboard.readText()")
        if copied:
            break
        page.wait_for_timeout(100)
    assert copied == executed_program(ref), copied[:200]
    asked = [url for url in tab.requests if "/assets/programs/" in url]
    assert all(url.startswith(tab.origin + "/assets/programs/") for url in asked), asked
    assert any(url.endswith("/masking.py") for url in asked), asked  # saved as the runner saves it
    program.locator("details").evaluate("d => d.open = true")
    listing = program.locator("details div.highlight")
    listing.wait_for(timeout=5_000)
    assert listing.locator("button.md-code__button[data-md-type=copy]").count() == 1
    assert not tab.problems, report("/es/criteria/", tab.problems)


def changes_while_loading(browser, url: str, watch: str, recorded: str, until: str = ""):
    """What `watch` (a script run before the page's own) recorded in `recorded` while the page
    loaded on a phone, once `until` holds."""
    if isinstance(browser, str):
        pytest.fail(browser, pytrace=False)
    context = browser.new_context(viewport=PHONE, service_workers="block")
    try:
        page = context.new_page()
        page.add_init_script(watch)
        page.goto(url, wait_until="load")
        if until:
            page.wait_for_function(until, timeout=15_000)
        return page.evaluate(recorded)
    finally:
        context.close()


# Every change of the mark on <body>, from before the page's own scripts run.
WATCH_SWITCHING = """
window.__switching = [];
new MutationObserver((records) => {
  for (const r of records) if (r.target === document.body)
    window.__switching.push([r.oldValue, document.body.hasAttribute(r.attributeName)]);
}).observe(document, {attributes: true, attributeOldValue: true, subtree: true,
                      attributeFilter: ["data-md-color-switching"]});
"""


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


# Every write of <html>'s class and focus-visible mark, from before the page's own scripts run:
# [attribute, old, new, whether <body> had any content yet]. (Writing an attribute its own value
# is a write too: a record whose old and new are the same.)
WATCH_HTML = """
window.__html = [];
new MutationObserver((records) => {
  for (const r of records) if (r.target === document.documentElement)
    window.__html.push([r.attributeName, r.oldValue, r.target.getAttribute(r.attributeName),
                        !!(document.body && document.body.firstElementChild)]);
}).observe(document, {attributes: true, attributeOldValue: true, subtree: true,
                      attributeFilter: ["class", "data-js-focus-visible"]});
"""


def html_writes(browser, url: str, attribute: str) -> list:
    """[old, new, whether <body> had content] for each write of <html>'s `attribute` while the
    page loads."""
    return [c[1:] for c in changes_while_loading(browser, url, WATCH_HTML, "window.__html")
            if c[0] == attribute]


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


# --- what the build renders instead of the browser (pipeline/pages/hooks/prerender.py) ---------------------

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


# Every computed style of every element of the notebook, but the custom properties (--jp-*:
# most of them are the ones trimmed away, and no rule that is left reads them). Kept in the page
# and compared there: sent to Python they would be millions of values.
SNAPSHOT_STYLES = """() => {
    const props = [...getComputedStyle(document.body)].filter(k => !k.startsWith('--'));
    const elements = [...document.querySelectorAll('.jupyter-wrapper, .jupyter-wrapper *')];
    window.__styles = {props, elements, values: elements.map(e => {
        const s = getComputedStyle(e); return props.map(k => s.getPropertyValue(k)); })};
    return elements.length;
}"""
CHANGED_STYLES = """() => {
    const {props, elements, values} = window.__styles, out = [];
    elements.forEach((e, i) => {
        const s = getComputedStyle(e), diff = [];
        props.forEach((k, j) => { const v = s.getPropertyValue(k);
                                  if (v !== values[i][j]) diff.push(`${k} ${values[i][j]} (full CSS: ${v})`); });
        if (diff.length) out.push(e.tagName.toLowerCase() + [...e.classList].map(c => '.' + c).join('')
                                  + ': ' + diff.slice(0, 4).join(', '));
    });
    return out;
}"""


def screenshot(page) -> bytes:
    """The whole page, as PNG."""
    return page.screenshot(full_page=True, animations="disabled")


def pixels(png: bytes) -> np.ndarray:
    """A PNG's pixels (RGB, one byte each)."""
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)


# Chrome's software raster can draw an icon's anti-aliased edge a few levels apart from one
# screenshot to the next, with nothing changed (seen on the header's language button, on a loaded
# machine: 26 pixels, at most 16 levels per channel). A pixel counts as changed past this many
# levels; a rule that changes a colour, a size or a position moves pixels much further.
ANTI_ALIASING_LEVELS = 40


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


# --- a reader's first minute: the answer, the decision diagram, their framework ---------------

FRAMEWORKS = ("Keras 2 (tf-keras)", "Keras 3 · TensorFlow", "Keras 3 · JAX", "Keras 3 · PyTorch",
              "PyTorch")
# The pages whose framework tabs follow the reader's choice.
TABBED = [url for url in SOURCES if all(f'=== "{name}"' in SOURCES[url].read_text(encoding="utf-8")
                                        for name in FRAMEWORKS)]
CHOSEN_TAB = """() => [...document.querySelectorAll('.tabbed-set')]
    .filter(set => set.querySelector('.tabbed-labels'))
    .map(set => { const input = set.querySelector(':scope > input:checked');
                  return set.querySelector(`label[for="${input.id}"]`).innerText.trim(); })"""


def test_framework_tabs_are_on_the_reader_pages():
    assert {"", "criteria/", "fixing/"} <= set(TABBED), TABBED


@pytest.mark.parametrize("choice", ["Keras 3 · JAX", "PyTorch"])
def test_the_framework_choice_follows_the_reader_across_pages_and_languages(open_tab, choice):
    """Pick a framework once on the home page: every tab set on every other page, in both
    languages, opens on it (Material's linked tabs, remembered in the browser)."""
    tab = open_tab("/")
    exactly = re.compile(f"^{re.escape(choice)}$")
    tab.page.locator(".tabbed-labels label").filter(has_text=exactly).first.click()
    tab.settle()  # leaving a page before it has loaded aborts its requests
    problems = []
    for lang in LANGS:
        for url in TABBED:
            path = path_of(lang, url)
            tab.goto(path)
            tab.settle()
            chosen = tab.page.evaluate(CHOSEN_TAB)
            if not chosen or any(c != choice for c in chosen):
                problems.append(f"{path}: tabs show {chosen}, the reader chose {choice!r}")
    problems += tab.problems
    assert not problems, report("framework choice", problems)


# What the reader sees before the first code block longer than three lines.
OPENING = """() => {
    let text = '', table = false;
    for (const e of document.querySelectorAll('article > *')) {
        if (e.matches('.highlight, [class^="language-"]') && e.innerText.split('\\n').length > 3) break;
        text += e.innerText + '\\n';
        table = table || e.tagName === 'TABLE' || !!e.querySelector('table');
    }
    return {text, table};
}"""


@pytest.mark.parametrize("lang", LANGS)
def test_the_answer_comes_before_any_code(open_tab, lang):
    """The home page and the warning page open with the short answer: the message, a table of
    its causes with their fixes, and the checker, before any long code."""
    problems = []
    for url in ("", "warning/"):
        path = path_of(lang, url)
        tab = open_tab(path)
        tab.lay_out_everything()
        opening = tab.page.evaluate(OPENING)
        if not opening["table"]:
            problems.append(f"{path}: no table of causes before the first long code block")
        for needle in ("will not use cuDNN kernels since it doesn't meet the criteria",
                       "recurrent_dropout=0", 'recurrent_activation="sigmoid"', "cudnn_check.py"):
            if needle not in opening["text"]:
                problems.append(f"{path}: {needle!r} is not before the first long code block")
        problems += tab.problems
    assert not problems, report(lang, problems)


@pytest.mark.parametrize("lang", LANGS)
def test_the_decision_diagram_has_a_path_per_framework_and_every_box_links_to_its_proof(
        open_tab, site_root, lang):
    tab = open_tab(path_of(lang, ""))
    svg = tab.page.locator("figure.diagram svg[role=group]")
    assert svg.count() == 1, "the home page has no linked decision diagram"
    name = svg.get_attribute("aria-label")
    assert "cuDNN" in name and all(f in name for f in ("JAX", "PyTorch", "TensorFlow", "tf-keras"))
    links = svg.evaluate("""s => [...s.querySelectorAll('a')].map(a => ({
        href: new URL(a.getAttribute('href') || a.getAttribute('xlink:href'), location.href).href,
        text: a.textContent.trim()}))""")
    assert len(links) >= 15, links
    problems = []
    for link in links:
        url = urlsplit(link["href"])
        if url.path.startswith("/es/") != (lang == "es"):
            problems.append(f"{link['text']!r} -> {link['href']}: another language")
        target = site_root / url.path.lstrip("/") / "index.html"
        if not target.is_file() or f'id="{url.fragment}"' not in target.read_text(encoding="utf-8"):
            problems.append(f"{link['text']!r} -> {link['href']}: no such page or anchor")
    # The box a reader clicks takes them there.
    tab.settle()
    problems += tab.problems
    before = len(tab.problems)
    tab.page.locator("figure.diagram svg a", has_text="torch.backends").first.click()
    tab.page.wait_for_url(re.compile(r"/criteria/#pt-flags$"))
    # leaving the page may abort the search worker's downloads: that is the click, not a fault
    problems += [p for p in tab.problems[before:] if "net::ERR_ABORTED" not in p]
    assert not problems, report(lang, problems)


# --- the common questions, and what a phone shows ------------------------------------------------

# A reader's words for the questions the site answers, and the section that answers each: it
# must be among the first three results (a page and its best sections, as Material lists them).
COMMON_QUESTIONS = [
    ("en", "recurrent_dropout", "", "one-line-fixes"),
    ("en", "JAX GRU cuDNN", "criteria/", "jax"),
    ("en", "how much faster cuDNN", "", "how-much-faster"),  # this site's GPU chart, then others
    ("es", "recurrent_dropout", "", "one-line-fixes"),
    ("es", "JAX GRU cuDNN", "criteria/", "jax"),
    ("es", "cuánto más rápido cuDNN", "", "how-much-faster"),
]


@pytest.mark.parametrize("lang", LANGS)
def test_the_common_questions_find_their_answer_in_the_first_three_results(open_tab, lang):
    tab = open_tab(path_of(lang, ""))
    problems = []
    for _, query, url, anchor in [q for q in COMMON_QUESTIONS if q[0] == lang]:
        hrefs, why = search(tab.page, query)
        first = [(h.path, h.fragment) for h in hrefs[:3]]
        if (path_of(lang, url), anchor) not in first:
            problems.append(f"{query!r}: {path_of(lang, url)}#{anchor} not in the first three: "
                            f"{[h.geturl() for h in hrefs[:5]]} {why}")
    problems += tab.problems
    assert not problems, report(lang, problems)


PHONE_390 = {"width": 390, "height": 844}


@pytest.mark.parametrize("lang,url", CHART_PAGES, ids=page_ids(CHART_PAGES))
def test_chart_text_is_at_least_11_px_on_a_phone(open_tab, lang, url):
    """Each chart's smallest text as drawn at 390 px (its font size times the SVG's scale); a
    chart wider than the column scrolls in its own box instead of shrinking."""
    path = path_of(lang, url)
    tab = open_tab(path, viewport=PHONE_390, is_mobile=True, has_touch=True)
    tab.lay_out_everything()
    sizes = tab.page.evaluate("""() => [...document.querySelectorAll(
        'figure.benchmark-chart .chart-box > svg')].map(s => {
          const k = s.getBoundingClientRect().width / s.viewBox.baseVal.width;
          const px = [...s.querySelectorAll('text')].map(t => parseFloat(getComputedStyle(t).fontSize) * k)
                                                   .filter(v => v > 0);
          const box = getComputedStyle(s.parentElement).overflowX;
          return [s.closest('figure').dataset.benchmark, Math.min(...px), box];
        })""")
    assert sizes, f"{path}: no chart drawn"
    small = [f"{name}: {px:.1f} px" for name, px, _ in sizes if px < 11]
    unboxed = [name for name, _, box in sizes if box not in ("auto", "scroll")]
    assert not small and not unboxed, report(path, small + [f"{n}: not in a scroll box"
                                                           for n in unboxed] + tab.problems)


WIDE_PAGES = sorted(set(CHART_PAGES) | set(DIAGRAM_PAGES))
HINT_WORDS = {"en": "swipe sideways", "es": "desliza de lado"}
# Two frames: a ResizeObserver reports in the frame after a layout (scroll-hint.js marks its
# boxes then), so after two every box has its mark for the current width.
TWO_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"


def at_each_width(tab: Tab, measure: str) -> list[tuple[int, list]]:
    """[(width, what `measure` returns)] at 390 px (the tab as opened, a phone), then at 1280 px:
    the same tab made as wide as a desktop window (a new layout of the page already loaded, not a
    second load), every box laid out at both widths."""
    tab.lay_out_everything()
    found = []
    for viewport in (PHONE_390, DESKTOP):
        if tab.page.viewport_size != viewport:
            tab.page.set_viewport_size(viewport)
        tab.page.evaluate(TWO_FRAMES)
        found.append((viewport["width"], tab.page.evaluate(measure)))
    return found


@pytest.mark.parametrize("lang,url", WIDE_PAGES, ids=page_ids(WIDE_PAGES))
def test_a_chart_or_diagram_wider_than_its_box_says_so_and_scrolls_to_all_of_it(open_tab, lang,
                                                                                url):
    """At 390 and 1280 px, a chart or diagram that does not fit its column scrolls in its own box
    to its last bar and label, and a line in the page's language above it says so, in view."""
    path = path_of(lang, url)
    tab = open_tab(path, viewport=PHONE_390, is_mobile=True, has_touch=True)
    measured = at_each_width(tab, """() => [...document.querySelectorAll(
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
        })""")
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
    assert not problems, report(path, problems + tab.problems)
    ARTIFACTS.mkdir(exist_ok=True)
    tab.page.set_viewport_size(PHONE_390)
    tab.page.evaluate(TWO_FRAMES)
    first = tab.page.locator("article figure.benchmark-chart, article figure.diagram").first
    first.screenshot(path=str(ARTIFACTS / f"phone-wide-{lang}-{url.strip('/') or 'index'}.png"))


# Pages with a table: a Markdown table (a line starting with "|" and a separator row under it),
# or a chart's data table.
TABLE_PAGES = sorted(set(CHART_PAGES) | {
    (lang, url) for lang, url in PAGES if SOURCES[url].suffix == ".md"
    and re.search(r"^\|.*\n\|[ :|-]+\|\s*$", SOURCES[url].read_text(encoding="utf-8"), re.M)})


@pytest.mark.parametrize("lang,url", TABLE_PAGES, ids=page_ids(TABLE_PAGES))
def test_a_box_that_hides_part_of_a_table_or_tabs_says_so_and_shows_its_scroll_shadow(
        open_tab, lang, url):
    """At 390 and 1280 px, with every chart's data table open: each box of the article that
    scrolls sideways and hides some of its content (any box, code blocks and the charts of the test
    above aside) has a line in the page's language above it that says so (a row of framework tabs:
    Material's arrow), and a table in it lets the box's edge shadow show (no background of its own
    over it)."""
    path = path_of(lang, url)
    tab = open_tab(path, viewport=PHONE_390, is_mobile=True, has_touch=True)
    tab.page.evaluate("document.querySelectorAll('details.chart-data').forEach(d => d.open = true)")
    measured = at_each_width(tab, """() => [...document.querySelectorAll('article *')]
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
                            box.textContent.trim().slice(0, 40)}))""")
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
    assert not problems, report(path, problems + tab.problems)


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


@pytest.mark.parametrize("lang,url", DIAGRAM_PAGES, ids=page_ids(DIAGRAM_PAGES))
def test_diagrams_fit_the_column_on_a_desktop(open_tab, lang, url):
    """At 1280 px a diagram is whole in the column (on a phone it may scroll in its box)."""
    path = path_of(lang, url)
    tab = open_tab(path)
    tab.lay_out_everything()
    cut = tab.page.evaluate("""() => [...document.querySelectorAll('figure.diagram')]
        .filter(f => f.scrollWidth > f.clientWidth + 1).map(f => `${f.scrollWidth} > ${f.clientWidth}`)""")
    assert not cut, report(path, [f"diagram wider than its column: {cut}"] + tab.problems)
