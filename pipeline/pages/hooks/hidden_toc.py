"""A page that hides its table of contents (`hide: [toc]` in its front matter) ships none.

Material hides such a page's sidebar with CSS but still writes the table twice into the HTML (the
sidebar and the phone menu's copy). On the page of every message, one heading each, that was
some 110 KB of the page's 300 KB that no reader sees. Runs after the search hooks (last in
mkdocs.yml), which read the headings first; links to the headings stay, the headings are the
page's own."""
from __future__ import annotations

from mkdocs.structure.toc import TableOfContents


def on_page_context(context, page, config, nav):
    if "toc" in (page.meta.get("hide") or []):
        page.toc = TableOfContents([])
        context["toc"] = page.toc
    return context
