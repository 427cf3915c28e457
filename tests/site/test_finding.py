"""A reader's first minute in a real browser: search in the language being read, the index
loaded only when the reader goes to search, the common questions answered, the answer
before any code, the decision diagram, the framework choice that follows the reader.
(Shared pages and helpers: tests/site/browsing.py.)

What Chromium did and showed in each of them (the results listed, the page landed on, the
requests) is committed under results/browser/finding/ (tests/site/committed.py): taken while
its key is the same, made again and written otherwise. The checks assert on that data."""
from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

import committed
from browsing import (CHOSEN_TAB, COMMON_QUESTIONS, LANGS, OPENING, PHONE, RESULTS, SEARCH_TERMS,
                      TABBED, index_requests, path_of, search)
from chromium import report

HOWS = ("hover", "tap on a phone", "keyboard shortcut")
CHOICES = ("Keras 3 · JAX", "PyTorch")


def run_names() -> set[str]:
    """The name of every run this module commits (tests/site/test_committed.py)."""
    return ({_name("search", lang, term) for lang in LANGS for term in SEARCH_TERMS}
            | {_name("index", lang, how) for lang in LANGS for how in HOWS}
            | {_name(kind, lang) for lang in LANGS for kind in ("questions", "opening", "diagram")}
            | {_name("framework-choice", choice) for choice in CHOICES})


def _name(*parts: str) -> str:
    return "finding/" + "-".join(re.sub(r"[^\w]+", "_", p).strip("_").lower() for p in parts)


def _run(request, name: str, make, inputs=None):
    """Run `name` (committed.Browser.run): make() -> (data, the tabs' requests, whether to keep
    it); a run whose search found nothing is asked again next time."""
    browser, server = request.getfixturevalue("browser"), request.getfixturevalue("server")
    if isinstance(browser, str):
        pytest.fail(browser, pytrace=False)
    store = committed.for_site(request.getfixturevalue("site_root"), browser.version, server)

    def made():
        data, requests, keep = make()
        return data, committed.requested_files(requests, server), keep

    return store.run(name, Path(__file__), made, inputs)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("term", SEARCH_TERMS)
def test_search_finds_pages_in_the_language_being_read(open_tab, request, lang, term):
    home = path_of(lang, "")

    def make():
        tab = open_tab(home)
        page = tab.page
        hrefs, why = search(page, term)
        data = {"hrefs": [h.geturl() for h in hrefs], "why": why}
        if not hrefs:
            return data, tab.requests, False
        target = page.locator(RESULTS).first.get_attribute("href")
        page.locator(RESULTS).first.click()
        # the page takes the terms (`?h=`) out of its address as it opens (assets/search.js)
        page.wait_for_function("""target => { const want = new URL(target);
            want.searchParams.delete("h"); return location.href === want.href; }""", arg=target)
        page.wait_for_load_state("domcontentloaded")
        tab.lay_out_everything()
        text = page.locator("article").inner_text().lower()
        data.update(target=target, landed=page.url, term_in_text=text.count(term.lower()),
                    problems=list(tab.problems))
        return data, tab.requests, True

    seen = _run(request, _name("search", lang, term), make, {"home": home, "term": term})
    hrefs = [urlsplit(h) for h in seen["hrefs"]]
    assert hrefs, f"{home}: {term!r}: {seen['why']}"
    in_spanish = [h.path.startswith("/es/") for h in hrefs]
    wrong = list(dict.fromkeys(h.path for h, es in zip(hrefs, in_spanish) if es != (lang == "es")))
    assert not wrong, f"{home}: searching {term!r} lists pages in another language: {wrong}"
    assert urlsplit(seen["landed"]).path == urlsplit(seen["target"]).path, seen
    assert seen["term_in_text"], f"{home}: result {seen['target']} for {term!r} does not contain it"
    assert not seen["problems"], report(f"{home} search {term!r}", seen["problems"])


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("lang", LANGS)
def test_search_index_loads_in_its_language_only_when_the_reader_goes_to_search(
        open_tab, request, lang, how):
    """assets/search.js: a page loads no search index; going to search loads this
    language's index (never the combined one), and search then finds pages."""
    phone = how.startswith("tap")
    home = path_of(lang, "")

    def make():
        tab = open_tab(home, **({"viewport": PHONE, "is_mobile": True, "has_touch": True}
                                if phone else {}))
        tab.settle()
        before = index_requests(tab)
        page = tab.page
        if how == "hover":
            page.locator("input.md-search__input").hover()
        elif phone:
            page.locator("label.md-header__button[for='__search']").tap()
        else:
            page.keyboard.press("/")  # Material's shortcut focuses the search box
        page.wait_for_function("() => performance.getEntriesByType('resource')"
                               ".some(e => e.name.includes('/search/search_index'))",
                               timeout=10_000)
        hrefs, why = search(page, "cuDNN")
        return ({"before": before, "hrefs": [h.geturl() for h in hrefs], "why": why,
                 "after": index_requests(tab), "problems": list(tab.problems)},
                tab.requests, bool(hrefs))

    seen = _run(request, _name("index", lang, how), make, {"home": home, "how": how})
    assert seen["before"] == [], f"{home}: the search index loaded before any search"
    assert seen["hrefs"], f"{home}: 'cuDNN': {seen['why']}"
    assert seen["after"] == [f"search_index.{lang}.json"], f"{home}: {seen['after']}"
    assert not seen["problems"], report(f"{home} search after {how}", seen["problems"])


