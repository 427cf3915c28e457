"""`make serve` rebuilds the pages an edit touches (pipeline/pages/changed_pages.py and its hook):
which pages an edit touches, and a dirty rebuild of a small site that builds the edited page
alone while search still finds every page."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from conftest import REPO
from pipeline.pages.changed_pages import Changes, SearchEntries


def _project(root: Path) -> Path:
    (root / "data").mkdir(parents=True)
    (root / "data" / "x.yml").write_text("a: 1\n")
    (root / "mkdocs.yml").write_text("site_name: t\n")
    docs = root / "docs"
    (docs / "troubleshooting").mkdir(parents=True)
    (docs / "a.md").write_text("# A\n")
    (docs / "b.md").write_text('# B\n\n```python\n--8<-- "t/x.py"\n```\n\n<!-- output: t/x.py -->\n')
    (docs / "c.md").write_text("# C\n\n<!-- gpu-chart: y -->\n")
    (docs / "troubleshooting" / "index.md").write_text("# T\n\n<!-- troubleshooting-contents -->\n")
    (docs / "troubleshooting" / "p.md").write_text("# P\n")
    return docs


PAGES = ["a.md", "b.md", "c.md", "troubleshooting/index.md", "troubleshooting/p.md"]


def _touch(path: Path, text: str) -> None:
    path.write_text(text)
    later = time.time_ns() + 10**9  # a later time than the first write, on any file system
    os.utime(path, ns=(later, later))


def test_an_edit_touches_its_page_a_snippets_outcome_the_pages_naming_it_site_data_every_page(
        tmp_path):
    docs = _project(tmp_path)
    outcomes = {"t/x.py": "ok\0aaa", "benchmarks/y.py": "needs-gpu\0bbb", "t/z.py": "ok\0ccc"}
    changes = Changes()
    assert changes.touched(tmp_path, docs, PAGES, outcomes) == set(PAGES)  # the first build
    assert changes.touched(tmp_path, docs, PAGES, outcomes) == set()  # nothing changed
    _touch(docs / "a.md", "# A\n\nOne more line.\n")
    assert changes.touched(tmp_path, docs, PAGES, outcomes) == {"a.md"}
    # an output that arrives, by path (b.md) and by a chart marker's name (c.md)
    assert changes.touched(tmp_path, docs, PAGES, {**outcomes, "t/x.py": "ok\0new"}) == {"b.md"}
    assert changes.touched(tmp_path, docs, PAGES, {**outcomes, "t/x.py": "ok\0new",
                                                   "benchmarks/y.py": "ok\0new"}) == {"c.md"}
    _touch(docs / "troubleshooting" / "p.md", "# P\n\n## A new entry\n")
    assert changes.touched(tmp_path, docs, PAGES, {**outcomes, "t/x.py": "ok\0new",
                                                   "benchmarks/y.py": "ok\0new"}) == {
        "troubleshooting/p.md", "troubleshooting/index.md"}
    _touch(tmp_path / "data" / "x.yml", "a: 2\n")
    assert changes.touched(tmp_path, docs, PAGES, {**outcomes, "t/x.py": "ok\0new",
                                                   "benchmarks/y.py": "ok\0new"}) == set(PAGES)


def test_search_keeps_the_pages_not_rebuilt_and_each_document_once():
    search = SearchEntries()
    first = [{"location": "", "title": "Home", "text": "h"},
             {"location": "a/", "title": "A", "text": "a"},
             {"location": "a/#s", "title": "S", "text": "s"}]
    assert search.merge(first) == first
    again = [{"location": "a/", "title": "A", "text": "a2"}] * 2  # the page rebuilt, twice over
    assert search.merge(again) == [first[0], again[0]]


SERVE_LIKE = r"""
import sys, time, json
from pathlib import Path
from mkdocs.commands.build import build
from mkdocs.config import load_config
root = Path(sys.argv[1])
def rebuild():
    config = load_config(config_file=str(root / "mkdocs.yml"), site_dir=str(root / "site"))
    config.plugins.on_startup(command="serve", dirty=True)
    build(config, serve_url="http://127.0.0.1:8000/", dirty=True)
rebuild()
print("built", flush=True)
sys.stdin.readline()  # the test edits a page
rebuild()
"""


def test_a_dirty_rebuild_builds_what_an_edit_touched_and_search_finds_every_page(tmp_path):
    """As `make serve` (`mkdocs serve --dirty`) does in one process: a first build, then an edit
    of one page and of a snippet another page shows, then a rebuild. Those two pages are built
    again (the second from its snippet's new output: its own source did not change), the third
    is not written again, and the search index holds all three."""
    hooks = REPO / "pipeline" / "pages" / "hooks"
    (tmp_path / "snippets" / "t").mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    (tmp_path / "mkdocs.yml").write_text(textwrap.dedent(f"""\
        site_name: mini
        theme:
          name: material
        hooks:
          - "{hooks / 'build.py'}"
          - "{hooks / 'search_index.py'}"
          - "{hooks / 'changed_pages.py'}"
        plugins:
          - search
        """))
    (tmp_path / "snippets" / "t" / "x.py").write_text("print('first output')\n")
    (tmp_path / "docs" / "index.md").write_text("# Home\n\nThe home page.\n")
    (tmp_path / "docs" / "shows.md").write_text("# Shows\n\n<!-- output: t/x.py -->\n")
    (tmp_path / "docs" / "plain.md").write_text("# Plain\n\nUnrelated words.\n")
    proc = subprocess.Popen([sys.executable, "-c", SERVE_LIKE, str(tmp_path)], cwd=tmp_path,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1",
                                            "SNIPPETS_BACKGROUND": "0"})  # run it before building
    assert proc.stdout.readline().strip() == "built", proc.stderr.read()[-3000:]
    site = tmp_path / "site"
    assert "first output" in (site / "shows" / "index.html").read_text()
    plain = site / "plain" / "index.html"
    before = plain.stat().st_mtime_ns
    _touch(tmp_path / "docs" / "index.md", "# Home\n\nThe home page, edited.\n")
    _touch(tmp_path / "snippets" / "t" / "x.py", "print('second output')\n")
    out, err = proc.communicate("\n", timeout=120)
    assert proc.returncode == 0, err[-3000:]
    assert "edited" in (site / "index.html").read_text()
    assert "second output" in (site / "shows" / "index.html").read_text()
    assert plain.stat().st_mtime_ns == before, "the page not touched was built again"
    docs = json.loads((site / "search" / "search_index.json").read_text())["docs"]
    assert {"", "shows/", "plain/"} <= {d["location"].split("#")[0] for d in docs}, docs
    assert any("edited" in d["text"] for d in docs)


def test_the_browser_tests_runs_change_no_page(tmp_path):
    """results/ is read by every page, but not results/browser/ (the browser tests' committed
    runs, which `make test` rewrites): a change there does not rebuild the site under serve."""
    from pipeline.pages.changed_pages import tree_state
    (tmp_path / "results" / "browser" / "visits").mkdir(parents=True)
    (tmp_path / "results" / "m").mkdir()
    before = tree_state(tmp_path)
    (tmp_path / "results" / "browser" / "visits" / "phone-en-.json").write_text("{}")
    assert tree_state(tmp_path) == before
    (tmp_path / "results" / "m" / "machine.json").write_text("{}")
    assert tree_state(tmp_path) != before
