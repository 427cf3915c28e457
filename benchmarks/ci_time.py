"""Where CI's time goes (a script that prints figures, not a test).

Runs every snippet cold (an empty cache in a temporary folder, through the site's runner, as a
fresh clone's first build does) and prints:
  - the sum of the snippets' run times, and the runner's wall time;
  - that sum divided by the time of one `import keras` measured in the same run (the median of
    3 before and 3 after the snippets): a ratio that survives a busy machine (target <= 60);
  - the ten slowest snippets.
With --tests it then runs the CPU test suite as `make test` does (`pytest -m "not gpu"`, one
worker more than the cores, up to 4) in a copy of the project with no cache, as a fresh clone's
CI does, and prints each test module's worker, its span in the session and its tests' time
(tests/timeline.py records them; the snippets and the site build count in the
first tests that wait for them), and the suite's wall time.

With --clone, instead, what CI itself does, in its parts: a fresh `git clone` of this
checkout's HEAD (committed work only), its set-up from empty package caches (the make targets
`make test` needs: .venv from the pinned requirements, the Node packages), then `make test`;
it prints the set-up, the snippets that run first, the tests after them and the total, against
CI's limit of 15 minutes, each test module's span as above, and the tests that failed, if any.
Both modes print the seconds per reader page and per listed thread (content_units): the cost of
a unit of content, which a change that makes CI grow with the content shows.

    python benchmarks/ci_time.py            # snippets only (about 5 minutes on 2 cores)
    python benchmarks/ci_time.py --tests    # and the test suite (about 15 more)
    python benchmarks/ci_time.py --clone    # CI on a fresh clone, in its parts (about 15)
"""
from __future__ import annotations

import argparse
import getpass
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from build_speed import copy_project  # noqa: E402
from pipeline.running import runner  # noqa: E402

TARGET_RATIO = 60


def import_keras_seconds() -> float:
    """Wall time of a fresh Python that imports Keras (TensorFlow backend, as pinned)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import keras"], check=True, capture_output=True,
                   env={**os.environ, "KERAS_BACKEND": "tensorflow"})
    return time.perf_counter() - start


def snippet_figures(cache: Path) -> None:
    imports = [import_keras_seconds() for _ in range(3)]
    start = time.perf_counter()
    outcomes = runner.run_all(runner.Project(ROOT, cache=cache, committed=False))
    wall = time.perf_counter() - start
    imports += [import_keras_seconds() for _ in range(3)]
    bad = runner.failures(outcomes)
    if bad:
        sys.exit(str(runner.RunFailed(bad)))
    total = sum(o.seconds for o in outcomes)
    one_import = statistics.median(imports)
    ratio = total / one_import
    print(f"snippets run cold      {len(outcomes)}")
    print(f"sum of run times       {total:7.1f} s   (runner wall time {wall:.1f} s)")
    print(f"one `import keras`     {one_import:7.2f} s   (median of {len(imports)})")
    print(f"sum / import keras     {ratio:7.1f}     (target <= {TARGET_RATIO}: "
          f"{'met' if ratio <= TARGET_RATIO else 'MISSED'})")
    print("slowest ten:")
    for o in sorted(outcomes, key=lambda o: -o.seconds)[:10]:
        print(f"  {o.seconds:7.1f} s  {o.snippet.rel}")


def test_workers() -> int:
    """As the Makefile's TEST_WORKERS: one more than the cores, up to 4."""
    return min((os.cpu_count() or 1) + 1, 4)


def timeline_env(tmp: Path) -> dict[str, str]:
    """The variable that has tests/conftest.py record each test's span (tests/timeline.py)."""
    return {"TIMELINE_FILE": str(tmp / "timeline.jsonl")}


