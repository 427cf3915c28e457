"""Build-time rendering (pipeline/pages/static_render.py and its users): ```dot diagrams, notebook math,
trimmed notebook CSS. What a reader's browser shows is checked in tests/site/; here, what the
build writes, and what it does with bad input."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import uuid

import pytest

from conftest import REPO
from pipeline.pages import notebook_html, static_render
from pipeline.pages.static_render import StaticRenderError

PRERENDER_HOOK = REPO / "pipeline" / "pages" / "hooks" / "prerender.py"


def dot_project(root, body: str, strict: bool = True):
    """A one-page MkDocs project with the prerender hook and `body` as its page."""
    (root / "docs").mkdir()
    (root / "docs" / "index.md").write_text(textwrap.dedent(body))
    (root / "mkdocs.yml").write_text(textwrap.dedent(f"""\
        site_name: diagrams
        strict: {str(strict).lower()}
        hooks: ["{PRERENDER_HOOK}"]
        markdown_extensions:
          - admonition
          - pymdownx.superfences
        """))
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "-d", str(root / "site")],
                          cwd=root, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})


GOOD = """\
    # Page

    ```dot
    digraph "Snippets go to the cache, then to the page" {
      rankdir=LR
      snippet [label="snippets/a.py"]
      snippet -> cache [label="runner"]
      cache -> page
    }
    ```
    """


def test_a_dot_fence_becomes_an_inline_svg_with_the_graph_name_as_its_name(tmp_path):
    run = dot_project(tmp_path, GOOD)
    assert run.returncode == 0, run.stderr[-2000:]
    html = (tmp_path / "site" / "index.html").read_text()
    assert '<figure class="diagram" tabindex="0"><svg role="img" ' \
           'aria-label="Snippets go to the cache, then to the page"' in html
    figure = html[html.index('<figure class="diagram"'):html.index("</figure>")]
    for label in ("snippets/a.py", "runner", "cache", "page"):
        assert f">{label}</text>" in figure
    assert "<?xml" not in figure and "<!--" not in figure and "<!DOCTYPE" not in figure
    assert "language-dot" not in html  # not shown as code


BROKEN = """\
    # Page

    ```dot
    digraph "Broken" { a -> }
    ```
    """


def test_a_diagram_that_does_not_parse_fails_the_strict_build_naming_it(tmp_path):
    run = dot_project(tmp_path, BROKEN)
    assert run.returncode != 0
    assert "diagram 'digraph \"Broken\" { a -> }' does not render" in run.stderr
    assert "syntax error" in run.stderr.lower()


def test_a_diagram_that_does_not_parse_shows_an_error_box_when_not_strict(tmp_path):
    run = dot_project(tmp_path, BROKEN, strict=False)
    assert run.returncode == 0, run.stderr[-2000:]
    html = (tmp_path / "site" / "index.html").read_text()
    assert '<p class="admonition-title">Diagram failed</p>' in html
    assert "syntax error" in html.lower() and "<svg" not in html.split("Diagram failed")[1][:500]


# --- notebook pages --------------------------------------------------------------------------

def notebook_page(markdown_cell: str, code_cell: str = "<pre>echo $HOME $PATH</pre>",
                  extra_head: str = "", output: str = "") -> str:
    """A page shaped like mkdocs-jupyter's: its CSS inline, one Markdown and one code cell."""
    css = notebook_html.jupyter_css()
    return textwrap.dedent(f"""\
        <!doctype html><html><head>{extra_head}</head><body data-md-color-scheme="default">
        <div class="jupyter-wrapper">
        <style type="text/css">
        {css["index.css"]}
        </style>
        <style type="text/css">
        {css["theme-light.css"]}
        </style>
        <script src=""> </script>
        <script type="text/x-mathjax-config">MathJax.Hub.Config({{}});</script>
        <script type="module">document.querySelectorAll(".jp-Mermaid > pre.mermaid");
          import("https://cdnjs.cloudflare.com/ajax/libs/mermaid/11.10.0/mermaid.esm.min.mjs")</script>
        <div class="jp-Cell jp-MarkdownCell"><div class="jp-RenderedHTMLCommon jp-RenderedMarkdown jp-MarkdownOutput">{markdown_cell}</div></div>
        <div class="jp-Cell jp-CodeCell"><div class="jp-InputArea">{code_cell}</div>{output}</div>
        </div>
        <style>
        ['pre {{ line-height: 125%; }}']
        </style>
        </body></html>""")


