"""Diagrams in pages: a ```dot fence (Graphviz) becomes an inline SVG at build time.

    ```dot
    digraph "How a snippet reaches its page" {
      rankdir=LR
      snippet -> cache
    }
    ```

The graph's name is the diagram's accessible name (what a screen reader says); a node's `href`
makes the box a link (relative to the page's URL, as in `criteria/#versions`). The drawing takes
the page's text colour, so it follows the light and dark palettes. A diagram that does not parse
is logged as an error, which fails the strict build and shows an error box under `make serve`.
"""
from __future__ import annotations

import html
import logging
import re

from pipeline.pages.static_render import render, StaticRenderError

log = logging.getLogger("mkdocs.hooks.diagrams")

# Graphviz attributes every diagram gets, so that they look like one set and like the site.
FONT = {"fontname": "Helvetica", "fontsize": "12"}
ATTRIBUTES = {"graph": {"bgcolor": "transparent", **FONT}, "node": FONT, "edge": FONT}

_SVG_START = re.compile(r"<svg\b")
_TITLE = re.compile(r"<title>(.*?)</title>", re.S)


def fence(source, language, class_name, options, md, **kwargs):
    """pymdownx.superfences formatter for ```dot fences (registered by pipeline/pages/hooks/prerender.py)."""
    try:
        svg = render({"dot": [source], "dot_attributes": ATTRIBUTES})["dot"][0]
    except StaticRenderError as err:
        first = source.strip().splitlines()[0] if source.strip() else "(empty)"
        log.error("diagram %r does not render: %s", first[:60], err)
        return ('<div class="admonition failure"><p class="admonition-title">Diagram failed</p>'
                f"<pre>{html.escape(str(err))}</pre></div>")
    # tabindex: on a narrow screen the figure scrolls sideways, and keyboards must reach it.
    return f'<figure class="diagram" tabindex="0">{_inline(svg)}</figure>'


def _inline(svg: str) -> str:
    """Graphviz's SVG document as an element for the page: no XML prolog or comments, the
    graph's name as the accessible name (role="img": its parts are not read one by one)."""
    svg = svg[_SVG_START.search(svg).start():]
    svg = re.sub(r"<!--.*?-->\s*", "", svg, flags=re.S)
    title = _TITLE.search(svg)
    name = title.group(1).strip() if title else ""
    # role="img" hides an image's parts from screen readers; a diagram whose boxes are links
    # (href= in the dot source) is a group instead, so that its links can be read and followed.
    role = "group" if "<a " in svg else "img"
    return _SVG_START.sub(f'<svg role="{role}" aria-label="{name}"', svg, count=1)
