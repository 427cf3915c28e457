"""Shared fixtures: the repository's paths, and small throw-away projects that go through the
same runner and hook as the real site, with tiny snippets instead of TensorFlow ones."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
# On a GPU, the tests marked gpu run TensorFlow, PyTorch and JAX in one process: none of them may
# take the GPU's memory for itself (TensorFlow takes all of it, JAX three quarters, by default).
os.environ.setdefault("TF_FORCE_GPU_ALLOW_GROWTH", "true")
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

# A test process may load TensorFlow and later PyTorch's compiler (the profiler and
# torch.compile import it). TensorFlow 2.20 and newer load their LLVM into the global symbol
# table, and a later `import triton` (PyTorch 2.14.1's compiler) then crashes the process
# (tensorflow/tensorflow#124205). Loading triton first avoids it.
try:
    import triton  # noqa: F401
except ImportError:
    pass

HOOK = REPO / "pipeline" / "pages" / "hooks" / "build.py"
# "gw0", "gw1", ... in a pytest-xdist worker; empty in a plain pytest process.
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")


def module_from(path: Path):
    """A Python file that is not in a package (a hook, a benchmark, a report), imported."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _offline_env() -> dict[str, str]:
    """The variables pipeline/pages/hooks/offline_build.py sets for the build: downloads go to a closed port."""
    return module_from(REPO / "pipeline" / "pages" / "hooks" / "offline_build.py").OFFLINE


OFFLINE = _offline_env()


class MiniProject:
    """A minimal MkDocs project using the real hook: snippets/, docs/index.md, mkdocs.yml."""

    def __init__(self, root: Path):
        self.root = root
        (root / "snippets").mkdir()
        (root / "docs").mkdir()
        (root / "requirements.txt").write_text("nothing==1\n")
        (root / "mkdocs.yml").write_text(textwrap.dedent(f"""\
            site_name: mini
            strict: true
            hooks: ["{HOOK}"]
            markdown_extensions:
              - admonition
              - pymdownx.superfences
              - pymdownx.snippets:
                  base_path: [snippets]
                  check_paths: true
            """))
        self.pages: list[str] = []

    def snippet(self, rel: str, code: str) -> Path:
        path = self.root / "snippets" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(code))
        return path

    def page(self, *rels: str) -> None:
        """docs/index.md embedding and showing the output of each snippet."""
        body = ["# Mini", ""]
        for rel in rels:
            body += ["```python", f'--8<-- "{rel}"', "```", "", f"<!-- output: {rel} -->", ""]
        (self.root / "docs" / "index.md").write_text("\n".join(body))

    def build(self, *extra: str, env: dict | None = None, timeout: float = 120):
        """Run `mkdocs build` in a child process, as a reader would."""
        return subprocess.run(
            [sys.executable, "-m", "mkdocs", "build", "--strict",
             "-d", str(self.root / "site"), *extra],
            cwd=self.root, capture_output=True, text=True, timeout=timeout,
            env={**os.environ, "NO_MKDOCS_2_WARNING": "1", **(env or {})},
        )


# The test modules that take longest once the site is built (benchmarks/ci_time.py --tests), run
# first: `make test` hands whole modules to two workers in this order (--no-loadscope-reorder),
# so that they finish together instead of one worker running test_links.py alone at the end.
# Modules that read the built site alternate with modules that do not: while the first worker
# builds the site, the second runs tests that need no site.
# (The browser modules take most of their pages' runs from results/browser/: see
# tests/site/committed.py. Measured by benchmarks/ci_time.py on a fresh clone, 2026-11-29.)
SLOW_FIRST = ["test_checker_probe.py", "test_search_worker.py", "test_gpu_run.py",
              "test_search.py", "test_cudnn_speedup.py", "test_finding.py",
              "test_rnn_limits_py.py", "test_pages.py", "test_kernel_messages.py",
              "test_links.py", "test_mixed_precision_matrix.py", "test_checker_blind_spots.py",
              "test_versions.py", "test_cudnn_check.py", "test_legacy.py", "test_notebook.py"]


def pytest_collection_modifyitems(items):
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest as found


