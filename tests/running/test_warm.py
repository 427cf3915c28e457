"""Snippets forked from a zygote that imported their frameworks ahead (pipeline/running/warm.py):
what a warm run prints is what a fresh Python prints, judged by running the same programs fresh;
a failure is always the fresh run's."""
from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from pipeline.running import runner, warm
from pipeline.running.snippets import parse_header

pytestmark = pytest.mark.usefixtures("cpu_only")

# Each prints whether its parent is the runner (a fresh Python) or a zygote (a warm run).
PARENT = "print('fresh' if os.getppid() == int(os.environ['RUNNER_PID']) else 'warm')\n"


def run(mini, **kw):
    return {o.snippet.rel: o for o in runner.run_all(runner.Project(mini.root), **kw)}


@pytest.fixture
def runner_pid(monkeypatch):
    monkeypatch.setenv("RUNNER_PID", str(os.getpid()))


def test_the_beginning_is_the_settings_and_imports_before_anything_else_runs():
    text = ('"""doc"""\nimport os\nos.environ["KERAS_BACKEND"] = "jax"\n'
            'os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")\nimport numpy as np\n'
            'SIZE = 4\ndef f():\n    pass\nfrom keras import layers\nprint(1)\nimport torch\n')
    assert warm.beginning(text) == (
        (("set", "KERAS_BACKEND", "jax"), ("setdefault", "TF_CPP_MIN_LOG_LEVEL", "2")),
        ("numpy", "keras"))  # torch comes after a call: the child imports it, as a fresh Python
    for stops in ("import sys\nsys.setrecursionlimit(50)\nimport numpy\n",
                  "import os\nos.environ['X'] = str(1)\nimport numpy\n",
                  "import functools\n@functools.cache\ndef f():\n    pass\nimport numpy\n",
                  "import json\nprint('no framework')\n"):
        assert warm.beginning(stops) is None, stops


def test_programs_that_name_one_framework_family_in_another_order_share_a_zygote():
    base = {"PATH": "/bin"}
    one = warm.group(((("set", "KERAS_BACKEND", "torch"),), ("keras",)), base)
    other = warm.group(((("setdefault", "KERAS_BACKEND", "torch"),), ("torch", "numpy", "keras")),
                       base)
    assert one == other == ((("KERAS_BACKEND", "torch"),), ("keras", "numpy", "torch"))
    # a setdefault does nothing where the environment already has the name
    assert warm.group(((("setdefault", "KERAS_BACKEND", "jax"),), ("numpy",)),
                      {"KERAS_BACKEND": "torch"}) == ((), ("numpy",))
    # TensorFlow and PyTorch keep the program's order (their order can decide a crash)
    assert warm.group(((), ("torch", "tensorflow")), base)[1] == ("torch", "tensorflow")


