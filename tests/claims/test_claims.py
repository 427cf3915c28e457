"""What a page types by hand fails the strict build when nothing backs it (CONTRIBUTING.md,
"Claims the build checks"): a quoted message the library does not contain, a quotation with no
source, a release number with no record or source beside it, "measured" with no measurement.
Each test plants one kind in a small throw-away project built with the real hook, and first
builds the same page backed, so a failure is the planted claim's and nothing else's.

The library the messages are checked against is Python's own `json` package: its decoder's
messages are string constants of json/decoder.py, and json is installed wherever Python is."""
from __future__ import annotations

import re
import sys
import textwrap

ENV = {"SNIPPETS_DEVICE": "CPU"}
PYTHON = ".".join(map(str, sys.version_info[:2]))  # the release installed here, as a page names it

MESSAGES = """\
json-expecting:
  text: "Expecting value: line 1 column 1 (char 0)"
  parts: ["Expecting value"]
  in: {package: json, files: [decoder.py]}
printed:
  text: "the snippet says hello"
  output: hello.py
"""


def line_of(page: str, text: str) -> int:
    """The line of the built page (1-based) that holds `text`."""
    return next(n for n, line in enumerate(page.splitlines(), 1) if text in line)


def build(mini, page: str, messages: str = MESSAGES):
    mini.snippet("hello.py", "print('the snippet says hello')\n")
    (mini.root / "data").mkdir(exist_ok=True)
    (mini.root / "data" / "messages.yml").write_text(messages)
    (mini.root / "docs" / "index.md").write_text(page)
    return mini.build(env=ENV)


BACKED = textwrap.dedent(f"""\
    # Mini

    Python {PYTHON}, installed here, parses JSON. An empty string gives:

    <!-- message: json-expecting -->

    Its decoder says "Expecting value: line 1 column 1" for an empty string. A thread quoted with
    its source: "the decoder could be friendlier here" ([a thread](https://github.com/python/cpython/issues/1), Python 3.4).

    ```python
    --8<-- "hello.py"
    ```

    What we measured:

    <!-- output: hello.py -->

    <!-- message: printed -->
    """)


def test_a_backed_page_builds_and_shows_each_message_with_where_it_comes_from(mini):
    proc = build(mini, BACKED)
    assert proc.returncode == 0, proc.stderr
    html = (mini.root / "site" / "index.html").read_text()
    assert "Expecting value: line 1 column 1 (char 0)" in html
    assert "In json" in html and "Printed by hello.py, as run here" in html


def test_a_message_the_installed_library_does_not_contain_fails_the_build(mini):
    planted = MESSAGES.replace("Expecting value", "Expecting a unicorn")
    proc = build(mini, BACKED.replace("Expecting value", "Expecting a unicorn"), planted)
    assert proc.returncode != 0
    assert "index.md: message json-expecting" in proc.stderr
    assert "does not contain 'Expecting a unicorn'" in proc.stderr


def test_a_message_its_snippet_did_not_print_fails_the_build(mini):
    planted = MESSAGES.replace('"the snippet says hello"', '"the snippet says goodbye"')
    proc = build(mini, BACKED, planted)
    assert proc.returncode != 0 and "did not print 'the snippet says goodbye'" in proc.stderr


def test_a_quotation_nothing_backs_fails_the_build(mini):
    page = BACKED.replace("What we measured:", 'It also says "Unexpected unicorn in the stream".\n\nWhat we measured:')
    proc = build(mini, page)
    assert proc.returncode != 0
    line = line_of(page, "Unexpected unicorn")
    assert f'index.md:{line}: the quotation "Unexpected unicorn in the stream" has nothing ' \
        f'behind it' in proc.stderr


def test_a_thread_quotation_without_its_release_fails_the_build(mini):
    page = BACKED.replace(", Python 3.4)", ")")
    proc = build(mini, page)
    assert proc.returncode != 0
    assert "is from the thread https://github.com/python/cpython/issues/1: name the release" \
        in proc.stderr