def test_math_is_typeset_at_build_and_code_keeps_its_dollars():
    page = notebook_html.slim(notebook_page(
        "<p>At step $t$ the cell computes</p>\n<p>$$h_t = \\tanh(W x_t + U h_{t-1} + b)$$</p>"
        "<p>and costs \\$5.</p>"))
    cell = page[page.index("jp-MarkdownOutput"):page.index("jp-CodeCell")]
    assert cell.count("<mjx-container") == 2 and cell.count('display="true"') == 1
    assert "$" in cell and "$t$" not in cell and "$$" not in cell  # \$ became a plain dollar
    # each formula: an SVG drawing, hidden from screen readers, and the MathML they read
    assert cell.count("<mjx-assistive-mml") == 2 and "<mi>t</mi>" in cell
    assert '<style id="MJX-SVG-styles">' in page.split("</head>")[0]
    assert "<pre>echo $HOME $PATH</pre>" in page


def test_a_page_without_math_is_not_given_the_math_stylesheet():
    page = notebook_html.slim(notebook_page("<p>No formula here.</p>"))
    assert "MJX-SVG-styles" not in page and "<mjx-container" not in page
    assert "<p>No formula here.</p>" in page


def test_bad_tex_fails_with_one_line_naming_the_error():
    with pytest.raises(StaticRenderError, match=r"^math: .*\\frac"):
        notebook_html.slim(notebook_page(f"<p>$\\frac{{1}}$ {uuid.uuid4()}</p>"))


def test_dead_scripts_and_the_python_list_style_are_removed():
    page = notebook_html.slim(notebook_page("<p>x</p>"))
    assert 'src=""' not in page and "x-mathjax-config" not in page
    assert "cdnjs" not in page and "['pre" not in page


def purged(page: str, name: str) -> str:
    """The text of the style block trimmed from mkdocs-jupyter's file `name`."""
    match = re.search(rf'<style[^>]*data-purged-from="{re.escape(name)}"[^>]*>(.*?)</style>', page, re.S)
    assert match, f"no style block trimmed from {name}"
    return match.group(1)


def test_jupyter_css_is_trimmed_to_what_the_page_uses():
    stderr = ('<div class="jp-RenderedText jp-OutputArea-output" data-mime-type="application/vnd.jupyter.stderr">'
              "<pre>warning</pre></div>")
    with_stderr = notebook_html.slim(notebook_page("<p>x</p>", output=stderr))
    without = notebook_html.slim(notebook_page("<p>x</p>"))
    full = len(notebook_html.jupyter_css()["index.css"])
    for page in (with_stderr, without):
        trimmed = purged(page, "index.css")
        assert purged(page, "theme-light.css")
        assert len(trimmed) < full / 10, (len(trimmed), full)
        assert ".jp-InputArea" in trimmed and ".bp3-card" not in trimmed
    # a selector on an attribute value with "/" and "." in it is kept when that value is there
    assert 'data-mime-type="application/vnd.jupyter.stderr"]' in with_stderr.split("</style>")[0]
    assert 'data-mime-type="application/vnd.jupyter.stderr"]' not in without.split("</style>")[0]


def test_custom_properties_read_by_the_pages_other_css_are_kept():
    # read by a rule of another style block, even one that matches nothing on this page
    reader = "<style>.highlight-ipynb .k { color: var(--jp-mirror-editor-keyword-color) }</style>"
    kept = notebook_html.slim(notebook_page("<p>x</p>", extra_head=reader))
    dropped = notebook_html.slim(notebook_page("<p>x</p>"))
    assert "--jp-mirror-editor-keyword-color:" in purged(kept, "theme-light.css")
    assert "--jp-mirror-editor-keyword-color:" not in purged(dropped, "theme-light.css")


