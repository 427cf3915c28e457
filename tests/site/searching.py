"""What the search tests share (tests/site/test_search.py, test_search_worker.py): the
queries made from the built site, the site's own worker in Chromium, the results a phone
lists.

The queries are made from the built site itself, so that no test passes only for today's pages:
every message a page quotes, every heading, and random runs of words from the pages' prose and
code (Hypothesis, a fixed budget), pasted whole and typed key by key. They run through the site's
own search worker in Chromium, on `/` and on `/es/` (Spanish readers paste English messages).
A query fails on any search-worker error; a quoted message fails when no page that quotes it is
among the first three results; a page opened from a result fails when its text, or what its copy
button copies, is not what it is without the search terms.

The cause of the worker errors (lunr's token set, pipeline/pages/hooks/search_worker_fixes.js) is also tested
directly in Node, on the worker file the site serves (tests/search_node.py runs it there).
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from bs4 import BeautifulSoup
from hypothesis import strategies as st

import committed
from built_pages import opened
from browsing import LANGS, RESULTS, path_of
from chromium import START_WORKER, copied_text_of


QUOTED_IN_HEADING = re.compile(r'"([^"\n]{12,})"')


@dataclass(frozen=True)
class Quote:
    text: str  # as a reader pastes it: one line
    page: str  # the served path of a page that quotes it ("/es/troubleshooting/")
    anchor: str  # the section it sits in


def pages_of(site_root: Path, lang: str) -> list[Path]:
    """The built pages of one language (the Spanish ones live under es/)."""
    pages = sorted(site_root.rglob("index.html"))
    spanish = site_root / "es"
    return [p for p in pages if (spanish in p.parents) == (lang == "es")]


def served(site_root: Path, page: Path) -> str:
    folder = page.parent.relative_to(site_root).as_posix()
    return "/" if folder == "." else f"/{folder}/"


@lru_cache(maxsize=None)
def site_text(site_root: Path, lang: str) -> dict:
    """Quotes, headings and the words of prose and code of one language's built pages. A quote
    is text in double quotes in a heading, or a message block (`<!-- message: ID -->`, from
    data/messages.yml: a library's own text). Collapsed blocks are read opened."""
    quotes, headings, prose, code = [], [], [], []
    for page in pages_of(site_root, lang):
        # every collapsed block opened: its code is on the page for a reader who opens it
        article = BeautifulSoup(opened(page), "html.parser").find("article")
        if article is None:
            continue
        path, anchor = served(site_root, page), ""
        for el in article.find_all(["h1", "h2", "h3", "h4", "pre", "p", "li", "td"]):
            text = " ".join(el.get_text(" ").replace("¶", " ").split())
            if el.name[0] == "h":
                anchor = el.get("id") or anchor
                headings.append(text)
                quotes += [Quote(q, path, anchor) for q in QUOTED_IN_HEADING.findall(text)]
            elif el.name == "pre":
                code.append(el.get_text())
                if el.find_parent("div", class_="message"):
                    quotes.append(Quote(text, path, anchor))
            elif text:
                prose.append(text)
    return {"quotes": quotes, "headings": headings, "prose": prose, "code": code}


def words_of(text: str) -> list[str]:
    return text.split()


SETUP_WORKER = "async () => {" + START_WORKER + """
  window.__ask = async (queries) => {
    const answers = [];
    for (const query of queries) {
      const { data } = await send({ type: 2, data: query });
      // Material's worker answers a query that failed with bare {items: []}: no suggestions
      answers.push({ pages: data.items.length, answered: "suggest" in data });
    }
    return answers;
  };
  return { ready: ready.type, suggest: config.features.includes("search.suggest"), worker: config.search };
}"""


class Worker:
    """The site's own search worker in a page of one language, asked queries in batches."""

    def __init__(self, page):
        self.page, self.console = page, []
        page.on("console", lambda m: self.console.append(m.text))
        setup = page.evaluate(SETUP_WORKER)
        assert setup["ready"] == 1, setup
        # A failed query is told from an answered one by the suggestions only Material's
        # answer carries (mkdocs.yml: feature search.suggest).
        assert setup["suggest"], "search.suggest is off: the test cannot tell a failed query"
        assert "lunr-fix" in setup["worker"], setup["worker"]

    def failures(self, queries: list[str]) -> list[str]:
        """The queries the worker failed on: an error, not an empty result. Material's worker
        answers a failed query as an empty one ({items: []}, without the suggestions it adds to
        every answer), and says "Invalid query: QUERY" in the console. An answer without
        suggestions also comes for a query that Material's transform leaves without a term
        ("AttributeError:" is a field name to lunr, which Material drops): the console decides."""
        answers = self.page.evaluate("queries => window.__ask(queries)", queries)
        unanswered = [q for q, a in zip(queries, answers) if not a["answered"]]
        if not unanswered:
            return []
        said = self.settled_console()
        return [q for q in unanswered if f"Invalid query: {q} " in said]

    def failing_parts(self, parts: list[str], batch: int = 40) -> list[str]:
        """The parts (words of a query, as `typed` makes them) the worker fails on, asked many
        to a query: Material and the site's prelude make each part of a query into terms on its
        own, and lunr looks each term up on its own (an error in one fails the query), so a
        query of parts fails when one of its parts, alone, fails. A batch that fails is halved
        until the parts that fail alone are found; one that fails while none of its parts does
        is reported whole. Asked one by one, the typed prefixes of every message cost three
        times as long (the worker's per-query work: scoring and excerpts)."""
        batches = [parts[i:i + batch] for i in range(0, len(parts), batch)]
        bad = set(self.failures([" ".join(b) for b in batches]))
        return [part for b in batches if " ".join(b) in bad for part in self._failing_in(b)]

    def _failing_in(self, parts: list[str]) -> list[str]:
        """In a batch that fails: the parts that fail alone, or the batch whole if none does."""
        if len(parts) == 1:
            return parts
        halves = [parts[:len(parts) // 2], parts[len(parts) // 2:]]
        bad = set(self.failures([" ".join(h) for h in halves]))
        found = [part for h in halves if " ".join(h) in bad for part in self._failing_in(h)]
        return found or [" ".join(parts)]

    def settled_console(self) -> str:
        """The console, once nothing new has come for half a second (the worker's messages
        reach the test on their own channel)."""
        count = -1
        while count != len(self.console):
            count = len(self.console)
            self.page.wait_for_timeout(500)
        return "\n".join(self.console)

    def explain(self, failed: list[str]) -> str:
        said = [line for line in self.console if "Invalid query" in line or "Error" in line]
        return f"{len(failed)} failed, e.g. {failed[:5]}; the worker said: {said[:6]}"


@pytest.fixture(scope="module")
def workers(browser, server):
    """One page per language with the site's search worker set up, for the whole module."""
    if isinstance(browser, str):
        pytest.fail(browser, pytrace=False)
    contexts, made = [], {}
    for lang in LANGS:
        context = browser.new_context(service_workers="block")
        contexts.append(context)
        page = context.new_page()
        page.goto(server + path_of(lang, ""))
        made[lang] = Worker(page)
    yield made
    for context in contexts:
        context.close()


# Lines readers paste that look like lunr's or Material's query syntax: each used to fail or
# find nothing (pipeline/pages/hooks/search_worker_prelude.js, pipeline/pages/hooks/search_worker_fixes.js).
SYNTAX_IN_LOGS = ['For more information, run with TORCH_LOGS="+dynamic".', "~/.keras/keras.json",
                  "a^b LSTM", "cudnn~rnn", "-1 steps LSTM", "++x GRU", 'the "cudnn" LSTM']


def typed(message: str) -> list[str]:
    """What typing `message` one key at a time asks, reduced to the queries that decide it.
    Material cuts a query at white space and makes each part into terms on its own (its
    transform), and lunr looks each term up on its own: a query fails exactly when one of its
    parts, alone, fails. Each query typed is some whole parts and a prefix of the next part, so
    every prefix of every part, alone, covers every key pressed; the message whole is added."""
    parts = message.split()
    return [part[:n] for part in parts for n in range(1, len(part) + 1)] + [message]


# Letters, digits and every character lunr or Material reads as query syntax.
SYNTAX_CHARACTERS = 'ab1 +-~^:*"\'\\()[]{}<>=.,/'


def runs_of_words(texts: list[str]):
    """A run of one to eight words, from a random place of a random text."""
    texts = [words_of(t) for t in texts if words_of(t)]
    return st.sampled_from(texts).flatmap(lambda words: st.tuples(
        st.just(words), st.integers(0, len(words) - 1), st.integers(1, 8))).map(
        lambda t: " ".join(t[0][t[1]:t[1] + t[2]]))


def runs_of_characters(texts: list[str]):
    """A slice of a line of code, punctuation and all, as a reader selects it."""
    lines = [line.strip() for t in texts for line in t.splitlines() if len(line.strip()) > 2]
    return st.sampled_from(lines).flatmap(lambda line: st.tuples(
        st.just(line), st.integers(0, len(line) - 1), st.integers(2, 60))).map(
        lambda t: t[0][t[1]:t[1] + t[2]])


# What the search box lists, page by page (Material: a page's link, the results it shows, the
# others folded under "N more on this page"): each page's path, the address of its first excerpt
# (the first result that shows text of its section, not the page's title alone), and the height of
# its tallest result, every folded one opened, against the height of the screen. The height is
# measured (`measure`: every folded result opened, then laid out) or bounded by the CSS that clamps
# each result (its computed max-height, padding and borders, with its overflow hidden; Infinity
# where nothing clamps it): laying out some 200 results cost a third of a pasted message's time.
LISTED = """(measure) => {
  const items = [...document.querySelectorAll(".md-search-result__list > li.md-search-result__item")];
  const found = items.map((li) => {
    const shown = [...li.querySelectorAll(":scope > a")];
    const excerpt = shown.find((a) => [...a.querySelector("article").childNodes].some((n) =>
      !(n.nodeType === 1 && n.matches("h1, h2, .md-search-result__icon")) && n.textContent.trim()));
    return { page: new URL(shown[0].href).pathname, excerpt: excerpt ? excerpt.href : null };
  });
  const bound = (a) => {
    const s = getComputedStyle(a), px = (v) => parseFloat(v) || 0, most = parseFloat(s.maxHeight);
    return s.overflowY === "visible" || !isFinite(most) ? Infinity : most + px(s.paddingTop) +
      px(s.paddingBottom) + px(s.borderTopWidth) + px(s.borderBottomWidth);
  };
  // every folded result opened first, then all measured: one layout, not one per page
  if (measure) items.forEach((li) => li.querySelectorAll("details").forEach((d) => { d.open = true; }));
  return found.map((f, i) => ({ ...f, measured: measure,
    tallest: Math.max(...[...items[i].querySelectorAll("article")].map(
      (a) => (measure ? a.getBoundingClientRect().height : bound(a)))),
    screen: window.innerHeight }));
}"""
MEASURED_EVERY = 10  # every tenth query pasted has its results laid out and measured


# Each query pasted into the search box, as browsing.search does it (the box emptied and its
# results gone first, so that no result is a previous query's; a second key where none came in
# 15 s), in one call for all of them: the box's value set and a key sent, which is what Material
# reads (its keyup handler takes the box's value), where Playwright's fill, key press and wait
# were a round trip each. For each query: the result links, what the page showed when none came,
# LISTED, and whether a second key was needed.
PASTE_ALL = """async ([queries, results, every]) => {
  const listed = """ + LISTED + """;
  const box = document.querySelector("input.md-search__input");
  const count = () => document.querySelectorAll(results).length;
  const frame = () => new Promise((r) => requestAnimationFrame(r));
  const type = (value) => { box.value = value;
    box.dispatchEvent(new KeyboardEvent("keyup", { key: "End", bubbles: true })); };
  const until = async (done) => { const start = performance.now();
    while (!done()) { if (performance.now() - start > 15000) return false; await frame(); }
    return true; };
  const out = [];
  for (const [n, query] of queries.entries()) {
    type("");
    if (!await until(() => count() === 0)) throw new Error("the results stay after emptying the box");
    let found = false, again = false;
    for (const attempt of [1, 2]) {
      type(query);
      if ((found = await until(() => count() > 0))) break;
      again = true;
    }
    const why = found ? "" : `no result (${JSON.stringify({ value: box.value,
      meta: document.querySelector(".md-search-result__meta")?.textContent,
      listHidden: document.querySelector(".md-search-result__list")?.hidden,
      searchOpen: document.getElementById("__search")?.checked,
      focus: document.activeElement?.className })})`;
    out.push({ hrefs: [...document.querySelectorAll(results)].map((a) => a.getAttribute("href")),
               why, pages: found ? listed(n % every === 0) : [], again });
  }
  return out;
}"""


@dataclass
class Pasted:
    hrefs: list  # the result links Material shows, in order (browsing.search)
    why: str  # what the page showed when no result came
    pages: list  # LISTED: a dict per page listed


PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def pasted(browser, server, site_root):
    """Each quoted message, and each GPU question (GPU_QUESTIONS), pasted whole into the search
    box of the home page of each language, on a phone's screen (390 px), in one page per
    language for the module: {lang: {query: Pasted}}; taken from its committed run when nothing
    it read has changed (committed.py)."""
    if isinstance(browser, str):
        pytest.fail(browser, pytrace=False)
    store = committed.for_site(site_root, browser.version, server)
    found = {}
    for lang in LANGS:
        queries = list(dict.fromkeys([quote.text for quote in site_text(site_root, lang)["quotes"]]
                                     + [question for question, _ in GPU_QUESTIONS[lang]]))
        # the index is named whether or not the page's requests show the worker fetching it
        inputs, index = [queries, RESULTS, MEASURED_EVERY, PHONE], f"search/search_index.{lang}.json"

        def paste(lang=lang, queries=queries, index=index):
            context = browser.new_context(service_workers="block", viewport=PHONE)
            page = context.new_page()
            requests = []
            page.on("request", lambda r: requests.append(r.url))
            page.goto(server + path_of(lang, ""))
            page.locator("label.md-header__button[for='__search']").click()
            answers = page.evaluate(PASTE_ALL, [queries, RESULTS, MEASURED_EVERY])
            context.close()
            files = sorted(set(committed.requested_files(requests, server)) | {index})
            # a slow answer, or none: not kept
            return answers, files, all(a["hrefs"] and not a["again"] for a in answers)

        answers = store.run(f"pasted-{lang}", Path(__file__), paste, inputs)
        found[lang] = {q: Pasted([urlsplit(h) for h in a["hrefs"]], a["why"], a["pages"])
                       for q, a in zip(queries, answers)}
        for q, a in zip(queries, answers):
            if a["again"]:
                warnings.warn(f"search {q!r}: no result in 15 s, a key pressed again")
    return found


# What readers ask of a GPU run, as they would type it, and the sections that answer it with the
# run's figures in their prose (pipeline/claims/gpu_facts.py writes them from the records).
GPU_QUESTIONS = {
    "en": [
        ("PyTorch LSTM gives different results on GPU than on CPU TF32",
         {"/troubleshooting/numbers/#pytorch-tf32"}),
        ("LSTM same seed different results on the GPU use_deterministic_algorithms",
         {"/troubleshooting/numbers/#pytorch-reproducible"}),
        ("capture a cuDNN LSTM in a CUDA graph", {"/troubleshooting/numbers/#pytorch-cuda-graph"}),
        ("LSTM sequence longer than 65535 steps CUDNN_STATUS_NOT_SUPPORTED",
         {"/troubleshooting/runtime/#pytorch-long-sequence",
          "/troubleshooting/runtime/#pytorch-long-bidirectional"}),
        ("what does pack_padded_sequence enforce_sorted=False cost", {"/benchmarks/#packed-sequences"}),
        ("is the JAX cuDNN LSTM faster than lax.scan", {"/benchmarks/#jax-cudnn-lstm"}),
        ("stateful GRU Keras PyTorch backend inplace operation error",
         {"/troubleshooting/keras/#keras-stateful-torch"}),
    ],
    "es": [
        ("PyTorch LSTM da resultados distintos en la GPU que en la CPU TF32",
         {"/es/troubleshooting/numbers/#pytorch-tf32"}),
        ("misma semilla otros resultados en la GPU LSTM use_deterministic_algorithms",
         {"/es/troubleshooting/numbers/#pytorch-reproducible"}),
        ("capturar una LSTM de cuDNN en un grafo CUDA",
         {"/es/troubleshooting/numbers/#pytorch-cuda-graph"}),
        ("secuencia de más de 65535 pasos CUDNN_STATUS_NOT_SUPPORTED LSTM",
         {"/es/troubleshooting/runtime/#pytorch-long-sequence",
          "/es/troubleshooting/runtime/#pytorch-long-bidirectional"}),
        ("cuánto cuesta pack_padded_sequence enforce_sorted=False",
         {"/es/benchmarks/#packed-sequences"}),
        ("es la LSTM de cuDNN en JAX más rápida que lax.scan", {"/es/benchmarks/#jax-cudnn-lstm"}),
        ("GRU con estado Keras backend PyTorch error de operación inplace",
         {"/es/troubleshooting/keras/#keras-stateful-torch"}),
    ],
}


LANDING = """() => {
  const article = document.querySelector("article");
  const ranges = CSS.highlights.get("search-terms");
  return {
    text: article.textContent,
    url: location.href,
    marks: article.querySelectorAll("mark").length,
    ranges: ranges ? [...ranges].map((r) => ({
      text: r.startContainer.data.slice(r.startOffset, r.endOffset),
      before: r.startContainer.data.slice(Math.max(0, r.startOffset - 1), r.startOffset),
      connected: r.startContainer.isConnected })) : [],
  };
}"""


WORD_CHAR = re.compile(r"\w")


# Code blocks with Material's copy button (a notebook's cells and outputs have none).
COPYABLE = "article div.highlight:not(.output):not(.jupyter-wrapper *)"


def copied_text(tab) -> str | None:
    """What the copy button of the page's first visible code block copies (None: no such block)."""
    page = tab.page
    block = page.locator(f"{COPYABLE} >> visible=true")
    if not block.count():
        return None
    block = block.first
    page.evaluate("navigator.clipboard.writeText('')")
    block.scroll_into_view_if_needed()
    block.hover()
    block.locator("button.md-code__button[data-md-type=copy], button.md-clipboard").first.click()
    return copied_text_of(page)
