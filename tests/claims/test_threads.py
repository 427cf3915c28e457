"""data/threads.yml: readers' threads of 2023-2026 about cuDNN and RNNs, each answered on a page
of the site or marked out of scope with a reason.

Every answer exists on the built page in both languages (its anchor), carries the part of the
message a reader pastes (`search`), and, where only a GPU shows it, says so and has a GPU test
that reproduces it (tests/content/test_troubleshooting_gpu.py)."""
from __future__ import annotations

import datetime
import functools
import os
import re
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup

from conftest import REPO

THREADS = REPO / "data" / "threads.yml"
DOCS = REPO / "docs"
GPU_TESTS = REPO / "tests" / "content" / "test_troubleshooting_gpu.py"
FIELDS = {"url", "title", "date", "post", "releases", "message", "search"}
NOT_REPRODUCED = {"en": "not reproduced here", "es": "no se reproduce aquí"}
# The label of a GPU record's output (pipeline/pages/hooks/build.py, mkdocs.yml: recorded_output).
RECORDED = {"en": "Output · recorded on GPU: ", "es": "Salida · registrada en GPU: "}
MIN_THREADS = 120  # the 80 of issue 41 and at least 40 more (issue 54)


def threads() -> list[dict]:
    return yaml.safe_load(THREADS.read_text(encoding="utf-8"))


def answered() -> list[dict]:
    return [t for t in threads() if "answer" in t]


def ids(t: dict) -> str:
    return re.sub(r"https://github\.com/|/(issues|pull)", "", t["url"])


def normalize(text: str) -> str:
    return " ".join(text.replace("\u2019", "'").split())


def test_the_file_lists_enough_real_threads_of_2023_to_2026():
    listed = threads()
    assert len(listed) >= MIN_THREADS, len(listed)
    urls = [t["url"] for t in listed]
    assert len(set(urls)) == len(urls), "a thread is listed twice"
    for t in listed:
        assert FIELDS <= set(t), (ids(t), FIELDS - set(t))
        assert set(t) - FIELDS in ({"answer", "shown"}, {"out_of_scope"}), (ids(t), set(t) - FIELDS)
        assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+/(issues|pull)/\d+", t["url"]), t["url"]
        assert isinstance(t["date"], datetime.date), ids(t)
        assert datetime.date(2023, 1, 1) <= t["date"] <= datetime.date(2026, 12, 31), ids(t)
        assert isinstance(t["title"], str) and t["title"].strip(), ids(t)
        assert isinstance(t["releases"], str) and t["releases"].strip(), ids(t)
        if t["search"] is not None:
            assert t["message"] is not None, ids(t)
            assert normalize(t["search"]) in normalize(t["message"]), (ids(t), "search not in message")
        if "out_of_scope" in t:
            assert len(t["out_of_scope"].split()) >= 8, (ids(t), "say why it is out of scope")
        else:
            assert t["shown"] in {"here", "gpu", "gpu-record", "source"}, ids(t)
            assert re.fullmatch(r"[\w-]+(/[\w-]+)?(#[\w-]+)?", t["answer"]), ids(t)


@pytest.mark.parametrize("thread", answered(), ids=ids)
def test_each_answer_is_in_the_page_sources_in_both_languages(thread):
    """A quick check without a build: the page exists in both languages with that anchor."""
    page, _, anchor = thread["answer"].partition("#")
    for suffix in (".md", ".es.md"):
        source = DOCS / f"{page}{suffix}"
        assert source.is_file(), source
        if anchor:
            assert re.search(rf"\{{ *#{re.escape(anchor)} *\}}", source.read_text(encoding="utf-8")), \
                (source.name, anchor)


def test_every_gpu_only_answer_on_the_troubleshooting_page_has_a_gpu_test():
    tests = GPU_TESTS.read_text(encoding="utf-8")
    for t in answered():
        page, _, anchor = t["answer"].partition("#")
        if t["shown"] == "gpu":
            assert page.startswith("troubleshooting/"), ids(t)
            assert re.search(rf"@gpu_test\s+def \w+\(\):\s+\"\"\"{page}\.md#{anchor}[:,. ]",
                             tests), (ids(t), f"no GPU test names {page}.md#{anchor}")


@pytest.fixture(scope="module")
def built(request) -> Path:
    """The built site: the shared build, or BROWSER_TEST_SITE (a folder), as tests/site/browsing.py."""
    given = os.environ.get("BROWSER_TEST_SITE")
    return Path(given) if given else request.getfixturevalue("site")


@functools.lru_cache(maxsize=None)
def article(html: Path):
    """A built page's article, parsed once for all the threads it answers."""
    soup = BeautifulSoup(html.read_text(encoding="utf-8"), "html.parser")
    return soup.find("article") or soup


def section_text(html: Path, anchor: str) -> str:
    """The text under a heading, up to the next heading of the same level (the whole article
    when no anchor is given)."""
    article_ = article(html)
    if not anchor:
        return normalize(article_.get_text(" "))
    heading = article_.find(id=anchor)
    assert heading is not None, (html, anchor)
    parts = [heading.get_text(" ")]
    for node in heading.find_next_siblings():
        if node.name == heading.name:
            break
        parts.append(node.get_text(" "))
    return normalize(" ".join(parts))


@pytest.mark.parametrize("thread", answered(), ids=ids)
def test_each_answer_is_on_the_built_page_and_carries_the_message(built, thread):
    page, _, anchor = thread["answer"].partition("#")
    for lang, prefix in (("en", built), ("es", built / "es")):
        html = prefix / page / "index.html"
        assert html.is_file(), html
        text = section_text(html, anchor)
        if thread["search"]:
            assert normalize(thread["search"]) in text, (lang, ids(thread), thread["search"])
        if thread["shown"] == "gpu":
            assert NOT_REPRODUCED[lang] in text, (lang, ids(thread), "say it is not reproduced here")
        if thread["shown"] == "gpu-record":  # a GPU's output of the answer's program is shown
            assert RECORDED[lang] in text, (lang, ids(thread), "show the GPU's recorded output")


@pytest.mark.parametrize("lang", ["en", "es"])
def test_each_threads_pasted_line_lands_on_its_answer_in_the_first_three(browser, server, lang):
    """The part of each thread's message a reader pastes (`search`), through the site's own search
    worker in each language: a page among the first three results is the answer's page, and the
    section that page shows first is the answer's."""
    from chromium import first_three
    cases = [t for t in answered() if t["search"]]
    assert len(cases) >= 40, len(cases)
    answers = first_three(browser, server, lang, [t["search"] for t in cases])
    prefix = "es/" if lang == "es" else ""
    problems = []
    for t, items in zip(cases, answers):
        page, _, anchor = t["answer"].partition("#")
        want = f"{prefix}{'' if page == 'index' else page + '/'}" + (f"#{anchor}" if anchor else "")
        if not any(item and item[0] == want for item in items):
            problems.append(f"{ids(t)} {t['search'][:50]!r}: {[i[0] for i in items if i]}, "
                            f"not {want}")
    assert not problems, f"{lang}: {len(problems)} of {len(cases)}:\n" + "\n".join(problems)
