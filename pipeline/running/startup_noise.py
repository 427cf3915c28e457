"""Library start-up chatter, taken out of the outputs a page shows.

TensorFlow, XLA and JAX print log lines at import whatever the program does: absl's "All log
messages before absl::InitializeLog()" warning, the oneDNN and CPU-feature notices, "failed call
to cuInit" on a machine without a GPU, "Unable to register cuDNN factory" and the like. They say
nothing about what a snippet shows the reader. The hook (pipeline/pages/hooks/build.py) drops them when
it puts an output into a page; the cache (.cache/runs/*/result.json) keeps the raw output, which
stays the log of the run.
"""
from __future__ import annotations

import html
import re

# One line each. A glog/absl line: severity and date (I1123, W0000, E0000), time, thread id,
# file.cc:line] message; the TensorFlow and XLA start-up lines all come in that form.
STARTUP_LINES = [re.compile(p) for p in (
    r"^[IWEF]\d{4} \d\d:\d\d:\d+\.\d+\s+\d+ [\w./-]+:\d+\] ",
    r"^WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR$",
    # cpu_feature_guard's message continues on a line of its own.
    r"^To enable the following instructions: .* rebuild TensorFlow with the appropriate compiler "
    r"flags\.$",
    # TensorFlow's Python logger, for the same start-up notices.
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWE] tensorflow/",
)]


def is_startup_line(line: str) -> bool:
    return any(p.search(line) for p in STARTUP_LINES)


def strip(text: str) -> str:
    """The text without start-up log lines (the other lines untouched, in order)."""
    kept = [line for line in text.splitlines(keepends=True) if not is_startup_line(line.rstrip("\r\n"))]
    return "".join(kept)


# A notebook's printed output, as mkdocs-jupyter renders it: one output area child holding the
# HTML-escaped text in a <pre> (possibly with <span>s for colours).
NOTEBOOK_STREAM = re.compile(
    r'<div class="jp-OutputArea-child">\s*<div class="jp-OutputPrompt jp-OutputArea-prompt">'
    r'</div>\s*<div class="jp-RenderedText jp-OutputArea-output"[^>]*data-mime-type="application/'
    r'vnd\.jupyter\.(?:stderr|stdout)"[^>]*>\s*<pre>(.*?)</pre>\s*</div>\s*</div>', re.S)
TAG = re.compile(r"<[^>]+>")


def strip_notebook_html(content: str) -> str:
    """A notebook page's HTML with start-up lines taken out of its printed outputs; an output
    that held nothing else is left out whole."""
    def clean(m):
        lines = m.group(1).splitlines(keepends=True)
        kept = [line for line in lines
                if not is_startup_line(html.unescape(TAG.sub("", line)).rstrip("\r\n"))]
        if len(kept) == len(lines):
            return m.group(0)
        if not "".join(kept).strip():
            return ""
        start, end = m.start(1) - m.start(0), m.end(1) - m.start(0)
        return m.group(0)[:start] + "".join(kept) + m.group(0)[end:]
    return NOTEBOOK_STREAM.sub(clean, content)
