"""Hardening of the build: a snippet cannot write outside its work folder, `mkdocs serve` shows
a failing snippet in the page and keeps running, nothing stale is shown as current, and two
builds at once share the cache safely. Tiny snippets in throw-away projects (no TensorFlow)."""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from conftest import REPO, executed_count
from pipeline.running import runner, sandbox
from pipeline.running.cache import Cache

ENV = {"SNIPPETS_DEVICE": "CPU"}


def run(mini, **kw):
    return {o.snippet.rel: o for o in runner.run_all(runner.Project(mini.root), **kw)}


# --- 1. A snippet writes only inside its own folder -------------------------------------------

@pytest.fixture
def victim(mini) -> Path:
    """A page source a stray snippet could damage."""
    path = mini.root / "docs" / "keep.md"
    path.write_text("untouched\n")
    return path


@pytest.mark.usefixtures("cpu_only")
@pytest.mark.parametrize("attempt, hit", [
    ("open({new!r}, 'w').write('x')", "new"),
    ("open({keep!r}, 'a').write('x')", "keep"),
    ("os.mkdir({new!r})", "new"),
    ("os.remove({keep!r})", "keep"),
    ("os.replace({keep!r}, 'moved.md')", "keep"),  # moving a file in takes it from outside
    ("shutil.copy('here.txt', {new!r})", "new"),
    # caught by the snippet: the write is still refused and the snippet still fails
    ("try:\n    open({new!r}, 'w')\nexcept PermissionError:\n    print('carried on')", "new"),
    # a Python process the snippet starts is held to the same rule
    ("subprocess.run([sys.executable, '-c', 'import sys; open(sys.argv[1], \"w\")', {new!r}])",
     "new"),
])
def test_python_snippet_writing_outside_is_refused_and_fails(mini, victim, attempt, hit):
    new = mini.root / "docs" / "new.md"
    code = attempt.format(new=str(new), keep=str(victim))
    mini.snippet("t/stray.py", "import os, shutil, subprocess, sys\n"
                               "open('here.txt', 'w').write('inside is fine')\n" + code + "\n")
    o = run(mini)["t/stray.py"]
    target = (new if hit == "new" else victim).resolve()  # the path reported is resolved
    assert o.status == "failed"
    assert o.problem == f"wrote outside its folder: {target}"
    assert not new.exists() and victim.read_text() == "untouched\n"  # it did not happen
    assert not (mini.root / ".cache" / "runs").exists()  # nothing cached


@pytest.mark.usefixtures("cpu_only")
def test_writes_inside_home_tmp_and_devices_are_allowed_and_not_kept(mini):
    mini.snippet("inside.py", """\
        import os, pathlib, shutil, tempfile
        work = pathlib.Path.cwd()
        assert pathlib.Path.home().parent == work and tempfile.gettempdir().startswith(str(work))
        pathlib.Path(os.environ['SNIPPET_DATA_DIR'], 'r.json').write_text('[1]')
        os.makedirs(pathlib.Path.home() / '.keras', exist_ok=True)
        (pathlib.Path.home() / '.keras' / 'keras.json').write_text('{}')
        with tempfile.TemporaryDirectory() as d:
            pathlib.Path(d, 'x').write_text('x')
        os.makedirs('/tmp', exist_ok=True)  # exists already: nothing is written
        open(os.devnull, 'w').write('x')
        os.makedirs('a/b'); shutil.rmtree('a')
        print('ok')
        """)
    o = run(mini)["inside.py"]
    assert (o.status, o.stdout) == ("ok", "ok\n"), o.stderr
    entry = Path(o.data_dir).parent  # home and tmp are gone; the program that ran is kept
    assert sorted(p.name for p in entry.iterdir()) == ["data", "inside.py", "result.json"]


FONTS = """\
    import os, pathlib
    cache = pathlib.Path(os.environ['MPLCONFIGDIR'])
    def lists():
        return {p.name: p.stat().st_mtime_ns for p in cache.glob('fontlist-*.json')}
    before = lists()
    from matplotlib import font_manager  # what `import keras` imports
    print(cache.is_relative_to(pathlib.Path.cwd()), 'read' if before and lists() == before
          else 'scanned and written', len(font_manager.fontManager.ttflist) > 0)
    """


@pytest.mark.usefixtures("cpu_only")
def test_matplotlib_reads_a_copy_of_the_users_font_list_in_the_empty_home(mini, monkeypatch):
    """The snippet's home is empty, and matplotlib (imported by `import keras`) would scan the
    machine's fonts in each snippet and write its list there. The home holds a copy of this
    user's list: matplotlib reads it and writes nothing, in the work folder."""
    mini.snippet("fonts.py", FONTS)
    o = run(mini)["fonts.py"]
    assert (o.status, o.stdout) == ("ok", "True read True\n"), o.stderr
    monkeypatch.setattr(sandbox, "font_lists", lambda: [])  # no copy: matplotlib scans again
    mini.snippet("fonts.py", FONTS + "print('again')\n")
    o = run(mini)["fonts.py"]
    assert (o.status, o.stdout) == ("ok", "True scanned and written True\nagain\n"), o.stderr


