"""A reader's first minute in a real browser: search in the language being read, the index
loaded only when the reader goes to search, the common questions answered, the answer
before any code, the decision diagram, the framework choice that follows the reader.
(Shared pages and helpers: tests/site/browsing.py.)"""
from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest

from browsing import (CHOSEN_TAB, COMMON_QUESTIONS, LANGS, OPENING, PHONE, RESULTS, SEARCH_TERMS,
                      TABBED, index_requests, path_of, search)
from chromium import report


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
