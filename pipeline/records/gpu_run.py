"""One run on a GPU machine that leaves records to commit under results/<machine>/.

    python -m pipeline.gpu_run                  # every snippet and every GPU test, on this GPU
    python -m pipeline.gpu_run --machine lab-a100 --only benchmarks/cudnn_speedup_torch.py
    make gpu-run PYTHON=python3                 # a Python that already holds the frameworks
    python -m pipeline.gpu_run --dry-run        # no GPU needed: the plumbing, checked on a CPU
    python3 -m pipeline.gpu_run --wheels .whl --budget 480 --logs $OUT/logs --archive $OUT/records.tar.gz
                                                # a lent machine (CONTRIBUTING, GPU records)

Every snippet runs (one at a time: frameworks take most of the GPU's memory), with whatever
frameworks this Python has: one that dies importing a missing framework is skipped ("needs
TensorFlow"), not failed. Each success becomes a record as soon as it finishes (pipeline/
records.py), so an interrupted run keeps what it finished. Then the tests marked `gpu` run,
and results/<machine>/machine.json gets the machine's provenance and what the run did. Needs
nothing but the standard library (and pytest for the tests): no virtualenv, no network.

--dry-run checks the plumbing (records, machine.json, the archive a notebook packs) where no GPU
is: only DRY_RUN_SNIPPETS, two quick PyTorch snippets that run on a CPU, and no GPU tests. Its
records are labelled with the machine they ran on, as always (a CPU is named as a CPU), and
machine.json says "dry_run": true. They are not figures for results/.

A lent GPU machine (DEVELOPERS.md, GPU) has PyTorch and JAX but no Keras, no network, and
minutes: --wheels installs the carried wheels (pipeline/records/gpu_wheels.py) into a temporary folder
first; --budget SECONDS runs BUDGET_PLAN in that wall-clock time, leaving out the snippets
whose record for this machine is current (nothing to learn again): the plan's first benchmarks
alone, each told its share of the budget less the tests' slot (TESTS_SHARE of it) and stopped
soon after its share; then the GPU tests alone in that slot, the harness's own first; then the
shared snippets side by side; then the other C programs and benchmarks alone (runner.run_all's
deadline); what the budget leaves no time for is listed as not run. --logs DIR keeps every
program's output and the tests' in DIR (--archive packs them beside the records).
--archive PATH packs the machine's records as `make add-records` takes them, checked by that
same code, also when the run is interrupted.
"""
from __future__ import annotations

import argparse
import atexit
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

from pipeline.records import add_records, gpu_wheels, machine, store as records
from pipeline.running import device, runner
from pipeline.running.snippets import discover, SnippetError