def test_a_typed_sentence_on_what_a_gpu_ran_fails_the_build_in_either_language(mini):
    """Whether a GPU ran a program is the records' to say (<!-- gpu-runs: -->): typed, it is
    wrong as soon as a GPU run lands, as the C page's "No GPU run of these programs is recorded
    on this site yet" was. The marker says it from the records (none here)."""
    page = BACKED + ("\n## On a GPU\n\nNo GPU run of these programs is recorded yet.\n\n"
                     "Aún no hay registrada ninguna ejecución en GPU de estos programas.\n")
    proc = build(mini, page)
    assert proc.returncode != 0
    for text in ("No GPU run", "Aún no hay"):
        assert f"index.md:{line_of(page, text)}: " in proc.stderr, text
    assert proc.stderr.count("what a GPU ran or did not run is written from the records") == 2
    fixed = build(mini, BACKED + "\n## On a GPU\n\n<!-- gpu-runs: hello.py -->\n")
    assert fixed.returncode == 0, fixed.stderr
    from built_pages import opened
    assert "No GPU run of <code>hello.py</code> is recorded yet." in \
        opened(mini.root / "site" / "index.html")


def test_a_thread_only_message_must_link_its_thread(mini):
    messages = MESSAGES + textwrap.dedent("""\
        old-json:
          text: "No JSON object could be decoded"
          quoted: {url: "https://github.com/python/cpython/issues/2", release: "Python 2.7"}
        """)
    page = BACKED + '\nPython 2 said "No JSON object could be decoded".\n'
    proc = build(mini, page, messages)
    assert proc.returncode != 0
    assert "is message old-json, seen only in https://github.com/python/cpython/issues/2" \
        in proc.stderr
    fixed = build(mini, page.replace("decoded\".", "decoded\" ([the thread](https://github.com/python/cpython/issues/2))."), messages)
    assert fixed.returncode == 0, fixed.stderr


def test_a_release_number_with_nothing_behind_it_fails_the_build(mini):
    page = BACKED.replace("parses JSON.", "parses JSON; Python 3.2 and newer parse it faster.")
    proc = build(mini, page)
    assert proc.returncode != 0
    line = line_of(page, "Python 3.2")
    assert f"index.md:{line}: release number(s) typed with nothing behind them: python 3.2" \
        in proc.stderr
    # the installed release itself is backed: it is checked against what is installed
    assert f"python {PYTHON}" not in proc.stderr.split("nothing behind them:")[1].split(".")[0]
    linked = page.replace("parse it faster.", "parse it faster ([changelog](https://docs.python.org/3/whatsnew/3.2.html)).")
    assert build(mini, linked).returncode == 0


def test_a_release_that_is_not_installed_fails_even_after_the_library_name(mini):
    page = BACKED.replace(f"Python {PYTHON}, installed here", "Python 2.7, installed here")
    proc = build(mini, page)
    assert proc.returncode != 0 and "python 2.7" in proc.stderr
    assert f"(installed here: python {PYTHON}" in proc.stderr


def test_measured_with_no_measurement_in_its_section_fails_the_build(mini):
    page = BACKED + "\n## Speed\n\nWe measured it twice as fast on a GPU.\n"
    proc = build(mini, page)
    assert proc.returncode != 0
    line = line_of(page, "We measured")
    assert f"index.md:{line}: 'measured' with no measurement on record in its section" \
        in proc.stderr
    # the same words next to an output that ran are backed, and a negation never needs one
    assert build(mini, BACKED + "\n## Speed\n\nNot measured yet.\n").returncode == 0


def test_a_table_row_with_a_cell_too_few_or_too_many_fails_the_build(mini):
    """Python-Markdown pads a short row and drops a long row's extra cells, with no error: the
    mixed_float16 row of Criteria's table lost its TensorFlow cell, and every later cell showed
    under the wrong column. The build counts the cells as Python-Markdown splits them."""
    table = ("\n| policy | TensorFlow | JAX |\n|---|---|---|\n| `a|b` | cuDNN | loop \\| cuDNN |\n"
             "{row}\n")
    proc = build(mini, BACKED + table.format(row="| float16 | cuDNN | loop |"))
    assert proc.returncode == 0, proc.stderr  # pipes in code spans and escaped pipes are text
    for row, cells in (("| float16 | loop |", 2), ("| float16 | cuDNN | loop | extra |", 4)):
        proc = build(mini, BACKED + table.format(row=row))
        assert proc.returncode != 0
        assert f"index.md: a table row has {cells} cells for the header's 3: {row}" in \
            re.sub(r"index\.md:\d+:", "index.md:", proc.stderr), proc.stderr