def print_timeline(tmp: Path) -> None:
    """Each test module: its worker, when it started and ended (seconds from the session's first
    test) and the time of its tests; a module's first test's setup holds the waits for the
    snippets and the site build."""
    path = tmp / "timeline.jsonl"
    if not path.is_file():
        print("no timeline (tests/conftest.py did not load tests/timeline.py)")
        return
    kept = Path(tempfile.gettempdir()) / "ci-time-timeline.jsonl"
    shutil.copyfile(path, kept)
    print(f"each test's span: {kept}")
    import json
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    lines = [x for x in lines if x["worker"] != "main"] or lines  # not pytest run by a test
    zero = min(x["start"] for x in lines)
    modules: dict[str, dict] = {}
    for x in lines:
        name = x["test"].split("::")[0]
        m = modules.setdefault(name, {"worker": x["worker"], "start": x["start"], "end": x["end"],
                                      "busy": 0.0, "cpu": 0.0, "tests": 0})
        m["start"], m["end"] = min(m["start"], x["start"]), max(m["end"], x["end"])
        m["busy"] += x["end"] - x["start"]
        m["cpu"] += x.get("cpu", 0.0)
        m["tests"] += 1
    print("test modules by start (worker, from, to, seconds of its tests, CPU seconds, tests):")
    for name, m in sorted(modules.items(), key=lambda kv: kv[1]["start"]):
        print(f"  {m['worker']:>4} {m['start'] - zero:6.0f} {m['end'] - zero:6.0f} "
              f"{m['busy']:7.1f} s {m['cpu']:7.1f} s {m['tests']:4d}  {name}")


def print_failures(stdout: str) -> None:
    for line in stdout.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            print(f"  {line}")
    if "= FAILURES =" in stdout:  # what each failure printed, in short
        failures = stdout.split("= FAILURES =", 1)[1].split("short test summary info")[0]
        print(failures[:12000])


def test_figures(tmp: Path) -> int:
    root = copy_project(tmp / "project")
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-m", "not gpu", "-q", "-p",
                           "no:cacheprovider", "-n", str(test_workers()), "--dist", "loadfile",
                           "--no-loadscope-reorder"], cwd=root, capture_output=True, text=True,
                          env={**os.environ, **timeline_env(tmp)})
    wall = time.perf_counter() - start
    print_timeline(tmp)
    print(f"pytest wall time       {wall:7.1f} s   (exit {proc.returncode}: "
          f"{proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else 'no output'})")
    print_cost_per_unit(root, wall, wall)
    print_failures(proc.stdout)
    return 0 if proc.returncode == 0 else 1


def content_units(root: Path) -> dict[str, int]:
    """What the suite's cost grows with: the reader pages (each source page of docs/, each
    language), and the listed threads (data/threads.yml), whose pasted lines the search tests
    try in both languages."""
    import yaml
    pages = [p for p in (root / "docs").rglob("*") if p.suffix in (".md", ".ipynb")
             and "diagrams" not in p.parts]
    threads = yaml.safe_load((root / "data" / "threads.yml").read_text(encoding="utf-8")) or []
    return {"reader page": len(pages), "listed thread": len(threads)}


def print_cost_per_unit(root: Path, tests_seconds: float, total_seconds: float) -> None:
    """Seconds per unit of content, so that a change that makes them grow shows in its run."""
    for what, n in content_units(root).items():
        if n:
            print(f"per {what + ' (' + str(n) + ')':26} {tests_seconds / n:6.1f} s of tests, "
                  f"{total_seconds / n:6.1f} s in all")


CI_LIMIT = 15 * 60  # seconds: CI must finish within 15 minutes
CI_TARGET = 12 * 60  # seconds: what issue 63 asks of a fresh clone, with room for more content


