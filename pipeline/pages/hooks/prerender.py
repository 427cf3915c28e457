"""MkDocs hook: diagrams and notebook pages rendered at build time, not in the reader's browser.

- A ```dot fence (Graphviz) becomes an inline SVG: pipeline/pages/diagrams.py.
- Notebook pages get their math typeset and mkdocs-jupyter's CSS and scripts trimmed, and its
  stylesheets become files of the site: pipeline/pages/notebook_html.py.
Both go through pipeline/pages/static_render.py (Node, with the libraries pinned in package-lock.json).
A failure is logged as an error: the strict build fails, `make serve` keeps going.
"""
from __future__ import annotations

import logging
import sys
from pathlib import Path

# MkDocs loads a hook as a lone file: make the `pipeline` package importable.
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from mkdocs.utils import get_relative_url  # noqa: E402

from pipeline.pages import diagrams, notebook_html  # noqa: E402
from pipeline.pages.static_render import StaticRenderError  # noqa: E402
from pipeline.running.files import write_named_by_content  # noqa: E402

log = logging.getLogger("mkdocs.hooks.prerender")


def on_config(config):
    fences = config.mdx_configs.setdefault("pymdownx.superfences", {}).setdefault("custom_fences", [])
    if not any(fence.get("name") == "dot" for fence in fences):  # i18n runs this once per language
        fences.append({"name": "dot", "class": "diagram", "format": diagrams.fence})
    return config


def on_post_page(output, page, config):
    if not page.file.src_uri.endswith(".ipynb"):
        return output
    try:
        output = notebook_html.slim(output)
    except StaticRenderError as err:
        log.error("notebook page %s: %s", page.file.src_uri, err)
        return output
    files: dict[str, str] = {}
    output = notebook_html.styles_as_files(output, files,
                                           lambda path: get_relative_url(path, page.url))
    write_named_by_content(Path(config["site_dir"]), files)
    return output
