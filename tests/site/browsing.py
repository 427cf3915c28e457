"""What the browser tests of the built site share (tests/site/test_pages.py, test_finding.py,
test_charts_and_tables.py, test_copy_buttons.py, test_notebook_pages.py, test_search.py): the
pages to test, known from the sources before the build, and the helpers that drive them.

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


# A code block titled snippets/F (its title may go on: "F · the cuDNN calls") that embeds one
# file, at the left margin or indented in a collapsed block.
TITLED_EMBED = re.compile(r'^[ \t]*```\w*[^\n]*\btitle="snippets/([^" ]+)([^"]*)"[^\n]*\n'
                          r'[ \t]*--8<-- "([^"]+)"\n[ \t]*```$', re.M)


SECTION_MARKER = re.compile(r"-+8<-+[ \t]+\[[ \t]*(start|end)[ \t]*:[ \t]*([a-z][-_0-9a-z]*)[ \t]*\]")


def titled_embeds(url: str, lang: str = "en") -> list[tuple[str, str, str]]:
    """(title file, what the title adds, embed reference) of every code block
    `title="snippets/F…"` that embeds F, collapsed or not, in the page's source in `lang`."""
    source = SOURCES[url]
    if lang == "es":  # the Spanish twin: its titles add words in Spanish
        source = source.with_name(source.name.removesuffix(".md") + ".es.md")
    text = source.read_text(encoding="utf-8")
    return [(title, rest, ref) for title, rest, ref in TITLED_EMBED.findall(text)
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


def sitemap_paths(site_root: Path) -> set[str]:
    """Every path the sitemap lists (each page and its alternates), as served: "/", "/es/x/"."""
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9", "x": "http://www.w3.org/1999/xhtml"}
    tree = ET.parse(site_root / "sitemap.xml")
    urls = [u.findtext("s:loc", namespaces=ns) for u in tree.getroot().findall("s:url", ns)]
    urls += [a.get("href") for a in tree.getroot().iterfind("s:url/x:link", ns)]
    root = urlsplit(mkdocs_config().get("site_url") or "/").path  # sitemap URLs are under it
    assert all(urlsplit(u).path.startswith(root) for u in urls), urls
    return {"/" + urlsplit(u).path[len(root):] for u in urls}


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


def index_requests(tab: Tab) -> list[str]:
    return [urlsplit(u).path.rsplit("/", 1)[-1] for u in tab.requests if "/search/search_index" in u]


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


FRAMEWORKS = ("Keras 2 (tf-keras)", "Keras 3 · TensorFlow", "Keras 3 · JAX", "Keras 3 · PyTorch",
              "PyTorch")


# The pages whose framework tabs follow the reader's choice.
TABBED = [url for url in SOURCES if all(f'=== "{name}"' in SOURCES[url].read_text(encoding="utf-8")
                                        for name in FRAMEWORKS)]


CHOSEN_TAB = """() => [...document.querySelectorAll('.tabbed-set')]
    .filter(set => set.querySelector('.tabbed-labels'))
    .map(set => { const input = set.querySelector(':scope > input:checked');
                  return set.querySelector(`label[for="${input.id}"]`).innerText.trim(); })"""


# What the reader sees before the first code block longer than three lines: a listing
# (`.highlight`) or a Python program (`div.program`, its `.highlight` inside).
OPENING = """() => {
    let text = '', table = false;
    for (const e of document.querySelectorAll('article > *')) {
        if (e.matches('.highlight, .program') && e.innerText.split('\\n').length > 3) break;
        text += e.innerText + '\\n';
        table = table || e.tagName === 'TABLE' || !!e.querySelector('table');
    }
    return {text, table};
}"""


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


PHONE_390 = {"width": 390, "height": 844}


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


# Pages with a table: a Markdown table (a line starting with "|" and a separator row under it),
# or a chart's data table.
TABLE_PAGES = sorted(set(CHART_PAGES) | {
    (lang, url) for lang, url in PAGES if SOURCES[url].suffix == ".md"
    and re.search(r"^\|.*\n\|[ :|-]+\|\s*$", SOURCES[url].read_text(encoding="utf-8"), re.M)})
