"""Notebook pages as light as the other pages: what mkdocs-jupyter (0.26) writes, trimmed at build.

mkdocs-jupyter puts into every notebook page:
- 585 KB of JupyterLab CSS, inline (its index.css and a theme file). The browser spent most of a
  second on style and layout. PurgeCSS keeps the rules this page uses (about 18 KB); the
  trimmed blocks say which file they came from (data-purged-from), for the test that compares
  the page drawn with the trimmed and with the full CSS (tests/test_browser.py).
- A MathJax 2 configuration and an empty <script src="">, which MathJax 3 never reads, and a
  loader that imports Mermaid from cdnjs when a notebook has a Mermaid diagram (ours have none;
  the site loads nothing from other hosts). Removed.
- Its Pygments CSS a second time, written out as a Python list (a mkdocs-jupyter bug, so the
  browser drops it anyway). Removed.
The TeX in Markdown cells ($...$, $$...$$) is typeset by MathJax at build time into SVG with a
hidden MathML copy for screen readers, so the page loads no MathJax (2 MB of JavaScript). The
glyphs are defined once for the page (MathJax's global font cache, an <svg> at the end of the
body), not in every formula, and the parts of a formula do not name their MathML elements, which
no script of the page reads.
"""
from __future__ import annotations

import re
from pathlib import Path

from bs4 import BeautifulSoup
from bs4.dammit import EntitySubstitution
from bs4.formatter import HTMLFormatter

from pipeline.static_render import render

JUPYTER_CSS = ("index.css", "theme-light.css", "theme-dark.css")


class _AsWritten(HTMLFormatter):
    """Write the page back as it came: attributes in their order (Beautiful Soup sorts them by
    default), only &, < and > escaped, void elements without a closing slash."""

    def __init__(self):
        super().__init__(entity_substitution=EntitySubstitution.substitute_xml,
                         void_element_close_prefix=None)

    def attributes(self, tag):
        return list(tag.attrs.items())


def _jupyter_assets() -> Path:
    import mkdocs_jupyter

    return Path(mkdocs_jupyter.__file__).parent / "templates" / "mkdocs_html" / "assets"


def jupyter_css() -> dict[str, str]:
    """mkdocs-jupyter's own CSS files, by name, as it inlines them."""
    return {name: (_jupyter_assets() / name).read_text(encoding="utf-8").strip()
            for name in JUPYTER_CSS}


def slim(page_html: str) -> str:
    """The notebook page `page_html` with its math typeset and its CSS and scripts trimmed."""
    soup = BeautifulSoup(page_html, "html.parser")
    _typeset_math(soup)
    _drop_dead_scripts(soup)
    _purge_jupyter_css(soup)
    return soup.decode(formatter=_AsWritten())


# The MathML element each part of a formula's SVG draws (data-mml-node="mi"), which only
# MathJax's own scripts read, none of which the page loads; MathJax's stylesheet selects three
# of them (an error, a table, an action), which stay.
MML_NODE = re.compile(r' data-mml-node="(?!merror"|mtable"|maction")[^"]*"')


def _typeset_math(soup: BeautifulSoup) -> None:
    cells = soup.select("div.jp-MarkdownOutput")
    if not cells:
        return
    answer = render({"math": [cell.decode_contents() for cell in cells]})["math"]
    typeset = 0
    for cell, result in zip(cells, answer["fragments"]):
        if result["count"]:  # leave cells without math exactly as mkdocs-jupyter wrote them
            cell.clear()
            cell.append(BeautifulSoup(MML_NODE.sub("", result["html"]), "html.parser"))
            typeset += 1
    if typeset:
        style = soup.new_tag("style", attrs={"id": "MJX-SVG-styles"})
        style.string = answer["css"]
        soup.head.append(style)
        if answer.get("cache"):  # the glyphs every formula draws, defined once for the page
            soup.body.append(BeautifulSoup(answer["cache"], "html.parser"))


def _drop_dead_scripts(soup: BeautifulSoup) -> None:
    for script in soup.find_all("script"):
        text = script.string or ""
        if (script.get("src") == ""
                or script.get("type") == "text/x-mathjax-config"
                or (script.get("type") == "module" and "jp-Mermaid" in text
                    and not soup.select_one(".jp-Mermaid"))):
            script.decompose()
    for style in soup.find_all("style"):
        if (style.string or "").strip().startswith("['"):  # the Python list of Pygments CSS
            style.decompose()


def _purge_jupyter_css(soup: BeautifulSoup) -> None:
    by_text = {text: name for name, text in jupyter_css().items()}
    blocks = [(style, by_text[(style.string or "").strip()]) for style in soup.find_all("style")
              if (style.string or "").strip() in by_text]
    if not blocks:
        return
    # What the CSS can match: the page without its style blocks (their text names every class).
    content = BeautifulSoup(str(soup), "html.parser")
    for style in content.find_all("style"):
        style.decompose()
    others = [style.string or "" for style in soup.find_all("style")
              if all(style is not block for block, _ in blocks)]
    kept = render({"purge": {"css": [style.string for style, _ in blocks],
                             "html": str(content), "context": others}})["purge"]
    for (style, name), css in zip(blocks, kept):
        style.string = css
        style["data-purged-from"] = name
