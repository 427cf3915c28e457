"""Troubleshooting as pages by kind, and every address of the one page they came from.

data/troubleshooting.yml lists the pages (docs/troubleshooting/<page>.md, and .es.md) and the
anchors of the old single page (/troubleshooting/#anchor). The index page's marker

    <!-- troubleshooting-contents -->

becomes, for each page in that order, its title (a link) and first paragraph, and the list of
its entries (its second- and third-level headings). Each entry carries the id of the old anchor
it answers, so a link into the old page (/troubleshooting/#dornn-failed, from another site)
lands on that entry's line and link without JavaScript, and a small script in the page sends
the reader on to the entry itself. An old anchor that no page holds fails the build.

The list is left out of search (data-search-exclude): a pasted message must find the entry, not
its line in this list.
"""
from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml
from pipeline.running import yaml_load

MARKER = re.compile(r"<!--\s*troubleshooting-contents\s*-->")
HEADING = re.compile(r"^(#{1,3})\s+(.*?)(?:\s*\{\s*#([\w-]+)\s*\})?\s*$")
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


class PagesError(ValueError):
    pass


@dataclass
class Entry:
    level: int  # 2 or 3
    title: str  # Markdown of the heading
    anchor: str


@dataclass
class Page:
    slug: str
    title: str
    lead: str  # the first paragraph after the title, Markdown
    entries: list[Entry]


def load(path: Path) -> dict:
    try:
        data = yaml_load.load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise PagesError(f"{path}: not a readable data file ({e})") from None
    if not isinstance(data, dict) or not data.get("pages") or not data.get("old_anchors"):
        raise PagesError(f"{path}: needs `pages` and `old_anchors`")
    return data


def read_page(docs: Path, slug: str, lang: str) -> Page:
    """A page's title, first paragraph and headings, from its Markdown (code fences skipped)."""
    path = Path(docs) / "troubleshooting" / f"{slug}{'' if lang == 'en' else '.' + lang}.md"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise PagesError(f"{path}: the troubleshooting page {slug!r} is missing ({e})") from None
    text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)
    title, lead, entries, fence, paragraph = "", "", [], False, []
    for line in text.split("\n"):
        if FENCE.match(line):
            fence = not fence
            continue
        if fence:
            continue
        m = HEADING.match(line)
        if m and len(m.group(1)) == 1:
            title = m.group(2)
        elif m:
            if not m.group(3):
                raise PagesError(f"{path}: heading {m.group(2)!r} has no {{ #anchor }}: every "
                                 "entry needs one that stays when the page changes")
            entries.append(Entry(len(m.group(1)), m.group(2), m.group(3)))
        elif title and not lead and not entries:
            if line.strip():
                paragraph.append(line.strip())
            elif paragraph:
                lead = " ".join(paragraph)
    if not title:
        raise PagesError(f"{path}: no title")
    return Page(slug, title, lead, entries)


def inline(markdown: str) -> str:
    """A heading's or paragraph's Markdown as HTML: `code` spans, the rest as text."""
    parts = re.split(r"(`[^`]+`)", markdown)
    return "".join(f"<code>{html.escape(p[1:-1])}</code>" if p.startswith("`") and len(p) > 1
                   else html.escape(p) for p in parts)


def targets(pages: list[Page], data: dict, relative) -> dict[str, str]:
    """{old anchor: the address of the entry that holds it now}; a missing one fails."""
    where = {e.anchor: f"{relative(p.slug)}#{e.anchor}" for p in pages for e in p.entries}
    renamed = data.get("renamed") or {}
    out, lost = {}, []
    for old in list(data["old_anchors"]) + list(renamed):
        now = renamed.get(old, old)
        if now in where:
            out[old] = where[now]
        else:
            lost.append(old)
    if lost:
        raise PagesError("data/troubleshooting.yml: no troubleshooting page holds the old "
                         f"anchor(s) {', '.join(lost)}: a link into the old page would reach "
                         "nothing (rename it under `renamed`, or keep the heading's anchor)")
    return out


def contents(docs: Path, data_path: Path, lang: str, relative) -> str:
    """The index's list of pages and entries, with the old anchors' ids and the script that
    sends a reader who followed an old link on to its entry. `relative(slug)` is the address of
    a troubleshooting page from the index page."""
    data = load(data_path)
    pages = [read_page(docs, slug, lang) for slug in data["pages"]]
    moved = targets(pages, data, relative)
    ids: dict[str, list[str]] = {}  # entry address -> old anchors it answers
    for old, address in moved.items():
        ids.setdefault(address, []).append(old)
    out = []
    for p in pages:
        items = []
        for e in p.entries:
            address = f"{relative(p.slug)}#{e.anchor}"
            spans = "".join(f'<span id="{html.escape(a)}"></span>' for a in ids.get(address, []))
            cls = ' class="sub"' if e.level == 3 else ""
            items.append(f'<li{cls}>{spans}<a href="{html.escape(address)}">{inline(e.title)}'
                         "</a></li>")
        out.append(f'<h3 id="kind-{p.slug}"><a href="{html.escape(relative(p.slug))}">'
                   f'{inline(p.title)}</a></h3><p class="kind-lead">{inline(p.lead)}</p>'
                   f'<ul class="troubleshooting-entries" data-search-exclude>{"".join(items)}</ul>')
    script = ("<script>(function(){var m=" + json.dumps(moved, sort_keys=True)
              + ';function go(){var h=decodeURIComponent(location.hash.slice(1));'
              "if(Object.prototype.hasOwnProperty.call(m,h))location.replace(m[h]);}"
              'go();addEventListener("hashchange",go);})();</script>')
    return script + "".join(out)