def _loads(backend: str, root: str) -> set[str]:
    code = (f"import sys\nimport {root}\nprint(' '.join(m for m in sys.modules "
            f"if '.' not in m))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "KERAS_BACKEND": backend,
                                            "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert done.returncode == 0, done.stderr[-2000:]
    return set(done.stdout.split())


def test_what_a_framework_imports_with_it_is_what_a_fresh_python_imports():
    """warm.IMPLIES, asked of the installed frameworks: each root, imported alone, leaves what
    IMPLIES says behind."""
    cases = [(backend if root == "keras" else "tensorflow", root, implied)
             for key, implied in warm.IMPLIES.items()
             for root, backend in [key if isinstance(key, tuple) else (key, None)]]
    with ThreadPoolExecutor(2) as pool:
        loaded = list(pool.map(lambda c: _loads(c[0], c[1]), cases))
    for (backend, root, implied), found in zip(cases, loaded):
        assert implied <= found, (root, backend, implied - found)


def test_a_warm_run_prints_what_a_fresh_run_prints(mini, runner_pid, monkeypatch):
    body = ("import os\nos.environ['LANG_OF_TEST'] = 'x'\nimport numpy as np\nimport sys\n"
            "print(np.arange({n}).sum(), sys.argv, os.getcwd() == os.path.dirname("
            "os.path.abspath(sys.argv[0])), os.environ['HOME'].startswith(os.getcwd()))\n"
            "print('to stderr', file=sys.stderr)\n" + PARENT)
    for n in range(3):
        mini.snippet(f"t/s{n}.py", body.format(n=n + 3))
    warm_runs = run(mini)
    assert [o.stdout.splitlines()[-1] for o in warm_runs.values()] == ["warm"] * 3
    monkeypatch.setenv("SNIPPETS_WARM", "0")
    for n in range(3):  # a change the program ignores, so that the fresh runs are not cached
        mini.snippet(f"t/s{n}.py", body.format(n=n + 3) + "# fresh\n")
    fresh_runs = run(mini)
    assert [o.stdout.splitlines()[-1] for o in fresh_runs.values()] == ["fresh"] * 3
    for rel, o in warm_runs.items():
        f = fresh_runs[rel]
        assert (o.status, o.stdout.splitlines()[:-1], o.stderr) == \
            (f.status, f.stdout.splitlines()[:-1], f.stderr)
    assert [o.stdout.split()[0] for o in warm_runs.values()] == ["3", "6", "10"]


def test_a_failure_is_judged_by_a_fresh_run(mini, runner_pid):
    mini.snippet("t/ok.py", "import os\nimport numpy\n" + PARENT)
    mini.snippet("t/fails.py", "import os\nimport numpy\n" + PARENT + "raise SystemExit(3)\n")
    mini.snippet("t/raises.py", "import numpy\nraise ValueError('bad')\n")
    mini.snippet("t/escapes.py", "import os\nimport numpy\n" + PARENT
                 + "open(os.path.join(os.environ['RUNNER_HOME'], 'x'), 'w')\n")
    os.environ["RUNNER_HOME"] = str(mini.root)
    try:
        got = run(mini)
    finally:
        del os.environ["RUNNER_HOME"]
    assert got["t/ok.py"].stdout == "warm\n"
    assert (got["t/fails.py"].status, got["t/fails.py"].returncode, got["t/fails.py"].stdout) \
        == ("failed", 3, "fresh\n")
    # the traceback a reader sees: the program's own frames only
    assert "runpy" not in got["t/raises.py"].stderr
    assert got["t/raises.py"].stderr.strip().endswith("ValueError: bad")
    assert got["t/escapes.py"].status == "failed" and got["t/escapes.py"].stdout == "fresh\n"
    assert "wrote outside its folder" in got["t/escapes.py"].problem
    assert not (mini.root / "x").exists()


def test_a_zygote_whose_imports_print_is_not_used(mini, runner_pid, monkeypatch, tmp_path):
    """What an import prints belongs in each snippet's output: that group runs fresh."""
    (tmp_path / "chatty.py").write_text("print('hello from an import')\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setattr(warm, "HEAVY", warm.HEAVY | {"chatty"})
    for n in range(2):
        mini.snippet(f"t/c{n}.py", f"import os\nimport chatty\n{PARENT}# {n}\n")
    got = run(mini)
    assert [o.stdout for o in got.values()] == ["hello from an import\nfresh\n"] * 2


def test_measuring_and_fresh_snippets_never_run_warm(mini, runner_pid):
    assert parse_header("# snippet: fresh\n", "a.py")["fresh"] is True
    mini.snippet("t/a.py", "# snippet: fresh\nimport os\nimport numpy\n" + PARENT)
    mini.snippet("t/b.py", "# snippet: exclusive\nimport os\nimport numpy\n" + PARENT)
    for name in "cd":
        mini.snippet(f"t/{name}.py", "import os\nimport numpy\n" + PARENT)
    got = run(mini)
    assert {r: o.stdout for r, o in got.items()} == {
        "t/a.py": "fresh\n", "t/b.py": "fresh\n", "t/c.py": "warm\n", "t/d.py": "warm\n"}


def test_a_group_of_one_runs_fresh(mini, runner_pid):
    """A zygote for one program would import as much as the program does, and then fork."""
    mini.snippet("t/first.py", "import os\nimport numpy\n" + PARENT)
    mini.snippet("t/other.py", "import os\nos.environ['X_OF_TEST'] = '1'\nimport numpy\n" + PARENT)
    assert {o.stdout for o in run(mini).values()} == {"fresh\n"}


def test_a_warm_snippet_past_its_timeout_is_stopped(mini, runner_pid):
    mini.snippet("t/slow.py", "# snippet: timeout=2\nimport os\nimport numpy\nimport time\n"
                 "time.sleep(60)\n")
    mini.snippet("t/other.py", "import os\nimport numpy\n" + PARENT)
    got = run(mini)
    assert got["t/slow.py"].status == "timeout"
    assert got["t/other.py"].stdout == "warm\n"
