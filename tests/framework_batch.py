"""Several Python programs in one process, so that the framework they share is imported once.

A content test that needs a fresh process per framework (Keras reads KERAS_BACKEND once, when
it is imported) used to start one per program, each importing TensorFlow, JAX or PyTorch again
(seconds of CPU each). `run(jobs, env)` starts one process with that environment and runs every
job in it, in order, as `python SCRIPT ARGS` or `python -c CODE` would: as __main__, with
sys.argv and sys.path[0] set, its SystemExit read as the exit status, and what it wrote to file
descriptors 1 and 2 (Python's and the frameworks' own C++ output) captured. A job may name a cwd
and environment variables of its own. Each job gets back (returncode, stdout, stderr), as
subprocess.run gives them, and the CPU seconds it took.

What a job leaves in the process (modules imported, a framework's global settings) the next
job sees: a test whose check needs a fresh process (what a program imports, quiet start-up
output) puts that job first, and a job that changes a global setting for good goes last or
alone.
"""
from __future__ import annotations

import json
import os
import resource
import runpy
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path


def run(jobs: list[dict], env: dict | None = None, timeout: float = 600,
        background: bool = False):
    """Run `jobs` (each {"argv": [script, *args]} or {"code": str}, optionally "cwd" and
    "env") in one process with os.environ updated by `env`. Returns a list of
    subprocess.CompletedProcess with a `cpu` attribute, or, with background=True, a function
    that waits for them (so that several batches run at once)."""
    listed = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    with listed:
        json.dump([{**job, "argv": list(map(str, job.get("argv", [])))} for job in jobs], listed,
                  default=str)
    proc = subprocess.Popen([sys.executable, __file__, listed.name], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})

    def wait():
        try:
            out, err = proc.communicate(timeout=timeout)
        finally:
            os.unlink(listed.name)
        lines = out.strip().splitlines()
        assert proc.returncode == 0 and lines, f"the batch itself failed:\n{err[-3000:]}"
        results = []
        for job, res in zip(jobs, json.loads(lines[-1])):
            done = subprocess.CompletedProcess(job.get("argv") or ["-c"], res["returncode"],
                                               res["stdout"], res["stderr"])
            done.cpu = res["cpu"]
            results.append(done)
        return results
    return wait if background else wait()


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _run_one(job: dict) -> dict:
    saved_argv, saved_path, saved_cwd = sys.argv[:], sys.path[:], os.getcwd()
    saved_env = {k: os.environ.get(k) for k in job.get("env", {})}
    os.environ.update(job.get("env", {}))
    if job.get("cwd"):
        os.chdir(job["cwd"])
    if "code" in job:
        sys.argv, sys.path[0] = ["-c", *job.get("argv", [])], ""
    else:
        sys.argv = job["argv"]
        sys.path[0] = str(Path(job["argv"][0]).resolve().parent)
    start = _cpu()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush(), sys.stderr.flush()
        fds = os.dup(1), os.dup(2)
        os.dup2(out.fileno(), 1), os.dup2(err.fileno(), 2)
        try:
            if "code" in job:
                exec(compile(job["code"], "<string>", "exec"), {"__name__": "__main__"})
            else:
                runpy.run_path(job["argv"][0], run_name="__main__")
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if not isinstance(exc.code, (int, type(None))):
                print(exc.code, file=sys.stderr)
        except BaseException:  # as Python reports an uncaught exception
            traceback.print_exc()
            code = 1
        finally:
            sys.stdout.flush(), sys.stderr.flush()
            os.dup2(fds[0], 1), os.dup2(fds[1], 2)
            os.close(fds[0]), os.close(fds[1])
            sys.argv, sys.path[:] = saved_argv, saved_path
            os.chdir(saved_cwd)
            for k, v in saved_env.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        out.seek(0), err.seek(0)
        return {"returncode": code, "stdout": out.read().decode(errors="replace"),
                "stderr": err.read().decode(errors="replace"), "cpu": round(_cpu() - start, 2)}


if __name__ == "__main__":
    results = [_run_one(job) for job in json.loads(Path(sys.argv[1]).read_text())]
    print(json.dumps(results))
