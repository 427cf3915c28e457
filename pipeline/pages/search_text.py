"""What search reads of a page: its prose, headings, tables and quoted messages; a program by
its name, not its text.

Material's search plugin indexes a page's HTML, code included, and shows a result's section with
all the text it indexed. With every program, output and chart in it, each language's index
weighed some 1.2 MB, and a pasted message listed sections 7,000 to 55,000 px tall, the section
that answers often folded under a page's other results. `for_search()` gives the plugin the page
with what a reader does not search for marked `data-search-exclude` (the plugin leaves such an
element out, text and all):

- every `<pre>`: code, outputs, a notebook's cells and outputs; a code block's title stays, so
  a program is found by its file's name ("masking.py", "lstm_v8.c · the cuDNN calls");
- except a quoted message (`div.message`, pipeline/claims/messages.py): readers paste it;
- an output's title ("Output · run here on a CPU · DATE"), the same words under every program;
- the collapsed listing under a program (its title and note repeat on every program);
- charts and diagrams (their SVG: tick labels, a long description of the data) and a chart's
  data table: the page's prose says what each shows;
- a notebook's prompts ("In [1]:"), and the copy of each cell's code its copy button reads;
- the words the build writes around a program's output, the same on every program: a quoted
  message's title (where its text comes from), "Needs a GPU…" (`p.needs-gpu`), and a GPU
  record's title and line (`div.admonition.record`: the machine, releases and date);
- the table of how long each snippet ran (`div.execution-times`): some 8 KB of program names
  and timings in each language's index, which no reader searches for;
- the table of others' published figures (`div.published-table`, on two pages: 3 KB each);
- the tables a reader looks their release up in, drawn from the version matrix's records
  (the table after an empty `div.release-lookup`: which path each release takes, and under each
  dtype policy, some 20 KB of release numbers in each language), whose prose around them stays;
- on the troubleshooting index, each kind's first paragraph, the same words as its page's
  (`p.kind-lead`).

The plugin's parser skips an excluded element until the first end tag of the same name: the
elements marked here hold no element of their own name.
"""
from __future__ import annotations

import re

EXCLUDE = " data-search-exclude"
HIGHLIGHT = re.compile(r'<div class="(?P<cls>[^"]*\bhighlight\b[^"]*)"[^>]*>.*?</pre></div>', re.S)
PRE = re.compile(r"<pre\b")
SVG = re.compile(r"<svg\b")
LEFT_OUT = re.compile(r'<(?:details class="(?:chart-data|note program-listing)"|'
                      r'div class="(?:clipboard-copy-txt|jp-InputPrompt|jp-OutputPrompt|'
                      r'execution-times|published-table)\b|p class="kind-lead"|'
                      r'span class="notice"|p class="needs-gpu")')
RECORD = re.compile(r'(<div class="admonition [^"]*\brecord\b[^"]*">\s*<p class="admonition-title")'
                    r'([^>]*>.*?</p>\s*<p)')
OUTPUT_TITLE = re.compile(r'<span class="filename">')
LOOKUP_TABLE = re.compile(r'(<div class="release-lookup" hidden></div>\s*)<table\b')


def for_search(page_html: str) -> str:
    def block(m: re.Match) -> str:
        classes = m.group("cls").split()
        if "message" in classes:  # its text is what readers paste; where it is from is not
            text = OUTPUT_TITLE.sub(lambda t: t.group(0)[:-1] + EXCLUDE + ">", m.group(0), count=1)
            return text.replace("<pre", "<pre data-search-keep", 1)
        text = m.group(0)
        if "output" in classes:
            text = OUTPUT_TITLE.sub(lambda t: t.group(0)[:-1] + EXCLUDE + ">", text, count=1)
        return text

    page_html = HIGHLIGHT.sub(block, page_html)
    page_html = PRE.sub("<pre" + EXCLUDE, page_html)
    page_html = page_html.replace("<pre" + EXCLUDE + " data-search-keep", "<pre")
    page_html = SVG.sub("<svg" + EXCLUDE, page_html)
    page_html = LOOKUP_TABLE.sub(r"\g<1><table" + EXCLUDE, page_html)
    page_html = RECORD.sub(lambda m: m.group(1) + EXCLUDE + m.group(2) + EXCLUDE, page_html)
    return LEFT_OUT.sub(lambda m: re.sub(r"^<\w+", lambda t: t.group(0) + EXCLUDE, m.group(0)),
                        page_html)