ICON = ('<svg aria-hidden="true" class="clipboard-copy-icon" height="20" viewBox="0 0 16 16" '
        'width="20"><path d="M0 6.75C0 5.784.784 5 1.75 5h1.5" fill="currentColor"></path></svg>')


def copy_button(icon: str = ICON) -> str:
    return f'<clipboard-copy for="cell-1"><div>{icon}</div></clipboard-copy>'


def test_the_copy_icon_is_drawn_once_and_shown_by_every_button():
    page = notebook_html.slim(notebook_page("<p>x</p>", code_cell=copy_button() * 3))
    assert page.count("M0 6.75C0") == 1  # the path, once, in a hidden symbol
    symbol = re.search(r'<svg hidden=""><symbol id="([^"]+)" viewbox="0 0 16 16">', page, re.I)
    assert symbol, page[-600:]
    assert page.count(f'<use href="#{symbol.group(1)}"></use>') == 3
    assert page.count('class="clipboard-copy-icon"') == 3  # each button keeps its sized <svg>


def test_copy_icons_that_differ_are_left_as_they_are():
    other = ICON.replace("M0 6.75", "M1 2")
    page = notebook_html.slim(notebook_page("<p>x</p>", code_cell=copy_button() + copy_button(other)))
    assert "<use" not in page and "M0 6.75" in page and "M1 2" in page


def test_the_body_stylesheets_become_files_named_by_content_linked_in_place():
    page = notebook_html.slim(notebook_page("<p>x</p>"))
    files: dict[str, str] = {}
    linked = notebook_html.styles_as_files(page, files, lambda path: f"../../{path}")
    assert "<style" not in linked.partition("<body")[2]
    links = re.findall(r'<link rel="stylesheet" href="\.\./\.\./([^"]+)"( data-purged-from="[^"]+")?>',
                       linked)
    assert [name for _, name in links] == [' data-purged-from="index.css"',
                                           ' data-purged-from="theme-light.css"']
    assert set(files) == {path for path, _ in links}
    assert files[links[0][0]].strip() == purged(page, "index.css").strip()
    # the same CSS in another page (the other language) is the same file
    again: dict[str, str] = {}
    notebook_html.styles_as_files(page.replace("<p>x</p>", "<p>y</p>"), again, lambda path: path)
    assert again == files
    # the head's style blocks (the site's, MathJax's) stay where they are
    head_style = page.replace("<head>", "<head><style>p { color: red }</style>")
    assert "<style>p { color: red }</style>" in notebook_html.styles_as_files(head_style, {}, str)


# --- the Node bridge -------------------------------------------------------------------------

def test_a_corrupted_cache_entry_is_rendered_again(tmp_path, monkeypatch):
    monkeypatch.setattr(static_render, "CACHE", tmp_path)
    request = {"dot": [f'digraph "{uuid.uuid4()}" {{ a -> b }}']}
    first = static_render.render(request)
    entries = list(tmp_path.glob("*.json"))
    assert len(entries) == 1 and json.loads(entries[0].read_text()) == first
    entries[0].write_text('{"dot": ["<svg>half')
    assert static_render.render(request) == first
    assert json.loads(entries[0].read_text()) == first
    assert not list(tmp_path.glob("*.tmp"))  # no temporary file left behind


def test_without_node_the_error_says_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setattr(static_render, "CACHE", tmp_path)
    monkeypatch.setattr(static_render.shutil, "which", lambda name: None)
    with pytest.raises(StaticRenderError, match="node not found: install Node.js"):
        static_render.render({"dot": ["digraph { a }"]})


def test_the_node_script_rejects_a_request_that_is_not_json():
    run = subprocess.run(["node", str(static_render.SCRIPT)], input="not json", cwd=REPO,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.startswith("static_render: the request on stdin is not JSON")
    assert run.stderr.count("\n") == 1