DEFAULT_SCALE = 4  # BENCH_SCALE on a GPU: the CPU build's sizes are too small to mean much there
# --dry-run: quick snippets that run on a CPU (PyTorch only: a second or two each, no TensorFlow).
DRY_RUN_SNIPPETS = ("python/torch_cudnn.py", "troubleshooting/pytorch_cpu.py")
SUMMARY_WIDTH = 100
# A budgeted run (--budget): these snippets, in this order. First, alone, the measurements a lent
# machine is most wanted for (issue 53: how close an LSTM comes to the GPU's limit): cuDNN's
# algorithms and math types from C, then PyTorch, the alternatives, JAX and Keras as readers run
# them. Then the shared ones (neither C nor a benchmark) side by side with the GPU tests; then
# the others alone, one at a time: the C programs, the benchmarks that need TensorFlow
# (skipped at once where it is missing), then the benchmarks by what readers ask most. Every
# snippet that needs a GPU is here (a test checks it), and those that show a GPU's answer
# without needing one.
BUDGET_PLAN = (
    "c/rnn_limits.c", "benchmarks/rnn_limits_torch.py", "benchmarks/rnn_alternatives.py",
    "benchmarks/rnn_limits_jax.py", "benchmarks/rnn_limits_keras_torch.py",
    "criteria/pytorch/on_gpu.py", "troubleshooting/autocast_rnn_gpu.py",
    "criteria/torch_backend/on_gpu.py",
    "criteria/jax_backend/on_gpu.py", "criteria/jax_backend/mixed_precision_gpu.py",
    "criteria/tf_backend/on_gpu.py", "troubleshooting/pytorch_gpu.py",
    "troubleshooting/keras_stateful_torch.py", "troubleshooting/tf32_precision.py",
    "troubleshooting/determinism.py", "troubleshooting/longest_sequence.py",
    "troubleshooting/cuda_graph.py", "troubleshooting/long_sequence.py",
    "python/torch_cudnn.py", "python/frontend_graph.py", "python/ran_on_cudnn_torch.py",
    "python/ran_on_cudnn_jax.py", "python/ran_on_cudnn_tensorflow.py",
    "c/version.c", "c/lstm_train.c", "c/lstm_v8.c", "c/gru_v8.c", "c/conv_v7.c", "c/conv_graph.c",
    "benchmarks/cudnn_speedup_tf_keras.py", "benchmarks/cudnn_speedup_keras_tensorflow.py",
    "benchmarks/cudnn_speedup_torch.py", "benchmarks/cudnn_speedup_keras_torch.py",
    "benchmarks/cudnn_speedup_keras_jax.py", "benchmarks/packed_sequence.py",
    "benchmarks/torch_lstm_vs_cell_loop.py", "benchmarks/cpu_gpu_crossover.py",
)
# Shares of the benchmarks' time (1 where not named). The first five come first: at --budget
# 450 they get about 90, 90, 80, 35 and 35 s, and the shared snippets and tests what is left
# (tests/content/test_rnn_limits_py.py works it out); the old speed-up sweeps, last, fit their sizes
# to what remains, and Keras's generic loops are their slow half.
BUDGET_WEIGHTS = {"c/rnn_limits.c": 10.0, "benchmarks/rnn_limits_torch.py": 10.0,
                  "benchmarks/rnn_alternatives.py": 9.0, "benchmarks/rnn_limits_jax.py": 4.0,
                  "benchmarks/rnn_limits_keras_torch.py": 4.0,
                  "benchmarks/cudnn_speedup_torch.py": 2.0,
                  "benchmarks/cudnn_speedup_keras_torch.py": 3.0,
                  "benchmarks/cudnn_speedup_keras_jax.py": 3.0}
# Of the budget: the GPU tests' slot, alone after the first benchmarks (about 170 s at --budget
# 480: the GPU tests took 200-280 s when they ran the harness's programs again, 100 s less
# reading this run's records; gpu-preflight-2026-11-29)
TESTS_SHARE = 0.35
BUDGET_JOBS = 4  # shared snippets at once in a budgeted run (a lent machine has 16 cores)
# The frameworks share one GPU inside the test process: none may take all of its memory.
TEST_ENV = {"TF_FORCE_GPU_ALLOW_GROWTH": "true", "XLA_PYTHON_CLIENT_PREALLOCATE": "false",
            "TF_CPP_MIN_LOG_LEVEL": "2"}
_MISSING_IN_TRACE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")


class BadInput(Exception):
    pass


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# --- the GPU tests -------------------------------------------------------------------------------

# The GPU tests of the programs a lent machine is most wanted for run first: a slot cut short
# loses the others. They read this run's records of those programs (RUN_RECORDS: the machine's
# folder of records) instead of running them again.
FIRST_TESTS = ("test_rnn_limits.py", "test_rnn_limits_py.py")
RUN_RECORDS = "GPU_RUN_RECORDS"


def gpu_test_files(root: Path) -> list[Path]:
    """Test modules holding a test marked `gpu`, FIRST_TESTS first. Only those are collected:
    the others import tools (Playwright, MkDocs) a GPU machine need not have."""
    found = sorted(p for p in (root / "tests").rglob("test_*.py")
                   if "pytest.mark.gpu" in p.read_text(encoding="utf-8", errors="replace"))
    rank = {name: i for i, name in enumerate(FIRST_TESTS)}
    return sorted(found, key=lambda p: rank.get(p.name, len(rank)))


