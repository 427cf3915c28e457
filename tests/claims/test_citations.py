"""Every GitHub issue or pull request a page cites is listed in data/citations.yml, with the title
and kind (issue or pull request) recorded there when the thread was read by hand (the file says
when), and every link to it uses the /issues/ or /pull/ path of that recorded kind.

What these tests cannot check: that the recorded title and kind are still the thread's. The
machines that run them reach no GitHub; the file's date says when they were last read."""
from __future__ import annotations

import re

import yaml

from conftest import REPO

CITATIONS = REPO / "data" / "citations.yml"
DOCS = REPO / "docs"
PUBLISHED = REPO / "data" / "published_speedups.yml"  # pages draw its rows (pipeline/pages/published.py)
MESSAGES = REPO / "data" / "messages.yml"  # pages draw its messages (pipeline/claims/messages.py)
RELEASE_BUGS = REPO / "data" / "release_bugs.yml"  # pages draw its rows (pipeline/claims/release_bugs.py)
# A link to a thread, or a written reference such as keras-team/keras#18456.
CITE = re.compile(r"https://github\.com/([\w.-]+/[\w.-]+)/(issues|pull)/(\d+)"
                  r"|(?<![\w/.-])([\w.-]+/[\w.-]+)#(\d+)")
KIND = {"issues": "issue", "pull": "pull"}


def cited(path) -> dict[str, set[str]]:
    """Each thread the page cites, with the kinds of link it uses ('issue', 'pull')."""
    found: dict[str, set[str]] = {}
    for m in CITE.finditer(path.read_text(encoding="utf-8")):
        if m.group(1):
            found.setdefault(f"{m.group(1)}#{m.group(3)}", set()).add(KIND[m.group(2)])
        else:
            found.setdefault(f"{m.group(4)}#{m.group(5)}", set())
    return found


def pages():
    return sorted(DOCS.rglob("*.md"))


def test_the_pattern_reads_both_forms():
    """The test's own reader, on a known sample: a link and a written reference."""
    refs = cited(REPO / "docs" / "troubleshooting" / "install.md")
    assert refs["tensorflow/tensorflow#63362"] == {"issue"}
    assert "keras-team/keras#18456" in cited(REPO / "docs" / "troubleshooting" / "keras.md")


def test_every_cited_thread_is_listed_with_a_recorded_title_and_linked_by_its_kind():
    """Listed, with a non-empty recorded title (or why it could not be read); a link by URL
    uses the recorded kind's path (a written reference such as owner/repo#N names no kind)."""
    listed = yaml.safe_load(CITATIONS.read_text(encoding="utf-8"))
    everything: dict[str, set[str]] = {}
    for page in pages() + [PUBLISHED, MESSAGES, RELEASE_BUGS]:
        for ref, kinds in cited(page).items():
            everything.setdefault(ref, set()).update(kinds)
            assert ref in listed, f"{page.name} cites {ref}, which data/citations.yml lacks"
    for ref, kinds in everything.items():
        entry = listed[ref]
        assert kinds <= {entry["kind"]}, f"{ref} is a {entry['kind']}, linked as {kinds}"
    for ref, entry in listed.items():
        assert entry["kind"] in KIND.values(), (ref, entry["kind"])
        assert ref in everything, f"{ref} is listed but no page cites it"
        if entry["checked"] is True:
            assert isinstance(entry["title"], str) and entry["title"].strip(), ref
        else:
            assert entry["checked"] is False and entry.get("note"), (ref, "say why")


def test_both_languages_cite_the_same_threads():
    for page in pages():
        if page.name.endswith(".es.md"):
            continue
        spanish = page.with_name(page.name[:-3] + ".es.md")
        assert set(cited(page)) == set(cited(spanish)), page.name


def test_the_superseded_2_16_thread_is_gone():
    """tensorflow/tensorflow#63341 is 'GPU not detected on WSL2'; the 2.16 [and-cuda] thread is
    #63362."""
    for page in pages():
        assert "tensorflow/tensorflow#63341" not in cited(page), page.name
