"""Headless Chromium (Debian's, never a downloaded one) on the built site, served on 127.0.0.1:
the fixtures every browser test module uses (conftest.py registers them once, so that modules
sharing a pytest-xdist worker share one browser) and the Tab that records what a page asked for
and complained about."""
from __future__ import annotations

import functools
import http.server
import os
import threading
from pathlib import Path

import pytest

from conftest import REPO

CHROME = os.environ.get("CHROME_PATH") or "/usr/bin/chromium"
CHROME_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               # without these Chromium calls Google's servers, and this machine's network refuses
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]
NO_BROWSER = (f"no usable browser at {CHROME}: install chromium (apt-get install chromium) "
              "or set CHROME_PATH to a Chrome/Chromium executable")

DESKTOP = {"width": 1280, "height": 900}


# What a copy put on the clipboard (emptied before the click), polled in the page. Not
# wait_for_function: with an async predicate it resolves at once (the predicate's promise is
# truthy), so a wait for the clipboard never waited, and a copy that landed late read "".
CLIPBOARD_FILLED = """async (timeout) => {
  const end = performance.now() + timeout;
  for (;;) {
    const text = await navigator.clipboard.readText();
    if (text) return text;
    if (performance.now() > end) throw new Error(`nothing on the clipboard after ${timeout} ms`);
    await new Promise((done) => setTimeout(done, 50));
  }
}"""


def copied_text_of(page, timeout: int = 5_000) -> str:
    """The clipboard's text once a copy filled it (it was emptied before the copy)."""
    return page.evaluate(CLIPBOARD_FILLED, timeout)


# --- browser, server, pages ------------------------------------------------------------------

@pytest.fixture(scope="session")
def browser():
    """One Chromium for the session, or the reason there is none (each test then fails with it)."""
    if not (os.path.isfile(CHROME) and os.access(CHROME, os.X_OK)):
        yield NO_BROWSER
        return
    # Imported here: a GPU machine's Python has no Playwright, and its tests load this module
    # (conftest.py registers the fixtures) without using a browser.
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        try:
            chromium = playwright.chromium.launch(executable_path=CHROME, headless=True,
                                                  args=CHROME_ARGS, timeout=60_000)
        except PlaywrightError as e:
            yield f"{NO_BROWSER} ({str(e).strip().splitlines()[0]})"
            return
        yield chromium
        chromium.close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # the browser closing a connection early is not a test failure


@pytest.fixture(scope="session")
def site_root(request) -> Path:
    """The built site: the `site` fixture's build, or BROWSER_TEST_SITE (a folder) when set."""
    given = os.environ.get("BROWSER_TEST_SITE")
    root = (REPO / given).resolve() if given else request.getfixturevalue("site")
    assert (root / "index.html").is_file(), f"no built site in {root}"
    return root


@pytest.fixture(scope="session")
def server(site_root) -> str:
    """The built site over HTTP on 127.0.0.1 (a free port), from a background thread."""
    httpd = _Server(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site_root)))
    thread = threading.Thread(target=httpd.serve_forever, name="site-server", daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()
    httpd.server_close()
    thread.join(5)


class Tab:
    """A page in its own browser context, with everything it asked for and complained about."""

    def __init__(self, context, origin: str):
        self.context, self.origin = context, origin
        self.page = context.new_page()
        self.requests: list[str] = []
        self.problems: list[str] = []
        self.page.on("request", self._request)
        self.page.on("requestfailed", lambda r: self.problems.append(
            f"request failed: {r.method} {r.url} ({r.failure})"))
        self.page.on("response", lambda r: r.status >= 400 and self.problems.append(
            f"HTTP {r.status}: {r.request.method} {r.url}"))
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda e: self.problems.append(f"uncaught error: {e}"))

    def _request(self, request):
        self.requests.append(request.url)
        if not (request.url.startswith(self.origin + "/") or request.url.startswith(("data:", "blob:"))):
            self.problems.append(f"request to another host: {request.method} {request.url}")

    def _console(self, message):
        if message.type == "error":
            where = message.location or {}
            self.problems.append(f"console error: {message.text} "
                                 f"(at {where.get('url', '?')}:{where.get('lineNumber', '?')})")

    def other_hosts(self) -> list[str]:
        return [p for p in self.problems if p.startswith("request to another host")]

    def goto(self, path: str, wait: str = "load"):
        response = self.page.goto(self.origin + path, wait_until=wait)
        assert response is not None and response.ok, \
            f"{path}: HTTP {response.status if response else 'no response'}"
        return response

    def settle(self):
        """Wait for what loads after `load`: network quiet, fonts ready. (Diagrams and math are
        drawn at build time: nothing renders them in the page.)"""
        self.page.wait_for_load_state("networkidle")
        self.page.evaluate("document.fonts.ready.then(() => true)")

    def load_everything(self):
        """Load what the page loads only near the screen or once opened, as a reader who scrolls
        through it and opens every block gets it: charts, and the code of collapsed blocks
        (overrides/assets/program-copy.js loads them all on `beforeprint`)."""
        self.page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
        self.page.wait_for_function("!document.querySelector('[data-deferred-src]')",
                                    timeout=15_000)

    def lay_out_everything(self):
        """Load what the page loads near the screen (load_everything), and lay out the blocks
        the site draws only near the screen (site.css: content-visibility), so that innerText
        reads what a reader sees as they scroll: Chrome gives "" for a block not yet drawn."""
        self.load_everything()
        self.page.add_style_tag(content="* { content-visibility: visible !important; }")

    def palette(self, scheme: str):
        """Switch Material's palette ("default" or "slate") with its own toggle."""
        if self.page.evaluate("document.body.getAttribute('data-md-color-scheme')") != scheme:
            self.page.locator("form[data-md-component=palette] label:not([hidden])").click()
            self.page.wait_for_function(
                f"document.body.getAttribute('data-md-color-scheme') === '{scheme}'", timeout=5_000)