def _missing_framework(text: str) -> str | None:
    for name in reversed(_MISSING_IN_TRACE.findall(text or "")):
        framework = runner.FRAMEWORKS.get(name.split(".")[0])
        if framework:
            return framework
    return None


def _names_a_missing_framework(reason: str) -> bool:
    """"needs TensorFlow", "needs JAX: not installed", ...: the only skips a GPU run accepts."""
    names = sorted(set(runner.FRAMEWORKS.values()) | {"Keras 3"}, key=len, reverse=True)
    return re.match(r"needs (%s)($|[:,( ])" % "|".join(map(re.escape, names)), reason) is not None


def read_junit(path: Path) -> dict:
    """{"passed": n, "failed": {test: first line}, "skipped": {reason: [tests]}} from pytest's
    JUnit XML. A test module that cannot be imported for want of a framework is skipped with
    "needs <framework>"; any other error is a failure. So is a test skipped for any other
    reason: the GPU tests run on a GPU machine, where "needs a GPU" or "no GPU visible to
    PyTorch" means a broken install, not a pass."""
    summary: dict = {"passed": 0, "failed": {}, "skipped": defaultdict(list)}
    for case in ET.parse(path).getroot().iter("testcase"):
        name = "::".join(filter(None, (case.get("classname"), case.get("name"))))
        bad = case.find("failure") if case.find("failure") is not None else case.find("error")
        skip = case.find("skipped")
        if bad is not None:
            text = (bad.get("message") or "") + "\n" + (bad.text or "")
            framework = _missing_framework(text) if case.find("error") is not None else None
            if framework:
                summary["skipped"][f"needs {framework}"].append(name)
            else:
                lines = [ln for ln in (bad.get("message") or bad.text or "failed").splitlines()
                         if ln.strip()]
                summary["failed"][name] = lines[0][:300] if lines else "failed"
        elif skip is not None:
            reason = (skip.get("message") or "skipped").strip()
            reason = re.sub(r"^[^:]+\.py:\d+: ", "", reason)  # pytest prefixes file:line
            if _names_a_missing_framework(reason):
                summary["skipped"][reason].append(name)
            else:
                summary["failed"][name] = f"skipped on a GPU machine: {reason}"[:300]
        else:
            summary["passed"] += 1
    summary["skipped"] = dict(summary["skipped"])
    return summary


