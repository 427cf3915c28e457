"""Run every stale snippet in its own process (forked from a warm zygote where it can be:
pipeline/running/warm.py), with a timeout, and cache what succeeded.

    python -m pipeline.runner            # run what is stale, print a summary
    python -m pipeline.runner --no-execute   # only report what is cached

One failure does not stop the others; the run fails at the end naming every failed snippet.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from pipeline.running import device as device_mod, program as program_mod, sandbox, warm
from pipeline.running.cache import Cache, key_for, OUTPUTS_DIR
from pipeline.running.files import write_atomic
from pipeline.running.snippets import discover, Snippet, SnippetError

NEEDS_GPU_EXIT = 77  # a snippet that needs a GPU and finds none exits with this code
OUTPUT_CAP = 256 * 1024  # bytes of stdout/stderr kept per run
STDERR_TAIL_LINES = 15

OK, NEEDS_GPU, FAILED, TIMEOUT, NOT_RUN = "ok", "needs-gpu", "failed", "timeout", "not-run"
SKIPPED = "skipped"  # only in a run that allows missing frameworks (a GPU run): "needs TensorFlow"
GOOD = (OK, NEEDS_GPU)

# Modules whose absence means "this machine lacks that framework", not "the snippet is broken".
# A GPU machine often has PyTorch and JAX but no TensorFlow; a GPU run skips what it cannot run.
FRAMEWORKS = {"tensorflow": "TensorFlow", "tf_keras": "tf-keras", "keras": "Keras",
              "jax": "JAX", "jaxlib": "JAX", "torch": "PyTorch",
              "cudnn": "cudnn-frontend (nvidia-cudnn-frontend)"}
_MISSING = re.compile(r"^ModuleNotFoundError: No module named '([\w.]+)'$")


@dataclass
class Outcome:
    snippet: Snippet
    status: str
    stdout: str = ""
    stderr: str = ""
    returncode: int | None = None
    seconds: float = 0.0
    executed: bool = False  # False when the result came from the cache
    finished_at: str = ""
    device: str = ""
    data_dir: str | None = None
    problem: str = ""  # one line saying what went wrong
    program_sha256: str = ""  # of the program that ran (Python): what the copy button copies
    committed: bool = False  # the cache took it from the committed outputs (results/outputs/)

    def stderr_tail(self) -> str:
        return "\n".join(self.stderr.rstrip().splitlines()[-STDERR_TAIL_LINES:])


class RunFailed(Exception):
    def __init__(self, failures: list[Outcome]):
        self.failures = failures
        parts = [f"{len(failures)} snippet(s) failed:"]
        for o in failures:
            parts.append(f"- {o.snippet.rel}: {o.problem}")
            tail = o.stderr_tail()
            if tail:
                parts.append("  " + tail.replace("\n", "\n  "))
        super().__init__("\n".join(parts))


@dataclass
class Project:
    """Where things are. Defaults follow the repository layout."""
    root: Path
    snippets: Path = field(default=None)  # type: ignore[assignment]
    cache: Path = field(default=None)  # type: ignore[assignment]
    requirements: list[Path] = field(default_factory=list)
    python: str = ""  # the interpreter that runs Python snippets (the version matrix: a cell's)
    # Take a run from the committed outputs (results/outputs/, pipeline/records/outputs.py) when
    # it was made from exactly the same key; SNIPPETS_COMMITTED=0 turns it off (everything runs).
    committed: bool = True

    @property
    def outputs(self) -> Path:
        return self.root / "results" / OUTPUTS_DIR

    def __post_init__(self):
        self.python = self.python or sys.executable
        self.root = Path(self.root).resolve()
        self.snippets = Path(self.snippets or self.root / "snippets").resolve()
        self.cache = Path(self.cache or self.root / ".cache").resolve()
        if not self.requirements:
            self.requirements = sorted(self.root.glob("requirements*.txt"))


def _read_capped(path: Path) -> str:
    with open(path, "rb") as f:
        data = f.read(OUTPUT_CAP + 1)
        rest = os.fstat(f.fileno()).st_size - OUTPUT_CAP
    text = data[:OUTPUT_CAP].decode("utf-8", errors="replace")
    if rest > 0:
        text += f"\n[output truncated: {rest} more bytes]\n"
    return text


def _run_process(cmd: list[str], cwd: Path, env: dict, timeout: float, log_prefix: Path):
    """Run cmd in its own process group; returns (returncode or None on timeout, stdout, stderr)."""
    out_path, err_path = log_prefix.with_suffix(".out"), log_prefix.with_suffix(".err")
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the whole group: TF spawns threads, make spawns children
            proc.wait()
            rc = None
        except BaseException:  # Ctrl-C or a kill of the build: the snippet must not run on
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
    stdout, stderr = _read_capped(out_path), _read_capped(err_path)
    out_path.unlink(), err_path.unlink()
    return rc, stdout, stderr


def _command(snippet: Snippet, work: Path, env: dict, timeout: float, python: str):
    """The command that runs the snippet. A Python snippet runs as the program a reader copies
    (pipeline/running/program.py: its helpers written out), saved in its work folder under the
    snippet's name, as a reader saves it in an empty folder. C files are built first by their
    folder's Makefile, told which Python runs the build (the one whose packages hold cuDNN's
    wheels, if any)."""
    if snippet.kind == "py":
        (work / snippet.path.name).write_text(program_mod.for_snippet(snippet).text,
                                              encoding="utf-8")
        return [python, snippet.path.name], None
    build = work / "build"
    build.mkdir()
    binary = build / snippet.path.stem
    rc, out, err = _run_process(
        ["make", "--no-print-directory", "-s", "-C", str(snippet.path.parent),
         f"BUILD_DIR={build}", f"PYTHON={python}", str(binary)],
        work, env, timeout, work / "make")
    if rc != 0:
        return None, (rc, out, err)
    return [str(binary)], None


def missing_framework(stderr: str) -> str | None:
    """The framework whose import ended the process ("TensorFlow"), or None. Only the last line
    counts: the process died of it, it did not catch it and carry on."""
    lines = stderr.strip().splitlines()
    m = _MISSING.match(lines[-1].strip()) if lines else None
    return FRAMEWORKS.get(m.group(1).split(".")[0]) if m else None


def classify(snippet: Snippet, rc: int | None, device: str, stderr: str = "",
             skip_missing: bool = False) -> tuple[str, str]:
    """Turn an exit code into a status and, for a failure or a skip, a one-line reason.
    With `skip_missing` (a GPU run), dying of a missing framework is a skip, not a failure."""
    on_gpu = device != "CPU"
    if rc is None:
        return TIMEOUT, f"killed after its {snippet.timeout:g} s timeout"
    if rc == NEEDS_GPU_EXIT:
        if not snippet.needs_gpu:
            return FAILED, "exited 77 (needs a GPU) but does not declare `needs=gpu`"
        if on_gpu:
            return FAILED, f"exited 77 (needs a GPU) on a GPU machine ({device})"
        return NEEDS_GPU, ""
    if rc != 0:
        framework = missing_framework(stderr) if skip_missing else None
        if framework:
            return SKIPPED, f"needs {framework}"
        return FAILED, f"exit status {rc}"
    if snippet.needs_gpu and not on_gpu:
        return FAILED, "declares needs=gpu but exited 0 without a GPU (it must exit 77)"
    return OK, ""


def execute(snippet: Snippet, cache: Cache, key: str, device: str, root: Path,
            skip_missing: bool = False, python: str | None = None,
            timeout: float | None = None, extra_env: dict | None = None,
            requirements: list[Path] | None = None, keep_failed: Path | None = None,
            warm_pool: warm.WarmPool | None = None) -> Outcome:
    """Run one snippet: forked from its group's zygote when `warm_pool` is given and it has a
    warm beginning (pipeline/running/warm.py), else in a fresh Python. A warm run is never the
    judge of a failure: a snippet that does not succeed there runs again in a fresh Python, and
    that run is its result."""
    if warm_pool is not None and snippet.kind == "py" and not snippet.fresh \
            and not snippet.exclusive:
        outcome = _execute(snippet, cache, key, device, root, skip_missing, python, timeout,
                           extra_env, requirements, keep_failed, warm_pool)
        if outcome is not None and outcome.status in GOOD:
            return outcome
    return _execute(snippet, cache, key, device, root, skip_missing, python, timeout,
                    extra_env, requirements, keep_failed, None)


def _execute(snippet: Snippet, cache: Cache, key: str, device: str, root: Path,
             skip_missing: bool, python: str | None, timeout: float | None,
             extra_env: dict | None, requirements: list[Path] | None,
             keep_failed: Path | None, warm_pool: warm.WarmPool | None) -> Outcome | None:
    """Run one snippet; None when `warm_pool` is given and the snippet has no usable warm
    beginning. `timeout` (shorter than its own, from a run's time budget) and
    `extra_env` come from a budgeted run (run_all's `deadline`). `keep_failed`: the data a
    snippet wrote before it failed or was stopped is copied to KEEP_FAILED/<snippet>/ (a lent
    GPU's partial measurements, brought back with its logs; never a record). With `requirements` (the
    project's, as `key` was made from them), a result is stored only if the snippet still has
    that key once it has run: a writer who edits it (or a helper) while it runs, under `make
    serve`, must not find the program that ran filed under the key of the text they left."""
    work = cache.new_workdir()
    timeout = min(snippet.timeout, timeout) if timeout else snippet.timeout
    # A snippet writes only inside `work` (see pipeline/sandbox): Python ones are stopped at
    # the write; for C ones (make, the program) the project tree is compared before and after.
    env = sandbox.environment(work, dict(os.environ, SNIPPET_DATA_DIR=str(work / "data"),
                                         PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1",
                                         **(extra_env or {})))
    before = sandbox.snapshot(root) if snippet.kind != "py" else None
    started = time.perf_counter()
    cmd, build_failure = _command(snippet, work, env, timeout, python or sys.executable)
    if build_failure:
        rc, stdout, stderr = build_failure
        status, problem = FAILED, f"build failed (make exit {rc})"
    else:
        if warm_pool is not None:
            ran = warm_pool.run(python or sys.executable, (work / cmd[1]).read_text("utf-8"),
                                cmd[1], work, env, timeout, work / "run")
            if ran is None:  # no warm beginning, or its zygote cannot be used
                cache.discard(work)
                return None
            rc, out_path, err_path = ran
            stdout, stderr = _read_capped(out_path), _read_capped(err_path)
            out_path.unlink(), err_path.unlink()
        else:
            rc, stdout, stderr = _run_process(cmd, work, env, timeout, work / "run")
        status, problem = classify(snippet, rc, device, stderr, skip_missing)
        if status == TIMEOUT and timeout < snippet.timeout:
            problem = f"stopped after {timeout:.0f} s, at the end of the run's time budget"
    seconds = time.perf_counter() - started
    outside = sandbox.outside_writes(work)
    if before is not None:
        outside += sandbox.changed(before, sandbox.snapshot(root))
    if outside:  # whatever the exit status: a refused write the snippet caught counts too
        more = f" (and {len(outside) - 1} more)" if len(outside) > 1 else ""
        status, problem = FAILED, f"wrote outside its folder: {outside[0]}{more}"
    for scratch in ("home", "tmp"):  # not part of the result
        shutil.rmtree(work / scratch, ignore_errors=True)
    ran = work / snippet.path.name if snippet.kind == "py" else None
    outcome = Outcome(snippet, status, stdout, stderr, rc, seconds, True,
                      datetime.now(timezone.utc).isoformat(timespec="seconds"), device,
                      problem=problem, program_sha256=program_mod.sha256(ran.read_bytes())
                      if ran and ran.is_file() else "")
    try:
        changed = requirements is not None and key_for(snippet, requirements, device) != key
    except OSError:  # removed while it ran
        changed = True
    if status in GOOD and not changed:  # a result is stored only on success, for what ran
        final = cache.store(key, work, {
            "snippet": snippet.rel, "status": status, "stdout": stdout, "stderr": stderr,
            "returncode": rc, "seconds": seconds, "finished_at": outcome.finished_at,
            "device": device, **({"program": ran.name, "program_sha256": outcome.program_sha256}
                                 if ran else {}),
        })
        outcome.data_dir = str(final / "data")
    else:
        kept = work / "data"
        if keep_failed is not None and kept.is_dir() and any(kept.iterdir()):
            shutil.copytree(kept, keep_failed / f"{snippet.rel}.data", dirs_exist_ok=True)
        cache.discard(work)
    return outcome


def from_cache(snippet: Snippet, result: dict) -> Outcome:
    return Outcome(snippet, result["status"], result["stdout"], result["stderr"],
                   result["returncode"], result["seconds"], False, result["finished_at"],
                   result["device"], result["data_dir"],
                   program_sha256=result.get("program_sha256", ""),
                   committed=bool(result.get("committed")))


class Progress:
    """One line when a stale snippet starts and one when it ends, with how many of the stale
    ones are done and the time so far, as sphinx-gallery does: a first build runs for minutes,
    and its reader sees what is running.

        snippets: 42 to run, 37 from the cache (30 of them from the committed outputs)
        snippets: [ 3/42] 0:21 running criteria/jax_backend/masking.py
        snippets: [ 3/42] 0:30 ok (9.8 s) criteria/jax_backend/masking.py
    """

    def __init__(self, say: Callable[[str], None], total: int, cached: int, committed: int = 0):
        self.say, self.total, self.done = say, total, 0
        self.started = time.monotonic()
        self.lock = threading.Lock()  # starts are told from the pool's threads
        if total:
            say(f"snippets: {total} to run, {cached} from the cache"
                + (f" ({committed} of them from the committed outputs)" if committed else ""))

    def _line(self, what: str) -> str:
        seconds = int(time.monotonic() - self.started)
        width = len(str(self.total))
        return (f"snippets: [{self.done:>{width}}/{self.total}] {seconds // 60}:{seconds % 60:02d} "
                f"{what}")

    def start(self, snippet: Snippet) -> None:
        with self.lock:
            self.say(self._line(f"running {snippet.rel}"))

    def end(self, o: Outcome) -> None:
        with self.lock:
            self.done += 1
            how = f"{o.status} ({o.seconds:.1f} s)" + (f": {o.problem}" if o.problem else "")
            self.say(self._line(f"{how} {o.snippet.rel}"))


BUDGET_SPENT = "not run: the run's time budget was spent"
MIN_SECONDS_LEFT = 15  # a budgeted run starts no snippet with less than this left
# A measuring snippet is stopped this long after its share ends: it sizes its work to its share
# (BENCH_DEADLINE), and one that overruns it must not take the time of those after it.
SHARE_GRACE = 60


def run_all(project: Project, *, execute_stale: bool = True, jobs: int | None = None,
            only: list[str] | None = None, skip_missing: bool = False,
            on_done: Callable[[Outcome], None] | None = None,
            progress: Callable[[str], None] | None = None,
            deadline: float | None = None, weights: dict[str, float] | None = None,
            before_alone: Callable[[], None] | None = None,
            before_shared: Callable[[], None] | None = None,
            reserve: float = 0.0, keep_failed: Path | None = None) -> list[Outcome]:
    """Run what is stale; return one Outcome per snippet, in discovery order.

    `skip_missing`: a snippet that dies of a missing framework is skipped, not failed (a GPU
    run). `on_done` is called with each outcome as soon as it is known (cached ones first), in
    this thread, so that a caller can keep what finished even if a later snippet never does.
    `progress`, when given, is told a line as each stale snippet starts and ends (Progress).

    `deadline` (time.monotonic()) makes a budgeted run (a lent GPU machine's): no snippet starts
    with less than MIN_SECONDS_LEFT left (it is NOT_RUN, BUDGET_SPENT), none runs past the
    deadline, and the snippets that run alone do so in the order of `only`; each measuring one
    is told BENCH_DEADLINE (Unix time): its share of what is left among those still to run
    (by `weights`, 1 where not given), so that a benchmark sizes its sweep to it, and is
    stopped SHARE_GRACE seconds after its share. `before_alone` is called once the shared
    snippets are done and before those that run alone. In a budgeted run, the snippets that run
    alone and come in `only` before every shared one run first, before the shared ones (the most
    wanted measurements of a lent machine), and their shares leave `reserve` seconds of the
    budget to `before_shared`, called after them (a GPU run runs its tests there, alone).
    `keep_failed`: where a failed or stopped snippet's data goes (execute)."""
    done = on_done or (lambda o: None)
    snippets = discover(project.snippets)
    if only is not None:
        snippets = [s for s in snippets if s.rel in only]
    else:  # the version matrix's snippets run in other environments (pipeline/records/versions.py)
        snippets = [s for s in snippets if not s.matrix]
    device = device_mod.device_kind()
    committed = project.committed and os.environ.get("SNIPPETS_COMMITTED", "1") != "0"
    cache = Cache(project.cache, project.outputs / "snippets" if committed else None)
    outcomes: dict[str, Outcome] = {}
    stale: list[tuple[Snippet, str]] = []
    for s in snippets:
        key = key_for(s, project.requirements, device)
        cached = cache.load(key, s.rel)
        if cached is not None and cached.get("committed"):
            _place_program(s, cached)
        if cached is not None:
            outcomes[s.rel] = from_cache(s, cached)
            done(outcomes[s.rel])
        elif execute_stale:
            stale.append((s, key))
        else:
            outcomes[s.rel] = Outcome(s, NOT_RUN, device=device,
                                      problem="not executed (execution is turned off)")
            done(outcomes[s.rel])

    # Alone, after the others: benchmarks (nothing else on the CPU), and C snippets, so that the
    # project-tree comparison guarding each one sees only its own writes. A GPU benchmark on a
    # machine without a GPU measures nothing (it says "needs a GPU" and exits): it shares.
    def measures(s: Snippet) -> bool:
        return s.exclusive and not (s.needs_gpu and device == "CPU")
    alone = [(s, k) for s, k in stale if measures(s) or s.kind != "py"]
    shared = [(s, k) for s, k in stale if (s, k) not in alone]
    lead: list[tuple[Snippet, str]] = []
    if deadline is not None and only is not None:
        alone.sort(key=lambda sk: only.index(sk[0].rel))
        first_shared = min((only.index(s.rel) for s, _ in shared), default=len(only))
        lead = [(s, k) for s, k in alone if only.index(s.rel) < first_shared]
        alone = [sk for sk in alone if sk not in lead]

    told = Progress(progress, len(stale), len(outcomes),
                    sum(o.committed for o in outcomes.values())) if progress else None

    reserved = {"seconds": reserve if lead and before_shared else 0.0}

    def run(s: Snippet, k: str) -> Outcome:
        timeout, extra = None, None
        if deadline is not None:
            left = deadline - time.monotonic()
            if left < MIN_SECONDS_LEFT:
                return Outcome(s, NOT_RUN, device=device, problem=BUDGET_SPENT)
            timeout = left
            if measures(s):
                weight = lambda a: (weights or {}).get(a.rel, 1.0)
                still = [a for a, _ in lead + alone if a.rel not in outcomes and measures(a)]
                mine = max(left - reserved["seconds"], MIN_SECONDS_LEFT)
                share = mine * weight(s) / sum(map(weight, still))
                extra = {"BENCH_DEADLINE": f"{time.time() + share:.0f}"}
                timeout = min(left, share + SHARE_GRACE)
        if told:
            told.start(s)
        return execute(s, cache, k, device, project.root, skip_missing, project.python,
                       timeout, extra, project.requirements, keep_failed,
                       pool if not measures(s) else None)

    def finished(o: Outcome) -> None:
        outcomes[o.snippet.rel] = o
        if told:
            told.end(o)
        done(o)

    if any(s.kind == "py" for s, _ in stale):
        sandbox.prepare_font_list(project.python or sys.executable)
    # Zygotes for the snippets that share a beginning (pipeline/running/warm.py); not in a
    # budgeted run (a lent GPU's), whose every second is measured as the reader runs it.
    pool = warm.WarmPool(cache.new_workdir()) \
        if deadline is None and warm.enabled() and len(stale) > 1 else None
    if pool is not None:
        pool.plan([(project.python or sys.executable, text) for s, _ in shared
                   if s.kind == "py" and not (s.fresh or s.exclusive)
                   and (text := _program_text(s)) is not None], dict(os.environ))
    try:
        _run_stale(lead, shared, alone, run, finished, before_shared, before_alone, jobs,
                   reserved)
    finally:
        if pool is not None:
            pool.close()

    ordered = [outcomes[s.rel] for s in snippets]

    if only is None:  # the table covers every snippet: a partial run must not shrink it
        write_times(project, ordered)
    return ordered


def _place_program(snippet: Snippet, result: dict) -> None:
    """Put the program a Python snippet ran as into its run's folder, as a run leaves it there
    (what the copy button's tests compare with): a committed output holds its hash, and the key
    it was made from holds its text, so it is made again from the snippet."""
    if snippet.kind != "py" or not result.get("program"):
        return
    text = program_mod.for_snippet(snippet).text
    if program_mod.sha256(text.encode()) == result.get("program_sha256"):
        write_atomic(Path(result["data_dir"]).parent / result["program"], text)


def _program_text(snippet: Snippet) -> str | None:
    try:
        return program_mod.for_snippet(snippet).text
    except SnippetError:  # its run reports it
        return None


def _run_stale(lead, shared, alone, run, finished, before_shared, before_alone, jobs,
               reserved) -> None:
    for s, k in lead:
        finished(run(s, k))
    reserved["seconds"] = 0.0  # the reserve is spent now, or given back
    if before_shared:
        before_shared()
    # one more than the cores: a snippet waits on its imports' files and its subprocesses as well
    # as it computes, and with one a core the cores stood idle a fifth of the time
    with ThreadPoolExecutor(max_workers=jobs or (os.cpu_count() or 1) + 1) as threads:
        for future in as_completed([threads.submit(run, s, k) for s, k in shared]):
            finished(future.result())
    if before_alone:
        before_alone()
    for s, k in alone:
        finished(run(s, k))


def write_times(project: Project, outcomes: list[Outcome]) -> None:
    """The execution-times table shown on a page, written atomically."""
    rows = [{"snippet": o.snippet.rel, "status": o.status, "seconds": round(o.seconds, 2),
             "executed": o.executed, "finished_at": o.finished_at, "device": o.device}
            for o in outcomes]
    write_atomic(project.cache / "execution-times.json", json.dumps(rows, indent=1))


def summary(outcomes: list[Outcome]) -> str:
    """'snippets: 3 executed, 117 from cache (110 of them from the committed outputs)'."""
    executed = sum(o.executed for o in outcomes)
    committed = sum(o.committed for o in outcomes)
    return (f"snippets: {executed} executed, {len(outcomes) - executed} from cache"
            + (f" ({committed} of them from the committed outputs)" if committed else ""))


def failures(outcomes: list[Outcome]) -> list[Outcome]:
    return [o for o in outcomes if o.status not in (*GOOD, NOT_RUN, SKIPPED)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("snippets", nargs="*", help="only these (paths relative to snippets/)")
    ap.add_argument("--root", default=".", help="the project folder")
    ap.add_argument("--no-execute", action="store_true", help="use the cache only")
    ap.add_argument("--jobs", type=int, default=None)
    args = ap.parse_args(argv)
    try:
        outcomes = run_all(Project(Path(args.root)), execute_stale=not args.no_execute,
                           jobs=args.jobs, only=args.snippets or None,
                           progress=lambda line: print(line, flush=True))
    except SnippetError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for o in outcomes:
        how = "ran" if o.executed else "cached"
        print(f"{o.status:9} {how:6} {o.seconds:7.1f}s  {o.snippet.rel}")
    print(summary(outcomes))
    bad = failures(outcomes)
    if bad:
        print(RunFailed(bad), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
