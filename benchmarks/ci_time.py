"""Where CI's time goes (a script that prints figures, not a test).

Runs every snippet cold (an empty cache in a temporary folder, through the site's runner, as a
fresh clone's first build does) and prints:
  - the sum of the snippets' run times, and the runner's wall time;
  - that sum divided by the time of one `import keras` measured in the same run (the median of
    3 before and 3 after the snippets): a ratio that survives a busy machine (target <= 60);
  - the ten slowest snippets.
With --tests it then runs the CPU test suite as `make test` does (`pytest -m "not gpu"`, one
worker per core up to 4) in a copy of the project with no cache, as a fresh clone's CI does,
and prints the time of each test module (its tests' setup, call and teardown, from pytest's
JUnit report; the site build counts in the first module that waits for it) and the suite's
wall time.

With --clone, instead, what CI itself does, in its parts: a fresh `git clone` of this
checkout's HEAD (committed work only), its set-up from empty package caches (the make targets
`make test` needs: .venv from the pinned requirements, the Node packages), then `make test`;
it prints the set-up, the snippets that run first, the tests after them and the total, against
CI's limit of 15 minutes, and the tests that failed, if any.

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
import xml.etree.ElementTree as ET
from collections import defaultdict
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
    outcomes = runner.run_all(runner.Project(ROOT, cache=cache))
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


def test_figures(tmp: Path) -> int:
    root = copy_project(tmp / "project")
    report = tmp / "junit.xml"
    start = time.perf_counter()
    workers = min(os.cpu_count() or 1, 4)  # as `make test` runs it
    proc = subprocess.run([sys.executable, "-m", "pytest", "-m", "not gpu", "-q", "-p",
                           "no:cacheprovider", "-n", str(workers), "--dist", "loadfile",
                           "--no-loadscope-reorder",
                           f"--junitxml={report}"], cwd=root, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if not report.is_file():
        sys.exit(f"pytest wrote no report (exit {proc.returncode}):\n{proc.stdout[-3000:]}")
    per_module: dict[str, float] = defaultdict(float)
    for case in ET.parse(report).iter("testcase"):
        module = case.get("classname", "?").split(".")[:2]
        per_module[".".join(module)] += float(case.get("time", 0))
    print("test modules (seconds, setup + call + teardown of their tests):")
    for module, seconds in sorted(per_module.items(), key=lambda kv: -kv[1]):
        print(f"  {seconds:7.1f} s  {module}")
    print(f"pytest wall time       {wall:7.1f} s   (exit {proc.returncode}: "
          f"{proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else 'no output'})")
    return 0 if proc.returncode == 0 else 1


CI_LIMIT = 15 * 60  # seconds: CI must finish within 15 minutes
# What `make test` builds before it runs pytest (the Makefile's stamps).
SETUP_TARGETS = [".venv/.site-installed", ".venv/.test-installed",
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
    start = time.time()
    setup = subprocess.run(["make", *SETUP_TARGETS], cwd=clone, env=setup_env,
                           capture_output=True, text=True)
    if setup.returncode:
        sys.exit(f"the set-up failed (exit {setup.returncode}):\n{setup.stderr[-3000:]}")
    tests_start = time.time()
    proc = subprocess.run(["make", "test"], cwd=clone, env={**env, "CI": "true"},
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
    print(f"set-up (venv, packages)    {tests_start - start:7.1f} s")
    if snippets_end:
        print(f"snippets, run first        {snippets_end - tests_start:7.1f} s")
        print(f"tests after them           {end - snippets_end:7.1f} s")
    else:
        print(f"make test                  {end - tests_start:7.1f} s   (no snippet phase seen)")
    total = end - start
    print(f"total                      {total:7.1f} s   (limit {CI_LIMIT} s: "
          f"{'met' if total <= CI_LIMIT else 'MISSED'}; make test exit {proc.returncode}: {last})")
    for line in proc.stdout.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            print(f"  {line}")
    if proc.returncode and "= FAILURES =" in proc.stdout:  # what each failure printed, in short
        failures = proc.stdout.split("= FAILURES =", 1)[1].split("short test summary info")[0]
        print(failures[:12000])
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