class GpuTests:
    """`pytest -m gpu` on the modules that hold GPU tests, in a child process started now;
    `finish()` waits for it (until `deadline`, time.monotonic(), if given: then pytest is
    interrupted, and what it finished is kept) and returns its summary."""

    def __init__(self, root: Path, python: str = sys.executable, workers: int = 0,
                 keep_log: Path | None = None, env: dict | None = None):
        self.root, self.proc, self.summary, self.keep_log = root, None, None, keep_log
        if importlib.util.find_spec("pytest") is None:
            self.summary = {"not_run": "pytest is not installed for this Python"}
            return
        files = gpu_test_files(root)
        if not files:
            self.summary = {"not_run": "no test is marked gpu"}
            return
        self.tmp = tempfile.TemporaryDirectory(prefix="gpu-tests-")
        self.junit = Path(self.tmp.name) / "junit.xml"
        self.log = open(Path(self.tmp.name) / "log", "w+")
        parallel = ["-n", str(workers)] if workers and importlib.util.find_spec("xdist") else []
        cmd = [python, "-m", "pytest", "-m", "gpu", "-p", "no:cacheprovider", "-q",
               *parallel, "--continue-on-collection-errors", f"--junitxml={self.junit}",
               *(str(p.relative_to(root)) for p in files)]
        self.proc = subprocess.Popen(cmd, cwd=root, stdout=self.log, stderr=subprocess.STDOUT,
                                     text=True, env={**os.environ, **TEST_ENV, **(env or {})},
                                     start_new_session=True)

    def finish(self, deadline: float | None = None) -> dict:
        if self.summary is not None:
            return self.summary
        stopped = False
        try:
            self.proc.wait(timeout=None if deadline is None
                           else max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:  # out of time: pytest writes what it finished
            stopped = True
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.seek(0)
        output = self.log.read()
        self.log.close()
        if self.keep_log:
            self.keep_log.parent.mkdir(parents=True, exist_ok=True)
            self.keep_log.write_text(output, encoding="utf-8")
        if self.junit.is_file() and not (stopped and "no tests ran" in output):
            self.summary = read_junit(self.junit)
            self.summary["returncode"] = self.proc.returncode
            if stopped:
                self.summary["stopped"] = "interrupted at the end of the tests' time budget"
        else:
            tail = output.strip().splitlines()[-1:] or ["no output"]
            # pytest's last line may be a progress line ("...  [ 40%]"): machine.json's text
            # is shown on pages, where add_records refuses markup
            said = add_records.MARKUP.sub("", tail[0]).strip()[:200] or "no output"
            self.summary = {"not_run": (f"stopped at the end of the tests' time budget: "
                                        if stopped else f"pytest exited {self.proc.returncode}: ")
                            + said}
        self.tmp.cleanup()
        return self.summary


# --- the run ---------------------------------------------------------------------------------------

def _wrap(label: str, names: list[str], limit: int = 3) -> list[str]:
    text = f"{label} ({len(names)}): " + ", ".join(names)
    lines = textwrap.wrap(text, SUMMARY_WIDTH, subsequent_indent="      ")
    if len(lines) > limit:
        lines = lines[:limit]
        lines[-1] += " …"
    return ["  " + line for line in lines]


def summary_lines(state: dict, where: str) -> list[str]:
    """The one-screen summary: what ran, what was skipped and why, what failed, where."""
    run, p = state["run"], state["provenance"]
    facts = [f"driver {p['driver']}" if p.get("driver") else "",
             f"CUDA {p['cuda_driver_supports']}" if p.get("cuda_driver_supports") else "",
             f"cuDNN {p['torch_cudnn']} (PyTorch)" if p.get("torch_cudnn") else ""]
    lines = [f"Run on {p['machine']}" + (f" ({', '.join(filter(None, facts))})"
                                         if any(facts) else "")]
    recorded = run["recorded"]
    lines.append(f"snippets: {len(recorded)} recorded, {len(run['skipped'])} skipped, "
                 f"{len(run['failed'])} failed")
    by_reason = defaultdict(list)
    for rel, reason in run["skipped"].items():
        by_reason[reason].append(rel)
    for reason, rels in sorted(by_reason.items()):
        lines += _wrap(f"skipped, {reason}", rels)
    for rel, problem in run["failed"].items():
        lines.append(f"  FAILED {rel}: {problem}")
    if run.get("not_run"):
        lines += _wrap("not run, the time budget was spent", list(run["not_run"]))
    tests = run.get("gpu_tests") or {}
    if "not_run" in tests:
        lines.append(f"GPU tests: not run: {tests['not_run']}")
    elif tests:
        skipped = tests["skipped"]
        lines.append(f"GPU tests: {tests['passed']} passed, {len(tests['failed'])} failed, "
                     f"{sum(map(len, skipped.values()))} skipped")
        for reason, names in sorted(skipped.items()):
            lines += _wrap(f"skipped, {reason}", [n.rsplit('::', 1)[-1] for n in names], 1)
        for name, why in list(tests["failed"].items())[:8]:
            lines.append(f"  FAILED {name}: {why[:SUMMARY_WIDTH]}")
        if tests.get("stopped"):
            lines.append(f"  {tests['stopped']}")
    n = len(recorded)
    if run.get("dry_run"):
        lines.append(f"DRY RUN (--dry-run): {where}/ holds {n} record{'' if n == 1 else 's'} of "
                     "quick snippets on this machine, to check the plumbing; not GPU figures")
    else:
        lines.append(f"records: {where}/ (machine.json and {n} snippet{'' if n == 1 else 's'}): "
                     f"commit them with `git add {where}`")
    return lines


def _carry_over(folder: Path, run: dict, only: list[str]) -> None:
    """A run of some snippets (--only) on a machine with records: what the machine's last run
    said of the others stays in machine.json (its records stay in the folder anyway), and so
    do its GPU tests' results unless this run has its own."""
    try:
        earlier = json.loads((folder / records.MACHINE_FILE).read_text(encoding="utf-8"))["run"]
    except (OSError, ValueError, KeyError, TypeError):
        return
    run["recorded"] += [r for r in earlier.get("recorded", []) if r not in only]
    for key in ("skipped", "failed", "not_run"):
        kept = {r: why for r, why in (earlier.get(key) or {}).items() if r not in only}
        run.setdefault(key, {}).update(kept)
    run["carried_over_from"] = earlier.get("carried_over_from") or earlier.get("started_at")
    run["earlier_gpu_tests"] = earlier.get("gpu_tests")


def write_log(logs: Path, o: runner.Outcome) -> Path:
    """A program's output as LOGS/<snippet>.log: its status, then stdout, then stderr."""
    path = logs / f"{o.snippet.rel}.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{o.snippet.rel}: {o.status} in {o.seconds:.1f} s, exit {o.returncode}"
                    + (f" ({o.problem})" if o.problem else "") + "\n--- stdout ---\n"
                    + o.stdout + "\n--- stderr ---\n" + o.stderr, encoding="utf-8")
    return path