def test_strict_build_fails_naming_the_snippet_that_wrote_outside(mini, victim):
    mini.snippet("ok.py", "print('fine')\n")
    mini.snippet("stray.py", f"open({str(victim)!r}, 'w').write('overwritten')\n")
    mini.page("ok.py", "stray.py")
    proc = mini.build(env=ENV)
    assert proc.returncode != 0
    assert f"stray.py: wrote outside its folder: {victim.resolve()}" in proc.stderr
    assert "ok.py:" not in proc.stderr and victim.read_text() == "untouched\n"


C_MAKEFILE = """\
BUILD_DIR ?= build
$(BUILD_DIR)/%: %.c
\t$(CC) -o $@ $<
"""


@pytest.mark.usefixtures("cpu_only")
@pytest.mark.skipif(not (shutil.which("make") and shutil.which("cc")), reason="needs make and cc")
def test_c_snippet_writing_outside_fails_and_a_tidy_one_still_runs(mini, victim):
    mini.snippet("c/Makefile", C_MAKEFILE)
    mini.snippet("c/tidy.c", '#include <stdio.h>\nint main(void) {\n'
                 '  FILE *f = fopen("data/n.txt", "w"); fputs("1", f); fclose(f);\n'
                 '  puts("tidy"); return 0;\n}\n')
    mini.snippet("c/stray.c", '#include <stdio.h>\nint main(void) {\n'
                 f'  FILE *f = fopen("{victim}", "w"); fputs("x", f); fclose(f);\n'
                 '  return 0;\n}\n')
    out = run(mini)
    assert (out["c/tidy.c"].status, out["c/tidy.c"].stdout) == ("ok", "tidy\n")
    assert (Path(out["c/tidy.c"].data_dir) / "n.txt").read_text() == "1"
    # Native code is not stopped (only Python is), but it is caught and not cached.
    stray = out["c/stray.c"]
    assert stray.status == "failed"
    assert stray.problem == f"wrote outside its folder: {victim.resolve()}"
    assert run(mini)["c/stray.c"].executed


@pytest.mark.usefixtures("cpu_only")
@pytest.mark.skipif(not shutil.which("make"), reason="needs make")
def test_makefile_writing_into_the_snippets_folder_fails(mini):
    mini.snippet("c/Makefile", "BUILD_DIR ?= build\n$(BUILD_DIR)/%: %.c\n"
                               "\ttouch stamp\n\tprintf '#!/bin/sh\\necho hi\\n' > $@ && chmod +x $@\n")
    mini.snippet("c/prog.c", "int main(void) { return 0; }\n")
    o = run(mini)["c/prog.c"]
    stamp = (mini.root / "snippets" / "c" / "stamp").resolve()
    assert o.status == "failed" and o.problem == f"wrote outside its folder: {stamp}"


@pytest.mark.usefixtures("cpu_only")
def test_changing_the_sandbox_runs_everything_again(mini, tmp_path_factory, monkeypatch):
    mini.snippet("a.py", "print('a')\n")
    assert run(mini)["a.py"].executed
    assert not run(mini)["a.py"].executed
    changed = tmp_path_factory.mktemp("sandbox")
    for part in sandbox.files():
        shutil.copy(part, changed / part.name)
    with open(changed / "sitecustomize.py", "a") as f:
        f.write("\n# a change to the rule\n")
    monkeypatch.setattr(sandbox, "DIR", changed)
    again = run(mini)["a.py"]
    assert again.executed and again.status == "ok"
    monkeypatch.undo()
    assert not run(mini)["a.py"].executed  # the earlier result is still there