def checker_here(*args) -> subprocess.CompletedProcess:
    """snippets/cudnn_check.py's command line (its main()) in this test process, with what it
    printed and its exit status, as `python cudnn_check.py ARGS` gives them: a test process that
    already runs Keras on TensorFlow saves a second import of both (seconds each).
    tests/content/test_cudnn_check.py checks that both give the same answer."""
    import contextlib
    import io
    sys.path.insert(0, str(REPO / "snippets"))
    import cudnn_check
    out, err = io.StringIO(), io.StringIO()
    argv = list(map(str, args))
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        returncode = cudnn_check.main(argv)
    return subprocess.CompletedProcess(["cudnn_check.py", *argv], returncode, out.getvalue(),
                                       err.getvalue())


class TroubleshootingPages:
    """The troubleshooting pages of one language (every docs/troubleshooting/*.md, the index
    first) read as one text: what a test of "the troubleshooting page" reads, whichever page an
    entry is on. The pages come from docs/, not from data/troubleshooting.yml, the list the build
    reads to make them: a page left out of that list is still read here (and
    test_troubleshooting.py fails on it). `with_suffix(".es.md")` gives the Spanish ones."""

    def __init__(self, suffix: str = ".md"):
        self.suffix = suffix
        self.name = f"troubleshooting{suffix}"

    def paths(self) -> list[Path]:
        folder = REPO / "docs" / "troubleshooting"
        found = sorted(p for p in folder.glob(f"*{self.suffix}")
                       if self.suffix != ".md" or not p.name.endswith(".es.md"))
        assert len(found) > 1, f"no troubleshooting pages in {folder}"
        index = folder / f"index{self.suffix}"
        return [index, *(p for p in found if p != index)]

    def read_text(self, encoding: str = "utf-8") -> str:
        return "\n\n".join(p.read_text(encoding=encoding) for p in self.paths())

    def with_suffix(self, suffix: str) -> "TroubleshootingPages":
        return TroubleshootingPages(suffix)

    def page_of(self, anchor: str) -> Path:
        """The page that holds a heading's anchor."""
        return next(p for p in self.paths() if f"{{ #{anchor} }}" in p.read_text())

    def section(self, anchor: str) -> str:
        """The section a heading's anchor opens, on its own page: from that heading to the next
        heading of the same level or higher (its subsections included), or the page's end."""
        import re
        lines = self.page_of(anchor).read_text(encoding="utf-8").split("\n")
        first = next(i for i, line in enumerate(lines)
                     if line.startswith("#") and f"{{ #{anchor} }}" in line)
        level, fence = len(re.match(r"#+", lines[first]).group(0)), False
        for i in range(first + 1, len(lines)):
            if re.match(r"\s*(```|~~~)", lines[i]):
                fence = not fence  # a "# comment" in a code block is not a heading
            elif not fence and re.match(rf"#{{1,{level}}} ", lines[i]):
                return "\n".join(lines[first:i])
        return "\n".join(lines[first:])


TROUBLESHOOTING = {"en": TroubleshootingPages(".md"), "es": TroubleshootingPages(".es.md")}


def printed(rel: str) -> str:
    """What snippets/REL printed in this build, the output its page shows: the runner's outcome
    on this machine, from its cache (the snippets run before the tests), run now if not
    cached. A test that runs the file again would pay its framework's import a second time."""
    from pipeline.running import runner
    (outcome,) = runner.run_all(runner.Project(REPO), only=[rel])
    assert outcome.status == runner.OK, (rel, outcome.status, outcome.stderr[-3000:])
    return outcome.stdout


def this_runs_record(rel: str, data_file: str) -> tuple[dict, str] | None:
    """In a GPU run (pipeline/records/gpu_run.py sets GPU_RUN_RECORDS to its machine's folder of
    records): snippets/REL's record there, as (its data file DATA_FILE, what it printed); None
    elsewhere, or when the run has none. A GPU test then checks the run's own measurements
    instead of running the program a second time in the lent machine's minutes."""
    import json
    from pipeline.records.gpu_run import RUN_RECORDS  # the variable's name, set in one place
    folder = os.environ.get(RUN_RECORDS)
    if not folder:
        return None
    record = Path(folder) / "snippets" / rel
    if not (record / "result.json").is_file() or not (record / "data" / data_file).is_file():
        return None
    result = json.loads((record / "result.json").read_text(encoding="utf-8"))
    return (json.loads((record / "data" / data_file).read_text(encoding="utf-8")),
            result.get("stdout", "") + result.get("stderr", ""))


