"""Search, as readers use it: they paste a line of their log into the search box, in either
language, and open the first result.

The queries are made from the built site itself, so that no test passes only for today's pages:
every message a page quotes, every heading, and random runs of words from the pages' prose and
code (Hypothesis, a fixed budget), pasted whole and typed key by key. They run through the site's
own search worker in Chromium, on `/` and on `/es/` (Spanish readers paste English messages).
A query fails on any search-worker error; a quoted message fails when no page that quotes it is
among the first three results; a page opened from a result fails when its text, or what its copy
button copies, is not what it is without the search terms.

The cause of the worker errors (lunr's token set, pipeline/pages/hooks/search_worker_fixes.js) is also tested
directly in Node, on the worker file the site serves.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from urllib.parse import parse_qs, quote_plus, urlsplit

import pytest
from bs4 import BeautifulSoup
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import REPO
from chromium import report
from test_browser import LANGS, index_requests, path_of, search

NODE = shutil.which("node")
HARNESS = REPO / "tests" / "search_worker.js"
QUOTED_IN_HEADING = re.compile(r'"([^"\n]{12,})"')


# --- what the built site holds ---------------------------------------------------------------

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
    data/messages.yml: a library's own text)."""
    quotes, headings, prose, code = [], [], [], []
    for page in pages_of(site_root, lang):
        article = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser").find("article")
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


# --- the site's search worker, in the browser ----------------------------------------------------

