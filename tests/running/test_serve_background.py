"""`make serve` answers at once and runs the stale snippets in the background
(pipeline/running/background.py): a page first says its output is running, then reloads with the real
output; a failing snippet shows its error box and is not run again until it changes; a strict
build of the same tree runs everything first and never shows a pending output."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

PENDING = "Running…"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.read().decode("utf-8")
    except OSError:
        return None


def _until(predicate, seconds: float, what: str):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.3)
    pytest.fail(f"waited {seconds:g} s for {what}")


@pytest.fixture
def served(mini, cpu_only):
    """A mini project served by `mkdocs serve --no-strict` (what `make serve` runs): a quick
    snippet, a slow one that waits for a file the test writes, and one that fails."""
    gate = mini.root / "gate"
    # The code is on the page too: each prints words its code holds apart.
    mini.snippet("t/quick.py", "print('quick', 'output')\n")
    mini.snippet("t/slow.py", f"""\
        import pathlib, time
        while not pathlib.Path({str(gate)!r}).exists():
            time.sleep(0.1)
        print('slow', 'output')
        """)
    mini.snippet("t/bad.py", "import sys\nprint('broken', 'on purpose', file=sys.stderr)\n"
                             "sys.exit(3)\n")
    mini.page("t/quick.py", "t/slow.py", "t/bad.py")
    port = _free_port()
    log = mini.root / "serve.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "mkdocs", "serve", "--no-strict",
                                 "--dev-addr", f"127.0.0.1:{port}"], cwd=mini.root,
                                stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, "NO_MKDOCS_2_WARNING": "1",
                                     "SNIPPETS_DEVICE": "CPU"})
    try:
        yield f"http://127.0.0.1:{port}/", gate, log, mini
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_server_answers_first_and_the_outputs_fill_in(served):
    url, gate, log, mini = served
    page = _until(lambda: _get(url), 60, "the first page")
    assert PENDING in page and "slow output" not in page  # still waiting for the gate
    page = _until(lambda: (p := _get(url)) and "quick output" in p and "broken on purpose" in p
                  and p, 60, "the quick output and the failure")
    assert "t/slow.py" in page and PENDING in page
    gate.write_text("")
    page = _until(lambda: (p := _get(url)) and "slow output" in p and p, 60, "the slow output")
    assert PENDING not in page
    assert "Snippet failed: t/bad.py" in page and "broken on purpose" in page
    text = log.read_text()
    assert "running in the background" in text
    # No snippet starts before the first build is done: the first page gets both cores.
    built = text.index("Documentation built in")
    assert built < text.index("running t/"), text
    assert text.count("running t/bad.py") == 1, text  # a failure is not run again
    # A strict build of the same tree: everything ran first; nothing pending, the failure fails.
    (mini.root / "snippets" / "t" / "bad.py").write_text("print('now', 'fixed')\n")
    build = mini.build()
    assert build.returncode == 0, build.stderr[-3000:]
    html = (mini.root / "site" / "index.html").read_text()
    assert PENDING not in html and "slow output" in html and "now fixed" in html
