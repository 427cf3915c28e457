"""The site's search worker (Material's, with the fixes to lunr of
pipeline/pages/hooks/search_worker_fixes.js), asked directly: no query fails, whether
typed key by key, pasted whole, or a random run of the pages' words; the cause of the
old failures, in Node. (A GPU question landing on its answer is asked in the search box with
the pasted messages: tests/site/test_search.py.)
(Shared helpers: tests/site/searching.py, tests/search_node.py.)"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import committed
from browsing import LANGS, path_of
from search_node import ask, materials_worker, needs_node, node_json, served_worker
from searching import (SYNTAX_CHARACTERS, SYNTAX_IN_LOGS, Worker, runs_of_characters,
                       runs_of_words, site_text, typed, workers)


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


@pytest.mark.parametrize("lang", LANGS)
def test_a_query_the_worker_fails_on_is_told_from_an_empty_one(workers, lang):
    """The tests below see a worker error: a query that is not text fails inside Material's
    search ("Invalid query: 42"); "AttributeError:" leaves Material no term and finds nothing,
    without an error."""
    assert workers[lang].failures([42, "AttributeError:", "cudnn"]) == [42]


@pytest.mark.parametrize("lang", LANGS)
def test_query_syntax_in_a_pasted_line_is_searched_as_text(workers, lang):
    """Quotes, a word's leading + or -, and ~ or ^ inside a word are read as text: no error,
    and each line finds pages."""
    worker = workers[lang]
    assert worker.failures(SYNTAX_IN_LOGS) == [], worker.explain(SYNTAX_IN_LOGS)
    answers = worker.page.evaluate("queries => window.__ask(queries)", SYNTAX_IN_LOGS)
    assert all(a["pages"] for a in answers), list(zip(SYNTAX_IN_LOGS, answers))


@pytest.mark.parametrize("lang", LANGS)
def test_every_quoted_message_and_heading_pasted_whole_or_typed_key_by_key(
        site_root, browser, server, request, lang):
    """Every message the pages quote (in a heading, or a message block), pasted whole and typed
    one key at a time, and every heading: the worker answers each query without an error. The
    messages are asked one to a query; what typing asks (`typed`: every prefix of every word)
    and the words of every heading are asked many words to a query (`Worker.failing_parts`:
    a query fails when one of its words, alone, fails)."""
    text = site_text(site_root, lang)
    assert len(text["quotes"]) >= 10 and len(text["headings"]) >= 100, \
        (len(text["quotes"]), len(text["headings"]))
    messages = list(dict.fromkeys(q.text for q in text["quotes"]))
    words = list(dict.fromkeys([p for m in messages for p in typed(m)[:-1]]
                               + [w for h in text["headings"] for w in h.split()]))
    assert len(words) > 1000, len(words)
    # The worker's answers depend on its scripts, the language's index and the page that starts
    # it: what the key of the committed run names (committed.py), with the queries.
    files = sorted([p.relative_to(site_root).as_posix()
                    for p in (site_root / "assets" / "javascripts").rglob("*") if p.is_file()]
                   + [f"search/search_index.{lang}.json", path_of(lang, "").lstrip("/") + "index.html"])
    if isinstance(browser, str):
        pytest.fail(browser, pytrace=False)
    store = committed.for_site(site_root, browser.version, server)

    def ask():
        worker = request.getfixturevalue("workers")[lang]
        failed = worker.failures(messages) + worker.failing_parts(words)
        # a failure is asked again in the next run, never taken from here
        return ({"failed": failed, "explained": worker.explain(failed) if failed else ""},
                files, not failed)

    found = store.run(f"worker-queries-{lang}", Path(__file__), ask, [messages, words])
    assert not found["failed"], found["explained"]


def test_words_asked_many_to_a_query_are_found_alone():
    """Worker.failing_parts against a worker that fails a query holding "bad" or the pair
    "x y": each failing word is found alone, a failing pair is reported as the smallest batch
    that fails, and a batch that does not fail costs one query."""
    class Judge(Worker):
        def __init__(self):
            self.asked = 0

        def failures(self, queries):
            self.asked += len(queries)
            return [q for q in queries if "bad" in q.split() or {"x", "y"} <= set(q.split())]

    judge = Judge()
    words = [f"w{i}" for i in range(100)]
    assert judge.failing_parts(words) == [] and judge.asked == 3
    words[7], words[61] = "bad", "bad"
    assert judge.failing_parts(words) == ["bad", "bad"]
    words = ["a", "x", "b", "y"] + [f"w{i}" for i in range(20)]
    assert judge.failing_parts(words, batch=8) == ["a x b y"]


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


@needs_node
@pytest.mark.parametrize("lang", LANGS)
def test_a_result_carries_only_the_blocks_of_its_section_that_can_show(site_root, lang):
    """Each result of each pasted message, in the served worker's answer: whole blocks of its
    section's text, no more than 1500 characters of HTML but for the last block (a result is at
    most 14em tall, and the whole text of some 200 sections, for a pasted message, made the
    list slow to draw); the sections longer than that were cut."""
    index = json.loads((site_root / "search" / f"search_index.{lang}.json").read_text())
    longest = {doc["location"]: len(doc["text"]) for doc in index["docs"]}
    messages = list(dict.fromkeys(q.text for q in site_text(site_root, lang)["quotes"]))
    problems, cut = [], 0
    for message, pages in zip(messages, ask(site_root, lang, messages)):
        for doc in (d for page in pages for d in page):
            shown = doc["text"].replace("<mark>", "").replace("</mark>", "")
            blocks = _blocks(shown) or [""]
            if len(shown) - len(blocks[-1]) >= 1500 or "".join(blocks) != shown:
                problems.append(f"{message[:40]!r} {doc['location']}: {len(shown)} characters, "
                                f"the last block {len(blocks[-1])}")
            cut += len(shown) + 100 < longest[doc["location"]]
    assert not problems, problems[:5]
    assert cut > 100, cut


def _blocks(html: str) -> list[str]:
    """A result's text cut into its top-level <p>, <pre>, <ul> and <ol> elements."""
    out, depth, start = [], 0, 0
    for m in re.finditer(r"<(/?)(p|pre|ul|ol)>", html):
        if not m[1]:
            if depth == 0 and m.start() > start:
                out.append(html[start:m.start()])
                start = m.start()
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                out.append(html[start:m.end()])
                start = m.end()
    return out + [html[start:]] if start < len(html) else out