@pytest.fixture
def open_tab(browser, request):
    """open_tab(path, viewport=..., clipboard=False, init_script=None) -> Tab: a new context, the
    page loaded (init_script, if given, runs in it before the page's own scripts)."""
    contexts = []

    def open_(path: str, *, viewport=DESKTOP, clipboard=False, wait="load", init_script=None,
              **options) -> Tab:
        if isinstance(browser, str):
            pytest.fail(browser, pytrace=False)
        origin = request.getfixturevalue("server")
        context = browser.new_context(viewport=viewport, color_scheme="light", locale="en-US",
                                      service_workers="block", **options)
        contexts.append(context)
        context.set_default_timeout(15_000)
        if clipboard:
            context.grant_permissions(["clipboard-read", "clipboard-write"], origin=origin)
        if init_script:
            context.add_init_script(init_script)
        tab = Tab(context, origin)
        tab.goto(path, wait)
        return tab

    yield open_
    for context in contexts:
        context.close()


# One context per kind of visit (tests/site/visits.py), kept for the whole session and used by
# one page after another: a context costs Chromium a profile of its own, and the pages of a kind
# share its settings. What a page stores (Material keeps the palette chosen in localStorage) is
# cleared when its visit ends (clear_storage), so that the next page starts as a new reader's.
_CONTEXTS: dict[tuple[int, str], object] = {}


def reused_context(browser, origin: str, kind: str, *, init_scripts=(), clipboard=False,
                   viewport=DESKTOP, **options):
    """The session's context of this kind, made at its first use."""
    key = (id(browser), kind)
    if key not in _CONTEXTS:
        context = browser.new_context(viewport=viewport, color_scheme="light", locale="en-US",
                                      service_workers="block", **options)
        context.set_default_timeout(15_000)
        if clipboard:
            context.grant_permissions(["clipboard-read", "clipboard-write"], origin=origin)
        for script in init_scripts:
            context.add_init_script(script)
        _CONTEXTS[key] = context
    return _CONTEXTS[key]


def clear_storage(page) -> None:
    """What the page's origin stored in the reused context, gone (the page stays open)."""
    try:
        page.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
    except Exception:  # a page that crashed or never loaded stored nothing to clear
        pass


def report(path: str, problems: list[str]) -> str:
    return f"{path}:\n  " + "\n  ".join(problems)


# Material's search worker, started in a page as the page starts it (integrations/search/worker:
# setupSearchWorker), with the site's index of the page's language: `send` posts a message and
# waits for its answer, `ready` is the answer to the set-up. Both worker tests start from it.
START_WORKER = """
  const config = JSON.parse(document.getElementById("__config").textContent);
  const { language } = JSON.parse(document.getElementById("__search_index").textContent);
  const base = new URL(config.base, location.href);
  const index = await (await fetch(new URL(`search/search_index.${language}.json`, base))).json();
  const worker = new Worker(new URL(config.search, location.href));
  const waiting = [];
  worker.onmessage = (event) => waiting.shift()(event.data);
  const send = (message) => new Promise((resolve) => { waiting.push(resolve); worker.postMessage(message); });
  const ready = await send({ type: 0, data: { config: index.config, docs: index.docs,
    options: { suggest: config.features.includes("search.suggest") } } });
"""

# The site's own search worker in a page of one language, asked every query in turn: the
# locations of the documents of the first three results (a result is a page's documents).
ASK = "async (queries) => {" + START_WORKER + """
  const answers = [];
  for (const query of queries) {
    const { data } = await send({ type: 2, data: query });
    answers.push(data.items.slice(0, 3).map((item) => (Array.isArray(item) ? item : [item])
      .map((doc) => doc.location)));
  }
  worker.terminate();
  return answers;
}"""


def first_three(browser, server: str, lang: str, queries: list[str]) -> list[list[list[str]]]:
    """For each query, the first three results of the site's own search worker (in the page of
    `lang`), each as the locations of its documents, best first."""
    if isinstance(browser, str):
        pytest.fail(browser, pytrace=False)
    context = browser.new_context(service_workers="block")
    try:
        page = context.new_page()
        page.goto(f"{server}/{'es/' if lang == 'es' else ''}")
        return page.evaluate(ASK, queries)
    finally:
        context.close()