@pytest.mark.parametrize("lang", LANGS)
def test_the_common_questions_find_their_answer_in_the_first_three_results(
        open_tab, request, lang):
    questions = [q for q in COMMON_QUESTIONS if q[0] == lang]

    def make():
        tab = open_tab(path_of(lang, ""))
        found = {}
        for _, query, _, _ in questions:
            hrefs, why = search(tab.page, query)
            found[query] = {"hrefs": [h.geturl() for h in hrefs], "why": why}
        return ({"found": found, "problems": list(tab.problems)}, tab.requests,
                all(f["hrefs"] for f in found.values()))

    seen = _run(request, _name("questions", lang), make, [q[1] for q in questions])
    problems = []
    for _, query, url, anchor in questions:
        hrefs = [urlsplit(h) for h in seen["found"][query]["hrefs"]]
        first = [(h.path, h.fragment) for h in hrefs[:3]]
        if (path_of(lang, url), anchor) not in first:
            problems.append(f"{query!r}: {path_of(lang, url)}#{anchor} not in the first three: "
                            f"{[h.geturl() for h in hrefs[:5]]} {seen['found'][query]['why']}")
    problems += seen["problems"]
    assert not problems, report(lang, problems)


def test_framework_tabs_are_on_the_reader_pages():
    assert {"", "criteria/", "fixing/"} <= set(TABBED), TABBED


@pytest.mark.parametrize("choice", CHOICES)
def test_the_framework_choice_follows_the_reader_across_pages_and_languages(
        open_tab, request, choice):
    """Pick a framework once on the home page: every tab set on every other page, in both
    languages, opens on it (Material's linked tabs, remembered in the browser)."""
    paths = [path_of(lang, url) for lang in LANGS for url in TABBED]

    def make():
        tab = open_tab("/")
        exactly = re.compile(f"^{re.escape(choice)}$")
        tab.page.locator(".tabbed-labels label").filter(has_text=exactly).first.click()
        tab.settle()  # leaving a page before it has loaded aborts its requests
        chosen = {}
        for path in paths:
            tab.goto(path)
            tab.settle()
            chosen[path] = tab.page.evaluate(CHOSEN_TAB)
        return {"chosen": chosen, "problems": list(tab.problems)}, tab.requests, True

    seen = _run(request, _name("framework-choice", choice), make, paths)
    problems = [f"{path}: tabs show {chosen}, the reader chose {choice!r}"
                for path, chosen in seen["chosen"].items()
                if not chosen or any(c != choice for c in chosen)]
    problems += seen["problems"]
    assert not problems, report("framework choice", problems)


@pytest.mark.parametrize("lang", LANGS)
def test_the_answer_comes_before_any_code(open_tab, request, lang):
    """The home page and the warning page open with the short answer: the message, a table of
    its causes with their fixes, and the checker, before any long code."""
    paths = [path_of(lang, url) for url in ("", "warning/")]

    def make():
        openings, problems, requests = {}, [], []
        for path in paths:
            tab = open_tab(path)
            tab.lay_out_everything()
            openings[path] = tab.page.evaluate(OPENING)
            problems += tab.problems
            requests += tab.requests
        return {"openings": openings, "problems": problems}, requests, True

    seen = _run(request, _name("opening", lang), make, paths)
    problems = []
    for path, opening in seen["openings"].items():
        if not opening["table"]:
            problems.append(f"{path}: no table of causes before the first long code block")
        for needle in ("will not use cuDNN kernels since it doesn't meet the criteria",
                       "recurrent_dropout=0", 'recurrent_activation="sigmoid"', "cudnn_check.py"):
            if needle not in opening["text"]:
                problems.append(f"{path}: {needle!r} is not before the first long code block")
    problems += seen["problems"]
    assert not problems, report(lang, problems)


@pytest.mark.parametrize("lang", LANGS)
def test_the_decision_diagram_has_a_path_per_framework_and_every_box_links_to_its_proof(
        open_tab, request, site_root, lang):
    home = path_of(lang, "")

    def make():
        tab = open_tab(home)
        svg = tab.page.locator("figure.diagram svg[role=group]")
        data = {"diagrams": svg.count()}
        if data["diagrams"] != 1:
            return data, tab.requests, True
        data["name"] = svg.get_attribute("aria-label")
        data["links"] = svg.evaluate("""s => [...s.querySelectorAll('a')].map(a => ({
            href: new URL(a.getAttribute('href') || a.getAttribute('xlink:href'),
                          location.href).href,
            text: a.textContent.trim()}))""")
        # The box a reader clicks takes them there.
        tab.settle()
        before = len(tab.problems)
        tab.page.locator("figure.diagram svg a", has_text="torch.backends").first.click()
        tab.page.wait_for_url(re.compile(r"/criteria/#pt-flags$"))
        data["landed"] = tab.page.url
        # leaving the page may abort the search worker's downloads: that is the click, not a
        # fault
        data["problems"] = tab.problems[:before] + [
            p for p in tab.problems[before:] if "net::ERR_ABORTED" not in p]
        return data, tab.requests, True

    seen = _run(request, _name("diagram", lang), make, home)
    assert seen["diagrams"] == 1, "the home page has no linked decision diagram"
    name, links = seen["name"], seen["links"]
    assert "cuDNN" in name and all(f in name for f in ("JAX", "PyTorch", "TensorFlow", "tf-keras"))
    assert len(links) >= 15, links
    problems = []
    for link in links:
        url = urlsplit(link["href"])
        if url.path.startswith("/es/") != (lang == "es"):
            problems.append(f"{link['text']!r} -> {link['href']}: another language")
        target = site_root / url.path.lstrip("/") / "index.html"
        if not target.is_file() or f'id="{url.fragment}"' not in target.read_text(encoding="utf-8"):
            problems.append(f"{link['text']!r} -> {link['href']}: no such page or anchor")
    assert urlsplit(seen["landed"]).path == path_of(lang, "criteria/"), seen["landed"]
    problems += seen["problems"]
    assert not problems, report(lang, problems)
