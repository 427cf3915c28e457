"""The hook inside a real `mkdocs build`, on a small throw-away project: caching across builds,
failures and timeouts fail the strict build naming the snippet, GPU-only snippets on CPU."""
from __future__ import annotations

import re
import time

from conftest import executed_count

ENV = {"SNIPPETS_DEVICE": "CPU"}


def test_second_build_executes_nothing_and_touching_one_reruns_only_it(mini):
    mini.snippet("a.py", "print('a')\n")
    mini.snippet("b.py", "print('b')\n")
    mini.page("a.py", "b.py")
    first = mini.build(env=ENV)
    assert first.returncode == 0, first.stderr
    assert executed_count(first.stderr) == 2
    second = mini.build(env=ENV)
    assert second.returncode == 0 and executed_count(second.stderr) == 0, second.stderr
    mini.snippet("b.py", "print('b, edited')\n")
    third = mini.build(env=ENV)
    assert executed_count(third.stderr) == 1
    assert "b, edited" in (mini.root / "site" / "index.html").read_text()


def test_failing_snippet_fails_the_strict_build_naming_it(mini):
    mini.snippet("ok.py", "print('fine')\n")
    mini.snippet("broken.py", "raise RuntimeError('the reason it broke')\n")
    mini.page("ok.py", "broken.py")
    proc = mini.build(env=ENV)
    assert proc.returncode != 0
    assert "broken.py: exit status 1" in proc.stderr and "the reason it broke" in proc.stderr
    assert "ok.py:" not in proc.stderr


def test_hanging_snippet_is_killed_and_reported(mini):
    mini.snippet("hang.py", "# snippet: timeout=2\nimport time\ntime.sleep(600)\n")
    mini.page("hang.py")
    start = time.monotonic()
    proc = mini.build(env=ENV)
    assert time.monotonic() - start < 60
    assert proc.returncode != 0 and "hang.py: killed after its 2 s timeout" in proc.stderr


def test_gpu_only_snippet_shows_needs_a_gpu_on_cpu(mini):
    mini.snippet("gpu.py", "# snippet: needs=gpu\nimport sys\n"
                           "print('needs a GPU: no CUDA device visible')\nsys.exit(77)\n")
    mini.page("gpu.py")
    proc = mini.build(env=ENV)
    assert proc.returncode == 0, proc.stderr
    html = (mini.root / "site" / "index.html").read_text()
    # One line that says so, not a box repeating the program's own "needs a GPU: ..." line.
    assert re.search(r'<p class="needs-gpu"><strong>Needs a GPU\.</strong> Without one it only '
                     r'says so, and no GPU run of it is on record yet\.</p>', html), html[-3000:]
    assert html.count("needs a GPU: no CUDA device visible") == 1  # in the code shown, only


def test_output_marker_naming_no_snippet_fails_the_build(mini):
    mini.snippet("a.py", "print('a')\n")
    mini.page("a.py")
    index = mini.root / "docs" / "index.md"
    index.write_text(index.read_text() + "\n<!-- output: missing.py -->\n")
    proc = mini.build(env=ENV)
    assert proc.returncode != 0 and "missing.py" in proc.stderr


def test_execution_off_shows_not_executed_instead_of_running(mini):
    mini.snippet("a.py", "print('a')\n")
    mini.page("a.py")
    proc = mini.build(env={**ENV, "SNIPPETS_EXECUTE": "0"})
    assert proc.returncode == 0 and executed_count(proc.stderr) == 0
    assert "Not executed" in (mini.root / "site" / "index.html").read_text()


def test_output_marker_inside_a_collapsed_block_stays_inside_it(mini):
    """A page may put a snippet's output one click away: the whole fenced output is indented
    into the block, not just its first line."""
    mini.snippet("a.py", "print('first line')\nprint('second line')\n")
    mini.page("a.py")
    (mini.root / "mkdocs.yml").write_text((mini.root / "mkdocs.yml").read_text()
                                          + "  - pymdownx.details\n")
    index = mini.root / "docs" / "index.md"
    index.write_text("# Mini\n\n??? note \"Folded\"\n\n    <!-- output: a.py -->\n\nAfter.\n")
    proc = mini.build(env=ENV)
    assert proc.returncode == 0, proc.stderr
    from built_pages import opened  # the block is a file the page loads when it is opened
    html = opened(mini.root / "site" / "index.html")
    details = html[html.index("<details"):html.index("</details>")]
    assert "first line" in details and "second line" in details, html
    assert "<p>After.</p>" in html[html.index("</details>"):]