class Cores:
    """How busy the machine's cores were, sampled from /proc/stat every `every` seconds in a
    background thread: where CI's time is not CPU time (a wait, one core idle) it shows here."""

    def __init__(self, every: float = 5.0):
        import threading
        self.every, self.samples = every, []  # (time, busy cores over the last interval)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def _ticks() -> tuple[int, int]:
        with open("/proc/stat") as f:
            values = [int(v) for v in f.readline().split()[1:]]
        idle = values[3] + values[4]  # idle and iowait
        return sum(values[:8]) - idle, idle

    def _run(self) -> None:
        busy, idle = self._ticks()
        while not self._stop.wait(self.every):
            b, i = self._ticks()
            if b + i > busy + idle:
                self.samples.append((time.time(), (os.cpu_count() or 1) * (b - busy)
                                     / (b - busy + i - idle)))
            busy, idle = b, i

    def __enter__(self):
        if os.path.isfile("/proc/stat"):
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()

    def between(self, start: float, end: float) -> str:
        inside = [c for t, c in self.samples if start < t <= end]
        if not inside:
            return "cores not sampled"
        low = sum(c < (os.cpu_count() or 1) - 0.25 for c in inside) / len(inside)
        return (f"{sum(inside) / len(inside):.2f} of {os.cpu_count()} cores busy on average, "
                f"{low:.0%} of the time less than all")

    def by_minute(self, start: float) -> str:
        minutes: dict[int, list[float]] = {}
        for t, c in self.samples:
            if t > start:
                minutes.setdefault(int((t - start) // 60), []).append(c)
        return " ".join(f"{sum(v) / len(v):.1f}" for _, v in sorted(minutes.items()))
# What `make test` builds before it runs pytest (the Makefile's stamps).
SETUP_TARGETS = [".venv/.site-installed", ".venv/.test-installed", ".venv/.bytecode-compiled",
                 "node_modules/.package-lock.json"]


def clone_figures(tmp: Path) -> int:
    """.ci/run's work on a fresh clone, timed in parts. The package caches are empty folders
    under `tmp`, so every package is downloaded, as on a fresh machine. The snippets' part ends
    when the test session's snippet fixture (tests/conftest.py) writes snippets-ran.txt."""
    clone = tmp / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    # Only the set-up gets the empty caches: the tests run in the environment CI gives them.
    setup_env = {**env, "UV_CACHE_DIR": str(tmp / "uv-cache"), "PIP_NO_CACHE_DIR": "1",
                 "npm_config_cache": str(tmp / "npm-cache")}
    with Cores() as cores:
        start = time.time()
        setup = subprocess.run(["make", *SETUP_TARGETS], cwd=clone, env=setup_env,
                               capture_output=True, text=True)
        if setup.returncode:
            sys.exit(f"the set-up failed (exit {setup.returncode}):\n{setup.stderr[-3000:]}")
        tests_start = time.time()
        proc = subprocess.run(["make", "test"], cwd=clone,
                              env={**env, "CI": "true", **timeline_env(tmp)},
                              capture_output=True, text=True)
        end = time.time()
    # The session's own temporary folder (pytest's default, not one set here: tests run pytest
    # again, and a --basetemp they inherited would empty the session's folder).
    runs = Path(tempfile.gettempdir()) / f"pytest-of-{getpass.getuser()}"
    marks = [m.stat().st_mtime for m in runs.glob("pytest-*/snippets-ran.txt")
             if tests_start <= m.stat().st_mtime <= end]
    snippets_end = min(marks) if marks else None
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else "no output"
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone,
                          capture_output=True, text=True).stdout.strip()
    print(f"fresh clone of {head}, {os.cpu_count()} cores")
    print(f"set-up (venv, packages)    {tests_start - start:7.1f} s   "
          f"({cores.between(start, tests_start)})")
    if snippets_end:
        print(f"snippets, run first        {snippets_end - tests_start:7.1f} s")
        print(f"tests after them           {end - snippets_end:7.1f} s   "
              f"({cores.between(snippets_end, end)})")
    else:
        print(f"make test                  {end - tests_start:7.1f} s   (no snippet phase seen)")
    total = end - start
    print(f"total                      {total:7.1f} s   (target {CI_TARGET} s: "
          f"{'met' if total <= CI_TARGET else 'MISSED'}; limit {CI_LIMIT} s: "
          f"{'met' if total <= CI_LIMIT else 'MISSED'}; make test exit {proc.returncode}: {last})")
    print(f"busy cores, minute by minute: {cores.by_minute(start)}")
    # what the browser tests took from results/browser/ and made again (tests/site/committed.py)
    print(next((line for line in proc.stdout.splitlines() if line.startswith("browser runs:")),
               "browser runs: no line from pytest"))
    print_cost_per_unit(clone, end - (snippets_end or tests_start), total)
    print_timeline(tmp)
    print_failures(proc.stdout)
    return 0 if proc.returncode == 0 else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tests", action="store_true",
                    help="also run the test suite in a fresh copy and time each module")
    ap.add_argument("--clone", action="store_true",
                    help="CI on a fresh clone of HEAD, from empty package caches, in its parts")
    args = ap.parse_args(argv)
    if args.clone:
        with tempfile.TemporaryDirectory(prefix="ci-clone-") as tmp:
            return clone_figures(Path(tmp))
    with tempfile.TemporaryDirectory(prefix="ci-time-") as tmp:
        snippet_figures(Path(tmp) / "cache")
        status = test_figures(Path(tmp)) if args.tests else 0
        shutil.rmtree(tmp, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
