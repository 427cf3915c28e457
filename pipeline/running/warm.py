"""Snippets forked from a Python that has already imported their frameworks.

Most snippets spend most of their time importing: about 5 of the 6 CPU seconds of a criteria
snippet go to `import keras` (TensorFlow), paid again by each of a hundred snippets. A group of
snippets that begin the same way (the same environment settings, then the same imports) shares
one zygote (pipeline/running/zygote.py) that has done that beginning once; each snippet of the
group runs in a child forked from it, as the program a reader copies, past the imports it had
already done. What a snippet does after its beginning runs in the child as in a fresh Python.

Which beginning: the program's leading top-level statements, as long as each one is an import, an
`os.environ[NAME] = "constant"` or `os.environ.setdefault("NAME", "constant")`, a docstring or
constant, a constant assigned to a name, or an undecorated def or class. The frameworks imported
there (HEAVY) are preloaded, after the settings made before them. A program whose beginning
imports no framework runs as before, in a fresh Python; so do measuring snippets (`exclusive`)
and those declared `fresh` (about Python's own start-up).

The warm run is never the judge of a failure: a snippet that fails, times out or writes outside
its folder in a child runs again in a fresh Python, and that run is its result
(pipeline/running/runner.py). A zygote whose imports print anything but library start-up lines
(pipeline/running/startup_noise.py) is not used: those lines belong in the snippets' outputs, so
its group runs fresh.

SNIPPETS_WARM=0 turns it off.
"""
from __future__ import annotations

import ast
import json
import os
import shutil
import signal
import subprocess
import threading
from pathlib import Path

from pipeline.running import sandbox
from pipeline.running.snippets import parse
from pipeline.running.startup_noise import is_startup_line

ZYGOTE = Path(__file__).with_name("zygote.py")
# What a zygote imports ahead: the frameworks, whose import is the cost.
HEAVY = {"numpy", "tensorflow", "tf_keras", "keras", "torch", "jax", "jaxlib"}
_READY_TIMEOUT = 300.0


def enabled() -> bool:
    return os.environ.get("SNIPPETS_WARM", "1") != "0"


def _environ_key(node: ast.expr) -> bool:
    return ast.unparse(node) == "os.environ"