# --- 2 and 3. `mkdocs serve` shows failures in the page, never stale output ----------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Serve:
    """`mkdocs serve` of a MiniProject in a child process, stopped at the end."""

    def __init__(self, mini, *flags: str):
        self.url = f"http://127.0.0.1:{_free_port()}/"
        self.log = mini.root.parent / f"{mini.root.name}-serve.log"
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "mkdocs", "serve", "--dev-addr", self.url[7:-1], *flags],
                cwd=mini.root, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env={**os.environ, "NO_MKDOCS_2_WARNING": "1", **ENV})

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def page(self, until: str, timeout: float = 60) -> str:
        """The index page, once it contains `until` (the server may be building)."""
        deadline, text = time.monotonic() + timeout, ""
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"serve exited:\n{self.output()[-3000:]}"
            try:
                with urllib.request.urlopen(self.url, timeout=5) as r:
                    text = r.read().decode()
                if until in text:
                    return text
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.3)
        raise AssertionError(f"no {until!r} in the page after {timeout} s:\n{text[-2000:]}\n"
                             f"serve said:\n{self.output()[-3000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _assert_serve_shows_the_failure(mini, *flags):
    mini.snippet("ok.py", "print('-'.join(['fine', 'output']))\n")
    mini.snippet("broken.py", "raise RuntimeError('the reason it broke')\n")
    mini.page("ok.py", "broken.py")
    server = Serve(mini, "--no-livereload", *flags)
    try:
        html = server.page(until="Snippet failed")
        assert "Snippet failed: broken.py" in html
        assert "exit status 1" in html and "RuntimeError: the reason it broke" in html
        assert "fine-output" in html  # the other snippet's output is still shown
        time.sleep(1)
        assert server.proc.poll() is None, "serve stopped after the failing build"
    finally:
        server.stop()


def test_serve_shows_the_error_box_and_keeps_running(mini):
    _assert_serve_shows_the_failure(mini, "--no-strict")


def make_serve_flags() -> list[str]:
    """The flags `make serve` (the README's command) gives `mkdocs serve`, without the address."""
    recipe = re.search(r"^serve:.*\n(?:[#\t].*\n)*?\t\$\(BIN\)/mkdocs serve (.*)$",
                       (REPO / "Makefile").read_text(), re.M)
    assert recipe, "no `mkdocs serve` line in the Makefile's serve target"
    flags = recipe.group(1).split()
    at = flags.index("--dev-addr")
    return flags[:at] + flags[at + 2:]


def test_make_serve_shows_the_error_box_although_the_config_is_strict(mini):
    # The mini project's mkdocs.yml says `strict: true`, as the site's does.
    assert "strict: true" in (mini.root / "mkdocs.yml").read_text()
    _assert_serve_shows_the_failure(mini, *make_serve_flags())


def test_edited_snippet_that_now_fails_shows_the_failure_not_the_old_output(mini):
    # Outputs are joined at run time so that the page's copy of the source never contains them.
    mini.snippet("a.py", "print('-'.join(['OLD', 'OUTPUT']))\n")
    mini.page("a.py")
    server = Serve(mini, "--no-strict")  # with live reload: it rebuilds when a snippet changes
    try:
        assert "Snippet failed" not in server.page(until="OLD-OUTPUT")
        mini.snippet("a.py", "print('-'.join(['NEW', 'OUTPUT']))\n"
                             "raise RuntimeError('edited to fail')\n")
        html = server.page(until="Snippet failed")
        assert "RuntimeError: edited to fail" in html and "OLD-OUTPUT" not in html
        assert server.proc.poll() is None
    finally:
        server.stop()
    proc = mini.build(env=ENV)
    assert proc.returncode != 0 and "a.py: exit status 1" in proc.stderr


def test_execution_off_does_not_show_an_older_versions_output(mini):
    mini.snippet("a.py", "print('-'.join(['OLD', 'OUTPUT']))\n")
    mini.page("a.py")
    assert mini.build(env=ENV).returncode == 0
    assert "OLD-OUTPUT" in (mini.root / "site" / "index.html").read_text()
    mini.snippet("a.py", "print('-'.join(['NEW', 'OUTPUT']))\n")
    proc = mini.build(env={**ENV, "SNIPPETS_EXECUTE": "0"})
    assert proc.returncode == 0 and executed_count(proc.stderr) == 0, proc.stderr
    html = (mini.root / "site" / "index.html").read_text()
    assert "Not executed: a.py" in html and "OLD-OUTPUT" not in html


# --- 4. Two builds at once -----------------------------------------------------------------------

def test_two_builds_at_once_share_the_cache_without_damage(mini, tmp_path_factory):
    for name in ("a", "b"):
        mini.snippet(f"{name}.py", f"import time\ntime.sleep(1)\nprint('output of {name}')\n")
    # Different data on every run (and enough of it to take a moment to store): an entry mixing
    # two runs' files fails the integrity check.
    mini.snippet("data.py", """\
        import json, os, pathlib, time
        time.sleep(1)
        data = pathlib.Path(os.environ['SNIPPET_DATA_DIR'])
        for i in range(20):
            (data / f'part{i}.bin').write_bytes(os.urandom(200_000))
        (data / 'r.json').write_text(json.dumps([1, 2]))
        print('wrote data')
        """)
    mini.page("a.py", "b.py", "data.py")
    sites = [tmp_path_factory.mktemp(f"site{i}") for i in (1, 2)]
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", **ENV}
    procs = [subprocess.Popen([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(d)],
                              cwd=mini.root, env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for d in sites]
    logs = [p.communicate(timeout=120) for p in procs]
    for p, (_, err) in zip(procs, logs):
        assert p.returncode == 0, err
        assert executed_count(err) == 3  # both really ran everything, at the same time
    for d in sites:
        html = (d / "index.html").read_text()
        assert all(f"output of {n}" in html for n in "ab") and "wrote data" in html
    cache = Cache(runner.Project(mini.root).cache)
    entries = sorted(cache.runs.iterdir())
    assert len(entries) == 3 and not any((cache.root / "tmp").iterdir())  # no leftovers
    results = {r["snippet"]: r for r in map(cache.load, (e.name for e in entries))
               if r is not None}  # load() checks the key and every data file's hash
    assert sorted(results) == ["a.py", "b.py", "data.py"]
    assert len(results["data.py"]["data_files"]) == 21
    assert (Path(results["data.py"]["data_dir"]) / "r.json").read_text() == "[1, 2]"
    third = mini.build(env=ENV)
    assert third.returncode == 0 and executed_count(third.stderr) == 0, third.stderr