SETUP_WORKER = """async () => {
  const config = JSON.parse(document.getElementById("__config").textContent);
  const { language } = JSON.parse(document.getElementById("__search_index").textContent);
  const base = new URL(config.base, location.href);
  const index = await (await fetch(new URL(`search/search_index.${language}.json`, base))).json();
  const worker = new Worker(new URL(config.search, location.href));
  const waiting = [];
  worker.onmessage = (event) => waiting.shift()(event.data);
  const send = (message) => new Promise((resolve) => { waiting.push(resolve); worker.postMessage(message); });
  // What Material's page sends its worker (integrations/search/worker: setupSearchWorker)
  const ready = await send({ type: 0, data: { config: index.config, docs: index.docs,
    options: { suggest: config.features.includes("search.suggest") } } });
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


# --- the cause, in Node --------------------------------------------------------------------------

def node_json(*args: str) -> dict:
    proc = subprocess.run([NODE, str(HARNESS), *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def served_worker(site_root: Path) -> Path:
    found = sorted((site_root / "assets" / "javascripts" / "workers").glob("search.lunr-fix.*.min.js"))
    assert len(found) == 1, found
    return found[0]


def materials_worker() -> Path:
    import material
    found = sorted((Path(material.__file__).parent / "templates" / "assets" / "javascripts" /
                    "workers").glob("search.*.min.js"))
    assert len(found) == 1, found
    return found[0]


needs_node = pytest.mark.skipif(NODE is None, reason="needs Node.js (`make test` installs it)")


@needs_node
def test_lunr_merges_different_nodes_and_the_served_worker_does_not(site_root):
    """The cause: lunr keys {"1": node 1535} and {"1": node 15, "3": node 5} alike ("011535")
    and merges them; the worker the site serves keys them apart."""
    material = node_json(str(materials_worker()), "keys")
    assert material["a"] == material["b"], material  # the bug this site works around
    fixed = node_json(str(served_worker(site_root)), "keys")
    assert fixed["a"] != fixed["b"], fixed


@needs_node
@pytest.mark.parametrize("lang", LANGS)
def test_the_served_worker_holds_exactly_the_indexed_words_however_nodes_are_numbered(
        site_root, lang):
    """Which words collide depends on the whole index and on node numbers: for each numbering
    offset from 0 to 60 (the pages' content shifts it; Material's worker, unfixed, lost and
    invented words at offsets 3 and 6 of the Spanish index on 2026-11-24), the served worker's
    token set holds the indexed words, no more and no fewer."""
    index = site_root / "search" / f"search_index.{lang}.json"
    found = node_json(str(served_worker(site_root)), "words", str(index), "0", "60")
    assert found["terms"] > 1000, found["terms"]
    assert found["offsets"] == [], found["offsets"][:3]


# --- queries made from the site -------------------------------------------------------------------

@pytest.mark.parametrize("lang", LANGS)
def test_a_query_the_worker_fails_on_is_told_from_an_empty_one(workers, lang):
    """The tests below see a worker error: a query that is not text fails inside Material's
    search ("Invalid query: 42"); "AttributeError:" leaves Material no term and finds nothing,
    without an error."""
    assert workers[lang].failures([42, "AttributeError:", "cudnn"]) == [42]


# Lines readers paste that look like lunr's or Material's query syntax: each used to fail or
# find nothing (pipeline/pages/hooks/search_worker_prelude.js, pipeline/pages/hooks/search_worker_fixes.js).
SYNTAX_IN_LOGS = ['For more information, run with TORCH_LOGS="+dynamic".', "~/.keras/keras.json",
                  "a^b LSTM", "cudnn~rnn", "-1 steps LSTM", "++x GRU", 'the "cudnn" LSTM']


@pytest.mark.parametrize("lang", LANGS)
def test_query_syntax_in_a_pasted_line_is_searched_as_text(workers, lang):
    """Quotes, a word's leading + or -, and ~ or ^ inside a word are read as text: no error,
    and each line finds pages."""
    worker = workers[lang]
    assert worker.failures(SYNTAX_IN_LOGS) == [], worker.explain(SYNTAX_IN_LOGS)
    answers = worker.page.evaluate("queries => window.__ask(queries)", SYNTAX_IN_LOGS)
    assert all(a["pages"] for a in answers), list(zip(SYNTAX_IN_LOGS, answers))


def typed(message: str) -> list[str]:
    """What typing `message` one key at a time asks, reduced to the queries that decide it.
    Material cuts a query at white space and makes each part into terms on its own (its
    transform), and lunr looks each term up on its own: a query fails exactly when one of its
    parts, alone, fails. Each query typed is some whole parts and a prefix of the next part, so
    every prefix of every part, alone, covers every key pressed; the message whole is added."""
    parts = message.split()
    return [part[:n] for part in parts for n in range(1, len(part) + 1)] + [message]


@pytest.mark.parametrize("lang", LANGS)
def test_every_quoted_message_and_heading_pasted_whole_or_typed_key_by_key(site_root, workers, lang):
    """Every message the pages quote (in a heading, or a message block), pasted whole and typed
    one key at a time, and every heading: the worker answers each query without an error."""
    text = site_text(site_root, lang)
    assert len(text["quotes"]) >= 10 and len(text["headings"]) >= 100, \
        (len(text["quotes"]), len(text["headings"]))
    queries = [q for quote in dict.fromkeys(q.text for q in text["quotes"]) for q in typed(quote)]
    queries += text["headings"]
    worker = workers[lang]
    failed = worker.failures(list(dict.fromkeys(queries)))
    assert not failed, worker.explain(failed)


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


@pytest.mark.parametrize("lang", LANGS)
@settings(max_examples=50, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_random_runs_of_prose_and_code_never_fail(site_root, workers, lang, data):
    """Random runs of words from the pages' prose and code, slices of their code lines, and
    strings of query-syntax characters: no search-worker error (Hypothesis shrinks a failing
    query to a short one)."""
    text = site_text(site_root, lang)
    query = data.draw(st.one_of(runs_of_words(text["prose"]), runs_of_words(text["code"]),
                                runs_of_characters(text["code"]),
                                st.text(SYNTAX_CHARACTERS, min_size=1, max_size=16)), label="query")
    worker = workers[lang]
    failed = worker.failures([query, query[: max(1, len(query) // 2)]])
    assert not failed, worker.explain(failed)


# What the search box lists, page by page (Material: a page's link, the results it shows, the
# others folded under "N more on this page"): each page's path, the address of its first excerpt
# (the first result that shows text of its section, not the page's title alone), and the height of
# its tallest result, every folded one opened, against the height of the screen.
LISTED = """() => [...document.querySelectorAll(".md-search-result__list > li.md-search-result__item")]
  .map((li) => {
    const shown = [...li.querySelectorAll(":scope > a")];
    const excerpt = shown.find((a) => [...a.querySelector("article").childNodes].some((n) =>
      !(n.nodeType === 1 && n.matches("h1, h2, .md-search-result__icon")) && n.textContent.trim()));
    li.querySelectorAll("details").forEach((d) => { d.open = true; });
    return { page: new URL(shown[0].href).pathname,
             excerpt: excerpt ? excerpt.href : null,
             tallest: Math.max(...[...li.querySelectorAll("article")].map(
               (a) => a.getBoundingClientRect().height)),
             screen: window.innerHeight };
  })"""


@dataclass
class Pasted:
    hrefs: list  # the result links Material shows, in order (test_browser.search)
    why: str  # what the page showed when no result came
    pages: list  # LISTED: a dict per page listed


PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def pasted(browser, server, site_root):
    """Each quoted message pasted whole into the search box of the home page of each language,
    on a phone's screen (390 px), once for the module: {lang: {message: Pasted}}."""
    if isinstance(browser, str):
        pytest.fail(browser, pytrace=False)
    found = {}
    for lang in LANGS:
        context = browser.new_context(service_workers="block", viewport=PHONE)
        page = context.new_page()
        page.goto(server + path_of(lang, ""))
        page.locator("label.md-header__button[for='__search']").click()
        found[lang] = {}
        for q in dict.fromkeys(quote.text for quote in site_text(site_root, lang)["quotes"]):
            hrefs, why = search(page, q)
            found[lang][q] = Pasted(hrefs, why, page.evaluate(LISTED) if hrefs else [])
        context.close()
    return found


