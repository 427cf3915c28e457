"""Copy buttons in a real browser: each copies exactly the program the build ran.
(Shared pages and helpers: tests/site/browsing.py. Each page is opened once per viewport for
the checks of every module that reads it, here its desktop visit: tests/site/visits.py.)"""
from __future__ import annotations

import pytest

from browsing import COPY_CASES, executed_program, page_ids, path_of, snippet_text, titled_embeds
from chromium import report
from visits import visit  # noqa: F401 (the fixture)


@pytest.mark.parametrize("lang,url", COPY_CASES, ids=page_ids(COPY_CASES))
def test_copy_button_copies_exactly_the_snippet(visit, lang, url):
    """Each code block titled snippets/F in its source that embeds F, shown titled with F's name
    alone (no path under snippets/): its copy button puts on the clipboard the snippet's text
    (see snippet_text for exactly what is compared), or for a Python file the whole program the
    build ran (executed_program). Blocks in collapsed blocks are opened first."""
    path, blocks = path_of(lang, url), titled_embeds(url, lang)
    assert blocks, f"{path}: no titled snippet block to copy from"
    found = visit("desktop", lang, url).step("copy")
    assert [c["ref"] for c in found["copied"]] == [ref for *_, ref in blocks], found["copied"]
    problems = []
    for block in found["copied"]:
        ref, copied = block["ref"], block.get("copied")
        if block["blocks"] != 1:
            problems.append(f"{ref}: {block['blocks']} blocks titled {block['name']}")
            continue
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
    problems += found["other_hosts"]
    assert not problems, report(path, problems)


def test_the_whole_program_listing_copies_the_program_and_a_helper_offers_no_copy(visit):
    """Under a shown part of a program, the collapsed listing's copy button copies the same
    program as the shown part's; a helper module shown to read has no copy button."""
    page = visit("desktop", "en", "criteria/")
    found = page.step("listing")
    expected = executed_program("criteria/tf_backend/masking.py")
    copied = found["copied"]
    assert copied == [expected, expected], [c[:80] for c in copied]
    assert found["helper_buttons"] == 0
    assert not page.problems("listing"), report("/criteria/", page.problems("listing"))


# Every fetch of a program file held back 1.5 s, from before the page's own scripts run.
LATE_PROGRAMS = """{
  const fetchNow = window.fetch;
  window.fetch = (url, options) => String(url).includes("/assets/programs/")
    ? new Promise((done) => setTimeout(done, 1500)).then(() => fetchNow(url, options))
    : fetchNow(url, options);
}"""


def test_a_copy_clicked_before_the_program_arrives_waits_for_it(open_tab):
    """The page does not carry the programs it copies: each is a file of the site, fetched as the
    reader nears its block. Here every program file arrives 1.5 s late, and the copy button is
    clicked while its div has no program yet: the clipboard still gets the whole program the
    build ran, from this origin, under the name the runner saves it. A listing opened loads its
    code, with a copy button."""
    tab = open_tab(path_of("es", "criteria/"), clipboard=True, init_script=LATE_PROGRAMS)
    page = tab.page
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
