"""The site's own search worker in Node (tests/search_worker.js), without a browser: what every
test that asks the built site's search many queries shares (tests/site/test_search_worker.py,
tests/claims/test_kernel_messages.py, tests/claims/test_library_messages.py).

One Node process per language and built site for the whole pytest process: it indexes the
language's search index once, as the page's worker does, and answers every list of queries
asked after that (`ask`)."""
from __future__ import annotations

import atexit
import json
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

import pytest

from conftest import REPO

NODE = shutil.which("node")

HARNESS = REPO / "tests" / "search_worker.js"

needs_node = pytest.mark.skipif(NODE is None, reason="needs Node.js (`make test` installs it)")


def node_json(*args: str) -> dict:
    """One run of the harness (its `keys` and `words` commands), its printed JSON."""
    proc = subprocess.run([NODE, str(HARNESS), *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def served_worker(site_root: Path) -> Path:
    """The search worker the built site serves (Material's, with the site's fixes to lunr)."""
    found = sorted((site_root / "assets" / "javascripts" / "workers").glob("search.lunr-fix.*.min.js"))
    assert len(found) == 1, found
    return found[0]


def materials_worker() -> Path:
    import material
    found = sorted((Path(material.__file__).parent / "templates" / "assets" / "javascripts" /
                    "workers").glob("search.*.min.js"))
    assert len(found) == 1, found
    return found[0]


@lru_cache(maxsize=None)
def _worker(site_root: Path, lang: str) -> subprocess.Popen:
    index = site_root / "search" / f"search_index.{lang}.json"
    # what it says goes to a file: a pipe nobody reads would stop it once full
    said = tempfile.TemporaryFile("w+", encoding="utf-8")
    proc = subprocess.Popen([NODE, str(HARNESS), str(served_worker(site_root)), "serve", str(index)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=said,
                            text=True, encoding="utf-8")
    proc.said = said
    atexit.register(_stop, proc)
    return proc


def _stop(proc: subprocess.Popen) -> None:
    proc.stdin.close()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


def ask(site_root: Path, lang: str, queries: list[str]) -> list[list[list[dict]]]:
    """Each query asked of the built site's worker in `lang`, as the search box asks it: for
    each, its results grouped by page, best first, each {"location", "score", "text"}."""
    if NODE is None:
        pytest.skip("needs Node.js (`make test` installs it)")
    proc = _worker(site_root, lang)
    proc.stdin.write(json.dumps(list(queries)) + "\n")
    proc.stdin.flush()
    line = proc.stdout.readline()
    if not line:  # the worker died: what it said, not a JSON error
        proc.wait(10)
        _worker.cache_clear()
        proc.said.seek(0)
        pytest.fail(f"the search worker in Node exited ({proc.returncode}): {proc.said.read()[-3000:]}")
    return json.loads(line)