@pytest.mark.parametrize("lang", LANGS)
def test_a_pasted_message_lists_a_page_that_quotes_it_in_the_first_three(site_root, pasted, lang):
    """Through the search box, as a reader pastes it: each quoted message lists a page that
    quotes it (in the page's language) among the first three results."""
    pages = {}
    for q in site_text(site_root, lang)["quotes"]:
        pages.setdefault(q.text, set()).add(q.page)
    problems = []
    for message, where in pages.items():
        hrefs, why = pasted[lang][message].hrefs, pasted[lang][message].why
        first = [h.path for h in hrefs[:3]]
        if not where & set(first):
            problems.append(f"{message[:60]!r}: none of {sorted(where)} in the first three "
                            f"{[h.geturl() for h in hrefs[:3]]} {why}")
    assert not problems, report(lang, problems)


@pytest.mark.parametrize("lang", LANGS)
def test_a_message_the_troubleshooting_page_quotes_lists_its_section_first(site_root, pasted, lang):
    """Every message the troubleshooting page quotes (a heading's quotation, a message block),
    pasted on a phone: the troubleshooting page is among the first three pages listed, the first
    excerpt it shows is a section that quotes the message (not the page's introduction, nor
    another section with the section that quotes it folded), and no result, folded ones opened,
    is taller than the screen."""
    folder = path_of(lang, "troubleshooting/")
    quotes = [q for q in site_text(site_root, lang)["quotes"]
              if q.page.startswith(folder) and q.page != folder]
    # a section quotes a message when one of its quotes holds it ("Input and hidden tensors are
    # not at the same device" is also in a section's whole "RuntimeError: ..., found input ...")
    sections = {m: {(q.page, q.anchor) for q in quotes if m in q.text}
                for m in {q.text for q in quotes}}
    assert len(sections) >= 40, len(sections)
    problems = []
    for message, places in sections.items():
        listed, said = pasted[lang][message].pages, f"{message[:70]!r}"
        pages = {page for page, _ in places}
        ours = [p for p in listed[:3] if p["page"] in pages]
        if not ours:
            problems.append(f"{said}: {sorted(pages)} not among the first three pages "
                            f"{[p['page'] for p in listed[:3]]} {pasted[lang][message].why}")
            continue
        excerpt, anchors = ours[0]["excerpt"], {a for page, a in places if page == ours[0]["page"]}
        if excerpt is None or urlsplit(excerpt).fragment not in anchors:
            problems.append(f"{said}: first excerpt {excerpt}, not #{' or #'.join(sorted(anchors))}")
        for p in listed:
            if p["tallest"] > p["screen"]:
                problems.append(f"{said}: a result of {p['page']} is {p['tallest']:.0f} px tall, "
                                f"the screen {p['screen']} px")
    assert not problems, report(lang, problems)


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