def current_here(results: Path, slug: str, snippets: Path, wanted: list[str],
                 packages: dict, scale: int) -> set[str]:
    """The snippets of `wanted` whose record on this machine was made by their current code,
    with the same packages and benchmark scale: a budgeted run leaves them out (a lent
    machine's minutes go to what it has not answered yet)."""
    try:
        machines = records.load_all(results, snippets)
    except records.RecordError:
        return set()  # damaged records: run everything, the new records replace them
    return {r.snippet for m in machines if m.slug == slug
            and (m.data.get("run") or {}).get("bench_scale") == scale for r in m.records
            if not r.stale and r.snippet in wanted
            and r.data["provenance"].get("packages") == packages}


def record_run(project: runner.Project, results: Path, *, machine_name: str | None = None,
               only: list[str] | None = None, tests: bool = True, jobs: int = 1,
               log=print, state: dict | None = None, dry_run: bool = False,
               budget: float | None = None,
               tests_share: float = None, tests_log: Path | None = None,
               logs: Path | None = None) -> tuple[int, dict]:
    """Run, record, test: the GPU run, and benchmarks/run_benchmarks.py on any machine.
    Returns (exit status, the machine.json written); `state` is filled as the run goes, for a
    caller that is interrupted. `budget` (seconds): a budgeted run (the module's docstring)."""
    started = time.monotonic()
    deadline = started + budget if budget else None
    tests_share = TESTS_SHARE if tests_share is None else tests_share
    if logs is not None and tests_log is None:
        tests_log = logs / "gpu-tests.log"
    prov = machine.provenance()
    slug = records.machine_slug(machine_name or prov["machine"])
    state = state if state is not None else {}
    state.update(slug=slug, provenance=prov,
                 run={"started_at": _now(), "finished_at": None,
                      "bench_scale": int(os.environ.get("BENCH_SCALE", "1")),
                      "recorded": [], "skipped": {}, "failed": {}, "gpu_tests": None})
    if budget:
        state["run"].update(budget_seconds=budget, not_run={})
    if budget and only is not None and not dry_run:
        current = current_here(results, slug, project.snippets, only, prov.get("packages"),
                               state["run"]["bench_scale"])
        if current:  # their records stay, and machine.json keeps what it said of them
            only = [rel for rel in only if rel not in current]
            state["run"]["current_kept"] = sorted(current)
            log(f"{len(current)} snippet(s) with a current record for this machine are left "
                f"out of the budget: {', '.join(sorted(current))}")
    if only is not None and not dry_run:
        _carry_over(results / slug, state["run"], only)
    if dry_run:
        state["run"]["dry_run"] = True
    records.write_machine(results, slug, state)
    where = (results / slug).relative_to(project.root).as_posix() \
        if (results / slug).is_relative_to(project.root) else str(results / slug)
    log(f"Run on {prov['machine']}: records go to {where}/")

    def done(o: runner.Outcome) -> None:
        run = state["run"]
        if logs is not None and o.executed:  # what it printed, whatever became of it
            write_log(logs, o)
        if o.status == runner.OK:
            source = records.source_hash(o.snippet, project.snippets)
            if not records.already(results, slug, o.snippet.rel, o.finished_at, source):
                records.write(results, slug, Path(o.data_dir).parent, source, prov)
            run["recorded"].append(o.snippet.rel)
        elif o.status in (runner.SKIPPED, runner.NEEDS_GPU):  # the latter on a CPU only
            run["skipped"][o.snippet.rel] = o.problem or "needs a GPU"
        elif o.status == runner.NOT_RUN and o.problem == runner.BUDGET_SPENT:
            run["not_run"][o.snippet.rel] = o.problem
        else:
            run["failed"][o.snippet.rel] = o.problem
        records.write_machine(results, slug, state)
        how = "ran" if o.executed else "cached"
        log(f"{o.status:8} {how:6} {o.seconds:7.1f}s  {o.snippet.rel}"
            + (f"  ({o.problem})" if o.problem else ""))
        if o.status not in (runner.OK, runner.SKIPPED) and o.stderr_tail():
            log("    " + o.stderr_tail().replace("\n", "\n    "))

    if deadline is None:
        runner.run_all(project, only=only, jobs=jobs, skip_missing=True, on_done=done,
                       keep_failed=logs)
        if tests:
            log("GPU tests (pytest -m gpu) ...")
            state["run"]["gpu_tests"] = GpuTests(project.root, keep_log=tests_log).finish()
    else:  # the GPU tests alone, in the slot the plan's first benchmarks leave them
        # The plan's first benchmarks (runner.run_all: those that come before every shared
        # snippet) have the GPU to themselves, their shares computed over the budget less the
        # tests' slot (tests_share of it); then the GPU tests run alone in that slot (the
        # harness's own first, gpu_test_files), reading this run's records of the programs they
        # check rather than running them again; then the shared snippets, then the rest alone.
        # One pytest process: on a lent H200 (2026-11-26), pytest-xdist's workers started and
        # never ran a test in 239 s, while the snippets ran beside them.
        slot = tests_share * budget if tests else 0.0

        def run_tests() -> None:
            if not tests:
                return
            left = deadline - time.monotonic()
            if left < runner.MIN_SECONDS_LEFT:
                state["run"]["gpu_tests"] = {"not_run": "the time budget was spent"}
                return
            stop = time.monotonic() + min(max(slot, runner.MIN_SECONDS_LEFT), left)
            log(f"GPU tests (pytest -m gpu) alone; they stop within "
                f"{stop - time.monotonic():.0f} s")
            state["run"]["gpu_tests"] = GpuTests(
                project.root, keep_log=tests_log,
                env={RUN_RECORDS: str(results / slug)}).finish(stop)
            t = state["run"]["gpu_tests"]
            log(f"GPU tests: {t.get('not_run') or str(t['passed']) + ' passed, ' + str(len(t['failed'])) + ' failed'}"
                f" ({time.monotonic() - started:.0f} s into the run)")
            records.write_machine(results, slug, state)

        def alone_from_now() -> None:
            log(f"alone from now on: C programs and benchmarks "
                f"({deadline - time.monotonic():.0f} s of the budget left)")

        runner.run_all(project, only=only, jobs=jobs, skip_missing=True, on_done=done,
                       progress=log, deadline=deadline, weights=BUDGET_WEIGHTS,
                       before_alone=alone_from_now, before_shared=run_tests, reserve=slot,
                       keep_failed=logs)
    if state["run"]["gpu_tests"] is None and state["run"].get("earlier_gpu_tests"):
        state["run"]["gpu_tests"] = state["run"]["earlier_gpu_tests"]
    state["run"].pop("earlier_gpu_tests", None)
    state["run"]["finished_at"] = _now()
    records.write_machine(results, slug, state)
    log("")
    for line in summary_lines(state, where):
        log(line)
    t = state["run"]["gpu_tests"] or {}
    return (1 if state["run"]["failed"] or t.get("failed") else 0), state