def _const_str(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def beginning(text: str) -> tuple[tuple[tuple[str, str, str], ...], tuple[str, ...]] | None:
    """(environment settings, frameworks imported, in order) of a program's leading statements,
    or None when they import no framework (see the module's docstring)."""
    try:
        tree = parse(text)
    except SyntaxError:
        return None
    env: list[tuple[str, str, str]] = []
    preload: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            preload += [a.name for a in node.names if a.name.split(".")[0] in HEAVY]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module and node.module.split(".")[0] in HEAVY:
                preload.append(node.module)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            pass
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.decorator_list:
                break
        elif (isinstance(node, ast.Assign) and len(node.targets) == 1
              and isinstance(node.targets[0], ast.Subscript)
              and _environ_key(node.targets[0].value)):
            name, value = _const_str(node.targets[0].slice), _const_str(node.value)
            if name is None or value is None:
                break
            env.append(("set", name, value))
        elif (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
              and isinstance(node.value.func, ast.Attribute)
              and node.value.func.attr == "setdefault" and _environ_key(node.value.func.value)
              and len(node.value.args) == 2 and not node.value.keywords):
            name, value = (_const_str(a) for a in node.value.args)
            if name is None or value is None:
                break
            env.append(("setdefault", name, value))
        elif isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
            try:
                ast.literal_eval(node.value)
            except ValueError:
                break
        else:
            break
    roots = list(dict.fromkeys(m.split(".")[0] for m in preload))
    if not roots:
        return None
    return tuple(env), tuple(roots)


# Frameworks that import each other the same way whatever order a program names them in (Keras
# imports its backend first): within one of these, with Keras on that backend, the order of the
# imports changes nothing, and programs that name them in another order share a zygote.
_FAMILIES = {"tensorflow": {"numpy", "tensorflow", "tf_keras", "keras"},
             "torch": {"numpy", "torch", "keras"}, "jax": {"numpy", "jax", "jaxlib", "keras"}}


def group(begin: tuple, base_env: dict) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """The zygote a beginning needs in an environment `base_env`: the settings' net effect (what
    the environment holds when the imports start) and the frameworks to import, in an order that
    gives what the program's order gives."""
    settings, roots = begin
    made: dict[str, str] = {}
    for how, name, value in settings:
        if how == "set" or (name not in made and name not in base_env):
            made[name] = value
    backend = made.get("KERAS_BACKEND", base_env.get("KERAS_BACKEND", "tensorflow"))
    if backend in _FAMILIES and set(roots) <= _FAMILIES[backend]:
        closed = set(roots)
        for root in roots:
            closed |= IMPLIES.get(("keras", backend) if root == "keras" else root, set())
        roots = tuple(sorted(closed))
    return tuple(sorted(made.items())), roots


# What importing a framework imports with it (tests/running/test_warm.py asks a fresh Python):
# `import keras` and `import keras, tensorflow, numpy` leave the same modules behind.
IMPLIES = {("keras", "tensorflow"): {"numpy", "tensorflow"}, ("keras", "torch"): {"numpy", "torch"},
           ("keras", "jax"): {"numpy", "jax"}, "tensorflow": {"numpy"},
           "tf_keras": {"numpy", "tensorflow"}, "torch": {"numpy"}, "jax": {"numpy", "jaxlib"}}


class _Zygote:
    """One zygote process and the thread that reads its answers."""

    def __init__(self, python: str, env: dict, spec: dict, scratch: Path):
        scratch.mkdir(parents=True)
        self.log = scratch / "zygote.err"
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.pids: dict[int, int] = {}  # request id -> pid
        self.ended: dict[int, int] = {}  # pid -> wait status
        self.ready = self.dead = False
        self.next_id = 0
        with open(self.log, "wb") as err:
            self.proc = subprocess.Popen([python, str(ZYGOTE), json.dumps(spec)], env=env,
                                         cwd=scratch, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=err,
                                         start_new_session=True)
        threading.Thread(target=self._read, daemon=True).start()
        with self.lock:
            self.changed.wait_for(lambda: self.ready or self.dead, timeout=_READY_TIMEOUT)
            usable = self.ready
        # Its imports' own output would be missing from each snippet's: only start-up lines
        # (dropped from every page anyway) may be there.
        said = self.log.read_text(encoding="utf-8", errors="replace").splitlines()
        self.usable = usable and all(is_startup_line(l) or not l.strip() for l in said)
        if not self.usable:
            self.close()

    def _read(self) -> None:
        for line in self.proc.stdout:
            message = json.loads(line)
            with self.lock:
                if message.get("ready"):
                    self.ready = True
                elif "id" in message:
                    self.pids[message["id"]] = message["pid"]
                else:
                    self.ended[message["pid"]] = message["status"]
                self.changed.notify_all()
        with self.lock:
            self.dead = True
            self.changed.notify_all()

    def run(self, program: str, cwd: Path, env: dict, out: Path, err: Path,
            timeout: float) -> int | None:
        """The child's exit code (negative: killed by that signal), or None when it ran past
        `timeout` and was killed. Raises OSError when the zygote is gone."""
        with self.lock:
            if self.dead:
                raise OSError("the zygote has ended")
            ident, self.next_id = self.next_id, self.next_id + 1
            request = {"id": ident, "program": program, "cwd": str(cwd), "env": env,
                       "out": str(out), "err": str(err)}
            self.proc.stdin.write((json.dumps(request) + "\n").encode())
            self.proc.stdin.flush()
            self.changed.wait_for(lambda: ident in self.pids or self.dead, timeout=60)
            pid = self.pids.pop(ident, None)
            if pid is None:
                raise OSError("the zygote did not start the snippet")
            try:
                done = self.changed.wait_for(lambda: pid in self.ended or self.dead,
                                             timeout=timeout)
            except BaseException:  # Ctrl-C or a kill of the build: the snippet must not run on
                _kill(pid)
                raise
            if not done:
                _kill(pid)
                self.changed.wait_for(lambda: pid in self.ended or self.dead, timeout=30)
                self.ended.pop(pid, None)
                return None
            if pid not in self.ended:
                raise OSError("the zygote ended while the snippet ran")
            return os.waitstatus_to_exitcode(self.ended.pop(pid))

    def close(self) -> None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            _kill(self.proc.pid)
            self.proc.wait()


def _kill(pid: int) -> None:
    """The child and what it started (it leads its own session)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    except PermissionError:  # not yet its own group leader
        os.kill(pid, signal.SIGKILL)


class WarmPool:
    """The zygotes of one run, by (Python, group). `plan` is told every program the run will
    start: a group of one has no zygote (it would import as much as the program does), a zygote
    starts when its group's first program needs it and ends after its last (each holds its
    frameworks in memory)."""

    def __init__(self, scratch: Path):
        self.scratch = scratch
        self.lock = threading.Lock()
        self.zygotes: dict[tuple, _Zygote | None] = {}
        self.left: dict[tuple, int] = {}  # programs of each group still to start

    @staticmethod
    def _key(python: str, program_text: str, env: dict) -> tuple | None:
        begin = beginning(program_text)
        return None if begin is None else (python, *group(begin, env))

    def plan(self, programs: list[tuple[str, str]], env: dict) -> None:
        """(Python, program text) of every program this run will start, in about `env`."""
        for python, text in programs:
            key = self._key(python, text, env)
            if key is not None:
                self.left[key] = self.left.get(key, 0) + 1

    def _zygote(self, key: tuple, env: dict) -> _Zygote | None:
        python, settings, preload = key
        with self.lock:
            if self.left.get(key, 0) < 2 and key not in self.zygotes:
                return None
            if key not in self.zygotes:
                work = self.scratch / f"zygote-{len(self.zygotes)}"
                # the snippets' environment, home and caches in the zygote's own folder, and no
                # write guard: the guard is installed in each child, for that child's folder
                base = {k: v for k, v in env.items()
                        if k not in ("SNIPPET_SANDBOX", "SNIPPET_SANDBOX_LOG")}
                work.mkdir(parents=True)
                zenv = sandbox.environment(work, base)
                zenv.pop("SNIPPET_SANDBOX"), zenv.pop("SNIPPET_SANDBOX_LOG")
                try:
                    z = _Zygote(python, zenv, {"env": [("set", n, v) for n, v in settings],
                                               "preload": list(preload)},
                                work / "run")
                except OSError:
                    z = None
                self.zygotes[key] = z if z is not None and z.usable else None
            return self.zygotes[key]

    def run(self, python: str, program_text: str, program: str, cwd: Path, env: dict,
            timeout: float, log_prefix: Path) -> tuple[int | None, bytes, bytes] | None:
        """As the runner's fresh process: (exit code or None on timeout, stdout, stderr), or
        None when this program has no warm beginning or its zygote cannot be used."""
        key = self._key(python, program_text, env)
        if key is None:
            return None
        zygote = self._zygote(key, env)
        try:
            if zygote is None:
                return None
            out, err = log_prefix.with_suffix(".out"), log_prefix.with_suffix(".err")
            try:
                rc = zygote.run(program, cwd, env, out, err, timeout)
            except OSError:
                return None
            return rc, out, err
        finally:
            self._started(key)

    def _started(self, key: tuple) -> None:
        """One program of the group has run (or will run fresh): its zygote ends after the last."""
        with self.lock:
            self.left[key] = self.left.get(key, 1) - 1
            last = self.left[key] <= 0
            zygote = self.zygotes.get(key) if last else None
            if last:
                self.zygotes[key] = None
        if zygote is not None:
            zygote.close()

    def close(self) -> None:
        for z in self.zygotes.values():
            if z is not None:
                z.close()
        shutil.rmtree(self.scratch, ignore_errors=True)

