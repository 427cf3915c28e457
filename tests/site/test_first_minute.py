"""A reader's first minute, in the built pages: each page that answers a pasted message says so
in its description and its title, in both languages. (The browser checks the rest: tests in
tests/site/test_finding.py under "a reader's first minute".)"""
from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import pytest
import yaml

from conftest import REPO

WARNING = "Layer lstm will not use cuDNN kernels since it doesn't meet the criteria"
# page -> a message it answers, which its description and its title must both carry
ANSWERS = {"warning/": WARNING, "": WARNING,
           "legacy/": "module 'keras.layers' has no attribute 'CuDNNLSTM'"}
# the troubleshooting pages as written in docs/ (search lands a pasted message on them)
READER_PAGES = ("", "warning/", "criteria/", "fixing/", "legacy/", "troubleshooting/", *(
    f"troubleshooting/{p.name.removesuffix('.md')}/"
    for p in sorted((REPO / "docs" / "troubleshooting").glob("*.md"))
    if p.name != "index.md" and not p.name.endswith(".es.md")))


def _page(site, lang: str, url: str) -> str:
    return (site / ("es/" if lang == "es" else "") / url / "index.html").read_text(encoding="utf-8")


class _Meta(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[dict] = []

    def handle_starttag(self, tag, attrs):
        if tag == "meta":
            self.tags.append(dict(attrs))


def _meta_description(page: str) -> str:
    """The page's description as a browser reads it (a quote inside it would end it early:
    Material writes it into the attribute unescaped)."""
    parser = _Meta()
    parser.feed(page)
    found = [m for m in parser.tags if m.get("name") == "description"]
    return found[0].get("content", "") if len(found) == 1 else ""


def _site_description(lang: str) -> str:
    config = yaml.load((REPO / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)
    if lang == "en":
        return config["site_description"]
    i18n = next(p["i18n"] for p in config["plugins"] if isinstance(p, dict) and "i18n" in p)
    return next(lang_["site_description"] for lang_ in i18n["languages"] if lang_["locale"] == lang)


@pytest.mark.parametrize("lang", ["en", "es"])
def test_reader_pages_have_their_own_description(site, lang):
    site_wide = _site_description(lang)
    descriptions = {url: _meta_description(_page(site, lang, url)) for url in READER_PAGES}
    generic = [url or "/" for url, d in descriptions.items() if not d or d == site_wide]
    assert not generic, f"{lang}: pages with only the site's description: {generic}"
    for url, message in ANSWERS.items():
        assert message in descriptions[url], f"{lang} {url or '/'}: description {descriptions[url]!r}"


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_message_is_in_a_heading_as_pasted(site, lang):
    for url, message in ANSWERS.items():
        page = html.unescape(_page(site, lang, url))
        headings = " ".join(re.sub(r"<[^>]+>", "", h) for h in re.findall(r"<h[12][^>]*>(.*?)</h[12]>", page, re.S))
        blockquotes = " ".join(re.findall(r"<blockquote>(.*?)</blockquote>", page, re.S))
        assert message in headings or (url == "" and message in blockquotes), \
            f"{lang} {url or '/'}: {message!r} in no heading"