@pytest.mark.parametrize("lang", LANGS)
def test_a_gpu_question_lands_on_its_answer_unfolded_in_the_first_three(browser, server, lang):
    """A question about what a GPU run showed, typed on a phone: the section that answers it is
    the first excerpt of a page among the first three listed (not folded under "more on this
    page"), and that section states the run's figures in its prose, in the page's language."""
    context = browser.new_context(service_workers="block", viewport=PHONE)
    try:
        page = context.new_page()
        page.goto(server + path_of(lang, ""))
        page.locator("label.md-header__button[for='__search']").click()
        problems = []
        for question, answers in GPU_QUESTIONS[lang]:
            hrefs, why = search(page, question)
            listed = page.evaluate(LISTED) if hrefs else []
            firsts = [urlsplit(p["excerpt"]) for p in listed[:3] if p["excerpt"]]
            if not any(f"{u.path}#{u.fragment}" in answers for u in firsts):
                problems.append(f"{question!r}: first excerpts {[u.geturl() for u in firsts]}, "
                                f"not {sorted(answers)} {why}")
    finally:
        context.close()
    assert not problems, report(lang, problems)


# --- the page a result opens --------------------------------------------------------------------

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
    page.wait_for_function("async () => (await navigator.clipboard.readText()) !== ''",
                           polling=50, timeout=5_000)
    return page.evaluate("navigator.clipboard.readText()")


@pytest.mark.parametrize("lang", LANGS)
def test_the_first_result_of_a_pasted_message_reads_and_copies_as_without_the_search(
        site_root, pasted, open_tab, lang):
    """Open the first result of each quoted message, as a click does (`?h=` carries the terms;
    a page is opened once, with the terms of every message whose first result it is): the page's
    text is exactly its text without `?h=`, nothing is wrapped in <mark>, the terms are marked
    only where a word starts with a term of three characters or more, the search index is not
    downloaded, and the copy button of a code block copies what it copies without `?h=`."""
    firsts = {}
    for message, found in pasted[lang].items():
        hrefs, why = found.hrefs, found.why
        assert hrefs, f"{message!r}: {why}"
        firsts.setdefault(hrefs[0].path, set()).update(
            parse_qs(hrefs[0].query).get("h", [""])[0].split())
    assert len(firsts) >= 2, firsts
    problems = []
    for path, terms in sorted(firsts.items()):
        plain = open_tab(path, clipboard=True)
        plain_text, plain_copy = plain.page.evaluate(LANDING)["text"], copied_text(plain)
        landed = open_tab(f"{path}?h={quote_plus(' '.join(sorted(terms)))}", clipboard=True)
        landed.settle()
        seen = landed.page.evaluate(LANDING)
        if seen["text"] != plain_text:
            problems.append(f"{path}: the text differs with ?h= ({len(seen['text'])} vs "
                            f"{len(plain_text)} characters)")
        if seen["marks"]:
            problems.append(f"{path}: {seen['marks']} <mark> elements in the page")
        if "h=" in urlsplit(seen["url"]).query:
            problems.append(f"{path}: the address still carries the terms: {seen['url']}")
        long_terms = [t for t in terms if len(t) >= 3]
        if long_terms and not seen["ranges"]:
            problems.append(f"{path}: no term marked (terms {sorted(long_terms)})")
        for r in seen["ranges"]:
            if (len(r["text"]) < 3 or not r["connected"] or WORD_CHAR.match(r["before"] or " ")
                    or not any(r["text"].lower() == t[:len(r["text"])] for t in long_terms)):
                problems.append(f"{path}: marked {r['text']!r} after {r['before']!r}")
                break
        copied = copied_text(landed)
        if copied != plain_copy:
            problems.append(f"{path}: the copy button copies {copied[:80]!r} with ?h=, "
                            f"{plain_copy[:80]!r} without")
        if index_requests(landed):
            problems.append(f"{path}: the page downloaded the search index: {index_requests(landed)}")
        problems += landed.problems + plain.problems
    assert not problems, report(lang, problems)
