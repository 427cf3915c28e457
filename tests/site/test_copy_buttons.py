"""Copy buttons in a real browser: each copies exactly the program the build ran.
(Shared pages and helpers: tests/site/browsing.py.)"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from browsing import (COPY_CASES, executed_program, open_every_collapsed_block, page_ids, path_of,
                      snippet_text, titled_embeds)
from chromium import report


@pytest.mark.parametrize("lang,url", COPY_CASES, ids=page_ids(COPY_CASES))
def test_copy_button_copies_exactly_the_snippet(open_tab, lang, url):
    """Each code block titled snippets/F in its source that embeds F, shown titled with F's name
    alone (no path under snippets/): its copy button puts on the clipboard the snippet's text
    (see snippet_text for exactly what is compared), or for a Python file the whole program the
    build ran (executed_program). Blocks in collapsed blocks are opened first."""
    path, blocks = path_of(lang, url), titled_embeds(url, lang)
    assert blocks, f"{path}: no titled snippet block to copy from"
    tab = open_tab(path, clipboard=True)
    page = tab.page
    open_every_collapsed_block(tab)
    problems = []
    for title, rest, ref in blocks:
        name = Path(title).name + rest  # as the page titles it: the file's name, then its words
        block = page.locator("div.highlight").filter(
            has=page.locator(":scope > span.filename", has_text=re.compile(
                rf"^\s*{re.escape(name)}\s*$")))
        try:
            block.first.wait_for(state="attached", timeout=5_000)
        except PlaywrightTimeout:
            pass
        if block.count() != 1:
            problems.append(f"{ref}: {block.count()} blocks titled {name}")
            continue
        page.evaluate("navigator.clipboard.writeText('')")
        block.hover()
        button = block.locator("button.md-code__button[data-md-type=copy], button.md-clipboard")
        button.first.click()
        page.wait_for_function("async () => (await navigator.clipboard.readText()) !== ''",
                               polling=50, timeout=5_000)
        copied = page.evaluate("navigator.clipboard.readText()")
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
    problems += tab.other_hosts()
    assert not problems, report(path, problems)


def test_the_whole_program_listing_copies_the_program_and_a_helper_offers_no_copy(open_tab):
    """Under a shown part of a program, the collapsed listing's copy button copies the same
    program as the shown part's; a helper module shown to read has no copy button."""
    tab = open_tab(path_of("en", "criteria/"), clipboard=True)
    page = tab.page
    expected = executed_program("criteria/tf_backend/masking.py")
    program = page.locator('div.program[data-program="criteria/tf_backend/masking.py"]')
    program.locator("details").evaluate("d => d.open = true")
    copied = []
    for block in (program.locator("div.highlight").nth(0), program.locator("details div.highlight")):
        page.evaluate("navigator.clipboard.writeText('')")
        block.scroll_into_view_if_needed()
        block.hover()
        block.locator("button.md-code__button[data-md-type=copy], button.md-clipboard").first.click()
        page.wait_for_function("async () => (await navigator.clipboard.readText()) !== ''",
                               polling=50, timeout=5_000)
        copied.append(page.evaluate("navigator.clipboard.readText()"))
    assert copied == [expected, expected], [c[:80] for c in copied]
    page.locator("article details > summary", has_text="TensorFlow backend: _pretend_gpu.py").click()
    helper = page.locator('div.no-copy[data-listing="criteria/tf_backend/_pretend_gpu.py"]')
    helper.hover()
    assert helper.locator("button.md-code__button, button.md-clipboard").count() == 0
    assert not tab.problems, report("/criteria/", tab.problems)


def test_a_copy_clicked_before_the_program_arrives_waits_for_it(open_tab):
    """The page does not carry the programs it copies: each is a file of the site, fetched as the
    reader nears its block. Here every program file arrives 1.5 s late, and the copy button is
    clicked while its div has no program yet: the clipboard still gets the whole program the
    build ran, from this origin, under the name the runner saves it. A listing opened loads its
    code, with a copy button."""
    tab = open_tab(path_of("es", "criteria/"), clipboard=True)
    tab.settle()  # nothing of the first load in flight when the page reloads
    page = tab.page
    page.add_init_script("""{
      const fetchNow = window.fetch;
      window.fetch = (url, options) => String(url).includes("/assets/programs/")
        ? new Promise((done) => setTimeout(done, 1500)).then(() => fetchNow(url, options))
        : fetchNow(url, options);
    }""")
    page.reload(wait_until="load")
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
