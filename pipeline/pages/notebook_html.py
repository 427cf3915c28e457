"""Notebook pages as light as the other pages: what mkdocs-jupyter (0.26) writes, trimmed at build.

mkdocs-jupyter puts into every notebook page:
- 585 KB of JupyterLab CSS, inline (its index.css and a theme file). The browser spent most of a
  second on style and layout. PurgeCSS keeps the rules this page uses (about 18 KB); the
  trimmed blocks say which file they came from (data-purged-from), for the test that compares
  the page drawn with the trimmed and with the full CSS (tests/site/test_notebook_pages.py).
- A MathJax 2 configuration and an empty <script src="">, which MathJax 3 never reads, and a
  loader that imports Mermaid from cdnjs when a notebook has a Mermaid diagram (ours have none;
  the site loads nothing from other hosts). Removed.
- Its Pygments CSS a second time, written out as a Python list (a mkdocs-jupyter bug, so the
  browser drops it anyway). Removed.
- The copy button's icon in full in every code cell: drawn once in the page, and shown by each.
- Its stylesheets, inline in the page's body (Pygments' colours, the trimmed JupyterLab CSS):
  `styles_as_files()` makes each a file of the site, named by its content (the English and the
  Spanish notebook share them), linked where the block was, so the cascade is the same.
The TeX in Markdown cells ($...$, $$...$$) is typeset by MathJax at build time into SVG with a
hidden MathML copy for screen readers, so the page loads no MathJax (2 MB of JavaScript). The
glyphs are defined once for the page (MathJax's global font cache, an <svg> at the end of the
body), not in every formula, and the parts of a formula do not name their MathML elements, which
no script of the page reads.
"""
from __future__ import annotations

import hashlib
import html
import re
from pathlib import Path

from bs4 import BeautifulSoup
from bs4.dammit import EntitySubstitution
from bs4.formatter import HTMLFormatter

from pipeline.pages.static_render import render

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
    _share_copy_icon(soup)
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


COPY_ICON = "jp-copy-icon"


def _share_copy_icon(soup: BeautifulSoup) -> None:
    """Every code cell's copy button draws the same icon, written out in full each time (about a
    kilobyte): the icon is drawn once, hidden, and each button shows it (<use>)."""
    icons = soup.select("clipboard-copy svg.clipboard-copy-icon")
    if not icons or len({icon.decode_contents() for icon in icons}) != 1:
        return  # not mkdocs-jupyter's one icon: leave them as they are
    sprite = BeautifulSoup(
        f'<svg hidden><symbol id="{COPY_ICON}" viewBox="{icons[0].get("viewbox")}">'
        f'{icons[0].decode_contents()}</symbol></svg>', "html.parser")
    for icon in icons:
        icon.clear()
        icon.append(soup.new_tag("use", attrs={"href": f"#{COPY_ICON}"}))
    soup.body.append(sprite)


def _drop_dead_scripts(soup: BeautifulSoup) -> None:
    for script in soup.find_all("script"):
        text = script.string or ""
        if (script.get("src") == ""
                or script.get("type") == "text/x-mathjax-config"
                or (script.get("type") == "module" and "jp-Mermaid" in text
                    and not soup.select_one(".jp-Mermaid"))):
            script.decompose()
    for style in soup.find_all("style"):
        text = (style.string or "").strip()
        if (text.startswith("['")  # the Python list of Pygments CSS
                or (".jp-RenderedMermaid" in text and not soup.select_one(".jp-Mermaid"))):
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


STYLESHEETS = "assets/notebooks"  # where the build writes a notebook page's stylesheets
BODY_STYLE = re.compile(r'<style type="text/css"(?P<attrs>[^>]*)>(?P<css>.*?)</style>', re.S)


def styles_as_files(page_html: str, files: dict[str, str], relative) -> str:
    """Each <style type="text/css"> block of the page's body replaced by a link to a file that
    holds its CSS (`relative(site_path)`: its address from the page), keeping its attributes
    (data-purged-from); `files` gets {site path: CSS}, for the hook to write."""
    head, sep, body = page_html.partition("<body")

    def link(m: re.Match) -> str:
        css = m.group("css").strip() + "\n"
        path = f"{STYLESHEETS}/{hashlib.sha256(css.encode()).hexdigest()[:16]}.css"
        files[path] = css
        return f'<link rel="stylesheet" href="{html.escape(relative(path))}"{m.group("attrs")}>'

    return head + sep + BODY_STYLE.sub(link, body)
