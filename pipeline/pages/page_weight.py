"""What a page carries: only what a reader sees when it opens, in as few bytes as it takes.

- `defer()`: a code block inside a collapsed block (`??? note`: a program's whole listing, a
  helper, a C program with its header and build commands) is not shown until the reader opens
  it. Its HTML becomes a file of its own that the build writes (`assets/blocks/<hash>.html`,
  named by its content: the same block in both languages is one file), and the page keeps a
  placeholder that names it (`data-deferred-src`, relative to the page).
  overrides/assets/program-copy.js fetches it when the placeholder is shown, puts it in its
  place and gives its code Material's copy button. A quoted message stays in the page: search
  reads it there.
- `defer_charts()`: a chart (an inline SVG of some 10 to 40 KB; the benchmarks page draws 17)
  becomes a file too (`assets/charts/<hash>.svg`), loaded when it comes near the screen: the
  page keeps its box, sized to the chart's proportions, and its data table. Once loaded it is
  the same inline SVG as before (its text, its accessible name and description).
- `slim_code()`: Pygments wraps every name, punctuation mark, operator and run of spaces of a
  code block in a span (`<span class="n">x</span>`, `<span class="p">(</span>`) that is painted
  in the code's own colour in both palettes (`--md-code-hl-name-color` is `--md-code-fg-color`
  in Material; the site's CSS sets punctuation and operators to it too; white space has no
  style): those spans go, their text stays. The text a reader reads and copies is the
  same, character for character; only the markup shrinks (a third of a code block's bytes).

- `collapse_white_space()`: the indentation of the page's HTML (Material's templates indent every
  line of the navigation and the table of contents), outside the elements that keep their white
  space (KEEPS_WHITE_SPACE): a run of white space there is drawn as one space, so htmlmin writes
  one.

`tests/built_pages.py` reads a built page as the browser shows it once every block is opened;
`tests/pages/test_reader_pages.py` weighs the pages.
"""
from __future__ import annotations

import hashlib
import html
import re

import htmlmin

BLOCKS = "assets/blocks"  # where the build writes the code blocks a page loads when shown
CHARTS = "assets/charts"  # and the charts it loads when they come near the screen

# Material's code block (pymdownx.highlight): `div.highlight`, holding an optional title and one
# <pre>. Its code is escaped HTML, so `</pre></div>` ends it.
HIGHLIGHT = re.compile(r'<div class="(?P<cls>[^"]*\bhighlight\b[^"]*)"[^>]*>.*?</pre></div>', re.S)
DETAILS = re.compile(r"<(/?)details\b([^>]*)>")
CODE = re.compile(r"(<pre\b[^>]*>(?:<span></span>)?<code\b[^>]*>)(.*?)(</code></pre>)", re.S)
# A token whose colour is the code's own (Name, Keyword.Constant: --md-code-hl-name-color is
# --md-code-fg-color in both of Material's palettes; Punctuation, Operator and Operator.Word:
# the site's CSS gives them that colour) or that Material does not style (white space, a
# string's prefix such as f, a magic function or variable such as __init__ or __name__).
# tests/site/test_charts_and_tables.py asks Chromium, with the site's CSS, that each has the code's colour in
# both palettes.
PLAIN_CLASSES = ("n", "kc", "w", "p", "o", "ow", "sa", "fm", "vm")
PLAIN_TOKEN = re.compile(r'<span class="(?:%s)">([^<]*)</span>' % "|".join(PLAIN_CLASSES))


def slim_code(page_html: str) -> str:
    """Every code block's spans that change nothing a reader sees, unwrapped (their text kept)."""
    return CODE.sub(lambda m: m.group(1) + PLAIN_TOKEN.sub(r"\1", m.group(2)) + m.group(3),
                    page_html)


# A notebook's code cell (mkdocs-jupyter): its Pygments spans are styled by the notebook's own
# stylesheet, which gives names (a Name, a builtin, a module, a function, a class, an exception,
# a magic variable) no style and white space a colour it cannot show; the site's CSS gives
# punctuation and operators the code's own colour and weight, as in every other code block.
# tests/site/test_notebook_pages.py asks Chromium, with the page's CSS, that each is painted as the code.
NOTEBOOK_CODE = re.compile(r'(<div class="highlight-ipynb[^"]*"><pre>)(.*?)(</pre>)', re.S)
NOTEBOOK_PLAIN_CLASSES = ("n", "w", "p", "o", "nb", "nn", "nf", "nc", "ne", "bp", "vm")
NOTEBOOK_PLAIN = re.compile(r'<span class="(?:%s)">([^<]*)</span>' % "|".join(NOTEBOOK_PLAIN_CLASSES))