def executed_count(build_log: str) -> int:
    """Sum of 'snippets: N executed' over a build's log (one line per language pass)."""
    import re
    return sum(int(n) for n in re.findall(r"snippets: (\d+) executed", build_log))


@pytest.fixture
def mini(tmp_path) -> MiniProject:
    return MiniProject(tmp_path)


@pytest.fixture
def cpu_only(monkeypatch):
    """Pin the device to CPU whatever machine runs the tests."""
    monkeypatch.setenv("SNIPPETS_DEVICE", "CPU")
    from pipeline.running import device
    device.device_kind.cache_clear()
    yield
    device.device_kind.cache_clear()


def _build_site(out: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=1800,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stderr[-6000:]


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """One strict build of the whole site (runs stale snippets through the hook), shared by every
    test module that reads the built pages. Under pytest-xdist (`make test` runs two workers),
    one build for the whole run: the first worker builds, under a lock, and the others wait for
    it and read the same folder."""
    if not XDIST_WORKER:  # one process
        out = tmp_path_factory.mktemp("site")
        _build_site(out)
        return out
    shared = tmp_path_factory.getbasetemp().parent  # this run's folder, common to its workers
    out, failed = shared / "site", shared / "site-build-failed.txt"
    from filelock import FileLock
    with FileLock(str(shared / "site.lock")):
        if failed.is_file():  # another worker's build failed: the same error, not a second build
            pytest.fail(failed.read_text(), pytrace=False)
        if not (out / "index.html").is_file():
            try:
                _build_site(out)
            except AssertionError as e:
                failed.write_text(f"the site build failed:\n{e}")
                raise
    return out


@pytest.fixture(scope="session", autouse=True)
def _snippets_first_under_xdist(tmp_path_factory):
    """With several workers, the snippets run before any test, while every other worker waits:
    the benchmark snippets run alone on the CPU (as `exclusive` promises), and their outputs are
    the ones the site build (`site`, then `make build`) reuses from the cache. The rest of the
    build (pages, notebooks) runs in `site`, beside tests that do not read the site."""
    if not XDIST_WORKER:
        return
    shared = tmp_path_factory.getbasetemp().parent
    from filelock import FileLock
    with FileLock(str(shared / "snippets.lock")):
        done = shared / "snippets-ran.txt"
        if not done.is_file():
            # Offline, as in the build (pipeline/pages/hooks/offline_build.py). A failing snippet fails the site
            # build that follows, with the build's message.
            proc = subprocess.run([sys.executable, "-m", "pipeline.runner"], cwd=REPO,
                                  env={**os.environ, **OFFLINE},
                                  capture_output=True, text=True, timeout=3600)
            done.write_text(proc.stdout[-4000:] + proc.stderr[-4000:])


if os.environ.get("TIMELINE_FILE"):  # benchmarks/ci_time.py: where CI's time goes
    from timeline import pytest_runtest_logfinish, pytest_runtest_logstart  # noqa: E402,F401

# The browser tests' fixtures (tests/chromium.py), defined once for every module that uses them.
from chromium import browser, open_tab, server, site_root  # noqa: E402,F401


# What the browser tests took from their committed runs and made again (tests/site/committed.py):
# each worker sends its counts to the controller, which prints them once.
_BROWSER_RUNS: dict[str, list[str]] = {}


def _add_browser_runs(runs: dict) -> None:
    for why, names in runs.items():
        _BROWSER_RUNS.setdefault(why, []).extend(names)


def pytest_sessionfinish(session):
    committed = sys.modules.get("committed")
    if committed is None:
        return
    if hasattr(session.config, "workeroutput"):  # a pytest-xdist worker
        session.config.workeroutput["browser_runs"] = committed.RUNS
    else:
        _add_browser_runs(committed.RUNS)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook; a GPU machine's pytest may lack it
def pytest_testnodedown(node, error):
    _add_browser_runs(getattr(node, "workeroutput", {}).get("browser_runs", {}))


def pytest_terminal_summary(terminalreporter):
    committed = sys.modules.get("committed")
    if not any(_BROWSER_RUNS.values()):
        return
    if committed is None:
        sys.path.insert(0, str(REPO / "tests" / "site"))
        import committed
    terminalreporter.write_line(committed.summary(_BROWSER_RUNS))
