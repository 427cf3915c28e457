"""Search, as readers use it: they paste a line of their log into the search box, in either
language, and open the first result. Every message the pages quote, pasted on a phone,
lists a page that quotes it in the first three results, its section first, and the
page it opens reads and copies as without the search; a GPU question lands on its
answer.
(Shared helpers: tests/site/searching.py.)"""
from __future__ import annotations

import hashlib
from pathlib import Path
from urllib.parse import parse_qs, quote_plus, urlsplit

import pytest

import committed
from browsing import LANGS, index_requests, path_of
from chromium import report
from searching import GPU_QUESTIONS, LANDING, WORD_CHAR, copied_text, pasted, site_text


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
    is taller than the screen: measured for every tenth query pasted, and for the others bounded
    by the CSS that clamps each result (searching.LISTED)."""
    folder = path_of(lang, "troubleshooting/")
    quotes = [q for q in site_text(site_root, lang)["quotes"]
              if q.page.startswith(folder) and q.page != folder]
    # a section quotes a message when one of its quotes holds it ("Input and hidden tensors are
    # not at the same device" is also in a section's whole "RuntimeError: ..., found input ...")
    sections = {m: {(q.page, q.anchor) for q in quotes if m in q.text}
                for m in {q.text for q in quotes}}
    assert len(sections) >= 40, len(sections)
    problems, measured = [], 0
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
                problems.append(f"{said}: a result of {p['page']} "
                                f"{'is' if p['measured'] else 'can be (its CSS)'} "
                                f"{p['tallest']:.0f} px tall, the screen {p['screen']} px")
            measured += p["measured"]
    assert measured >= 10, measured  # laid out and measured, not only bounded
    assert not problems, report(lang, problems)


@pytest.mark.parametrize("lang", LANGS)
def test_the_first_result_of_a_pasted_message_reads_and_copies_as_without_the_search(
        site_root, pasted, open_tab, browser, server, lang):
    """Open the first result of each quoted message, as a click does (`?h=` carries the terms;
    a page is opened once, with the terms of every message whose first result it is): the page's
    text is exactly its text without `?h=`, nothing is wrapped in <mark>, the terms are marked
    only where a word starts with a term of three characters or more, the search index is not
    downloaded, and the copy button of a code block copies what it copies without `?h=`."""
    firsts = {}
    for message in dict.fromkeys(q.text for q in site_text(site_root, lang)["quotes"]):
        hrefs, why = pasted[lang][message].hrefs, pasted[lang][message].why
        assert hrefs, f"{message!r}: {why}"
        firsts.setdefault(hrefs[0].path, set()).update(
            parse_qs(hrefs[0].query).get("h", [""])[0].split())
    assert len(firsts) >= 2, firsts
    firsts = {path: sorted(terms) for path, terms in sorted(firsts.items())}
    if isinstance(browser, str):
        pytest.fail(browser, pytrace=False)
    store = committed.for_site(site_root, browser.version, server)

    def make():
        opened, requests = _opened(open_tab, firsts)
        return opened, committed.requested_files(requests, server), True

    opened = store.run(f"first-results-{lang}", Path(__file__), make, firsts)
    problems = []
    for path, terms in firsts.items():
        plain, seen = opened[path]["plain"], opened[path]["seen"]
        if seen["text"] != plain["text"]:
            problems.append(f"{path}: the text differs with ?h= ({seen['length']} vs "
                            f"{plain['length']} characters)")
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
        if seen["copied"] != plain["copied"]:
            problems.append(f"{path}: the copy button copies {seen['copied_start']!r} with ?h=, "
                            f"{plain['copied_start']!r} without")
        if opened[path]["index"]:
            problems.append(f"{path}: the page downloaded the search index: {opened[path]['index']}")
        problems += opened[path]["problems"]
    assert not problems, report(lang, problems)


def _opened(open_tab, firsts: dict[str, list[str]]) -> tuple[dict, list[str]]:
    """Each first result opened plain, then with `?h=` and its terms: what LANDING and the copy
    button found (texts and copies as hashes, with their lengths and starts), the search
    index's requests and what the page complained about; and every request of the tabs."""
    def read(tab) -> dict:
        seen, copied = tab.page.evaluate(LANDING), copied_text(tab) or ""
        return {**seen, "text": _digest(seen["text"]), "length": len(seen["text"]),
                "copied": _digest(copied), "copied_start": copied[:80]}

    opened, requests = {}, []
    for path, terms in firsts.items():
        tab = open_tab(path, clipboard=True)
        plain = read(tab)
        # the result opened in the same tab, as a click on the site takes a reader there: the
        # site's scripts and styles come from the browser's cache, not loaded and compiled again
        # (its requests, searched for the index below, are both pages')
        tab.goto(f"{path}?h={quote_plus(' '.join(terms))}")
        tab.settle()
        opened[path] = {"plain": plain, "seen": read(tab), "index": index_requests(tab),
                        "problems": list(tab.problems)}
        requests += tab.requests
        tab.context.close()  # done with: its pages stop taking memory and CPU
    return opened, requests


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("lang", LANGS)
def test_a_gpu_question_lands_on_its_answer_unfolded_in_the_first_three(pasted, lang):
    """A question about what a GPU run showed, typed on a phone: the section that answers it is
    the first excerpt of a page among the first three listed (not folded under "more on this
    page"), and that section states the run's figures in its prose, in the page's language.
    (Asked in the page that pastes the messages: `pasted`.)"""
    problems = []
    for question, answers in GPU_QUESTIONS[lang]:
        listed = pasted[lang][question].pages
        firsts = [urlsplit(p["excerpt"]) for p in listed[:3] if p["excerpt"]]
        if not any(f"{u.path}#{u.fragment}" in answers for u in firsts):
            problems.append(f"{question!r}: first excerpts {[u.geturl() for u in firsts]}, "
                            f"not {sorted(answers)} {pasted[lang][question].why}")
    assert not problems, report(lang, problems)