def slim_notebook_code(page_html: str) -> str:
    """A notebook's code cells without the spans that change nothing a reader sees."""
    return NOTEBOOK_CODE.sub(
        lambda m: m.group(1) + NOTEBOOK_PLAIN.sub(r"\1", m.group(2)) + m.group(3), page_html)


def _collapsed_spans(page_html: str) -> list[tuple[int, int]]:
    """(start, end) of every <details> element that is closed when the page opens (no `open`
    attribute), outermost ones only."""
    spans, stack = [], []
    for m in DETAILS.finditer(page_html):
        if not m.group(1):
            names = re.sub(r"=\s*(?:\"[^\"]*\"|'[^']*'|[^\s>]+)", " ", m.group(2)).split()
            stack.append((m.start(), "open" not in names))
        elif stack:
            start, closed = stack.pop()
            if closed and not any(s <= start < e for s, e in spans):
                spans = [(s, e) for s, e in spans if not start <= s < m.end()] + \
                        [(start, m.end())]
    return sorted(spans)


def block_file(block: str) -> str:
    return f"{BLOCKS}/{hashlib.sha256(block.encode()).hexdigest()[:16]}.html"


def defer(page_html: str, files: dict[str, str], relative) -> str:
    """Each code block inside a collapsed block, except a quoted message, replaced by a
    placeholder naming the file that holds it (`relative(site_path)`: its address from the
    page); `files` gets {site path: the block's HTML}, for the hook to write."""
    spans = _collapsed_spans(page_html)
    if not spans:
        return page_html

    def replace(m: re.Match) -> str:
        if not any(s <= m.start() < e for s, e in spans) or \
                "message" in m.group("cls").split():
            return m.group(0)
        path = block_file(m.group(0))
        files[path] = m.group(0)
        lines = m.group(0).count("\n") + 1
        return (f'<div class="deferred-code" data-deferred-src="{html.escape(relative(path))}" '
                f'style="--lines: {lines}"></div>')

    return HIGHLIGHT.sub(replace, page_html)


CHART_BOX = re.compile(r'(<div class="scroll-box chart-box"[^>]*>)\s*(<svg\b.*?</svg>)\s*(</div>)', re.S)
VIEW_BOX = re.compile(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+) ([\d.]+)"')


def defer_charts(page_html: str, files: dict[str, str], relative) -> str:
    """Each chart's SVG replaced by a placeholder of its proportions naming the file that holds
    it; `files` gets {site path: SVG}."""
    def replace(m: re.Match) -> str:
        svg = m.group(2)
        path = f"{CHARTS}/{hashlib.sha256(svg.encode()).hexdigest()[:16]}.svg"
        files[path] = svg
        size = VIEW_BOX.search(svg[:svg.index(">")])
        ratio = f' style="aspect-ratio: {size.group(1)} / {size.group(2)}"' if size else ""
        return (f'{m.group(1)}<div class="deferred-chart" '
                f'data-deferred-src="{html.escape(relative(path))}"{ratio}></div>{m.group(3)}')
    return CHART_BOX.sub(replace, page_html)


# Elements whose white space a reader sees: <pre> and <textarea> by HTML's rules, <code> and <kbd>
# by Material's CSS (white-space: pre-wrap), a diagram's SVG <text> (Graphviz writes
# xml:space="preserve"). tests/site/test_pages.py checks the list against the computed style of
# every element of the built pages.
KEEPS_WHITE_SPACE = ("pre", "textarea", "code", "kbd", "text")


def collapse_white_space(page_html: str) -> str:
    """Each run of white space outside KEEPS_WHITE_SPACE written as one character (htmlmin):
    nothing else of the page changes (attributes, quotes, entities and comments as written)."""
    return htmlmin.minify(page_html, remove_comments=False, remove_empty_space=False,
                          remove_all_empty_space=False, reduce_empty_attributes=False,
                          reduce_boolean_attributes=False, remove_optional_attribute_quotes=False,
                          convert_charrefs=False, keep_pre=False, pre_tags=KEEPS_WHITE_SPACE)