def pack(project: runner.Project, results: Path, slug: str, archive: Path, dry_run: bool,
         logs: Path | None = None) -> str:
    """The machine's records (and the run's logs) as one archive, checked by `make
    add-records`'s own code into a throw-away folder; the line to print."""
    add_records.pack(results / slug, archive, logs)
    with tempfile.TemporaryDirectory(prefix="check-archive-") as scratch:
        add_records.add(archive, project.root, results=Path(scratch) / "results",
                        allow_dry_run=dry_run)
    return (f"archive: {archive} ({archive.stat().st_size} bytes), checked as "
            f"`make add-records FILE={archive.name}` checks it")


# Settings the tests use to run benchmarks small or on the CPU: their figures are not records.
TEST_SETTINGS = {"BENCH_QUICK": "too few repetitions", "BENCH_CPU_DRY_RUN": "a dry run on the CPU"}


def refuse_test_settings() -> None:
    for name, what in TEST_SETTINGS.items():
        if os.environ.get(name, "") not in ("", "0"):
            raise BadInput(f"{name} is set ({what}): such results are not for results/; unset it")


def positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a positive whole number, got {text!r}")
    return int(text)


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one clear line, exit 2
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(2)


def main(argv: list[str] | None = None) -> int:
    ap = Parser(prog="gpu_run", description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=Path("."), help="the project folder")
    ap.add_argument("--results", type=Path, help="where records go (default: ROOT/results)")
    ap.add_argument("--machine", help="the machine's folder name (default: from the GPU's name)")
    ap.add_argument("--only", nargs="+", metavar="SNIPPET", help="only these (relative to snippets/)")
    ap.add_argument("--no-tests", action="store_true", help="do not run the GPU tests")
    ap.add_argument("--scale", type=positive_int, default=None,
                    help=f"BENCH_SCALE for the benchmarks (default {DEFAULT_SCALE})")
    ap.add_argument("--jobs", type=positive_int, default=None,
                    help="snippets at once (default 1; 2 in a dry run)")
    ap.add_argument("--budget", type=positive_int, metavar="SECONDS",
                    help="a lent machine's run: BUDGET_PLAN (or --only) within this wall-clock "
                         "time: the leading measurements, the GPU tests alone, the shared "
                         "snippets, the rest alone; snippets with a current record left out")
    ap.add_argument("--tests-share", type=float, default=TESTS_SHARE, metavar="FRACTION",
                    help=f"of --budget, the GPU tests' slot, alone after the leading "
                         f"measurements (default {TESTS_SHARE})")
    ap.add_argument("--tests-log", type=Path, metavar="PATH",
                    help="with --budget: keep the GPU tests' pytest output in PATH")
    ap.add_argument("--logs", type=Path, metavar="DIR",
                    help="keep each program's output and the GPU tests' in DIR (with "
                         "--archive, a folder of its own is made and packed: MACHINE/logs/)")
    ap.add_argument("--wheels", type=Path, metavar="DIR",
                    help="install the carried wheels in DIR first (python -m "
                         "pipeline.gpu_wheels download DIR makes them)")
    ap.add_argument("--archive", type=Path, metavar="PATH",
                    help="pack the machine's records into PATH (.tar.gz), checked as "
                         "make add-records checks it")
    ap.add_argument("--dry-run", action="store_true",
                    help="no GPU needed: only a few quick snippets (or --only), no GPU tests, "
                         "records labelled with this machine; checks the plumbing")
    args = ap.parse_args(argv)
    project = runner.Project(args.root)
    results = (args.results or project.root / "results").resolve()
    try:
        refuse_test_settings()
        if results.exists() and not results.is_dir():
            raise BadInput(f"--results {results} is not a folder")
        if args.machine is not None:
            records.machine_slug(args.machine)
        known = {s.rel for s in discover(project.snippets)}
        only = args.only or (list(DRY_RUN_SNIPPETS) if args.dry_run
                             else list(BUDGET_PLAN) if args.budget else None)
        if not 0 < args.tests_share <= 1:
            raise BadInput(f"--tests-share must be above 0 and at most 1, got {args.tests_share}")
        if args.archive is not None and not args.archive.name.endswith(".tar.gz"):
            raise BadInput(f"--archive {args.archive}: the name must end in .tar.gz")
        unknown = [rel for rel in only or [] if rel not in known]
        if unknown:
            raise BadInput(f"no such snippet: {', '.join(unknown)}")
        scale = args.scale or os.environ.get("BENCH_SCALE") or str(1 if args.dry_run
                                                                   else DEFAULT_SCALE)
        if not str(scale).isdigit() or int(scale) < 1:
            raise BadInput(f"BENCH_SCALE must be a positive whole number, got {scale!r}")
        if not args.dry_run and not device.has_gpu():
            raise BadInput("no CUDA GPU visible (nvidia-smi finds none): a GPU run needs one. "
                           "For this machine's benchmark figures: "
                           "python benchmarks/run_benchmarks.py (or --dry-run to check the "
                           "plumbing)")
        if args.wheels is not None:
            target = Path(tempfile.mkdtemp(prefix="gpu-wheels-"))
            # Only this run uses them (and its cache of their outputs): gone when it ends.
            atexit.register(shutil.rmtree, target, ignore_errors=True)
            gpu_wheels.install(args.wheels, target)
            # For this process (its provenance reads the packages) and every child it starts.
            sys.path.insert(0, str(target))
            os.environ["PYTHONPATH"] = os.pathsep.join(
                filter(None, [str(target), os.environ.get("PYTHONPATH")]))
            # Outputs made with the carried packages are not this checkout's: a cache of their
            # own (the lent machine's is empty anyway; a dry run here must run, not reuse).
            project.cache = target / ".snippet-cache"
    except (BadInput, records.RecordError, SnippetError, gpu_wheels.WheelError) as e:
        print(f"gpu_run: error: {e}", file=sys.stderr)
        return 2
    os.environ["BENCH_SCALE"] = str(scale)  # part of every cache key, and in each benchmark's data
    if args.budget:  # snippets share the GPU with each other and the tests: none takes it all
        os.environ.update(TEST_ENV)
    # A cancelled CI job sends SIGTERM: stop like Ctrl-C, so that the running snippet is killed
    # too and the records already written stay as they are.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    state: dict = {}
    logs = args.logs
    if logs is None and args.archive is not None:
        logs = Path(tempfile.mkdtemp(prefix="gpu-run-logs-"))
        atexit.register(shutil.rmtree, logs, ignore_errors=True)
    try:
        status, _ = record_run(project, results, machine_name=args.machine, only=only,
                               tests=not (args.no_tests or args.dry_run),
                               jobs=args.jobs or (2 if args.dry_run else
                                                  BUDGET_JOBS if args.budget else 1),
                               state=state, dry_run=args.dry_run, budget=args.budget,
                               tests_share=args.tests_share, tests_log=args.tests_log,
                               logs=logs)
    except KeyboardInterrupt:
        done = len(state.get("run", {}).get("recorded", []))
        where = results / state["slug"] if "slug" in state else results
        shown = where.relative_to(project.root) if where.is_relative_to(project.root) else where
        print(f"gpu_run: interrupted; {done} record(s) kept in {shown}/", file=sys.stderr)
        status = 130
    if args.archive is not None and state.get("slug"):
        try:
            print(pack(project, results, state["slug"], args.archive, args.dry_run, logs))
        except add_records.BadArchive as e:
            print(f"gpu_run: error: the archive does not pass make add-records: {e}",
                  file=sys.stderr)
            return 2
    return status


if __name__ == "__main__":
    sys.exit(main())
